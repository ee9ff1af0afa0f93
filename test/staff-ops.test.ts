/**
 * The staff app's store work (api-v1 §4.7): orders and kitchen status with `order.status_changed`,
 * menu edits taking exactly the owner payloads, analytics in the §2.6 shape, the customer list,
 * push devices (and the new-order alert), and the integration busy/snooze controls.
 */
import t from 'tap'
import { startServer } from './helpers/server.ts'
import { createAccount, isError, outbox, postOrder } from './helpers/fixtures.ts'
import { createCustomer, createStaff, until } from './helpers/people.ts'
import type { RecordingPushProvider } from '../src/providers/push.ts'

const s = await startServer({ RATE_LIMIT_PER_MINUTE: '100000' })
t.teardown(() => s.close())
const db = s.app.svc.db
const acct = createAccount(db)
const manager = createStaff(db, acct.storeId, { role: 'manager' })
const waiter = createStaff(db, acct.storeId, { role: 'waiter' })
const cook = createStaff(db, acct.storeId, { role: 'kitchen' })

t.test('orders: the store\'s list (30 per page, status filter) and the kitchen status with its event', async (t) => {
  const o = (await postOrder(s, acct.token, acct.storeId, { type: 'takeaway', items: [{ item_id: acct.menu.fries, quantity: 2 }] })).body
  const list = await s.req('GET', '/staff/orders', { token: waiter.token })
  t.equal(list.status, 200)
  t.match(list.body, { current_page: 1, per_page: 30, total: Number })
  t.equal(list.body.data[0].id, o.id, 'newest first')
  const before = outbox(db, 'order.status_changed').length
  const r = await s.req('PUT', `/staff/orders/${o.id}/status`, { token: waiter.token, body: { status: 'ready' } })
  t.equal(r.status, 200)
  t.match(r.body, { id: o.id, status: 'ready', timeline: { ready_at: String } })
  t.match(outbox(db, 'order.status_changed').slice(before), [{ data: { order_id: o.id, status: 'ready', previous_status: 'new' } }])
  t.same((await s.req('GET', '/staff/orders?status=ready', { token: waiter.token })).body.data.map((x: { status: string }) => x.status).filter((x: string) => x !== 'ready'), [])
  isError(t, await s.req('PUT', `/staff/orders/${o.id}/status`, { token: waiter.token, body: { status: 'eaten' } }), 422, 'validation_failed')
  isError(t, await s.req('PUT', '/staff/orders/99999999/status', { token: waiter.token, body: { status: 'ready' } }), 404, 'not_found')
})

t.test('menu edits take the owner payloads and answer the same shapes, emitting menu.updated', async (t) => {
  const body = { category_id: acct.menu.categoryId, name: 'Staff Special', price: 12.5, description: 'd', is_vegan: true, extras: [{ name: 'Sauce', price: 0.5, group: 'Sauces' }], variations: [{ name: 'Big', price: 15 }] }
  const viaStaff = await s.req('POST', '/staff/menu/items', { token: manager.token, body })
  const viaOwner = await s.req('POST', `/restaurants/${acct.storeId}/menu/items`, { token: acct.token, body })
  t.equal(viaStaff.status, 200)
  t.equal(viaOwner.status, 200)
  const strip = (x: Record<string, any>) => JSON.parse(JSON.stringify(x, (k, v) => (['id', 'item_id', 'position', 'created_at', 'updated_at'].includes(k) ? undefined : v)))
  t.same(strip(viaStaff.body), strip(viaOwner.body), 'identical answers for identical payloads')
  const bad = { category_id: acct.menu.categoryId, name: '', price: -1 }
  const e1 = await s.req('POST', '/staff/menu/items', { token: manager.token, body: bad })
  const e2 = await s.req('POST', `/restaurants/${acct.storeId}/menu/items`, { token: acct.token, body: bad })
  t.same(Object.keys(e1.body.errors).sort(), Object.keys(e2.body.errors).sort(), 'and identical validation')
  const id = viaStaff.body.id
  t.match((await s.req('PUT', `/staff/menu/items/${id}`, { token: manager.token, body: { price: 13 } })).body, { id, price: 13 })
  t.match((await s.req('PATCH', `/staff/menu/items/${id}/sold-out`, { token: manager.token })).body, { is_sold_out: true }, 'no body toggles')
  t.match((await s.req('PATCH', `/staff/menu/items/${id}/sold-out`, { token: manager.token, body: { is_sold_out: false } })).body, { is_sold_out: false })
  const cat = await s.req('POST', '/staff/menu/categories', { token: manager.token, body: { name: 'Grill 2', station: 'grill-2' } })
  t.match(cat, { status: 200, body: { name: 'Grill 2', station: 'grill-2' } })
  t.match((await s.req('PUT', `/staff/menu/categories/${cat.body.id}`, { token: manager.token, body: { station: 'pass' } })).body, { station: 'pass' }, 'stations are configurable')
  t.equal((await s.req('DELETE', `/staff/menu/items/${id}`, { token: manager.token })).status, 204)
  const changes = outbox(db, 'menu.updated').filter((e) => e.data.id === id).map((e) => e.data.change)
  t.same(changes, ['created', 'updated', 'updated', 'updated', 'deleted'])
})

t.test('analytics: the §2.6 shape, the same numbers as the owner route', async (t) => {
  const staff = await s.req('GET', '/staff/analytics?from=2020-01-01&to=2030-12-31', { token: manager.token })
  const owner = await s.req('GET', `/restaurants/${acct.storeId}/analytics?from=2020-01-01&to=2030-12-31`, { token: acct.token })
  t.equal(staff.status, 200)
  t.same(staff.body, owner.body)
  t.match(staff.body, { range: { from: '2020-01-01', to: '2030-12-31' }, orders: { total: Number, paid: Number, by_status: {}, by_type: {} }, revenue: { gross: Number, paid: Number, avg_order_value: Number }, top_items: Array })
  isError(t, await s.req('GET', '/staff/analytics?from=2030-01-01&to=2020-01-01', { token: manager.token }), 422, 'validation_failed')
})

t.test('customers: the store\'s list with search', async (t) => {
  const c = createCustomer(db, acct.storeId, { email: 'findme@customer.test' })
  const r = await s.req('GET', '/staff/customers?search=findme', { token: manager.token })
  t.same(r.body.data.map((x: { id: number }) => x.id), [c.id])
  t.equal((await s.req('GET', '/staff/customers?search=findme', { token: waiter.token })).status, 403, 'waiters lack customers')
})

t.test('push devices: register, new orders are pushed to members with orders or kds, unregister', async (t) => {
  const push = s.app.svc.push as RecordingPushProvider
  const r = await s.req('POST', '/staff/push/register-device', { token: waiter.token, body: { device_token: 'apns-token-waiter-1', platform: 'ios' } })
  t.same(r.body, { registered: true, device_token: 'apns-token-waiter-1', platform: 'ios' })
  isError(t, await s.req('POST', '/staff/push/register-device', { token: waiter.token, body: { device_token: 'x', platform: 'pager' } }), 422, 'validation_failed')
  const o = (await postOrder(s, acct.token, acct.storeId, { type: 'takeaway', items: [{ item_id: acct.menu.fries, quantity: 1 }] })).body
  await until(() => push.sent.some((m) => m.device_token === 'apns-token-waiter-1' && m.data.order_id === o.id))
  t.match(push.sent.find((m) => m.data.order_id === o.id), { platform: 'ios', title: 'New order', data: { event: 'order.created', restaurant_id: acct.storeId } })
  t.same((await s.req('POST', '/staff/push/unregister-device', { token: cook.token, body: { device_token: 'apns-token-waiter-1' } })).body, { unregistered: false }, 'not someone else\'s')
  t.same((await s.req('POST', '/staff/push/unregister-device', { token: waiter.token, body: { device_token: 'apns-token-waiter-1' } })).body, { unregistered: true })
  const n = push.sent.length
  await postOrder(s, acct.token, acct.storeId, { type: 'takeaway', items: [{ item_id: acct.menu.fries, quantity: 1 }] })
  await new Promise((r) => setTimeout(r, 50))
  t.equal(push.sent.filter((m) => m.device_token === 'apns-token-waiter-1').length, push.sent.slice(0, n).filter((m) => m.device_token === 'apns-token-waiter-1').length, 'nothing after unregistering')
})

t.test('integration: busy lengthens prep time, snooze pauses partner orders, status reports both and when they end', async (t) => {
  const idle = await s.req('GET', '/staff/integration/status', { token: cook.token })
  t.same(idle.body, { busy: { active: false, until: null, extra_prep_minutes: 0 }, snoozed: { active: false, until: null }, prep_minutes: 15, accepting_orders: true })
  isError(t, await s.req('POST', '/staff/integration/busy', { token: cook.token, body: {} }), 403, 'forbidden', 'cooks lack orders')
  const busy = await s.req('POST', '/staff/integration/busy', { token: waiter.token, body: { minutes: 20, extra_prep_minutes: 10 } })
  t.match(busy.body, { busy: { active: true, extra_prep_minutes: 10 }, prep_minutes: 25 })
  const ends = Date.parse(busy.body.busy.until) - Date.now()
  t.ok(ends > 19 * 60_000 && ends <= 20 * 60_000, 'ends in 20 minutes')
  const snooze = await s.req('POST', '/staff/integration/snooze', { token: waiter.token, body: { minutes: 45 } })
  t.match(snooze.body, { snoozed: { active: true, until: String }, accepting_orders: false, busy: { active: true } })
  // Both end by time alone.
  db.prepare("UPDATE store_integration SET busy_until = '2000-01-01T00:00:00.000+00:00' WHERE store_id = ?").run(acct.storeId)
  t.match((await s.req('GET', '/staff/integration/status', { token: cook.token })).body, { busy: { active: false }, prep_minutes: 15, snoozed: { active: true } })
  t.match((await s.req('POST', '/staff/integration/snooze', { token: waiter.token, body: { active: false } })).body, { snoozed: { active: false, until: null }, accepting_orders: true })
  isError(t, await s.req('POST', '/staff/integration/snooze', { token: waiter.token, body: { minutes: 0 } }), 422, 'validation_failed')
})
