/**
 * The server as an operator runs it (issue 20 #1, docs/running.md): a taken port, a bad setting
 * or an unusable database stops the start with one line on stderr and a documented exit code (no
 * stack trace); SIGTERM and SIGINT stop it gracefully, also when it was started with `npm start`.
 */
import t, { type Test } from 'tap'
import { spawn } from 'node:child_process'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { EXIT } from '../src/startup.ts'
import { loadConfig } from '../src/config.ts'
import { findFreePort } from './helpers/server.ts'
import { ROOT, spawnServer } from './helpers/process.ts'

const dir = mkdtempSync(join(tmpdir(), 'dispatch-process-'))
t.teardown(() => rmSync(dir, { recursive: true, force: true }))

/** Start `cmd` with the server's environment plus `env`; resolves once it exits (a bound, not a timing). */
function run(cmd: string, args: string[], env: Record<string, string>, boundMs = 30_000): Promise<{ code: number | null; stderr: string; stdout: string }> {
  const p = spawn(cmd, args, {
    cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, HOST: '127.0.0.1', PORT: '1', LOG_LEVEL: 'silent', DEMO_SEED: '0', DB_PATH: join(dir, 'unused.db'), ...env },
  })
  let stderr = ''
  let stdout = ''
  p.stderr.on('data', (d: Buffer) => { stderr += d.toString() })
  p.stdout.on('data', (d: Buffer) => { stdout += d.toString() })
  const bound = setTimeout(() => p.kill('SIGKILL'), boundMs)
  return new Promise((resolve) => p.once('exit', (code) => { clearTimeout(bound); resolve({ code, stderr, stdout }) }))
}
const startServer = (env: Record<string, string>) => run(process.execPath, ['--import', 'tsx', 'src/main.ts'], env)

/** One line naming the problem, no stack trace. */
function oneLine(t: Test, stderr: string, pattern: RegExp) {
  const lines = stderr.trim().split('\n')
  t.equal(lines.length, 1, `one line: ${JSON.stringify(stderr)}`)
  t.match(lines[0], /^dispatch: /)
  t.match(lines[0], pattern)
  t.notMatch(stderr, /\n\s+at /, 'no stack trace')
}

t.test('invalid settings are refused at start with one line and exit 78', async (t) => {
  // The process: exit code and the one line (each start costs a few seconds, so three of them).
  for (const [env, pattern] of [
    [{ PORT: '70000' }, /PORT: must be at most 65535, got 70000/],
    [{ SITE_URL: 'notaurl' }, /SITE_URL: must be an absolute http/],
    [{ GROUP_COMMIT: 'maybe' }, /GROUP_COMMIT: must be one of 1\/0, true\/false, yes\/no, on\/off, got "maybe"/],
  ] as Array<[Record<string, string>, RegExp]>) {
    const r = await startServer(env)
    t.equal(r.code, EXIT.config, `${JSON.stringify(env)} → exit ${EXIT.config}`)
    oneLine(t, r.stderr, pattern)
  }
  // The rest of the rules, on the parser main.ts calls: each refusal names its variable.
  const refused: Array<Record<string, string>> = [
    { PORT: '0' }, { PORT: '80x' }, { PORT: '' }, { HOST: 'a b' }, { SITE_URL: 'ftp://example.com' }, { SITE_URL: 'https://x.example/?a=1' },
    { DEMO_SEED: 'sometimes' }, { APP_GROUP: '2' }, { WEBHOOK_ALLOW_LOOPBACK: 'y' }, { SHUTDOWN_TIMEOUT_MS: '-5' },
    { SHUTDOWN_GRACE_MS: '600000' }, { LOG_LEVEL: 'loud' }, { WEBHOOK_RETRY_SCHEDULE: 'soon' }, { DB_PATH: '' },
  ]
  for (const env of refused) t.throws(() => loadConfig(env), new RegExp(Object.keys(env)[0]!), JSON.stringify(env))
  t.match(loadConfig({ GROUP_COMMIT: 'OFF', DEMO_SEED: 'no', APP_GROUP: 'Yes', PORT: '65535', SITE_URL: 'https://dispatch.example/' }),
    { groupCommit: false, demoSeed: false, appGroup: true, port: 65535, siteUrl: 'https://dispatch.example' }, 'the accepted spellings')
})

t.test('a database folder that cannot be written, or a file that is not a database, fails at once with exit 73', async (t) => {
  const notDb = join(dir, 'garbage.db')
  writeFileSync(notDb, 'this is not an SQLite database, just text that is long enough to have a header'.repeat(20))
  const aFile = join(dir, 'plain-file')
  writeFileSync(aFile, 'x')
  const cases: Array<[string, RegExp]> = [
    // A recursive mkdir under /proc never returns (the hang issue 20 describes); root may write anywhere else.
    ['/proc/dispatch-test/sub/x.db', /cannot create the folder/],
    ['/proc/x.db', /not writable/],
    [join(aFile, 'x.db'), /is not a folder/],
    [notDb, /cannot open the database/],
  ]
  for (const [path, pattern] of cases) {
    const r = await startServer({ DB_PATH: path })
    t.equal(r.code, EXIT.database, `DB_PATH=${path} → exit ${EXIT.database}`)
    oneLine(t, r.stderr, pattern)
  }
})

t.test('a port already in use is refused: exit 69, and the running server keeps all the traffic', async (t) => {
  const first = await spawnServer({ DB_PATH: join(dir, 'first.db'), DEMO_SEED: '0' })
  t.teardown(() => first.kill())
  const r = await startServer({ PORT: String(first.port), DB_PATH: join(dir, 'second.db') })
  t.equal(r.code, EXIT.listen)
  oneLine(t, r.stderr, new RegExp(`cannot listen on 127\\.0\\.0\\.1:${first.port}: the port is taken`))
  t.equal((await fetch(`${first.site}/healthz`)).status, 200, 'the first server still answers')
  t.equal(await first.kill('SIGTERM'), 0)
})

t.test('SIGINT stops the server started with node: exit 0, port released', async (t) => {
  const sp = await spawnServer({ DB_PATH: join(dir, 'sigint.db'), DEMO_SEED: '0' })
  t.equal(await sp.kill('SIGINT'), 0)
  await t.rejects(fetch(`${sp.site}/healthz`), 'nothing listens any more')
})

for (const sig of ['SIGTERM', 'SIGINT'] as const) {
  t.test(`${sig} to the \`npm start\` process stops the server (npm forwards it; the script execs node)`, async (t) => {
    const port = await findFreePort()
    const site = `http://127.0.0.1:${port}`
    mkdirSync(join(dir, sig), { recursive: true })
    const npm = spawn('npm', ['start'], {
      cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, HOST: '127.0.0.1', PORT: String(port), SITE_URL: site, LOG_LEVEL: 'silent', DEMO_SEED: '0', DB_PATH: join(dir, sig, 'npm.db') },
    })
    const exited = new Promise<number | string>((resolve) => npm.once('exit', (code, s) => resolve(code ?? s ?? -1)))
    t.teardown(() => { if (npm.exitCode === null) npm.kill('SIGKILL') })
    for (let ready = false; !ready;) {
      ready = await fetch(`${site}/healthz`).then((r) => r.status === 200, () => false)
      if (!ready) await new Promise((r) => setTimeout(r, 100))
      if (npm.exitCode !== null) throw new Error('npm start exited early')
    }
    npm.kill(sig)
    t.equal(await exited, 0, 'npm start exits 0')
    await t.rejects(fetch(`${site}/healthz`), 'the server is gone too, not left serving')
  })
}
