/**
 * README quick start: `node --import tsx src/main.ts` (what `npm start` runs, compiled) on an empty database
 * answers /healthz, seeds a demo account and prints its credentials once, with a summary of what to
 * open and a curl to try — not on the next start —
 * and shuts down cleanly on SIGTERM.
 */
import t from 'tap'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { spawnServer, ROOT, type ServerProcess } from './helpers/process.ts'

const dir = mkdtempSync(join(tmpdir(), 'dispatch-quickstart-'))
const dbPath = join(dir, 'nested', 'dispatch.db')
let sp: ServerProcess | null = null
t.teardown(async () => { await sp?.kill(); rmSync(dir, { recursive: true, force: true }) })

/** The JSON object printed after the "Demo account" banner. */
function printedDemo(out: string): Record<string, any> | null {
  const at = out.indexOf('Demo account')
  if (at < 0) return null
  const start = out.indexOf('{', at)
  let depth = 0
  for (let i = start; i < out.length; i++) {
    if (out[i] === '{') depth++
    else if (out[i] === '}' && --depth === 0) return JSON.parse(out.slice(start, i + 1))
  }
  return null
}

t.test('the first start on an empty database prints working demo credentials', async (t) => {
  sp = await spawnServer({ DB_PATH: dbPath })
  const health = await fetch(`${sp.site}/healthz`)
  t.equal(health.status, 200)
  t.same(await health.json(), { status: 'ok' })
  const demo = printedDemo(sp.stdout())
  if (!t.ok(demo, 'credentials printed')) return
  t.match(demo, { owner: { id: Number, token: /^dso_/ }, store: { id: Number, slug: String, storefront_token: String }, driver: { token: String }, customer: { email: String, password: String } })
  t.equal(demo!.staff.length, 4)
  const r = await fetch(`${sp.base}/restaurants`, { headers: { authorization: `Bearer ${demo!.owner.token}` } })
  t.equal(r.status, 200, 'the printed owner token works (README curl example)')
  t.equal(((await r.json()) as { total: number }).total, 1)
  t.equal(sp.stdout().split('Demo account').length - 1, 1, 'printed exactly once')

  // The summary for a person (issue 20 #10): each address it names answers, with what it says to use there.
  const summary = sp.stdout().slice(sp.stdout().indexOf('Open:'))
  const kitchen = demo!.staff.find((s: { role: string }) => s.role === 'kitchen')
  const manager = demo!.staff.find((s: { role: string }) => s.role === 'manager')
  const urls = [`${sp.site}/login`, demo!.store.url, `${sp.site}/docs`, `${sp.site}/kds?store=${demo!.store.id}`]
  for (const url of urls) {
    t.ok(summary.includes(url), `the summary names ${url}`)
    t.equal((await fetch(url)).status, 200, `${url} answers 200`)
  }
  t.match(summary, new RegExp(`/login\\n\\s+email:\\s+${demo!.owner.email.replace(/[.+]/g, '\\$&')}\\n\\s+password:\\s+\\S+`), 'the dashboard with the owner\'s email and password')
  t.ok(summary.includes(demo!.owner.password), 'the owner password')
  t.match(summary, new RegExp(`kitchen PIN: ${kitchen.pin}`), 'the kitchen screen with the kitchen member\'s PIN')
  t.ok(summary.includes(manager.email) && summary.includes(manager.password), 'and the manager who enrolls the screen')
  const curl = /curl -H "Authorization: Bearer (dso_\S+)" (\S+)/.exec(summary)
  if (t.ok(curl, 'a curl to try')) {
    t.equal(curl![1], demo!.owner.token)
    t.equal((await fetch(curl![2]!, { headers: { authorization: `Bearer ${curl![1]}` } })).status, 200, 'the printed curl works')
  }
  t.equal(await sp.kill('SIGTERM'), 0, 'SIGTERM shuts down cleanly (exit 0)')
})

t.test('the next start on the same database prints nothing secret', async (t) => {
  sp = await spawnServer({ DB_PATH: dbPath })
  t.equal((await fetch(`${sp.site}/healthz`)).status, 200)
  await new Promise((r) => setTimeout(r, 100))
  t.notMatch(sp.stdout(), /Demo account|dso_/, 'no demo account, no token on stdout')
  t.equal(await sp.kill('SIGTERM'), 0)
})

t.test('DEMO_SEED=0 starts empty', async (t) => {
  sp = await spawnServer({ DB_PATH: join(dir, 'empty.db'), DEMO_SEED: '0' })
  t.notMatch(sp.stdout(), /Demo account/)
  t.equal(await sp.kill('SIGTERM'), 0)
})

t.test('the README documents the two commands and the configuration defaults', async (t) => {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8')
  t.match(readme, /npm ci && npm start/)
  t.match(readme, /npm test/)
  for (const [name, def] of [['PORT', '8080'], ['HOST', ''], ['DB_PATH', './data/dispatch.db'], ['SITE_URL', ''], ['LOG_LEVEL', ''], ['WEBHOOK_ALLOW_LOOPBACK', '']]) {
    t.match(readme, new RegExp(`\\|\\s*\`${name}\`\\s*\\|[^\\n]*${def.replace(/[./]/g, '\\$&')}`), `${name} documented${def ? ` with default ${def}` : ''}`)
  }
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'))
  // `exec`: npm forwards SIGTERM/SIGINT to the shell of its script, which would not pass them on (test/process.test.ts).
  // npm start runs the same code compiled (tools/build.mjs; test/build.test.ts starts that build on plain node).
  t.equal(pkg.scripts.start, 'node tools/build.mjs --if-stale && exec node dist/src/main.js', 'npm start builds when stale, then runs the build')
  t.equal(pkg.bin.dispatch, 'bin/dispatch.js')
})
