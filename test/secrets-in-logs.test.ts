/**
 * No secrets in logs (issue 21 item 8; docs/running.md "Secrets in logs"): a server logging at
 * `trace` into a file is driven through every credential family — owner token (as a bearer and as
 * `?api_token=`), storefront, driver (and its SMS login code), customer (and its OTP code), staff
 * (password, PIN, device key, `?token=` on the kitchen socket), track token, shell token, app
 * access and refresh tokens, webhook signing secret, owner password — including refused and
 * failing requests; then the captured log is searched for every secret the test created.
 */
import t from 'tap'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { loadConfig } from '../src/config.ts'
import { buildApp } from '../src/app.ts'
import { createLogger } from '../src/log.ts'
import { hashSecretSync } from '../src/auth/passwords.ts'
import { nowIso } from '../src/storage/db.ts'
import type { RecordingSmsProvider } from '../src/providers/sms.ts'
import { createAccount, createDriver, createStaff, createStorefrontToken, postOrder } from './helpers/fixtures.ts'
import { enrollDevice } from './helpers/pin-devices.ts'
import { installTestApp, createTestApp } from './helpers/apps.ts'
import { startReceiver } from './helpers/webhook-receiver.ts'
import { findFreePort, request, type TestServer } from './helpers/server.ts'
import { WsClient, wsBase } from './helpers/ws-client.ts'

const dir = mkdtempSync(join(tmpdir(), 'dispatch-logs-'))
const logFile = join(dir, 'server.log')
const port = await findFreePort()
const site = `http://127.0.0.1:${port}`
const config = loadConfig({ LOG_LEVEL: 'trace', HOST: '127.0.0.1', PORT: String(port), DB_PATH: join(dir, 'test.db'), SITE_URL: site, RATE_LIMIT_PER_MINUTE: '100000', WEBHOOK_ALLOW_LOOPBACK: '1', WEBHOOK_RETRY_SCHEDULE: '0', PRUNE_CRON: 'off' })
const app = buildApp(config, { log: createLogger('trace', logFile) })
await app.listen()
const receiver = await startReceiver()
t.teardown(async () => { await app.close(); await receiver.close(); rmSync(dir, { recursive: true, force: true }) })
const base = `${site}/api/v1`
const s = { base, site, port, req: (method: string, path: string, opts = {}) => request(path.startsWith('http') ? path : base + path, method, opts) } as unknown as TestServer
const db = app.svc.db
const sms = app.svc.sms as RecordingSmsProvider
const codeIn = (phone: string) => /\b(\d{6})\b/.exec(sms.lastTo(phone)?.body ?? '')?.[1] ?? ''

/** Every secret the test created or learnt, by what it is. */
const secrets = new Map<string, string>()
const keep = (what: string, value: string | undefined | null) => { if (!value) throw new Error(`no ${what}`); secrets.set(what, value); return value }

t.test('drive every credential family, accepted and refused', async (t) => {
  const acct = createAccount(db)
  keep('owner token', acct.token)
  t.equal((await s.req('GET', '/restaurants', { token: acct.token })).status, 200)
  t.equal((await s.req('GET', `/restaurants?api_token=${acct.token}`)).status, 200, '?api_token=')
  t.equal((await s.req('GET', '/restaurants', { token: `${acct.token}x` })).status, 401, 'a wrong owner token')

  // The owner's password: web sign-in, and the mobile shell sign-in that returns a shell token.
  const password = keep('owner password', `pw-${Math.random().toString(36).slice(2)}-secret`)
  const email = `logs-${Date.now()}@owner.test`
  db.prepare('UPDATE owners SET email = ?, password_hash = ?, email_verified_at = ? WHERE id = ?').run(email, hashSecretSync(password), nowIso(), acct.ownerId)
  const form = (body: Record<string, string>) => fetch(`${site}/login`, { method: 'POST', redirect: 'manual', headers: { 'content-type': 'application/x-www-form-urlencoded', origin: site }, body: new URLSearchParams(body).toString() })
  t.ok([200, 303].includes((await form({ email, password })).status), 'web sign-in')
  await form({ email, password: `${password}-wrong` })
  const shell = await s.req('POST', '/app/auth/login', { body: { email, password, device: { id: 'logs-1', platform: 'ios', name: 'Phone' } } })
  t.equal(shell.status, 200, shell.text)
  keep('shell token', shell.body.token)
  t.equal((await s.req('GET', '/app/me', { token: shell.body.token })).status, 200)

  const storefront = keep('storefront token', createStorefrontToken(db, acct.storeId))
  const menu = await s.req('GET', '/storefront/menu', { headers: { 'x-storefront-token': storefront } })
  t.equal(menu.status, 200, menu.text)

  // A driver: owner-issued token, and the SMS login code.
  const driver = createDriver(db, acct.ownerId, acct.storeId)
  keep('driver token', driver.token)
  t.equal((await s.req('GET', '/driver/me', { token: driver.token })).status, 200)
  await s.req('POST', '/driver/login/request', { body: { phone: driver.phone } })
  const driverCode = keep('driver SMS code', codeIn(driver.phone))
  const dv = await s.req('POST', '/driver/login/verify', { body: { phone: driver.phone, code: driverCode, device: 'Pixel' } })
  keep('driver device token', dv.body.token)

  // A customer by OTP.
  const phone = `+1555${String(Math.floor(Math.random() * 1e7)).padStart(7, '0')}`
  await s.req('POST', `/restaurants/${acct.storeId}/customer/otp/request`, { body: { phone } })
  const otp = keep('customer OTP', codeIn(phone))
  await s.req('POST', `/restaurants/${acct.storeId}/customer/otp/verify`, { body: { phone, code: String((Number(otp) + 1) % 1e6).padStart(6, '0') } })
  const cv = await s.req('POST', `/restaurants/${acct.storeId}/customer/otp/verify`, { body: { phone, code: otp } })
  t.equal(cv.status, 200, cv.text)
  keep('customer token', cv.body.token)
  t.equal((await s.req('GET', '/customer/me', { token: cv.body.token })).status, 200)

  // Staff: password, PIN through an enrolled device, and a kitchen socket with `?token=`.
  const staff = createStaff(db, acct.storeId, { role: 'manager', pin: '73915' })
  keep('staff password', staff.password)
  keep('staff token', staff.token)
  const device = enrollDevice(db, acct.storeId, 'Kitchen')
  keep('PIN device key', device.key)
  const login = await s.req('POST', `/restaurants/${acct.storeId}/staff/login`, { body: { email: staff.email, password: staff.password, device: 'till' } })
  t.equal(login.status, 200, login.text)
  keep('staff login token', login.body.token)
  const pin = await s.req('POST', `/restaurants/${acct.storeId}/staff/pin`, { body: { pin: staff.pin, device: device.key } })
  t.equal(pin.status, 200, pin.text)
  keep('staff PIN token', pin.body.token)
  await s.req('POST', `/restaurants/${acct.storeId}/staff/pin`, { body: { pin: '00000', device: device.key } })
  const kds = await WsClient.open(`${wsBase(s)}/ws/kds?token=${encodeURIComponent(pin.body.token)}`)
  await kds.next((f) => f.type === 'snapshot')
  await kds.close()

  // Track token: API, page and socket.
  const order = await postOrder(s, acct.token, acct.storeId, { type: 'takeaway', items: [{ item_id: acct.menu.fries, quantity: 1 }] })
  const track = keep('track token', order.body.track_token)
  await s.req('GET', `/track/${track}`)
  await request(`${site}/t/${track}?from=sms`, 'GET')
  const tw = await WsClient.open(`${wsBase(s)}/ws/track/${track}`)
  await tw.next()
  await tw.close()

  // A third-party app's access and refresh tokens.
  const installed = installTestApp(db, createTestApp(db, acct.ownerId).id, acct.ownerId)
  keep('app access token', installed.accessToken)
  keep('app refresh token', installed.refreshToken)
  await s.req('GET', '/restaurants', { token: installed.accessToken })
  await fetch(`${site}/oauth/token`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: installed.refreshToken, client_id: 'nope' }).toString() })

  // A webhook endpoint: its signing secret, and a URL with `?token=` that fails (logged attempts).
  const urlSecret = keep('webhook URL token', `urlsecret${Math.random().toString(36).slice(2)}`)
  receiver.respond = () => ({ status: 500, body: 'no' })
  const ep = await s.req('POST', '/webhook-endpoints', { token: acct.token, body: { url: `${receiver.url}/hook?token=${urlSecret}`, events: ['order.created'] } })
  t.equal(ep.status, 201, ep.text)
  keep('webhook secret', ep.body.secret)
  await postOrder(s, acct.token, acct.storeId, { type: 'takeaway', items: [{ item_id: acct.menu.fries, quantity: 1 }] })
  await receiver.until((all) => all.length >= 1, 10_000, 'a webhook attempt')

  // A request that fails inside the server, carrying a token in its path and query.
  db.exec('ALTER TABLE orders RENAME TO orders_gone')
  try {
    t.equal((await s.req('GET', `/track/${track}?token=${acct.token}`)).status, 500)
  } finally { db.exec('ALTER TABLE orders_gone RENAME TO orders') }
})

t.test('the captured log holds none of them', async (t) => {
  await app.close() // flush and stop: everything the server would log is in the file now
  const log = readFileSync(logFile, 'utf8')
  const lines = log.split('\n').filter(Boolean).map((l) => JSON.parse(l) as { level: number; msg: string })
  t.ok(lines.filter((l) => l.msg === 'request').length >= 20, `the log is not empty (${lines.length} lines)`)
  t.ok(lines.some((l) => l.msg === 'unhandled error'), 'the failing request was logged')
  t.ok(secrets.size >= 19, `${secrets.size} secrets to look for`)
  for (const [what, value] of secrets) {
    t.notOk(log.includes(value), `${what} is in no log line`)
    // Also URL-encoded, as a query parameter would carry it.
    if (encodeURIComponent(value) !== value) t.notOk(log.includes(encodeURIComponent(value)), `${what} (URL-encoded) is in no log line`)
  }
})

t.test('the last line of defence: a secret that a future log call lets slip is still scrubbed', async (t) => {
  const file = join(dir, 'slip.log')
  const log = createLogger('trace', file)
  const token = secrets.get('owner token')!
  const whsec = secrets.get('webhook secret')!
  log.error({ err: new Error(`fetch https://hook.example/x?a=1&token=abc123secret failed for ${token}`), body: { password: 'hunter2-secret', pin: '73915' }, headers: { authorization: `Bearer ${token}` } }, `signing with ${whsec}`)
  log.flush()
  const line = readFileSync(file, 'utf8')
  for (const s of [token, whsec, 'abc123secret', 'hunter2-secret', '73915']) t.notOk(line.includes(s), `${s.slice(0, 6)}… scrubbed`)
  t.match(line, /token=\[redacted\]/)
  t.match(line, /signing with \[redacted\]/, 'the rest of the line stays readable')
})
