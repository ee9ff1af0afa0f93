/**
 * The storefront API (api-v1 §4.3, §2.4, §7.3, §8): `X-Storefront-Token` with scopes, the full menu,
 * store info, orders limited to takeaway/on-table, 40 items and 30 per line as validation failures,
 * coupons applied by the server, created unpaid with `track_token` and a working `continue_url`,
 * `order.created`, tenancy, and CORS for storefronts on other origins.
 */
import t from 'tap'
import { startServer, request } from './helpers/server.ts'
import { createAccount, isError, outbox } from './helpers/fixtures.ts'
import { createStorefrontToken } from './helpers/people.ts'
import { nowIso } from '../src/storage/db.ts'

const s = await startServer({ RATE_LIMIT_PER_MINUTE: '100000' })
t.teardown(() => s.close())
const db = s.app.svc.db
const a = createAccount(db)
const b = createAccount(db)
const tokA = createStorefrontToken(db, a.storeId)
const tokB = createStorefrontToken(db, b.storeId)
db.prepare("UPDATE menu_items SET images = ? WHERE id = ?").run(JSON.stringify(['https://img.example/burger.jpg']), a.menu.burger.id)
db.prepare("UPDATE item_extras SET group_name = 'Toppings' WHERE item_id = ?").run(a.menu.burger.id)

const sf = (method: string, path: string, token: string | null, body?: unknown, headers: Record<string, string> = {}) =>
  s.req(method, path, { body, headers: token ? { 'x-storefront-token': token, ...headers } : headers })
const line = (item_id: number, quantity = 1) => ({ item_id, quantity })

t.test('GET /storefront/menu: the token\'s store, with variations, extras, groups and gallery', async (t) => {
  const r = await sf('GET', '/storefront/menu', tokA)
  t.equal(r.status, 200)
  const items = r.body.flatMap((c: { items: unknown[] }) => c.items)
  const burger = items.find((i: { id: number }) => i.id === a.menu.burger.id)
  t.same(burger.variations.map((v: { name: string }) => v.name), ['Single', 'Double'])
  t.same(burger.extras.map((e: { name: string }) => e.name), ['Cheese', 'Bacon'])
  t.same(burger.groups, [{ name: 'Toppings', extras: burger.extras }], 'extras grouped')
  t.same(burger.gallery, ['https://img.example/burger.jpg'])
  t.match(items.find((i: { id: number }) => i.id === a.menu.soup), { is_sold_out: true }, 'sold-out items are flagged for the storefront')
  t.notOk(items.some((i: { id: number }) => i.id === b.menu.fries), 'nothing of another store')
  t.same((await sf('GET', '/storefront/menu', tokB)).body.flatMap((c: { items: Array<{ id: number }> }) => c.items.map((i) => i.id)).includes(a.menu.fries), false)
})

t.test('GET /storefront/restaurant: basic store info with the order types a storefront may use', async (t) => {
  const r = await sf('GET', '/storefront/restaurant', tokA)
  t.match(r.body, { id: a.storeId, slug: a.slug, currency: 'USD', order_types: ['takeaway', 'on-table'], prep_minutes: Number, accepting_orders: true })
  t.notOk('owner_id' in r.body)
})

t.test('authentication: the header only, a valid unrevoked storefront token, and its scopes', async (t) => {
  isError(t, await sf('GET', '/storefront/menu', null), 401, 'unauthenticated', 'no token')
  isError(t, await sf('GET', '/storefront/menu', 'dss_nope'), 401, 'unauthenticated', 'unknown token')
  isError(t, await s.req('GET', '/storefront/menu', { token: tokA }), 401, 'unauthenticated', 'as a bearer token')
  isError(t, await sf('GET', '/storefront/menu', a.token), 401, 'unauthenticated', 'an owner token in the header')
  const readOnly = createStorefrontToken(db, a.storeId, ['menu:read'])
  const writeOnly = createStorefrontToken(db, a.storeId, ['order:write'])
  t.equal((await sf('GET', '/storefront/menu', readOnly)).status, 200)
  isError(t, await sf('POST', '/storefront/orders', readOnly, { type: 'takeaway', items: [line(a.menu.fries)] }), 403, 'forbidden', 'order:write missing')
  isError(t, await sf('GET', '/storefront/restaurant', writeOnly), 403, 'forbidden', 'menu:read missing')
  t.equal((await sf('POST', '/storefront/orders', writeOnly, { type: 'takeaway', items: [line(a.menu.fries)] })).status, 200)
  const revoked = createStorefrontToken(db, a.storeId)
  db.prepare('UPDATE storefront_tokens SET revoked_at = ? WHERE token_hash = (SELECT token_hash FROM storefront_tokens ORDER BY id DESC LIMIT 1)').run(nowIso())
  isError(t, await sf('GET', '/storefront/menu', revoked), 401, 'unauthenticated', 'revoked at once')
})

t.test('POST /storefront/orders: priced by the server, unpaid, track_token and a working continue_url, order.created', async (t) => {
  const r = await sf('POST', '/storefront/orders', tokA, {
    type: 'on-table', table_number: 9, customer_name: 'Dee', total: 0.01, is_paid: true, discount: 99,
    items: [{ item_id: a.menu.burger.id, quantity: 2, variation: a.menu.burger.double, extras: [a.menu.burger.cheese] }],
  })
  t.equal(r.status, 200)
  t.match(r.body, { restaurant_id: a.storeId, type: 'on-table', is_paid: false, subtotal: 33, discount: 0, total: 33, source: 'storefront', track_token: /^trk_/, continue_url: String })
  const page = await request(r.body.continue_url, 'GET')
  t.equal(page.status, 200, 'continue_url answers')
  t.match(page.headers.get('content-type'), /text\/html/)
  t.equal((await s.req('GET', `/track/${r.body.track_token}`)).body.id, r.body.id, 'track_token tracks it')
  t.match(outbox(db, 'order.created').find((e) => e.data.order_id === r.body.id), { store_id: a.storeId, data: { total: '33.00' } })
  const replay = await sf('POST', '/storefront/orders', tokA, { type: 'takeaway', items: [line(a.menu.fries)] }, { 'idempotency-key': 'sf-1' })
  const again = await sf('POST', '/storefront/orders', tokA, { type: 'takeaway', items: [line(a.menu.fries)] }, { 'idempotency-key': 'sf-1' })
  t.equal(replay.headers.get('idempotent-replayed'), null)
  t.equal(again.status, 200)
  t.equal(again.headers.get('idempotent-replayed'), 'true')
  t.equal(again.body.id, replay.body.id, 'idempotent')
  t.equal(again.body.continue_url, replay.body.continue_url)
})

t.test('storefront rules: takeaway and on-table only; 40 items and 30 per line, as validation failures', async (t) => {
  const count = () => db.prepare('SELECT COUNT(*) FROM orders').pluck().get()
  const n = count()
  const del = await sf('POST', '/storefront/orders', tokA, { type: 'delivery', address: '1 Main St', items: [line(a.menu.fries)] })
  isError(t, del, 422, 'validation_failed', 'delivery')
  t.ok(del.body.errors.type)
  isError(t, await sf('POST', '/storefront/orders', tokA, { type: 'on-table', items: [line(a.menu.fries)] }), 422, 'validation_failed', 'on-table without a table')
  const many = await sf('POST', '/storefront/orders', tokA, { type: 'takeaway', items: Array.from({ length: 41 }, () => line(a.menu.fries)) })
  isError(t, many, 422, 'validation_failed', '41 items')
  t.ok(many.body.errors.items, 'keyed by items')
  const big = await sf('POST', '/storefront/orders', tokA, { type: 'takeaway', items: [line(a.menu.fries, 31)] })
  isError(t, big, 422, 'validation_failed', '31 of one line')
  t.ok(big.body.errors['items.0.quantity'])
  t.equal(count(), n, 'nothing written')
  const max = await sf('POST', '/storefront/orders', tokA, { type: 'takeaway', items: Array.from({ length: 40 }, () => line(a.menu.fries, 30)) })
  t.equal(max.status, 200, '40 items of 30 each is the limit, not over it')
})

t.test('a token of one store never reaches another: foreign items are rejected, lists stay separate', async (t) => {
  const r = await sf('POST', '/storefront/orders', tokA, { type: 'takeaway', items: [line(b.menu.fries)] })
  isError(t, r, 422, 'validation_failed')
  t.ok(r.body.errors['items.0.item_id'])
  const mine = await sf('POST', '/storefront/orders', tokB, { type: 'takeaway', items: [line(b.menu.fries)] })
  t.equal(mine.body.restaurant_id, b.storeId, 'store B\'s token orders at store B')
})

t.test('coupons are applied by the server; bad codes are validation failures', async (t) => {
  await s.req('POST', `/restaurants/${a.storeId}/coupons`, { token: a.token, body: { code: 'Save20', kind: 'percent', value: 20, min_order: 10 } })
  const r = await sf('POST', '/storefront/orders', tokA, { type: 'takeaway', tip_amount: 1, coupon_code: ' save20 ', discount: 0, items: [line(a.menu.burger.id, 2)] })
  t.equal(r.status, 200)
  t.match(r.body, { subtotal: 20, discount: 4, tip_amount: 1, total: 17, coupon_code: 'SAVE20' })
  t.match(outbox(db, 'order.created').find((e) => e.data.order_id === r.body.id), { data: { total: '17.00' } })
  const small = await sf('POST', '/storefront/orders', tokA, { type: 'takeaway', coupon_code: 'SAVE20', items: [line(a.menu.fries)] })
  isError(t, small, 422, 'validation_failed', 'below the minimum order')
  t.match(small.body.errors.coupon_code, [/at least 10\.00/])
  isError(t, await sf('POST', '/storefront/orders', tokA, { type: 'takeaway', coupon_code: 'NOPE', items: [line(a.menu.fries)] }), 422, 'validation_failed', 'an unknown code')
  await s.req('POST', `/restaurants/${b.storeId}/coupons`, { token: b.token, body: { code: 'BONLY', kind: 'fixed', value: 1 } })
  isError(t, await sf('POST', '/storefront/orders', tokA, { type: 'takeaway', coupon_code: 'BONLY', items: [line(a.menu.fries)] }), 422, 'validation_failed', 'another store\'s coupon')
})

t.test('CORS: a storefront on another origin may call the API with its header', async (t) => {
  const pre = await fetch(`${s.base}/storefront/orders`, { method: 'OPTIONS', headers: { origin: 'https://shop.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'x-storefront-token, content-type' } })
  t.equal(pre.status, 204)
  t.equal(pre.headers.get('access-control-allow-origin'), '*')
  t.match(pre.headers.get('access-control-allow-headers'), /X-Storefront-Token/i)
  t.match(pre.headers.get('access-control-allow-methods'), /POST/)
  const get = await fetch(`${s.base}/storefront/menu`, { headers: { origin: 'https://shop.example', 'x-storefront-token': tokA } })
  t.equal(get.headers.get('access-control-allow-origin'), '*')
  t.equal(get.status, 200)
})
