/**
 * The driver app API (api-v1 §3 driver row, §4.6): every answer is limited to the token's driver;
 * a driver moves only its own assigned orders forward and emits the owner route's events.
 */
import t from 'tap'
import { startServer } from './helpers/server.ts'
import { assign, createFleet, deliveryOrder, driverStatus } from './helpers/delivery.ts'

const s = await startServer({ RATE_LIMIT_PER_MINUTE: '100000' })
t.teardown(() => s.close())
const db = s.app.svc.db
const f = createFleet(db)
const other = createFleet(db)
const [d1, d2] = f.drivers as [typeof f.drivers[0], typeof f.drivers[0]]

t.test('GET /driver/me is the token\'s own profile', async (t) => {
  const r = await s.req('GET', '/driver/me', { token: d1.token })
  t.equal(r.status, 200)
  t.match(r.body, { id: d1.id, name: d1.name, phone: d1.phone, restaurant_id: f.storeId, on_shift: false, connected: false, active_deliveries: [] })
  t.equal((await s.req('GET', '/driver/me')).status, 401)
  t.equal((await s.req('GET', '/driver/me', { token: 'dsd_nope' })).status, 401)
})

t.test('a driver moves its order forward; same events as the owner route', async (t) => {
  const o = await deliveryOrder(s, f, { tip_amount: 2 })
  await assign(s, f, o.id, d1.id)
  const up = await driverStatus(s, d1, o.id, 'picked_up')
  t.equal(up.status, 200)
  t.match(up.body, { id: o.id, delivery_status: 'picked_up', restaurant: { id: f.storeId }, address: '1 Main St', tip_amount: 2, items: [{ name: 'Pizza', quantity: 1 }] })
  t.equal((await driverStatus(s, d1, o.id, 'picked_up')).status, 200, 'repeating the current status is a harmless retry')
  const back = await driverStatus(s, d1, o.id, 'picked_up')
  t.equal(back.body.delivery_status, 'picked_up')
  const ofd = await s.req('PUT', `/driver/deliveries/${o.id}/status`, { token: d1.token, body: { delivery_status: 'out_for_delivery', note: 'on my way' } })
  t.equal(ofd.status, 200)
  const done = await driverStatus(s, d1, o.id, 'delivered')
  t.equal(done.body.delivery_status, 'delivered')
  t.match(done.body.timeline, { picked_up_at: String, out_for_delivery_at: String, delivered_at: String })
  const evs = (db.prepare('SELECT event, data FROM outbox WHERE store_id = ? ORDER BY id').all(f.storeId) as Array<{ event: string; data: string }>)
    .filter((e) => JSON.parse(e.data).order_id === o.id)
  // The kitchen status follows (docs/orders.md): picked up → ready, delivered → delivered, each an order.status_changed.
  t.same(evs.map((e) => e.event), ['order.created', 'order.driver_assigned', 'order.status_changed', 'order.out_for_delivery', 'order.delivered', 'order.status_changed'])
  t.same(JSON.parse(evs[3]!.data), { order_id: o.id, restaurant_id: f.storeId, delivery_status: 'out_for_delivery', driver_id: d1.id, note: 'on my way' }, 'the payload the owner route emits')
})

t.test('never backwards, never after the end, never from pending; clear 422 codes', async (t) => {
  const o = await deliveryOrder(s, f)
  await assign(s, f, o.id, d1.id)
  t.equal((await driverStatus(s, d1, o.id, 'out_for_delivery')).status, 200, 'a step may be skipped')
  const back = await driverStatus(s, d1, o.id, 'picked_up')
  t.equal(back.status, 422)
  t.match(back.body, { code: 'validation_failed', reason: 'invalid_transition' })
  t.ok(back.body.errors.delivery_status)
  for (const target of ['pending', 'assigned', 'cancelled']) {
    const r = await driverStatus(s, d1, o.id, target)
    t.equal(r.status, 422, `${target} is not a driver status`)
    t.equal(r.body.code, 'validation_failed')
  }
  t.equal((await driverStatus(s, d1, o.id, 'failed')).status, 200)
  const after = await driverStatus(s, d1, o.id, 'delivered')
  t.equal(after.status, 422, 'failed is final')
  t.match(after.body, { code: 'validation_failed', reason: 'invalid_transition' })
})

t.test('orders that are not the driver\'s are 404: unassigned, another driver\'s, another owner\'s', async (t) => {
  const unassigned = await deliveryOrder(s, f)
  const theirs = await deliveryOrder(s, f)
  await assign(s, f, theirs.id, d2.id)
  const foreign = await deliveryOrder(s, other)
  await assign(s, other, foreign.id, other.drivers[0]!.id)
  for (const o of [unassigned, theirs, foreign]) {
    const r = await driverStatus(s, d1, o.id, 'picked_up')
    t.equal(r.status, 404)
    t.equal(r.body.code, 'not_found')
    t.equal((await s.req('GET', `/driver/deliveries/${o.id}`, { token: d1.token })).status, 404)
    t.equal((await s.req('POST', `/driver/deliveries/${o.id}/pod-otp`, { token: d1.token, body: { code: '0000' } })).status, 404)
    const photo = await s.req('POST', `/driver/deliveries/${o.id}/pod-photo`, { token: d1.token, body: { image: 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==' } })
    t.equal(photo.status, 404, 'pod-photo')
  }
  t.equal((await driverStatus(s, d1, 999_999, 'picked_up')).status, 404, 'an order that does not exist reads the same')
  // 404 before 422: another driver's order answers 404 whatever the body (api-v1 §1, §4.6).
  for (const [path, body] of [[`/driver/deliveries/${theirs.id}/status`, { delivery_status: 'teleported' }], [`/driver/deliveries/${theirs.id}/pod-otp`, { code: 'x' }], [`/driver/deliveries/${theirs.id}/pod-photo`, {}]] as const) {
    const method = path.endsWith('/status') ? 'PUT' : 'POST'
    const r = await s.req(method, path, { token: d1.token, body })
    t.equal(r.status, 404, `${method} ${path} with an invalid body`)
  }
  t.equal((await s.req('GET', `/track/${theirs.track_token}`)).body.delivery_status, 'assigned', 'the other driver\'s order is untouched')
  const list = await s.req('GET', '/driver/deliveries', { token: d1.token })
  t.notOk(list.body.data.some((x: any) => [unassigned.id, theirs.id, foreign.id].includes(x.id)), 'the list holds only own deliveries')
})

t.test('GET /driver/deliveries: own orders newest first; active=1 hides delivered and failed', async (t) => {
  const d = f.addDriver()
  const ids: number[] = []
  for (let i = 0; i < 3; i++) {
    const o = await deliveryOrder(s, f)
    await assign(s, f, o.id, d.id)
    ids.push(o.id)
  }
  await driverStatus(s, d, ids[0]!, 'delivered')
  await driverStatus(s, d, ids[1]!, 'failed')
  const all = await s.req('GET', '/driver/deliveries', { token: d.token })
  t.match(all.body, { current_page: 1, total: 3 })
  t.same(all.body.data.map((x: any) => x.id), [...ids].reverse())
  const active = await s.req('GET', '/driver/deliveries?active=1', { token: d.token })
  t.same(active.body.data.map((x: any) => x.id), [ids[2]])
  t.equal((await s.req('GET', '/driver/deliveries?active=yes', { token: d.token })).status, 422)
})

t.test('PUT /driver/location: validated ranges, durable answer, visible to the owner', async (t) => {
  const ok = await s.req('PUT', '/driver/location', { token: d2.token, body: { lat: 52.52, lng: 13.405 } })
  t.equal(ok.status, 200)
  t.match(ok.body, { lat: 52.52, lng: 13.405, location_updated_at: String })
  const row = db.prepare('SELECT p.lat, p.lng FROM drivers d LEFT JOIN driver_positions p ON p.driver_id = d.id WHERE d.id = ?').get(d2.id)
  t.same(row, { lat: 52.52, lng: 13.405 }, 'in SQLite when the answer leaves')
  const owner = await s.req('GET', `/drivers/${d2.id}`, { token: f.ownerToken })
  t.match(owner.body.location, { lat: 52.52, lng: 13.405 })
  for (const body of [{ lat: 91, lng: 0 }, { lat: 0, lng: -181 }, { lat: '1', lng: 2 }, { lat: 1 }, {}]) {
    const r = await s.req('PUT', '/driver/location', { token: d2.token, body })
    t.equal(r.status, 422, JSON.stringify(body))
  }
  t.equal((await s.req('PUT', '/driver/location', { token: d2.token, raw: '{', headers: { 'content-type': 'application/json' } })).status, 400)
})

t.test('the driver routes are documented in OpenAPI with bearer security', async (t) => {
  const doc = (await s.req('GET', '/openapi.json')).body
  for (const p of ['/driver/me', '/driver/available', '/driver/offers', '/driver/earnings', '/driver/deliveries/{orderId}/claim', '/driver/deliveries/{orderId}/pod-otp',
    '/driver/deliveries/{orderId}/pod-photo', '/driver/offers/{offerId}/accept', '/driver/offers/{offerId}/reject', '/driver/login/request', '/driver/login/verify',
    '/driver/push/register-device', '/driver/push/unregister-device', '/driver/shift', '/drivers/{id}/rotate-token', '/restaurants/{id}/deliveries']) {
    t.ok(doc.paths[p], p)
  }
  // `security` lists the three schemes of api-v1 §5 on every operation; the driver's own is in x-auth.
  t.same(doc.paths['/driver/me'].get['x-auth'], { credential: 'driver', security: [{ bearerAuth: [] }] })
  t.ok(doc.paths['/driver/deliveries/{orderId}/pod-photo'].post.requestBody, 'payload documented')
})
