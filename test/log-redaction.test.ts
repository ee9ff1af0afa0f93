/**
 * Capability tokens never reach the logs: a track token in `/api/v1/track/{token}`,
 * `/t/{token}`, `/api/v1/ws/track/{token}`, or any token-shaped path segment is logged as
 * `[redacted]`, on request lines and error lines alike (src/log.ts `redactPath`).
 */
import t from 'tap'
import { Writable } from 'node:stream'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pino } from 'pino'
import { loadConfig } from '../src/config.ts'
import { buildApp } from '../src/app.ts'
import { redactPath, REDACTED } from '../src/log.ts'
import { allRoutes } from '../src/http/routes/index.ts'
import { newToken } from '../src/auth/tokens.ts'
import { createAccount, postOrder } from './helpers/fixtures.ts'
import { findFreePort, request, type TestServer } from './helpers/server.ts'
import { WsClient, wsBase } from './helpers/ws-client.ts'

t.test('redactPath', async (t) => {
  const tok = newToken('track')
  const cases: Array<[string, string]> = [
    [`/api/v1/track/${tok}`, `/api/v1/track/${REDACTED}`],
    [`/t/${tok}`, `/t/${REDACTED}`],
    [`/api/v1/ws/track/${tok}`, `/api/v1/ws/track/${REDACTED}`],
    [`//t//${tok}`, `//t//${REDACTED}`],
    ['/t/not-a-token-but-in-its-place', `/t/${REDACTED}`],
    ['/verify-email/3f9a0c1e7b5d42e8a6c4b2d0e9f7a5c3', `/verify-email/${REDACTED}`],
    ['/reset-password/3f9a0c1e7b5d42e8a6c4b2d0e9f7a5c3', `/reset-password/${REDACTED}`],
    [`/api/v1/anything/${tok}/more`, `/api/v1/anything/${REDACTED}/more`],
    [`/api/v1/x/${tok.replace('_', '%5F')}`, `/api/v1/x/${REDACTED}`],
    [`/api/v1/me?api_token=${newToken('owner')}`, '/api/v1/me'],
    ['/api/v1/restaurants/12/orders/34', '/api/v1/restaurants/12/orders/34'],
    ['/api/v1/track', '/api/v1/track'],
    ['/s/pizza-place', '/s/pizza-place'],
    ['', ''],
  ]
  for (const [path, want] of cases) t.equal(redactPath(path), want, path)
  for (const family of ['owner', 'storefront', 'driver', 'customer', 'staff'] as const) {
    t.equal(redactPath(`/api/v1/oops/${newToken(family)}`), `/api/v1/oops/${REDACTED}`, `${family} token in a path`)
  }
})

t.test('every route whose path carries a capability ({token}, {nonce}) is redacted in logs', async (t) => {
  const capabilityRoutes = allRoutes().filter((r) => /\{(token|nonce)\}/.test(r.path))
  t.ok(capabilityRoutes.length >= 4, 'tracking, hand-off and emailed links are found')
  for (const r of capabilityRoutes) {
    const path = r.path.replace(/\{(token|nonce)\}/g, 'sEcReTvAlUe123').replace(/\{\w+\}/g, '7')
    t.notMatch(redactPath(path), /sEcReTvAlUe123/, `${r.method} ${r.path}`)
  }
})

t.test('request and error log lines carry no track token', async (t) => {
  const lines: string[] = []
  const sink = new Writable({ write(chunk, _enc, cb) { lines.push(String(chunk)); cb() } })
  const dir = mkdtempSync(join(tmpdir(), 'dispatch-test-'))
  const port = await findFreePort()
  const site = `http://127.0.0.1:${port}`
  const config = loadConfig({ LOG_LEVEL: 'info', HOST: '127.0.0.1', PORT: String(port), DB_PATH: join(dir, 'test.db'), SITE_URL: site, RATE_LIMIT_PER_MINUTE: '100000' })
  const app = buildApp(config, { log: pino({ level: 'info' }, sink) })
  await app.listen()
  t.teardown(async () => { await app.close(); rmSync(dir, { recursive: true, force: true }) })
  const base = `${site}/api/v1`
  const s = { base, req: (method: string, path: string, opts = {}) => request(base + path, method, opts) } as unknown as TestServer

  const acct = createAccount(app.svc.db)
  const created = await postOrder(s, acct.token, acct.storeId, { type: 'takeaway', items: [{ item_id: acct.menu.fries, quantity: 1 }] })
  t.equal(created.status, 200)
  const token: string = created.body.track_token
  t.match(token, /^trk_/)

  t.equal((await request(`${base}/track/${token}`, 'GET')).status, 200, 'the tracking API')
  t.equal((await request(`${site}/t/${token}`, 'GET')).status, 200, 'the tracking page')
  t.equal((await request(`${site}/t/${token}?from=sms`, 'GET')).status, 200, 'the tracking page with a query')
  await request(`${base}/ws/track/${token}`, 'GET') // not an upgrade: an ordinary request for that path
  t.equal((await request(`${base}/tracks/${token}`, 'GET')).status, 404, 'a token in a mistyped path')

  // The tracking socket itself.
  const ws = await WsClient.open(`${wsBase(s)}/ws/track/${token}`)
  await ws.next()
  await ws.close()

  // A failure on the way logs the path with the error.
  app.svc.db.exec('ALTER TABLE orders RENAME TO orders_gone')
  try {
    t.equal((await request(`${base}/track/${token}`, 'GET')).status, 500, 'a failing request')
  } finally {
    app.svc.db.exec('ALTER TABLE orders_gone RENAME TO orders')
  }

  const log = lines.join('')
  const secret = token.slice('trk_'.length)
  t.notOk(log.includes(secret), 'the token appears in no log line')
  const requestLines = lines.map((l) => JSON.parse(l) as { msg: string; path?: string; status?: number })
  const paths = requestLines.filter((l) => l.msg === 'request').map((l) => l.path)
  for (const p of [`/api/v1/track/${REDACTED}`, `/t/${REDACTED}`, `/api/v1/ws/track/${REDACTED}`, `/api/v1/tracks/${REDACTED}`]) {
    t.ok(paths.includes(p), `a request line for ${p}`)
  }
  t.ok(requestLines.some((l) => l.msg === 'unhandled error' && l.path === `/api/v1/track/${REDACTED}`), 'the error line has the redacted path')
})
