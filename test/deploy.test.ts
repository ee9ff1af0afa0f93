/**
 * Deployment files (issue 20 item 5; docs/deploy.md): the container's HEALTHCHECK script against
 * the real server (ready → 0; draining, down → 1), the Dockerfile's promises (multi-stage, production
 * dependencies only, non-root, data volume, exec-form node so signals reach it, every COPY source
 * present and not excluded by .dockerignore), and the systemd unit (hardening present, node run
 * directly, stop timeout above the drain; `systemd-analyze verify` where systemd is installed).
 * No Docker daemon runs on CI machines, so the image itself is built by hand (docs/deploy.md).
 */
import t from 'tap'
import { execFile, execFileSync } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ROOT, spawnServer } from './helpers/process.ts'
import { findFreePort } from './helpers/server.ts'

const HEALTHCHECK = join(ROOT, 'deploy/healthcheck.mjs')

/** Runs the HEALTHCHECK script as Docker would, with PORT set: its exit code. */
const healthcheck = (port: number): Promise<number> => new Promise((resolve) => {
  execFile(process.execPath, [HEALTHCHECK], { env: { ...process.env, PORT: String(port) }, timeout: 15_000 }, (err) => {
    resolve(err ? (typeof err.code === 'number' ? err.code : -1) : 0)
  })
})

t.test('the HEALTHCHECK script: 0 when ready, 1 while draining and when nothing listens', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'dispatch-deploy-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  // A grace long enough that /readyz is seen answering 503 before the listener closes (a bound, not a timing).
  const sp = await spawnServer({ DB_PATH: join(dir, 'd.db'), DEMO_SEED: '0', SHUTDOWN_GRACE_MS: '5000', SHUTDOWN_TIMEOUT_MS: '20000' })
  t.teardown(() => sp.kill())
  t.equal(await healthcheck(sp.port), 0, 'ready')

  sp.proc.kill('SIGTERM')
  for (let i = 0; i < 200; i++) {
    const status = await fetch(`${sp.site}/readyz`).then((r) => r.status, () => 0)
    if (status !== 200) break
    await new Promise((r) => setTimeout(r, 25))
  }
  t.equal(await healthcheck(sp.port), 1, 'draining (or already closed) is not ready')
  await sp.exited
  t.equal(await healthcheck(await findFreePort()), 1, 'nothing listening')
})

const dockerfile = readFileSync(join(ROOT, 'Dockerfile'), 'utf8')
const instructions = dockerfile.replace(/\\\n/g, ' ').split('\n').map((l) => l.trim()).filter((l) => l && !l.startsWith('#'))
const of = (kw: string) => instructions.filter((l) => l.toUpperCase().startsWith(`${kw} `))

t.test('the Dockerfile: multi-stage, production dependencies, non-root, a data volume, signals reach node', async (t) => {
  t.ok(of('FROM').length >= 2, 'multi-stage')
  t.ok(of('FROM').every((l) => !/alpine/i.test(l) && (/bookworm|\$\{NODE_IMAGE\}/.test(l))), 'glibc images (uWS ships glibc binaries)')
  t.ok(of('RUN').some((l) => l.includes('npm ci --omit=dev')), 'npm ci --omit=dev at build')
  const users = of('USER')
  t.ok(users.length > 0 && !/^USER\s+(root|0)\b/i.test(users[users.length - 1]!), 'runs as a non-root user')
  t.match(of('VOLUME').join(' '), /\/data/, 'the database lives on a volume')
  t.match(of('ENV').join(' '), /DB_PATH=\/data\//, 'and DB_PATH points there')
  t.match(of('HEALTHCHECK').join(' '), /deploy\/healthcheck\.mjs/, 'HEALTHCHECK asks /readyz through the script')
  const cmd = of('CMD').pop() ?? ''
  t.match(cmd, /^CMD \["node",/, 'exec form, node itself is PID 1 (no shell or npm swallowing SIGTERM)')

  const ignored = readFileSync(join(ROOT, '.dockerignore'), 'utf8').split('\n').map((l) => l.trim()).filter((l) => l && !l.startsWith('#'))
  for (const must of ['node_modules', 'data', '.git', '.env']) t.ok(ignored.includes(must), `.dockerignore leaves out ${must}`)
  for (const copy of of('COPY').filter((l) => !l.includes('--from='))) {
    const parts = copy.split(/\s+/).filter((p) => !p.startsWith('--')).slice(1, -1)
    for (const src of parts) {
      t.ok(existsSync(join(ROOT, src)), `COPY source ${src} exists`)
      t.notOk(ignored.includes(src), `COPY source ${src} is not excluded by .dockerignore`)
    }
  }
})

t.test('the systemd unit: node run directly, hardened, a stop timeout above the drain', async (t) => {
  const unitPath = join(ROOT, 'deploy/dispatch.service')
  const unit = readFileSync(unitPath, 'utf8')
  const keys = new Map<string, string[]>()
  for (const line of unit.split('\n')) {
    const m = /^([A-Za-z]+)=(.*)$/.exec(line.trim())
    if (m) keys.set(m[1]!, [...(keys.get(m[1]!) ?? []), m[2]!])
  }
  const one = (k: string) => keys.get(k)?.[keys.get(k)!.length - 1]
  t.match(one('ExecStart') ?? '', /^\/usr\/bin\/node dist\/src\/main\.js$/, 'node itself on the compiled build, not npm (signals reach the server)')
  t.match(one('ExecStartPre') ?? '', /^\/usr\/bin\/node tools\/build\.mjs --check$/, 'a build older than the sources is refused before start')
  t.notOk(['root', '0', undefined].includes(one('User')), 'a user of its own')
  for (const [k, v] of Object.entries({ NoNewPrivileges: 'yes', ProtectSystem: 'strict', ProtectHome: 'yes', PrivateTmp: 'yes', PrivateDevices: 'yes', RestrictSUIDSGID: 'yes', CapabilityBoundingSet: '' })) {
    t.equal(one(k), v, `${k}=${v}`)
  }
  t.notOk(keys.has('MemoryDenyWriteExecute'), 'no MemoryDenyWriteExecute: V8 needs writable executable memory')
  t.equal(one('StateDirectory'), 'dispatch', 'writes only its state directory')
  t.match((keys.get('Environment') ?? []).join(' '), /DB_PATH=\/var\/lib\/dispatch\//, 'the database in the state directory')
  t.ok(Number(one('TimeoutStopSec')) * 1000 > 10_000, 'systemd waits longer than SHUTDOWN_TIMEOUT_MS (10 s) before SIGKILL')
  t.match(one('RestartPreventExitStatus') ?? '', /78/, 'a configuration error (exit 78) is not restarted in a loop')

  let analyze = false
  try { execFileSync('systemd-analyze', ['--version'], { stdio: 'ignore' }); analyze = true } catch { /* not installed */ }
  if (!analyze) { t.comment('systemd-analyze not installed: unit syntax not verified'); return }
  const out = (() => {
    try { return execFileSync('systemd-analyze', ['verify', unitPath], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }) } catch (e) { return String((e as { stderr?: string }).stderr ?? e) }
  })()
  t.equal(out.split('\n').filter((l) => l.includes('dispatch.service') && !/not found|No such file|does not exist/i.test(l)).join('\n'), '', 'systemd-analyze verify reports nothing about the unit')
})
