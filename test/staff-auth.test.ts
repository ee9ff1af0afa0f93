/**
 * Staff sign-in (api-v1 §4.7, §5, §8; docs/staff.md): email + password, two-factor with TOTP
 * (RFC 6238, codes made by an independent client), PIN sign-in only from enrolled devices with a
 * per-device lock-out that outsiders cannot trigger (issue 10 #8), the sign-in rate limit, and
 * logout of one device only. Device enrollment and revocation: test/staff-pin-devices.test.ts.
 */
import t from 'tap'
import * as OTPAuth from 'otpauth'
import { startServer } from './helpers/server.ts'
import { createAccount, createStore, isError } from './helpers/fixtures.ts'
import { createStaff } from './helpers/people.ts'
import { enrollDevice } from './helpers/pin-devices.ts'
import { addresses, requestFrom } from './helpers/source-address.ts'
import { PIN_LOCKOUT, reservePinAttempt } from '../src/auth/pin-devices.ts'

const s = await startServer({ RATE_LIMIT_PER_MINUTE: '100000' })
t.teardown(() => s.close())
const db = s.app.svc.db
const acct = createAccount(db)
/** Sign-in is limited per address and store (10/min), so each test gets its own store. */
const freshStore = () => createStore(db, acct.ownerId).id

const login = (storeId: number, body: Record<string, unknown>) => s.req('POST', `/restaurants/${storeId}/staff/login`, { body })
const pin = (storeId: number, body: Record<string, unknown>) => s.req('POST', `/restaurants/${storeId}/staff/pin`, { body })

t.test('email + password returns a token and the staff member with role and permissions', async (t) => {
  const store = freshStore()
  const m = createStaff(db, store, { role: 'cashier' })
  const r = await login(store, { email: m.email.toUpperCase(), password: m.password, device: 'till-1' })
  t.equal(r.status, 200)
  t.match(r.body, { token: /^dst_/, staff: { id: m.id, role: 'cashier', permissions: ['orders', 'coupons', 'customers'], restaurant_id: store, two_factor_enabled: false } })
  t.notOk('password_hash' in r.body.staff, 'no hashes in the answer')
  t.equal((await s.req('GET', '/staff/me', { token: r.body.token })).body.id, m.id, 'the token works')
  isError(t, await login(store, { email: m.email, password: 'wrong', device: 'x' }), 401, 'unauthenticated', 'wrong password')
  isError(t, await login(store, { email: 'nobody@staff.test', password: 'x', device: 'x' }), 401, 'unauthenticated', 'unknown email')
  isError(t, await login(freshStore(), { email: m.email, password: m.password }), 401, 'unauthenticated', 'staff belong to one store')
  isError(t, await login(999999, { email: m.email, password: m.password }), 404, 'not_found', 'no such store')
  isError(t, await login(store, { email: 'not-an-email', password: 'x' }), 422, 'validation_failed')
  const row = db.prepare('SELECT token_hash FROM staff_tokens WHERE staff_id = ? ORDER BY id DESC').get(m.id) as { token_hash: string }
  t.not(row.token_hash, r.body.token, 'tokens are stored hashed')
})

t.test('sign-in is limited to 10 per minute per address and store (api-v1 §8)', async (t) => {
  const store = freshStore()
  const codes: number[] = []
  for (let i = 0; i < 11; i++) codes.push((await login(store, { email: 'nobody@staff.test', password: 'x' })).status)
  t.same(codes.slice(0, 10), Array(10).fill(401))
  const last = await login(store, { email: 'nobody@staff.test', password: 'x' })
  isError(t, last, 429, 'rate_limited', 'the 12th attempt')
  t.ok(Number(last.headers.get('retry-after')) >= 1, 'Retry-After')
  t.equal((await login(freshStore(), { email: 'nobody@staff.test', password: 'x' })).status, 401, 'another store has its own budget')
})

t.test('two-factor: setup, confirm with a TOTP code, then sign-in needs a fresh code (RFC 6238)', async (t) => {
  const store = freshStore()
  const m = createStaff(db, store, { role: 'manager' })
  const setup = await s.req('POST', '/staff/2fa/setup', { token: m.token })
  t.equal(setup.status, 200)
  t.match(setup.body, { secret: /^[A-Z2-7]+=*$/, otpauth_url: /^otpauth:\/\/totp\//, algorithm: 'SHA1', digits: 6, period: 30 })
  const app = OTPAuth.URI.parse(setup.body.otpauth_url) as OTPAuth.TOTP
  t.equal(app.secret.base32, setup.body.secret, 'the URI carries the secret')
  t.equal((await login(store, { email: m.email, password: m.password })).status, 200, 'not on until confirmed')

  const wrong = String((Number(app.generate()) + 1) % 1_000_000).padStart(6, '0')
  isError(t, await s.req('POST', '/staff/2fa/confirm', { token: m.token, body: { code: wrong } }), 422, 'otp_invalid', 'a wrong first code')
  const ok = await s.req('POST', '/staff/2fa/confirm', { token: m.token, body: { code: app.generate() } })
  t.same(ok.body, { two_factor_enabled: true })
  t.equal((await s.req('GET', '/staff/me', { token: m.token })).body.two_factor_enabled, true)
  isError(t, await s.req('POST', '/staff/2fa/setup', { token: m.token }), 409, 'conflict', 'setup again while on')

  isError(t, await login(store, { email: m.email, password: m.password }), 401, 'two_factor_required', 'password alone')
  isError(t, await login(store, { email: m.email, password: m.password, totp_code: wrong }), 401, 'unauthenticated', 'a wrong code')
  // The confirm used this time step; the next step's code (within the ±1 drift window) is fresh.
  const next = app.generate({ timestamp: Date.now() + 30_000 })
  const good = await login(store, { email: m.email, password: m.password, totp_code: next, device: 'laptop' })
  t.equal(good.status, 200, 'password + fresh code')
  isError(t, await login(store, { email: m.email, password: m.password, totp_code: next }), 401, 'unauthenticated', 'a code is single-use')
  isError(t, await login(store, { email: m.email, password: 'nope', totp_code: app.generate({ timestamp: Date.now() + 30_000 }) }), 401, 'unauthenticated', 'a code never replaces the password')
})

t.test('PIN sign-in: an enrolled store device signs in with a PIN', async (t) => {
  const store = freshStore()
  const m = createStaff(db, store, { role: 'kitchen', station: 'grill', pin: '424242' })
  createStaff(db, store, { role: 'waiter', pin: '515151' })
  const kds = enrollDevice(db, store, 'Kitchen 1')
  t.match(kds.key, /^dsk_[\w-]{43}$/, 'a device key: family prefix and 256 random bits')
  const r = await pin(store, { pin: '424242', device: kds.key })
  t.equal(r.status, 200)
  t.match(r.body, { token: /^dst_/, staff: { id: m.id, role: 'kitchen', permissions: ['kds'], station: 'grill' } })
  const tok = db.prepare('SELECT device, method, pin_device_id FROM staff_tokens WHERE staff_id = ? ORDER BY id DESC').get(m.id) as Record<string, unknown>
  t.same(tok, { device: `pin-device:${kds.id}`, method: 'pin', pin_device_id: kds.id }, 'the token is tied to the device, and the key is not stored')
  isError(t, await pin(store, { pin: '000000', device: kds.key }), 401, 'unauthenticated', 'a wrong PIN')
  isError(t, await pin(store, { pin: '12', device: kds.key }), 422, 'validation_failed', 'a PIN is 4 to 8 digits')
  t.match(db.prepare('SELECT pin_hash FROM staff WHERE id = ?').get(m.id), { pin_hash: /^scrypt\$/ }, 'stored as a slow hash')
  t.notOk(JSON.stringify(db.prepare('SELECT * FROM staff_pin_devices WHERE id = ?').get(kds.id)).includes(kds.key), 'only a hash of the key is kept')
})

t.test('PIN sign-in needs an enrolled device: an unknown, foreign or revoked device is refused even with the right PIN', async (t) => {
  const store = freshStore()
  createStaff(db, store, { role: 'waiter', pin: '626262' })
  const other = freshStore()
  const foreign = enrollDevice(db, other)
  const revoked = enrollDevice(db, store)
  db.prepare("UPDATE staff_pin_devices SET revoked_at = '2020-01-01T00:00:00.000+00:00' WHERE id = ?").run(revoked.id)
  for (const [device, what] of [['tablet-1', 'a free-form device name'], [`dsk_${'A'.repeat(43)}`, 'a made-up key'], [foreign.key, "another store's device"], [revoked.key, 'a revoked device']] as const) {
    isError(t, await pin(store, { pin: '626262', device }), 401, 'device_not_enrolled', `${what}, right PIN`)
  }
  t.equal(db.prepare('SELECT COUNT(*) FROM staff_tokens t JOIN staff s ON s.id = t.staff_id WHERE s.store_id = ?').pluck().get(store), 1, 'no token but the fixture one')
})

t.test('100 wrong PINs from unenrolled devices on the internet do not touch an enrolled device (issue 10 #8)', async (t) => {
  const store = freshStore()
  createStaff(db, store, { role: 'kitchen', pin: '737373' })
  const kitchen = enrollDevice(db, store, 'Kitchen')
  // Ten addresses, ten attempts each: within every per-address limit, so each one reaches the server's checks.
  const url = `${s.base}/restaurants/${store}/staff/pin`
  const codes = await Promise.all(addresses(10, 20).map(async (ip, a) => {
    const out: string[] = []
    for (let i = 0; i < 10; i++) {
      const r = await requestFrom(ip, url, 'POST', { pin: String(100000 + a * 10 + i), device: `kds-${a}-${i}` })
      out.push(`${r.status} ${r.body?.code} ${r.body?.reason}`)
    }
    return out
  }))
  t.same(codes.flat(), Array(100).fill('401 unauthenticated device_not_enrolled'), 'every attempt is refused as an unknown device')
  t.match(db.prepare('SELECT failures, locked_until FROM staff_pin_devices WHERE id = ?').get(kitchen.id), { failures: 0, locked_until: null }, 'the enrolled device counted nothing')
  const r = await pin(store, { pin: '737373', device: kitchen.key })
  t.equal(r.status, 200, 'the kitchen screen still signs in')
})

t.test('unknown devices are limited per address across stores, and only unknown devices', async (t) => {
  const [a, b] = [freshStore(), freshStore()]
  createStaff(db, b, { role: 'waiter', pin: '848484' })
  const dev = enrollDevice(db, b)
  const ip = addresses(1, 40)[0]!
  for (let i = 0; i < 10; i++) t.equal((await requestFrom(ip, `${s.base}/restaurants/${a}/staff/pin`, 'POST', { pin: '1234', device: `guess-${i}` })).status, 401)
  const limited = await requestFrom(ip, `${s.base}/restaurants/${b}/staff/pin`, 'POST', { pin: '1234', device: 'guess-x' })
  isError(t, limited, 429, 'rate_limited', 'the 11th unknown device from one address, at another store')
  t.ok(Number(limited.headers.get('retry-after')) >= 1, 'Retry-After')
  t.equal((await requestFrom(ip, `${s.base}/restaurants/${b}/staff/pin`, 'POST', { pin: '848484', device: dev.key })).status, 200, 'an enrolled device from that address still signs in')
})

t.test(`PIN lock-out: ${PIN_LOCKOUT.deviceFailures} wrong PINs lock that enrolled device (even for the right PIN), not the others`, async (t) => {
  const store = freshStore()
  createStaff(db, store, { role: 'waiter', pin: '777777' })
  const [a, b] = [enrollDevice(db, store, 'Tablet A'), enrollDevice(db, store, 'Tablet B')]
  for (let i = 0; i < PIN_LOCKOUT.deviceFailures; i++) t.equal((await pin(store, { pin: String(100000 + i), device: a.key })).status, 401)
  const locked = await pin(store, { pin: '777777', device: a.key })
  isError(t, locked, 429, 'locked_out', 'the right PIN on a locked device')
  t.ok(Number(locked.headers.get('retry-after')) > 60, 'Retry-After says how long')
  t.equal((await pin(store, { pin: '777777', device: b.key })).status, 200, 'another device of the store still signs in')
  const listed = (await s.req('GET', `/restaurants/${store}/pin-devices`, { token: acct.token })).body as Array<{ id: number; locked_until: string | null }>
  t.ok(listed.find((d) => d.id === a.id)?.locked_until, 'the owner sees the lock')
  t.equal(listed.find((d) => d.id === b.id)?.locked_until, null)
  // The lock ends by time.
  db.prepare("UPDATE staff_pin_devices SET locked_until = '2000-01-01T00:00:00.000+00:00' WHERE id = ?").run(a.id)
  t.equal((await pin(store, { pin: '777777', device: a.key })).status, 200, 'after the lock the device signs in again')
})

t.test('the lock-out counter is per device and reserved before the hash (unit)', async (t) => {
  const store = freshStore()
  const [a, b] = [enrollDevice(db, store), enrollDevice(db, store)]
  const now = Date.now()
  for (let i = 1; i <= PIN_LOCKOUT.deviceFailures; i++) t.equal(reservePinAttempt(db, a.id, now), null, `attempt ${i} allowed`)
  t.ok(reservePinAttempt(db, a.id, now)! > now, 'then the device is locked')
  t.equal(reservePinAttempt(db, b.id, now), null, 'another device is not')
  t.equal(reservePinAttempt(db, a.id, now + PIN_LOCKOUT.lockMs + 1), null, 'the lock ends by time and counting starts over')
})

t.test('logout revokes only the token of this device; signing in again on a device replaces its token', async (t) => {
  const store = freshStore()
  const m = createStaff(db, store, { role: 'manager' })
  const a = (await login(store, { email: m.email, password: m.password, device: 'phone' })).body.token
  const b = (await login(store, { email: m.email, password: m.password, device: 'tablet' })).body.token
  t.equal((await s.req('POST', '/staff/logout', { token: a })).status, 200)
  isError(t, await s.req('GET', '/staff/me', { token: a }), 401, 'unauthenticated', 'the signed-out device')
  t.equal((await s.req('GET', '/staff/me', { token: b })).status, 200, 'the other device stays signed in')
  t.equal((await s.req('GET', '/staff/me', { token: m.token })).status, 200, 'and so does the fixture device')
  const b2 = (await login(store, { email: m.email, password: m.password, device: 'tablet' })).body.token
  isError(t, await s.req('GET', '/staff/me', { token: b }), 401, 'unauthenticated', 'the tablet\'s older token')
  t.equal((await s.req('GET', '/staff/me', { token: b2 })).status, 200)
})
