/**
 * SMS through the Twilio-compatible provider (issue 20 item 4; docs/providers.md "SMS"), against a
 * local fake of Twilio's Messages endpoint: the customer OTP and the driver login code arrive with
 * Basic auth and the form fields; a 500 is retried once inside the request, a 400 is not; a
 * provider that stays down is 503 `delivery_failed`; failures are logged with the number masked
 * and never the code; SMS_PROVIDER=twilio without its secrets stops the process with exit 78.
 */
import t from 'tap'
import { spawn } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { loadConfig } from '../src/config.ts'
import { buildApp } from '../src/app.ts'
import { createLogger } from '../src/log.ts'
import { findFreePort, request } from './helpers/server.ts'
import { createAccount, createDriver, createStore, isError } from './helpers/fixtures.ts'
import { startFake, type Recorded } from './helpers/fake-service.ts'
import { ROOT } from './helpers/process.ts'
import { until } from './helpers/people.ts'

const SID = `AC${'0123456789abcdef'.repeat(2)}`
const AUTH_TOKEN = 'twilio-auth-token-secret-0001'
const FROM = '+15005550006'

const twilio = await startFake(() => ({ status: 201, body: { sid: `SM${'f'.repeat(32)}`, status: 'queued' } }))
const dir = mkdtempSync(join(tmpdir(), 'dispatch-sms-'))
const logFile = join(dir, 'server.log')
const port = await findFreePort()
const site = `http://127.0.0.1:${port}`
const config = loadConfig({
  LOG_LEVEL: 'info', HOST: '127.0.0.1', PORT: String(port), DB_PATH: join(dir, 'test.db'), SITE_URL: site, RATE_LIMIT_PER_MINUTE: '100000', PRUNE_CRON: 'off',
  SMS_PROVIDER: 'twilio', TWILIO_ACCOUNT_SID: SID, TWILIO_AUTH_TOKEN: AUTH_TOKEN, TWILIO_FROM: FROM, SMS_API_BASE: twilio.url,
})
const app = buildApp(config, { log: createLogger('info', logFile) })
await app.listen()
t.teardown(async () => { await app.close(); await twilio.close(); rmSync(dir, { recursive: true, force: true }) })
const db = app.svc.db
const acct = createAccount(db)
const post = (path: string, body: unknown) => request(`${site}/api/v1${path}`, 'POST', { body })
const otp = (store: number, phone: string) => post(`/restaurants/${store}/customer/otp/request`, { phone })
const form = (r: Recorded) => Object.fromEntries(new URLSearchParams(r.body.toString()))
const codeIn = (r: Recorded) => /\b(\d{6})\b/.exec(form(r).Body ?? '')?.[1] ?? ''
/** The requests the fake got while `fn` ran. */
async function during(fn: () => Promise<unknown>): Promise<Recorded[]> {
  const before = twilio.requests.length
  await fn()
  return twilio.requests.slice(before)
}

t.test('a customer OTP reaches Twilio with Basic auth and the form fields, and the code signs in', async (t) => {
  const store = createStore(db, acct.ownerId).id
  const phone = '+15550170001'
  let answer
  const sent = await during(async () => { answer = await otp(store, phone) })
  t.match(answer, { status: 200, body: { sent: true } })
  t.equal(sent.length, 1, 'one request')
  const r = sent[0]!
  t.equal(r.method, 'POST')
  t.equal(r.path, `/2010-04-01/Accounts/${SID}/Messages.json`)
  t.equal(r.headers.authorization, `Basic ${Buffer.from(`${SID}:${AUTH_TOKEN}`).toString('base64')}`)
  t.match(r.headers['content-type'], /^application\/x-www-form-urlencoded/)
  t.match(form(r), { To: phone, From: FROM, Body: /^\d{6} is your .* sign-in code/ })
  const v = await post(`/restaurants/${store}/customer/otp/verify`, { phone, code: codeIn(r) })
  t.equal(v.status, 200, 'the code that arrived signs in')
})

t.test('a driver login code goes the same way, without the answer waiting for it', async (t) => {
  const d = createDriver(db, acct.ownerId, acct.storeId, { phone: '+15550170002' })
  const before = twilio.requests.length
  t.match(await post('/driver/login/request', { phone: d.phone }), { status: 200, body: { sent: true } })
  await until(() => twilio.requests.length > before, 10_000)
  const sent = twilio.requests.slice(before)
  t.equal(sent.length, 1)
  t.match(form(sent[0]!), { To: '+15550170002', Body: /driver login code is \d{6}/ })
  const v = await post('/driver/login/verify', { phone: d.phone, code: codeIn(sent[0]!) })
  t.match(v, { status: 200, body: { token: /^\w+_/ } })
})

t.test('a 500 then a 201: retried once, the caller gets its answer and the second code works', async (t) => {
  const store = createStore(db, acct.ownerId).id
  const phone = '+15550170003'
  twilio.plan({ status: 500, body: { code: 20500, message: 'Internal Server Error', status: 500 } })
  let answer
  const sent = await during(async () => { answer = await otp(store, phone) })
  t.match(answer, { status: 200, body: { sent: true } })
  t.equal(sent.length, 2, 'two attempts')
  t.same(form(sent[1]!), form(sent[0]!), 'the same message again')
  t.equal((await post(`/restaurants/${store}/customer/otp/verify`, { phone, code: codeIn(sent[1]!) })).status, 200)
})

t.test('a 400 is not retried: 503 delivery_failed without Retry-After', async (t) => {
  const store = createStore(db, acct.ownerId).id
  twilio.plan({ status: 400, body: { code: 21211, message: "The 'To' number +15550170004 is not a valid phone number.", status: 400 } })
  let answer
  const sent = await during(async () => { answer = await otp(store, '+15550170004') })
  t.equal(sent.length, 1, 'one attempt only')
  isError(t, answer!, 503, 'delivery_failed')
  t.equal(answer!.headers.get('retry-after'), null)
})

t.test('a provider that stays down: two attempts, 503 delivery_failed with Retry-After', async (t) => {
  const store = createStore(db, acct.ownerId).id
  twilio.plan({ status: 503, body: { code: 20503, message: 'down', status: 503 } }, { status: 503, body: { code: 20503, message: 'down', status: 503 } })
  let answer
  const sent = await during(async () => { answer = await otp(store, '+15550170005') })
  t.equal(sent.length, 2, 'one retry inside the request, then the answer')
  isError(t, answer!, 503, 'delivery_failed')
  t.equal(answer!.headers.get('retry-after'), '60')
})

t.test('a failing provider does not tell a driver\'s phone from any other number', async (t) => {
  const d = createDriver(db, acct.ownerId, acct.storeId, { phone: '+15550170009' })
  twilio.plan({ status: 400, body: { code: 21211, message: 'invalid', status: 400 } })
  const before = twilio.requests.length
  const driverAnswer = await post('/driver/login/request', { phone: d.phone })
  const otherAnswer = await post('/driver/login/request', { phone: '+15550170010' })
  t.same({ status: driverAnswer.status, body: driverAnswer.body }, { status: otherAnswer.status, body: otherAnswer.body }, 'the same answer')
  t.equal(driverAnswer.status, 200)
  await until(() => twilio.requests.length > before, 10_000)
  t.equal(twilio.requests.length - before, 1, 'only the driver\'s phone was texted')
})

t.test('a 429 with Retry-After is waited for and retried', async (t) => {
  const store = createStore(db, acct.ownerId).id
  twilio.plan({ status: 429, body: { code: 20429, message: 'Too Many Requests', status: 429 }, headers: { 'retry-after': '1' } })
  let answer
  const sent = await during(async () => { answer = await otp(store, '+15550170006') })
  t.equal(sent.length, 2)
  t.match(answer, { status: 200 })
})

t.test('failures are logged with the number masked, never the code, the text or the auth token', async (t) => {
  const log = readFileSync(logFile, 'utf8')
  const lines = log.split('\n').filter((l) => l.includes('"channel":"sms"'))
  t.ok(lines.some((l) => /"to":"\+1555•••04".*"status":400.*"reason":"twilio 400 code 21211"/.test(l)), 'the permanent failure, masked')
  t.ok(lines.some((l) => /retrying/.test(l) && /"status":500/.test(l)), 'the retried 500')
  for (const r of twilio.requests) {
    const code = codeIn(r)
    t.notMatch(log, new RegExp(`(?<!\\d)${code}(?!\\d)`), 'no code in the log')
    t.notOk(log.includes(form(r).To!), 'no full number in the log')
  }
  t.notOk(log.includes(AUTH_TOKEN), 'no auth token')
  t.notOk(log.includes('not a valid phone number'), 'Twilio\'s message (it quotes the number) stays out')
})

t.test('SMS_PROVIDER=twilio without its secrets: one line and exit 78', async (t) => {
  const proc = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    cwd: ROOT, env: { ...process.env, SMS_PROVIDER: 'twilio', TWILIO_ACCOUNT_SID: SID, TWILIO_AUTH_TOKEN: AUTH_TOKEN, DB_PATH: join(dir, 'never.db') }, stdio: ['ignore', 'pipe', 'pipe'],
  })
  let err = ''
  proc.stderr.on('data', (d: Buffer) => { err += d.toString() })
  const code = await new Promise((r) => proc.once('exit', r))
  t.equal(code, 78)
  t.match(err.trim(), /^[^\n]*SMS_PROVIDER=twilio needs TWILIO_ACCOUNT_SID, TWILIO_AUTH_TOKEN and TWILIO_FROM or TWILIO_MESSAGING_SERVICE_SID[^\n]*$/)
  t.notMatch(err, AUTH_TOKEN)
})
