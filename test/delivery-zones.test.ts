/**
 * Delivery zones (issue 37 item 1; docs/dispatch.md "Zones"), from outside: `GET/PUT
 * /restaurants/{id}/delivery-zones`, the managers' staff routes and the admin MCP tools read and write
 * the same zones; bad zones are 422 with nothing written; another owner's store is 404. Once zones are
 * set a delivery order needs a position: outside every zone 422 `errors.address`, under the zone's
 * minimum 422 `errors.items`, on an edge inside; overlapping zones price at the cheapest; the fee is
 * the order's `delivery_fee`, part of `total`, in `order.created` and in analytics. No zones: as before.
 */
import t from 'tap'
import { startServer } from './helpers/server.ts'
import { counts, createAccount, createCustomer, createStaff, isError, outbox, postOrder } from './helpers/fixtures.ts'
import { bearer, callTool, connectMcp } from './helpers/mcp.ts'
import { visit } from './helpers/owner-site.ts'

const s = await startServer({ RATE_LIMIT_PER_MINUTE: '100000' })
t.teardown(() => s.close())
const db = s.app.svc.db
const a = createAccount(db)
const b = createAccount(db)

// A square around central Lisbon (fee 2.50, minimum 15.00) and a cheaper 1 km circle inside it.
const SQUARE = { name: 'Centre', polygon: [[[-9.2, 38.7], [-9.1, 38.7], [-9.1, 38.75], [-9.2, 38.75], [-9.2, 38.7]]], fee: 2.5, min_order: 15 }
const CIRCLE = { name: 'Baixa', center: { lat: 38.72, lng: -9.14 }, radius_m: 1000, fee: 1 }
const zonesPath = (store = a.storeId) => `/restaurants/${store}/delivery-zones`
const put = (body: unknown, store = a.storeId, token = a.token) => s.req('PUT', zonesPath(store), { token, body })
const burgers = (n: number, pos: { lat?: number; lng?: number } = {}) => ({ type: 'delivery', address: '1 Rua Augusta', ...pos, items: [{ item_id: a.menu.burger.id, quantity: n }] })

t.test('no zones: a delivery order goes anywhere, without a fee, and carries its estimate', async (t) => {
  t.same((await s.req('GET', zonesPath(), { token: a.token })).body, { restaurant_id: a.storeId, zones: [] })
  const r = await postOrder(s, a.token, a.storeId, burgers(1))
  t.equal(r.status, 200)
  t.match(r.body, { delivery_fee: 0, total: 10, eta: { ready_at: String, pickup_at: String, dropoff_at: String } })
  t.ok(Date.parse(r.body.eta.ready_at) >= Date.parse(r.body.created_at) + 14 * 60_000, 'ready after the prep time (15 min by default)')
  const takeaway = await postOrder(s, a.token, a.storeId, { type: 'takeaway', items: [{ item_id: a.menu.fries, quantity: 1 }] })
  t.match(takeaway.body, { delivery_fee: 0, eta: null }, 'other types have no estimate')
  isError(t, await postOrder(s, a.token, a.storeId, burgers(1, { lat: 38.72 })), 422, 'validation_failed', 'lat without lng')
})

t.test('PUT stores polygons and circles; GET reads them back; invalid zones are 422 with nothing written', async (t) => {
  const r = await put({ zones: [SQUARE, CIRCLE] })
  t.equal(r.status, 200)
  t.same(r.body, { restaurant_id: a.storeId, zones: [SQUARE, { ...CIRCLE, min_order: 0 }] })
  t.same((await s.req('GET', zonesPath(), { token: a.token })).body, r.body)
  const before = (db.prepare('SELECT settings FROM stores WHERE id = ?').pluck().get(a.storeId) as string)
  const open = { ...SQUARE, polygon: [SQUARE.polygon[0]!.slice(0, 4)] }
  const bad = await put({ zones: [open] })
  isError(t, bad, 422, 'validation_failed', 'a ring that is not closed')
  t.match(JSON.stringify(bad.body.errors), /not closed/)
  isError(t, await put({ zones: [{ ...CIRCLE, polygon: SQUARE.polygon }] }), 422, 'validation_failed', 'both a polygon and a circle')
  isError(t, await put({ zones: [{ name: 'x', center: { lat: 1, lng: 1 }, fee: 1 }] }), 422, 'validation_failed', 'a circle without a radius')
  isError(t, await put({ zones: [{ ...SQUARE, polygon: [[[-9.2, 38.7], [-9.1, 98], [-9.1, 38.75], [-9.2, 38.7]]] }] }), 422, 'validation_failed', 'a latitude out of range')
  isError(t, await put({ zones: [{ ...CIRCLE, fee: -1 }] }), 422, 'validation_failed', 'a negative fee')
  t.equal(db.prepare('SELECT settings FROM stores WHERE id = ?').pluck().get(a.storeId), before, 'nothing written')
  isError(t, await put({ zones: [SQUARE] }, a.storeId, b.token), 404, 'not_found', 'another owner\'s store, whatever the body')
  isError(t, await s.req('GET', zonesPath(a.storeId), { token: b.token }), 404, 'not_found', 'another owner\'s store (GET)')
})

t.test('orders against the zones: position required, outside, on the edge, overlapping, minimum, fee in total', async (t) => {
  const n0 = counts(db).orders
  const none = await postOrder(s, a.token, a.storeId, burgers(2))
  isError(t, none, 422, 'validation_failed', 'no position')
  t.ok(none.body.errors.lat, 'errors.lat')
  const outside = await postOrder(s, a.token, a.storeId, burgers(2, { lat: 38.6, lng: -9.14 }))
  isError(t, outside, 422, 'outside_delivery_zone', 'outside every zone')
  t.ok(outside.body.errors.address, 'errors.address')
  const small = await postOrder(s, a.token, a.storeId, burgers(1, { lat: 38.74, lng: -9.11 }))
  isError(t, small, 422, 'below_minimum_order', 'under the square\'s 15.00')
  t.match(small.body.errors.items, [/15\.00 USD/])
  t.equal(counts(db).orders, n0, 'nothing written')

  const square = await postOrder(s, a.token, a.storeId, burgers(2, { lat: 38.74, lng: -9.11 }))
  t.match(square.body, { delivery_fee: 2.5, subtotal: 20, total: 22.5 }, 'the square\'s fee, in the total')
  const edge = await postOrder(s, a.token, a.storeId, burgers(2, { lat: 38.75, lng: -9.15 }))
  t.match(edge.body, { delivery_fee: 2.5 }, 'a point on the edge is inside')
  const vertex = await postOrder(s, a.token, a.storeId, burgers(2, { lat: 38.7, lng: -9.2 }))
  t.match(vertex.body, { delivery_fee: 2.5 }, 'a vertex is inside')
  const both = await postOrder(s, a.token, a.storeId, burgers(1, { lat: 38.72, lng: -9.14 }))
  t.match(both.body, { delivery_fee: 1, total: 11 }, 'in both: the cheaper circle prices it (and its minimum applies)')
  const takeaway = await postOrder(s, a.token, a.storeId, { type: 'takeaway', items: [{ item_id: a.menu.fries, quantity: 1 }] })
  t.equal(takeaway.status, 200, 'other order types ignore the zones')

  const read = await s.req('GET', `/restaurants/${a.storeId}/orders/${square.body.id}`, { token: a.token })
  t.match(read.body, { delivery_fee: 2.5, total: 22.5, eta: square.body.eta }, 'read back as placed')
  const created = outbox(db, 'order.created').find((e) => e.data.order_id === square.body.id)
  t.match(created?.data, { total: '22.50', delivery_fee: '2.50' }, 'the webhook data carries the fee')
  const day = new Date().toISOString().slice(0, 10)
  const report = await s.req('GET', `/restaurants/${a.storeId}/analytics?from=${day}&to=${day}`, { token: a.token })
  t.equal(report.body.revenue.delivery_fees, 2.5 * 3 + 1, 'analytics sums the fees')
})

t.test('a customer\'s saved address brings its position', async (t) => {
  const c = createCustomer(db, a.storeId)
  const home = await s.req('POST', '/customer/addresses', { token: c.token, body: { label: 'Home', address: '2 Rua Augusta', lat: 38.7205, lng: -9.1405 } })
  t.equal(home.status, 200)
  const r = await s.req('POST', '/customer/orders', { token: c.token, body: { type: 'delivery', address_id: home.body.id, items: [{ item_id: a.menu.burger.id, quantity: 1 }] } })
  t.equal(r.status, 200)
  t.match(r.body, { address: '2 Rua Augusta', delivery_fee: 1, total: 11 })
  const far = await s.req('POST', '/customer/orders', { token: c.token, body: { type: 'delivery', address: 'Porto', lat: 41.15, lng: -8.61, items: [{ item_id: a.menu.burger.id, quantity: 2 }] } })
  isError(t, far, 422, 'outside_delivery_zone', 'a customer order outside')
})

t.test('managers on the staff app; other roles are refused', async (t) => {
  const manager = createStaff(db, a.storeId, { role: 'manager' })
  const cashier = createStaff(db, a.storeId, { role: 'cashier' })
  t.equal((await s.req('GET', '/staff/delivery-zones', { token: manager.token })).body.zones.length, 2)
  isError(t, await s.req('GET', '/staff/delivery-zones', { token: cashier.token }), 403, 'forbidden', 'a cashier')
  isError(t, await s.req('PUT', '/staff/delivery-zones', { token: cashier.token, body: { zones: [] } }), 403, 'forbidden', 'a cashier writing')
  const r = await s.req('PUT', '/staff/delivery-zones', { token: manager.token, body: { zones: [SQUARE] } })
  t.same(r.body.zones, [SQUARE])
  t.same((await s.req('GET', zonesPath(), { token: a.token })).body.zones, [SQUARE], 'the owner sees the manager\'s zones')
})

t.test('admin MCP tools read and write the same zones', async (t) => {
  const mcp = await connectMcp(s, '/mcp', bearer(b.token))
  t.teardown(() => mcp.close())
  const set = await callTool(mcp, 'set_delivery_zones', { restaurant_id: b.storeId, zones: [CIRCLE] })
  t.equal(set.isError, false)
  t.same((await s.req('GET', zonesPath(b.storeId), { token: b.token })).body.zones, [{ ...CIRCLE, min_order: 0 }])
  t.same((await callTool(mcp, 'get_delivery_zones', { restaurant_id: b.storeId })).json.zones, [{ ...CIRCLE, min_order: 0 }])
  t.match((await callTool(mcp, 'get_delivery_zones', { restaurant_id: a.storeId })).json, { code: 'not_found' }, 'another owner\'s store')
  const outside = await postOrder(s, b.token, b.storeId, { type: 'delivery', address: 'x', lat: 0, lng: 0, items: [{ item_id: b.menu.fries, quantity: 1 }] })
  isError(t, outside, 422, 'outside_delivery_zone', 'the store actor holds the zones the tool wrote')
  t.equal((await callTool(mcp, 'set_delivery_zones', { restaurant_id: b.storeId, zones: [] })).isError, false)
  t.equal((await postOrder(s, b.token, b.storeId, { type: 'delivery', address: 'x', items: [{ item_id: b.menu.fries, quantity: 1 }] })).status, 200, '[] removes them')
})

t.test('quotes (owner and customer): zone, fee, minimum and the estimate an order then carries; the tracking view shows it', async (t) => {
  t.equal((await s.req('PUT', `/restaurants/${a.storeId}/settings`, { token: a.token, body: { location: { lat: 38.71, lng: -9.13 }, prep_minutes: 20 } })).status, 200)
  const point = { lat: 38.72, lng: -9.14 }
  const q = await s.req('POST', `/restaurants/${a.storeId}/delivery-quote`, { token: a.token, body: point })
  t.equal(q.status, 200)
  t.match(q.body, { deliverable: true, zone: 'Centre', fee: 2.5, min_order: 15, eta: { ready_at: String, pickup_at: String, dropoff_at: String } })
  const ride = Date.parse(q.body.eta.dropoff_at) - Date.parse(q.body.eta.pickup_at)
  t.ok(ride > 60_000 && ride < 30 * 60_000, `a ride of ${ride / 1000} s for ~1.4 km`)
  t.equal(Date.parse(q.body.eta.ready_at) - Date.now() > 19 * 60_000, true, 'ready after the 20 prep minutes')

  const c = createCustomer(db, a.storeId)
  const cq = await s.req('POST', '/customer/delivery-quote', { token: c.token, body: point })
  t.match(cq.body, { deliverable: true, zone: 'Centre', fee: 2.5 }, 'the customer app quotes the token\'s store')
  t.same((await s.req('POST', '/customer/delivery-quote', { token: c.token, body: { lat: 41.15, lng: -8.61 } })).body,
    { deliverable: false, zone: null, fee: null, min_order: null, eta: null, router: null, reason: 'outside_delivery_zone' })
  isError(t, await s.req('POST', `/restaurants/${a.storeId}/delivery-quote`, { token: b.token, body: point }), 404, 'not_found', 'another owner\'s store')
  isError(t, await s.req('POST', `/restaurants/${a.storeId}/delivery-quote`, { token: a.token, body: { lat: 91, lng: 0 } }), 422, 'validation_failed', 'a latitude out of range')

  const order = await postOrder(s, a.token, a.storeId, burgers(2, point))
  t.equal(order.status, 200)
  t.equal(Date.parse(order.body.eta.dropoff_at) - Date.parse(order.body.eta.pickup_at), ride, 'the order is promised the ride the quote said')
  const track = await s.req('GET', `/track/${order.body.track_token}`)
  t.same(track.body.eta, order.body.eta, 'the tracking view carries the promise')
})

t.test('the store website\'s checkout shows each saved address\'s fee and estimate, or that it is outside', async (t) => {
  const shop = createAccount(db)
  db.prepare('UPDATE stores SET settings = ? WHERE id = ?').run(JSON.stringify({ location: { lat: 38.71, lng: -9.13 }, timezone: 'Europe/Lisbon' }), shop.storeId)
  t.equal((await put({ zones: [SQUARE] }, shop.storeId, shop.token)).status, 200)
  const c = createCustomer(db, shop.storeId)
  for (const body of [{ label: 'Home', address: '1 Rua Augusta', lat: 38.72, lng: -9.14 }, { label: 'Porto', address: '9 Rua Santa Catarina', lat: 41.15, lng: -8.61 }]) {
    t.equal((await s.req('POST', '/customer/addresses', { token: c.token, body })).status, 200)
  }
  const slug = db.prepare('SELECT slug FROM stores WHERE id = ?').pluck().get(shop.storeId) as string
  const home = await visit(s, 'GET', `/s/${slug}`)
  const csrf = home.cookies.find((x) => x.startsWith('csrf='))!.split(';')[0]!
  const added = await visit(s, 'POST', `/s/${slug}/cart`, { cookie: csrf, form: { item_id: String(shop.menu.burger.id), quantity: '2', csrf: csrf.slice(5) } })
  const cart = added.cookies.find((x) => x.startsWith('cart='))!.split(';')[0]!
  const checkout = await visit(s, 'GET', `/s/${slug}/checkout`, { cookie: [csrf, cart, `customer=${c.token}`].join('; ') })
  t.equal(checkout.status, 200)
  const q = (await s.req('POST', '/customer/delivery-quote', { token: c.token, body: { lat: 38.72, lng: -9.14 } })).body
  // The page was drawn a moment before the quote: its minute, or the one before if a minute turned in between.
  const hhmm = (ms: number) => new Date(ms).toLocaleTimeString('en-GB', { timeZone: 'Europe/Lisbon', hour: '2-digit', minute: '2-digit' })
  const at = Date.parse(q.eta.dropoff_at)
  t.match(checkout.text, new RegExp(`Home: 1 Rua Augusta — delivery [^<]*2\\.50, about (${hhmm(at)}|${hhmm(at - 60_000)})</option>`), 'the fee and the estimated arrival (store time)')
  t.match(checkout.text, /Porto: 9 Rua Santa Catarina — outside the delivery area<\/option>/)
})
