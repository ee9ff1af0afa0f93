/**
 * The owner manages staff and storefront tokens (docs/staff.md "Managing staff", docs/storefront.md
 * "Tokens"): members with a role, per-staff overrides that GET /staff/me shows and the routes
 * enforce at once, slow-hashed passwords and PINs unique per store, sign-out on credential
 * changes, removal closing kitchen screens; storefront tokens issued once, listed without the
 * secret and revoked at once. Another owner gets 404 throughout.
 */
import t from 'tap'
import { startServer } from './helpers/server.ts'
import { createAccount, isError } from './helpers/fixtures.ts'
import { WsClient, wsBase } from './helpers/ws-client.ts'
import { enrollDevice } from './helpers/pin-devices.ts'

const s = await startServer({ RATE_LIMIT_PER_MINUTE: '100000' })
t.teardown(() => s.close())
const db = s.app.svc.db
const a = createAccount(db)
const b = createAccount(db)
const base = `/restaurants/${a.storeId}`
const add = (body: Record<string, unknown>, token = a.token, store = a.storeId) => s.req('POST', `/restaurants/${store}/staff`, { token, body })
/** PIN sign-in needs an enrolled device (docs/staff.md "PIN devices"): one per name, enrolled on first use. */
const devices = new Map<string, string>()
const deviceKey = (name: string) => devices.get(name) ?? devices.set(name, enrollDevice(db, a.storeId, name).key).get(name)!
const pinIn = (pin: string, device: string) => s.req('POST', `${base}/staff/pin`, { body: { pin, device: deviceKey(device) } })
const pwIn = (email: string, password: string, device: string) => s.req('POST', `${base}/staff/login`, { body: { email, password, device } })
let n = 0
const email = () => `member${++n}@staff.test`

t.test('adding a member: role defaults, overrides, station; secrets only as slow hashes', async (t) => {
  const r = await add({ name: 'Kim', email: email(), role: 'kitchen', password: 'long-password', pin: '2468', station: 'grill', permissions: { grant: ['orders'], revoke: [] } })
  t.equal(r.status, 200, 'creating answers 200 (api-v1 §4)')
  t.match(r.body, { id: Number, restaurant_id: a.storeId, role: 'kitchen', station: 'grill', has_pin: true, permissions: ['orders', 'kds'], overrides: { grant: ['orders'], revoke: [] }, two_factor_enabled: false })
  t.notOk(JSON.stringify(r.body).includes('long-password') || 'password_hash' in r.body || 'pin_hash' in r.body, 'no secrets in the answer')
  const row = db.prepare('SELECT password_hash, pin_hash FROM staff WHERE id = ?').get(r.body.id) as { password_hash: string; pin_hash: string }
  t.match(row, { password_hash: /^scrypt\$16384\$/, pin_hash: /^scrypt\$16384\$/ }, 'scrypt (N=2^14) for both')
  const signed = await pinIn('2468', 'tablet')
  t.equal(signed.status, 200, 'the PIN signs in')
  t.match(signed.body.staff, { id: r.body.id, permissions: ['orders', 'kds'] })
  const list = await s.req('GET', `${base}/staff`, { token: a.token })
  t.ok(list.body.some((m: { id: number }) => m.id === r.body.id))

  isError(t, await add({ name: 'Dup', email: r.body.email, role: 'waiter', password: 'long-password' }), 422, 'validation_failed', 'the same email twice in a store')
  const dupPin = await add({ name: 'Dup', email: email(), role: 'waiter', password: 'long-password', pin: '2468' })
  isError(t, dupPin, 422, 'validation_failed', 'a PIN another member has')
  t.ok(dupPin.body.errors.pin)
  isError(t, await add({ name: 'X', email: email(), role: 'chef', password: 'long-password' }), 422, 'validation_failed', 'an unknown role')
  isError(t, await add({ name: 'X', email: email(), role: 'waiter', password: 'long-password', permissions: { grant: ['root'] } }), 422, 'validation_failed', 'an unknown permission')
  t.equal((await add({ name: 'Same PIN elsewhere', email: email(), role: 'waiter', password: 'long-password', pin: '2468' }, b.token, b.storeId)).status, 200, 'PINs are unique per store only')
})

t.test('overrides and role changes apply to existing tokens at once and show in GET /staff/me', async (t) => {
  const m = (await add({ name: 'Cas', email: email(), role: 'cashier', password: 'long-password' })).body
  const token = (await pwIn(m.email, 'long-password', 'till')).body.token
  isError(t, await s.req('GET', '/staff/kds', { token }), 403, 'forbidden', 'a cashier has no kds')
  const up = await s.req('PUT', `${base}/staff/${m.id}`, { token: a.token, body: { permissions: { grant: ['kds'], revoke: ['coupons'] } } })
  t.same(up.body.permissions, ['orders', 'kds', 'customers'])
  t.same((await s.req('GET', '/staff/me', { token })).body.permissions, ['orders', 'kds', 'customers'], '/staff/me shows the effective set')
  t.equal((await s.req('GET', '/staff/kds', { token })).status, 200, 'the grant works on the same token')
  isError(t, await s.req('GET', '/staff/coupons', { token }), 403, 'forbidden', 'the revoke works on the same token')
  await s.req('PUT', `${base}/staff/${m.id}`, { token: a.token, body: { role: 'manager', permissions: { grant: [], revoke: [] } } })
  t.match((await s.req('GET', '/staff/me', { token })).body, { role: 'manager', permissions: ['orders', 'menu_edit', 'coupons', 'analytics', 'kds', 'customers'] }, 'a new role, no overrides')
  t.equal((await s.req('GET', '/staff/analytics', { token })).status, 200)
})

t.test('a new password signs out every device; a new PIN signs out the PIN devices; removal closes kitchen screens', async (t) => {
  const m = (await add({ name: 'Lee', email: email(), role: 'waiter', password: 'first-password', pin: '1357' })).body
  const byPw = (await pwIn(m.email, 'first-password', 'phone')).body.token
  const byPin = (await pinIn('1357', 'pos-1')).body.token
  await s.req('PUT', `${base}/staff/${m.id}`, { token: a.token, body: { pin: '9753' } })
  isError(t, await s.req('GET', '/staff/me', { token: byPin }), 401, 'unauthenticated', 'the PIN device after a PIN change')
  t.equal((await s.req('GET', '/staff/me', { token: byPw })).status, 200, 'the password device stays signed in')
  isError(t, await pinIn('1357', 'pos-2'), 401, 'unauthenticated', 'the old PIN')
  t.equal((await pinIn('9753', 'pos-2')).status, 200, 'the new PIN')
  await s.req('PUT', `${base}/staff/${m.id}`, { token: a.token, body: { password: 'second-password' } })
  isError(t, await s.req('GET', '/staff/me', { token: byPw }), 401, 'unauthenticated', 'every device after a password change')
  isError(t, await pwIn(m.email, 'first-password', 'phone'), 401, 'unauthenticated', 'the old password')
  const fresh = (await pwIn(m.email, 'second-password', 'phone')).body.token
  t.ok(fresh)
  const screen = await WsClient.open(`${wsBase(s)}/ws/kds?token=${encodeURIComponent(fresh)}`)
  await screen.next((f) => f.type === 'snapshot')
  const off = await s.req('PUT', `${base}/staff/${m.id}`, { token: a.token, body: { pin: null } })
  t.equal(off.body.has_pin, false, '`pin: null` removes the PIN')
  t.equal((await s.req('DELETE', `${base}/staff/${m.id}`, { token: a.token })).status, 204)
  t.equal((await screen.closedWithin()).code, 4001, 'the kitchen screen of a removed member closes')
  isError(t, await s.req('GET', '/staff/me', { token: fresh }), 401, 'unauthenticated')
  isError(t, await s.req('DELETE', `${base}/staff/${m.id}`, { token: a.token }), 404, 'not_found', 'gone')
})

t.test('the owner can turn two-factor off for a member who lost the phone, not on', async (t) => {
  const m = (await add({ name: 'Tfa', email: email(), role: 'manager', password: 'long-password' })).body
  db.prepare("UPDATE staff SET totp_secret = 'JBSWY3DPEHPK3PXP' WHERE id = ?").run(m.id)
  isError(t, await pwIn(m.email, 'long-password', 'x'), 401, 'two_factor_required')
  isError(t, await s.req('PUT', `${base}/staff/${m.id}`, { token: a.token, body: { two_factor_enabled: true } }), 422, 'validation_failed', 'the owner cannot turn it on')
  t.equal((await s.req('PUT', `${base}/staff/${m.id}`, { token: a.token, body: { two_factor_enabled: false } })).body.two_factor_enabled, false)
  t.equal((await pwIn(m.email, 'long-password', 'x')).status, 200, 'the password alone works again')
})

t.test('another owner: 404 on the store and its members; a staff token is not an owner token', async (t) => {
  const m = (await add({ name: 'Own', email: email(), role: 'waiter', password: 'long-password' })).body
  isError(t, await s.req('GET', `${base}/staff`, { token: b.token }), 404, 'not_found', 'list')
  isError(t, await add({ name: 'Mole', email: email(), role: 'manager', password: 'long-password' }, b.token), 404, 'not_found', 'add')
  // The store is resolved before the body is validated (issue 11): a bad body there is still a 404, never a 422.
  isError(t, await add({ name: '', email: 'not-an-email', role: 'chef', password: 'x' }, b.token), 404, 'not_found', 'add with an invalid body')
  isError(t, await s.req('PUT', `${base}/staff/${m.id}`, { token: b.token, body: { role: 'chef', pin: 'abc' } }), 404, 'not_found', 'change with an invalid body')
  isError(t, await s.req('PUT', `${base}/staff/${m.id}`, { token: b.token, body: { role: 'manager' } }), 404, 'not_found', 'change')
  isError(t, await s.req('PUT', `/restaurants/${b.storeId}/staff/${m.id}`, { token: b.token, body: { role: 'manager' } }), 404, 'not_found', 'change through its own store')
  isError(t, await s.req('DELETE', `/restaurants/${b.storeId}/staff/${m.id}`, { token: b.token }), 404, 'not_found', 'remove through its own store')
  t.equal((db.prepare('SELECT role FROM staff WHERE id = ?').get(m.id) as { role: string }).role, 'waiter', 'untouched')
  const staffToken = (await pwIn(m.email, 'long-password', 'x')).body.token
  isError(t, await s.req('GET', `${base}/staff`, { token: staffToken }), 401, 'unauthenticated', 'staff cannot manage staff')
})

t.test('storefront tokens: issued once, listed without the secret, revoked at once; per store', async (t) => {
  const r = await s.req('POST', `${base}/storefront-tokens`, { token: a.token, body: { scopes: ['menu:read'] } })
  t.equal(r.status, 200, 'issuing answers 200 (api-v1 §4)')
  t.match(r.body, { id: Number, token: /^dss_/, scopes: ['menu:read'], revoked_at: null })
  const sf = (token: string, path = '/storefront/menu') => s.req('GET', path, { headers: { 'x-storefront-token': token } })
  t.equal((await sf(r.body.token)).status, 200, 'it works at once')
  isError(t, await s.req('POST', '/storefront/orders', { headers: { 'x-storefront-token': r.body.token }, body: { type: 'takeaway', items: [{ item_id: a.menu.fries, quantity: 1 }] } }), 403, 'forbidden', 'only the scopes it was given')
  const both = await s.req('POST', `${base}/storefront-tokens`, { token: a.token })
  t.same(both.body.scopes, ['menu:read', 'order:write'], 'both scopes by default')
  const list = await s.req('GET', `${base}/storefront-tokens`, { token: a.token })
  t.ok(list.body.some((x: { id: number }) => x.id === r.body.id))
  t.notOk(JSON.stringify(list.body).includes(r.body.token), 'never the token itself')
  isError(t, await s.req('DELETE', `${base}/storefront-tokens/${r.body.id}`, { token: b.token }), 404, 'not_found', 'another owner')
  isError(t, await s.req('DELETE', `/restaurants/${b.storeId}/storefront-tokens/${r.body.id}`, { token: b.token }), 404, 'not_found', 'through another store')
  t.equal((await s.req('DELETE', `${base}/storefront-tokens/${r.body.id}`, { token: a.token })).status, 204)
  isError(t, await sf(r.body.token), 401, 'unauthenticated', 'revoked at once')
  t.equal((await sf(both.body.token)).status, 200, 'the other token still works')
  isError(t, await s.req('POST', `${base}/storefront-tokens`, { token: a.token, body: { scopes: ['admin'] } }), 422, 'validation_failed')
  isError(t, await s.req('POST', `${base}/storefront-tokens`, { token: b.token, body: { scopes: ['admin'] } }), 404, 'not_found', 'another owner\'s store, before the body is validated (issue 11 item 3)')
})
