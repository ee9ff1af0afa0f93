/**
 * Coupons (docs/storefront.md "Coupons"): the pure discount rules, management by the owner and by
 * staff with `coupons` (tenancy: 404 elsewhere), the rules of an edit, the usage limit holding
 * when the last use is raced, the validity window, and the demo seed's coupon working end to end.
 * Deletes racing other requests: test/delete-races.test.ts.
 */
import t from 'tap'
import { startServer } from './helpers/server.ts'
import { createAccount, isError } from './helpers/fixtures.ts'
import { createStaff, createStorefrontToken } from './helpers/people.ts'
import { enrollDevice } from './helpers/pin-devices.ts'
import { applyCoupon, editCoupon, normalizeCode, type Coupon, type CouponSettings } from '../src/domain/coupons.ts'

t.test('the discount: percent or fixed, never above the subtotal, with minimum, window, limit and active flag', async (t) => {
  const base: Coupon = { code: 'X', kind: 'percent', value: 10, minOrder: 0, startsAt: null, endsAt: null, usageLimit: null, uses: 0, active: true }
  const now = '2026-06-01T12:00:00.000+00:00'
  t.same(applyCoupon(base, 2599, now), { ok: true, discount: 260 }, '10% of 25.99, rounded to the cent')
  t.same(applyCoupon({ ...base, kind: 'fixed', value: 500 }, 2000, now), { ok: true, discount: 500 })
  t.same(applyCoupon({ ...base, kind: 'fixed', value: 5000 }, 2000, now), { ok: true, discount: 2000 }, 'capped at the subtotal')
  t.same(applyCoupon({ ...base, kind: 'percent', value: 100 }, 2000, now), { ok: true, discount: 2000 })
  t.match(applyCoupon({ ...base, minOrder: 3000 }, 2999, now), { ok: false, reason: /at least 30\.00/ })
  t.ok(applyCoupon({ ...base, minOrder: 3000 }, 3000, now).ok, 'the minimum itself qualifies')
  t.match(applyCoupon({ ...base, startsAt: '2026-06-02T00:00:00Z' }, 100, now), { ok: false, reason: /not valid yet/ })
  t.match(applyCoupon({ ...base, endsAt: '2026-06-01T12:00:00Z' }, 100, now), { ok: false, reason: /expired/ }, 'the end is exclusive')
  t.match(applyCoupon({ ...base, usageLimit: 3, uses: 3 }, 100, now), { ok: false, reason: /used up/ })
  t.match(applyCoupon({ ...base, active: false }, 100, now), { ok: false, reason: /not active/ })
  t.equal(normalizeCode('  welcome10 '), 'WELCOME10')
})

t.test('an edit is checked against the coupon as it is when the store actor applies it', async (t) => {
  const current: CouponSettings = { code: 'TEN', kind: 'fixed', value: 1000, minOrder: 0, startsAt: '2026-01-01T00:00:00Z', endsAt: null, usageLimit: null, active: true }
  t.match(editCoupon(current, { kind: 'percent' }), { ok: false, errors: { value: [/Send `value`/] } }, 'changing the kind needs a value of that kind')
  t.match(editCoupon(current, { kind: 'percent', value: 12.5 }), { ok: false, errors: { value: [/whole number/] } })
  t.match(editCoupon(current, { ends_at: '2025-12-31T00:00:00Z' }), { ok: false, errors: { ends_at: Array } }, 'the window is checked with the stored start')
  t.same(editCoupon(current, { value: 7.5, code: ' ten2 ', active: false }), {
    ok: true, settings: { ...current, code: 'TEN2', value: 750, active: false },
  }, 'amounts become cents; fields not sent stay')
  t.match(editCoupon(null, { code: 'NEW', kind: 'fixed' }), { ok: false, errors: { value: Array } }, 'a new coupon needs a value')
  t.same(editCoupon(null, { code: 'new', kind: 'percent', value: 15 }), {
    ok: true, settings: { code: 'NEW', kind: 'percent', value: 15, minOrder: 0, startsAt: null, endsAt: null, usageLimit: null, active: true },
  }, 'defaults of a new coupon')
})

const s = await startServer({ RATE_LIMIT_PER_MINUTE: '100000' })
t.teardown(() => s.close())
const db = s.app.svc.db
const a = createAccount(db)
const b = createAccount(db)
const sfA = createStorefrontToken(db, a.storeId)

t.test('owner routes: create, list, update, delete; codes unique per store and case-insensitive', async (t) => {
  const c = await s.req('POST', `/restaurants/${a.storeId}/coupons`, { token: a.token, body: { code: 'summer-5', kind: 'fixed', value: 5, min_order: 20, usage_limit: 10, ends_at: '2099-01-01T00:00:00Z' } })
  t.equal(c.status, 200, 'a create answers 200 (api-v1 §4)')
  t.match(c.body, { code: 'SUMMER-5', kind: 'fixed', value: 5, min_order: 20, usage_limit: 10, uses: 0, active: true, ends_at: '2099-01-01T00:00:00Z' })
  t.match((await s.req('POST', `/restaurants/${a.storeId}/coupons`, { token: a.token, body: { code: 'Summer-5', kind: 'percent', value: 5 } })).body, { code: 'validation_failed', errors: { code: Array } }, 'duplicate code')
  t.equal((await s.req('POST', `/restaurants/${b.storeId}/coupons`, { token: b.token, body: { code: 'SUMMER-5', kind: 'percent', value: 5 } })).status, 200, 'another store may use the same code')
  isError(t, await s.req('POST', `/restaurants/${a.storeId}/coupons`, { token: a.token, body: { code: 'P150', kind: 'percent', value: 150 } }), 422, 'validation_failed', 'over 100%')
  isError(t, await s.req('POST', `/restaurants/${a.storeId}/coupons`, { token: a.token, body: { code: 'WIN', kind: 'percent', value: 5, starts_at: '2030-01-01T00:00:00Z', ends_at: '2029-01-01T00:00:00Z' } }), 422, 'validation_failed', 'a window that ends before it starts')
  t.match((await s.req('PUT', `/restaurants/${a.storeId}/coupons/${c.body.id}`, { token: a.token, body: { active: false, value: 7.5 } })).body, { active: false, value: 7.5, code: 'SUMMER-5' })
  t.ok((await s.req('GET', `/restaurants/${a.storeId}/coupons`, { token: a.token })).body.some((x: { id: number }) => x.id === c.body.id))
  isError(t, await s.req('PUT', `/restaurants/${b.storeId}/coupons/${c.body.id}`, { token: b.token, body: { active: true } }), 404, 'not_found', 'another owner, own store path')
  isError(t, await s.req('GET', `/restaurants/${a.storeId}/coupons`, { token: b.token }), 404, 'not_found', 'another owner\'s store')
  const readOnly = (await s.req('POST', `/restaurants/${a.storeId}/coupons`, { token: a.token, body: { code: 'RO', kind: 'fixed', value: 1 } })).body
  t.equal((await s.req('DELETE', `/restaurants/${a.storeId}/coupons/${readOnly.id}`, { token: a.token })).status, 204)
  isError(t, await s.req('DELETE', `/restaurants/${a.storeId}/coupons/${readOnly.id}`, { token: a.token }), 404, 'not_found', 'gone')
  isError(t, await s.req('PUT', `/restaurants/${a.storeId}/coupons/${readOnly.id}`, { token: a.token, body: { active: true } }), 404, 'not_found', 'a deleted coupon cannot be updated')
})

t.test('another owner\'s store or coupon is 404 before the body is validated (issue 11 item 3)', async (t) => {
  const c = (await s.req('POST', `/restaurants/${a.storeId}/coupons`, { token: a.token, body: { code: 'MINE404', kind: 'fixed', value: 1 } })).body
  const bad = { code: '!', kind: 'nope', value: -1 }
  isError(t, await s.req('POST', `/restaurants/${a.storeId}/coupons`, { token: b.token, body: bad }), 404, 'not_found', 'create in another owner\'s store with an invalid body')
  isError(t, await s.req('PUT', `/restaurants/${a.storeId}/coupons/${c.id}`, { token: b.token, body: bad }), 404, 'not_found', 'update through another owner\'s store with an invalid body')
  isError(t, await s.req('POST', `/restaurants/${a.storeId}/coupons`, { token: a.token, body: bad }), 422, 'validation_failed', 'the same body in one\'s own store')
  t.match((await s.req('GET', `/restaurants/${a.storeId}/coupons`, { token: a.token })).body.find((x: { id: number }) => x.id === c.id), { code: 'MINE404', value: 1 }, 'untouched')
})

t.test('staff with coupons manage their store\'s coupons; others get 403, other stores 404', async (t) => {
  const cashier = createStaff(db, a.storeId, { role: 'cashier' })
  const cook = createStaff(db, a.storeId, { role: 'kitchen' })
  const managerB = createStaff(db, b.storeId, { role: 'manager' })
  const c = await s.req('POST', '/staff/coupons', { token: cashier.token, body: { code: 'TILL', kind: 'percent', value: 15 } })
  t.equal(c.status, 200)
  t.match((await s.req('PUT', `/staff/coupons/${c.body.id}`, { token: cashier.token, body: { usage_limit: 2 } })).body, { usage_limit: 2 })
  isError(t, await s.req('GET', '/staff/coupons', { token: cook.token }), 403, 'forbidden')
  isError(t, await s.req('PUT', `/staff/coupons/${c.body.id}`, { token: managerB.token, body: { usage_limit: 99 } }), 404, 'not_found')
  isError(t, await s.req('DELETE', `/staff/coupons/${c.body.id}`, { token: managerB.token }), 404, 'not_found')
  t.notOk((await s.req('GET', '/staff/coupons', { token: managerB.token })).body.some((x: { id: number }) => x.id === c.body.id))
  t.equal((await s.req('DELETE', `/staff/coupons/${c.body.id}`, { token: cashier.token })).status, 204)
})

t.test('the usage limit holds when orders race for the last use', async (t) => {
  const c = (await s.req('POST', `/restaurants/${a.storeId}/coupons`, { token: a.token, body: { code: 'LAST1', kind: 'fixed', value: 1, usage_limit: 1 } })).body
  const order = () => s.req('POST', '/storefront/orders', { headers: { 'x-storefront-token': sfA }, body: { type: 'takeaway', coupon_code: 'LAST1', items: [{ item_id: a.menu.fries, quantity: 1 }] } })
  const results = await Promise.all([order(), order(), order()])
  t.same(results.map((r) => r.status).sort(), [200, 422, 422], 'exactly one order got the last use')
  for (const r of results.filter((r) => r.status === 422)) t.match(r.body.errors.coupon_code, [/used up/])
  t.match(db.prepare('SELECT uses FROM coupons WHERE id = ?').get(c.id), { uses: 1 })
  t.equal(db.prepare('SELECT COUNT(*) FROM coupon_redemptions WHERE coupon_id = ?').pluck().get(c.id), 1)
  const winner = results.find((r) => r.status === 200)!.body
  t.match(winner, { discount: 1, total: 2 })
  t.equal(db.prepare('SELECT COUNT(*) FROM orders WHERE coupon_code = ?').pluck().get('LAST1'), 1, 'the losers wrote no order')
})

t.test('the validity window is enforced at order time', async (t) => {
  await s.req('POST', `/restaurants/${a.storeId}/coupons`, { token: a.token, body: { code: 'OLD', kind: 'percent', value: 10, ends_at: '2020-01-01T00:00:00Z' } })
  await s.req('POST', `/restaurants/${a.storeId}/coupons`, { token: a.token, body: { code: 'SOON', kind: 'percent', value: 10, starts_at: '2099-01-01T00:00:00Z' } })
  const use = (code: string) => s.req('POST', '/storefront/orders', { headers: { 'x-storefront-token': sfA }, body: { type: 'takeaway', coupon_code: code, items: [{ item_id: a.menu.fries, quantity: 1 }] } })
  t.match((await use('OLD')).body.errors.coupon_code, [/expired/])
  t.match((await use('SOON')).body.errors.coupon_code, [/not valid yet/])
})

t.test('the demo seed creates a working coupon', async (t) => {
  const demo = s.seed()
  t.match(demo.coupon, { code: 'WELCOME10', id: Number })
  const menu = (await s.req('GET', '/storefront/menu', { headers: { 'x-storefront-token': demo.store.storefront_token } })).body
  const margherita = menu.flatMap((c: { items: unknown[] }) => c.items).find((i: { name: string }) => i.name === 'Margherita')
  const r = await s.req('POST', '/storefront/orders', { headers: { 'x-storefront-token': demo.store.storefront_token }, body: { type: 'takeaway', coupon_code: 'welcome10', items: [{ item_id: margherita.id, quantity: 2 }] } })
  t.equal(r.status, 200)
  t.match(r.body, { subtotal: 19, discount: 1.9, total: 17.1, coupon_code: 'WELCOME10' })
  const kds = enrollDevice(s.app.svc.db, demo.store.id, 'demo-kds')
  const staffLogin = await s.req('POST', `/restaurants/${demo.store.id}/staff/pin`, { body: { pin: demo.staff.find((x) => x.role === 'kitchen')!.pin, device: kds.key } })
  t.match(staffLogin.body, { staff: { role: 'kitchen', station: 'oven' } }, 'and its staff sign in with their PINs on an enrolled device')
})
