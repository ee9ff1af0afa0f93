/**
 * The owner dispatch feed `{base_url}/ws/dispatch/{restaurantId}` (docs/realtime.md): owner token
 * with `drivers:read`, another owner's store is 404; a snapshot, then the positions of the drivers
 * who may serve the store, presence changes and every change of its delivery orders.
 */
import t from 'tap'
import { refusal, startServer } from './helpers/server.ts'
import { assign, createFleet, deliveryOrder } from './helpers/delivery.ts'
import { WsClient, wsBase } from './helpers/ws-client.ts'
import { createOwnerToken } from '../src/seed.ts'

const s = await startServer({ RATE_LIMIT_PER_MINUTE: '100000' })
t.teardown(() => s.close())
const db = s.app.svc.db
const f = createFleet(db)
const other = createFleet(db)
const feedUrl = (storeId: number) => `${wsBase(s)}/ws/dispatch/${storeId}`

t.test('refusals: no token 401, missing capability 403, another owner\'s store 404', async (t) => {
  t.match(await refusal(WsClient.open(feedUrl(f.storeId))), { status: 401 })
  const menuOnly = createOwnerToken(db, f.ownerId, ['menu:read']).token
  t.match(await refusal(WsClient.open(feedUrl(f.storeId), { token: menuOnly })), { status: 403, body: { code: 'forbidden' } })
  t.match(await refusal(WsClient.open(feedUrl(other.storeId), { token: f.ownerToken })), { status: 404, body: { code: 'not_found' } })
  t.match(await refusal(WsClient.open(feedUrl(0), { token: f.ownerToken })), { status: 404 })
  t.match(await refusal(WsClient.open(feedUrl(f.storeId), { token: f.drivers[0]!.token })), { status: 401 })
  const reader = createOwnerToken(db, f.ownerId, ['drivers:read']).token
  const ok = await WsClient.open(`${feedUrl(f.storeId)}?token=${reader}`)
  t.equal((await ok.next()).type, 'snapshot')
  await ok.close()
})

t.test('snapshot, positions of its drivers only, presence, delivery changes', async (t) => {
  const st = f.addStore()
  const bound = f.addDriver({ restaurantId: st.storeId })
  const unbound = f.addDriver({ restaurantId: null })
  const elsewhere = f.addDriver({ restaurantId: f.storeId })
  const waiting = await deliveryOrder(s, { ...f, ...st })
  const feed = await WsClient.open(feedUrl(st.storeId), { token: f.ownerToken })
  const snap = await feed.next()
  t.equal(snap.type, 'snapshot')
  t.equal(snap.restaurant_id, st.storeId)
  const ids = snap.drivers.map((d: any) => d.id)
  t.ok(ids.includes(bound.id) && ids.includes(unbound.id), 'its bound drivers and the owner\'s unbound ones')
  t.notOk(ids.includes(elsewhere.id), 'not drivers bound to another store')
  t.match(snap.deliveries, [{ id: waiting.id, delivery_status: 'pending', driver_id: null }])

  await s.req('PUT', '/driver/location', { token: bound.token, body: { lat: 3, lng: 4 } })
  t.match(await feed.next((x) => x.type === 'location'), { driver_id: bound.id, lat: 3, lng: 4, name: bound.name })
  await s.req('PUT', '/driver/location', { token: unbound.token, body: { lat: 5, lng: 6 } })
  t.match(await feed.next((x) => x.type === 'location'), { driver_id: unbound.id, lat: 5 })
  await s.req('PUT', '/driver/location', { token: elsewhere.token, body: { lat: 7, lng: 8 } })
  t.ok(await feed.none((x) => x.type === 'location' && x.driver_id === elsewhere.id, 200), 'no position of a driver it may not use')

  await s.req('POST', '/driver/shift', { token: bound.token, body: { action: 'start' } })
  t.match(await feed.next((x) => x.type === 'driver'), { driver_id: bound.id, on_shift: true, connected: false })
  const sock = await WsClient.open(`${wsBase(s)}/ws/driver`, { token: bound.token })
  t.match(await feed.next((x) => x.type === 'driver'), { driver_id: bound.id, connected: true })

  await s.req('POST', `/restaurants/${st.storeId}/orders/${waiting.id}/assign`, { token: f.ownerToken, body: { driver_id: bound.id } })
  t.match(await feed.next((x) => x.type === 'delivery'), { delivery: { id: waiting.id, delivery_status: 'assigned', driver_id: bound.id } })
  const fresh = await deliveryOrder(s, { ...f, ...st })
  t.match(await feed.next((x) => x.type === 'delivery' && x.delivery.id === fresh.id), { delivery: { delivery_status: 'pending' } }, 'new delivery orders appear')
  const elsewhereOrder = await deliveryOrder(s, f)
  await assign(s, f, elsewhereOrder.id, elsewhere.id)
  t.ok(await feed.none((x) => x.type === 'delivery' && x.delivery.id === elsewhereOrder.id, 200), 'other stores\' deliveries stay out')
  feed.send({ type: 'refresh' })
  t.equal((await feed.next((x) => x.type === 'snapshot')).deliveries.length, 2)
  await sock.close()
  await feed.close()
})
