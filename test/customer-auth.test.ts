/**
 * Customer sign-in (api-v1 §4.5, §5, §6, §8): per-store accounts, register/login with the
 * 10-per-minute limit, SMS codes (6 per minute; expiry, single use, limited wrong attempts,
 * replaced by a new request), texts and code checks capped per phone across stores and client
 * addresses (issue 10 #4), `customer.created`, and logout of one device only.
 */
import t from 'tap'
import { startServer } from './helpers/server.ts'
import { createAccount, createStore, isError, outbox } from './helpers/fixtures.ts'
import type { RecordingSmsProvider } from '../src/providers/sms.ts'
import { OTP, OTP_PER_PHONE } from '../src/auth/customer.ts'
import { createCustomer } from './helpers/people.ts'
import { addresses, requestFrom } from './helpers/source-address.ts'

const s = await startServer({ RATE_LIMIT_PER_MINUTE: '100000' })
t.teardown(() => s.close())
const db = s.app.svc.db
const acct = createAccount(db)
const sms = s.app.svc.sms as RecordingSmsProvider
/** Limits count per address and store, so each test works in its own store. */
const fresh = () => createStore(db, acct.ownerId).id
const post = (store: number, what: string, body: unknown) => s.req('POST', `/restaurants/${store}/customer/${what}`, { body })
const codeFor = (phone: string) => /\b(\d{6})\b/.exec(sms.lastTo(phone)!.body)![1]!

t.test('register creates a per-store customer, returns a token and emits customer.created', async (t) => {
  const store = fresh()
  const r = await post(store, 'register', { name: 'Ada', email: 'Ada@Example.com', password: 'correct horse', phone: '+1 (555) 010-0001', consents: { marketing_email: true } })
  t.equal(r.status, 200, 'a create answers 200 (api-v1 §4)')
  t.match(r.body, { token: /^dsc_/, customer: { id: Number, restaurant_id: store, name: 'Ada', email: 'ada@example.com', phone: '+15550100001', consents: { marketing_email: true } } })
  t.notOk('password_hash' in r.body.customer)
  t.match(outbox(db, 'customer.created').find((e) => e.data.customer_id === r.body.customer.id), { store_id: store, data: { restaurant_id: store, source: 'register' } })
  t.equal((await s.req('GET', '/customer/me', { token: r.body.token })).body.id, r.body.customer.id)
  const dup = await post(store, 'register', { name: 'Ada 2', email: 'ada@example.com', password: 'another pass' })
  isError(t, dup, 422, 'validation_failed', 'the same email twice at one store')
  t.ok(dup.body.errors.email)
  const elsewhere = await post(fresh(), 'register', { name: 'Ada', email: 'ada@example.com', password: 'correct horse' })
  t.equal(elsewhere.status, 200, 'the same email at another store is another customer')
  t.not(elsewhere.body.customer.id, r.body.customer.id)
  isError(t, await post(store, 'register', { name: 'Bo', email: 'bo@example.com', password: 'short' }), 422, 'validation_failed', 'a short password')
  isError(t, await post(999_999_999, 'register', { name: 'Bo', email: 'bo@example.com', password: 'short' }), 404, 'not_found', 'a store that does not exist, before the body is validated (issue 11 item 3)')
})

t.test('login: email, password, device → {token, customer}; wrong credentials 401; 10 per minute', async (t) => {
  const store = fresh()
  const reg = (await post(store, 'register', { name: 'Cy', email: 'cy@example.com', password: 'pass-word-1' })).body
  const r = await post(store, 'login', { email: 'CY@example.com', password: 'pass-word-1', device: 'iphone' })
  t.equal(r.status, 200)
  t.match(r.body, { token: /^dsc_/, customer: { id: reg.customer.id, name: 'Cy' } })
  isError(t, await post(store, 'login', { email: 'cy@example.com', password: 'nope', device: 'x' }), 401, 'unauthenticated')
  isError(t, await post(store, 'login', { email: 'cy@example.com', password: 'pass-word-1' }), 422, 'validation_failed', 'device is required')
  const statuses: number[] = []
  for (let i = 0; i < 9; i++) statuses.push((await post(store, 'login', { email: 'who@example.com', password: 'x', device: 'd' })).status)
  const limited = await post(store, 'login', { email: 'cy@example.com', password: 'pass-word-1', device: 'iphone' })
  isError(t, limited, 429, 'rate_limited', 'the 11th sign-in call within a minute (register counted separately)')
  t.ok(Number(limited.headers.get('retry-after')) >= 1)
})

t.test('OTP: a code by SMS, verify finds or creates the customer, and a code works once', async (t) => {
  const store = fresh()
  const phone = '+15550109999'
  const req = await post(store, 'otp/request', { phone: '+1 555 010 9999' })
  t.same(req.body, { sent: true, expires_in: OTP.ttlMs / 1000 })
  const code = codeFor(phone)
  t.notOk(JSON.stringify(db.prepare('SELECT * FROM customer_otps WHERE phone = ?').all(phone)).includes(code), 'only a hash is stored')
  const v1 = await post(store, 'otp/verify', { phone, code })
  t.equal(v1.status, 200)
  t.match(v1.body, { token: /^dsc_/, created: true, customer: { phone, name: null } })
  t.match(outbox(db, 'customer.created').find((e) => e.data.customer_id === v1.body.customer.id), { data: { source: 'otp' } })
  isError(t, await post(store, 'otp/verify', { phone, code }), 422, 'otp_expired', 'the same code again')
  await post(store, 'otp/request', { phone })
  const v2 = await post(store, 'otp/verify', { phone, code: codeFor(phone), device: 'tablet' })
  t.match(v2.body, { created: false, customer: { id: v1.body.customer.id } }, 'the same phone finds the same customer')
  t.equal(outbox(db, 'customer.created').filter((e) => e.data.customer_id === v1.body.customer.id).length, 1, 'created once')
})

t.test('OTP: codes expire, a new request replaces the old code, wrong attempts are limited', async (t) => {
  const store = fresh()
  const phone = '+15550108888'
  await post(store, 'otp/request', { phone })
  const first = codeFor(phone)
  db.prepare("UPDATE customer_otps SET expires_at = '2000-01-01T00:00:00.000+00:00' WHERE phone = ? AND store_id = ?").run(phone, store)
  isError(t, await post(store, 'otp/verify', { phone, code: first }), 422, 'otp_expired', 'an expired code')

  await post(store, 'otp/request', { phone })
  const replaced = codeFor(phone)
  await post(store, 'otp/request', { phone })
  const current = codeFor(phone)
  let used = 0
  if (replaced !== current) {
    isError(t, await post(store, 'otp/verify', { phone, code: replaced }), 422, 'otp_invalid', 'a replaced code does not match the current one')
    used = 1
  }
  const wrong = current === '000000' ? '111111' : '000000'
  for (let i = used + 1; i < OTP.maxAttempts; i++) {
    const r = await post(store, 'otp/verify', { phone, code: wrong })
    isError(t, r, 422, 'otp_invalid', `wrong attempt ${i}`)
    t.match(r.body.message, new RegExp(`${OTP.maxAttempts - i} tries left`))
  }
  isError(t, await post(store, 'otp/verify', { phone, code: wrong }), 422, 'otp_expired', `attempt ${OTP.maxAttempts} burns the code`)
  isError(t, await post(store, 'otp/verify', { phone, code: current }), 422, 'otp_expired', 'even the right code is refused afterwards')
  isError(t, await post(store, 'otp/verify', { phone: '+15550107777', code: '123456' }), 422, 'otp_expired', 'a phone that never asked')
})

t.test('OTP requests are limited to 6 per minute', async (t) => {
  const store = fresh()
  for (let i = 0; i < 6; i++) t.equal((await post(store, 'otp/request', { phone: `+1555011000${i}` })).status, 200)
  const r = await post(store, 'otp/request', { phone: '+15550110009' })
  isError(t, r, 429, 'rate_limited', 'the 7th request')
  t.notOk(sms.lastTo('+15550110009'), 'no SMS for a refused request')
  isError(t, await post(store, 'otp/request', { phone: 'call me maybe' }), 429, 'rate_limited')
  isError(t, await post(fresh(), 'otp/request', { phone: 'call me maybe' }), 422, 'validation_failed', 'not a phone number')
})

t.test('OTP texts are capped per phone across stores and addresses; no text when refused (issue 10 #4)', async (t) => {
  const ips = addresses(3, 50)
  const [smsCap] = OTP_PER_PHONE.sms
  const known = '+15550120001'
  const unknown = '+15550120002'
  const sentTo = (phone: string) => sms.sent.filter((m) => m.to === phone).length
  let stores: number[] = []
  for (const phone of [known, unknown]) {
    stores = [fresh(), fresh(), fresh()]
    if (phone === known) createCustomer(db, stores[0]!, { phone })
    // Every address × store pair spends its whole route budget (6 per minute) on this one phone.
    const answers: string[] = []
    await Promise.all(ips.map(async (ip) => {
      for (const store of stores) {
        for (let i = 0; i < 6; i++) {
          const r = await requestFrom(ip, `${s.base}/restaurants/${store}/customer/otp/request`, 'POST', { phone })
          answers.push(r.status === 429 ? `429 ${r.body?.code} ${Number(r.headers.get('retry-after')) >= 1}` : `${r.status}`)
        }
      }
    }))
    const tally = answers.reduce<Record<string, number>>((m, x) => ({ ...m, [x]: (m[x] ?? 0) + 1 }), {})
    t.same(tally, { 200: smsCap.limit, '429 rate_limited true': 54 - smsCap.limit }, `${phone === known ? 'a phone with an account' : 'a phone without one'}: ${smsCap.limit} sent, the rest 429 with Retry-After`)
    t.equal(sentTo(phone), smsCap.limit, `${smsCap.limit} texts, not 54`)
  }
  const other = '+15550120003'
  t.equal((await requestFrom(addresses(1, 60)[0]!, `${s.base}/restaurants/${stores[0]}/customer/otp/request`, 'POST', { phone: other })).status, 200, 'another phone is not affected')
  t.equal(sentTo(other), 1)
})

t.test('OTP verification attempts are capped per phone across stores and addresses (issue 10 #4)', async (t) => {
  const stores = [fresh(), fresh(), fresh()]
  const ips = addresses(3, 70)
  const [verifyCap] = OTP_PER_PHONE.verify
  const phone = '+15550120004'
  t.equal((await post(stores[0]!, 'otp/request', { phone })).status, 200)
  const code = codeFor(phone)
  const wrong = code === '000000' ? '111111' : '000000'
  // Guesses spread over addresses and the other stores, each within its own per-address limit.
  for (let i = 0; i < verifyCap.limit; i++) {
    const r = await requestFrom(ips[i % 3]!, `${s.base}/restaurants/${stores[1 + (i % 2)]}/customer/otp/verify`, 'POST', { phone, code: wrong })
    t.equal(r.status, 422, `guess ${i + 1} is checked`)
  }
  const capped = await post(stores[0]!, 'otp/verify', { phone, code })
  isError(t, capped, 429, 'rate_limited', `check ${verifyCap.limit + 1} for the phone, even with the right code`)
  t.ok(Number(capped.headers.get('retry-after')) >= 1, 'Retry-After')
  t.equal(db.prepare('SELECT COUNT(*) FROM customers WHERE phone = ?').pluck().get(phone), 0, 'nobody signed in')
  isError(t, await post(stores[0]!, 'otp/verify', { phone: '+15550120005', code }), 422, 'otp_expired', 'another phone is still checked')
})

t.test('logout revokes only the token it was sent with; the customer\'s other devices stay signed in', async (t) => {
  const store = fresh()
  await post(store, 'register', { name: 'Di', email: 'di@example.com', password: 'pass-word-2', device: 'web' })
  const phone = (await post(store, 'login', { email: 'di@example.com', password: 'pass-word-2', device: 'phone' })).body.token
  const tablet = (await post(store, 'login', { email: 'di@example.com', password: 'pass-word-2', device: 'tablet' })).body.token
  t.same((await s.req('POST', '/customer/logout', { token: phone })).body, { revoked: true })
  isError(t, await s.req('GET', '/customer/me', { token: phone }), 401, 'unauthenticated', 'the signed-out device')
  t.equal((await s.req('GET', '/customer/me', { token: tablet })).status, 200, 'another device')
  t.equal(db.prepare("SELECT COUNT(*) FROM customer_tokens t JOIN customers c ON c.id = t.customer_id WHERE c.email = 'di@example.com' AND c.store_id = ? AND t.revoked_at IS NULL").pluck().get(store), 2, 'web and tablet remain')
})
