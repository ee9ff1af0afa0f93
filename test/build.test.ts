/**
 * The compiled server (`npm run build`, tools/build.mjs; issue 19 item 4): what `npm start` and the
 * Docker image run. The rest of the suite runs the TypeScript through tsx; this test makes sure the
 * JavaScript in dist/ starts on plain node and finds every file it reads at run time — the migrations
 * and the themes copied beside the modules, the docs and package.json at the project root, the
 * page assets — and that the CLI runs it too.
 */
import t from 'tap'
import { spawn, spawnSync, execFileSync } from 'node:child_process'
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { buildDist, rewriteImports, upToDate } from '../tools/build.mjs'
import { ROOT } from './helpers/process.ts'
import { findFreePort } from './helpers/server.ts'

t.test('relative .ts specifiers become .js; packages and other strings are left alone', async (t) => {
  t.equal(rewriteImports('import { a } from "./a.ts";\nexport * from "../b/c.ts";\nimport "./side.ts";\nconst m = await import("./lazy.ts");'),
    'import { a } from "./a.js";\nexport * from "../b/c.js";\nimport "./side.js";\nconst m = await import("./lazy.js");')
  t.equal(rewriteImports('import x from "pkg.ts";\nconst s = "./not-an-import.ts";'), 'import x from "pkg.ts";\nconst s = "./not-an-import.ts";')
})

t.test('the built server starts on plain node, serves the demo, pages and docs, and the CLI uses the build', async (t) => {
  await buildDist({ ifStale: true, quiet: true })
  t.ok(upToDate(), 'dist/ is up to date with the sources after the build')
  const leftovers: string[] = []
  const scan = (dir: string) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = join(dir, e.name)
      if (e.isDirectory()) scan(p)
      else if (e.name.endsWith('.js') && /(?:from\s*|import\s*\(\s*|import\s+)["']\.{1,2}\/[^"']*\.ts["']/.test(readFileSync(p, 'utf8'))) leftovers.push(p)
    }
  }
  scan(join(ROOT, 'dist', 'src'))
  t.same(leftovers, [], 'no compiled module imports a .ts file')

  // The systemd unit's ExecStartPre: a current build passes, a folder that is not the build of these
  // sources is refused with exit 78 (the unit does not restart on it) and one line naming the fix.
  const check = (...extra: string[]) => spawnSync(process.execPath, ['tools/build.mjs', '--check', ...extra], { cwd: ROOT, encoding: 'utf8' })
  t.equal(check().status, 0, '--check passes on the current build')
  const stale = check('--out', join(ROOT, 'dist-never-built'))
  t.equal(stale.status, 78, '--check refuses a missing or stale build with exit 78')
  t.match(stale.stderr, /^dispatch: dist-never-built\/ is not the build of these sources; run `npm run build`/, 'one line saying what to run')

  const dir = mkdtempSync(join(tmpdir(), 'dispatch-build-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const port = await findFreePort()
  const site = `http://127.0.0.1:${port}`
  // Plain node, no --import: nothing may need tsx. A fresh database: every migration runs from dist/.
  const proc = spawn(process.execPath, ['dist/src/main.js'], {
    cwd: ROOT,
    env: { ...process.env, NODE_OPTIONS: '', HOST: '127.0.0.1', PORT: String(port), SITE_URL: site, LOG_LEVEL: 'silent', DB_PATH: join(dir, 'd.db') },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let out = ''
  let err = ''
  proc.stdout.on('data', (d: Buffer) => { out += d.toString() })
  proc.stderr.on('data', (d: Buffer) => { err += d.toString() })
  const exited = new Promise<number | string>((resolve) => proc.once('exit', (code, sig) => resolve(code ?? sig ?? -1)))
  t.teardown(() => { if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGKILL') })
  const deadline = Date.now() + 20_000
  for (;;) {
    if (proc.exitCode !== null) throw new Error(`the built server exited (${proc.exitCode}): ${err}`)
    const ok = await fetch(`${site}/readyz`).then((r) => r.status === 200, () => false)
    if (ok) break
    if (Date.now() > deadline) throw new Error(`the built server was not ready within 20 s: ${err}`)
    await new Promise((r) => setTimeout(r, 50))
  }
  t.pass('ready: migrations applied from dist/src/storage/migrations')
  t.match(out, /Demo account/, 'the demo data was seeded and printed')
  const store = /"url":\s*"([^"]+)"/.exec(out.slice(out.indexOf('"store"')))?.[1]
  const pages: Array<[string, string, RegExp]> = [
    ['/healthz', 'health', /ok/],
    ['/docs/guides/running', 'a guide from docs/ at the project root, rendered with marked', /<article class="guide">/],
    ['/docs', 'the API reference (swagger-ui-dist from node_modules)', /<html/],
    ['/kds?store=1', 'the kitchen screen (kds.html beside its module)', /<html/],
    ['/login', 'the dashboard (its assets beside their module)', /<html/],
  ]
  if (t.ok(store, 'the demo store has a website address')) pages.push([new URL(store!).pathname, 'the storefront (a built-in liquid theme copied into dist/)', /<html/i])
  for (const [path, what, body] of pages) {
    const r = await fetch(`${site}${path}`)
    const text = await r.text()
    t.equal(r.status, 200, `${path}: ${what}`)
    t.match(text, body)
  }
  // The guest list runs in a worker thread on a file database (new Worker on guests-worker.js beside its module).
  const demo = /"owner":\s*\{[^}]*"token":\s*"(dso_[^"]+)"[\s\S]*?"store":\s*\{[^}]*?"id":\s*(\d+)/.exec(out)
  if (t.ok(demo, 'the demo owner token and store id')) {
    const r = await fetch(`${site}/api/v1/restaurants/${demo![2]}/guests`, { headers: { authorization: `Bearer ${demo![1]}` } })
    t.equal(r.status, 200, 'the guest list answers from the worker thread')
  }
  proc.kill('SIGTERM')
  t.equal(await exited, 0, 'SIGTERM: a clean exit')

  // The CLI runs the build when it is up to date (its --version reads package.json at the root).
  const version = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).version as string
  t.match(execFileSync(process.execPath, ['bin/dispatch.js', '--version'], { cwd: ROOT, encoding: 'utf8', env: { ...process.env, NODE_OPTIONS: '' } }), version)
})
