/**
 * The tracking socket `{base_url}/ws/track/{track_token}` (api-v1 §2.5, docs/realtime.md): the
 * first frame is the tracking view; every status change follows; the driver's position flows only
 * while picked up or out for delivery (never before), within milliseconds; a slow watcher gets the
 * latest position instead of a backlog.
 */
import t from 'tap'
import { startServer } from './helpers/server.ts'
import { assign, createFleet, deliveryOrder, driverStatus } from './helpers/delivery.ts'
import { WsClient, wsBase } from './helpers/ws-client.ts'

// The slow-watcher case streams 1,500 positions from one driver socket at once: a load, not an abuse (docs/limits.md).
const s = await startServer({ RATE_LIMIT_PER_MINUTE: '100000', WS_MESSAGE_RATE: '0' })
t.teardown(() => s.close())
const db = s.app.svc.db
const f = createFleet(db)
const trackUrl = (token: string, q = '') => `${wsBase(s)}/ws/track/${token}${q}`

t.test('unknown tokens are refused with 404', async (t) => {
  const r = await WsClient.open(trackUrl('trk_nope')).then(() => null, (e) => e)
  t.match(r, { status: 404, body: { code: 'not_found' } })
})

t.test('snapshot first, then status frames; the driver only after pickup; live positions', async (t) => {
  const d = f.addDriver()
  const o = await deliveryOrder(s, f)
  const watcher = await WsClient.open(trackUrl(o.track_token))
  const snap = await watcher.next()
  const { type, ...view } = snap
  t.equal(type, 'snapshot', 'the first frame is the snapshot')
  t.same(view, (await s.req('GET', `/track/${o.track_token}`)).body, 'it is the tracking view of GET /track')

  const driver = await WsClient.open(`${wsBase(s)}/ws/driver`, { token: d.token })
  await driver.next((x) => x.type === 'hello')
  await assign(s, f, o.id, d.id)
  const assigned = await watcher.next((x) => x.type === 'status')
  t.match(assigned, { delivery_status: 'assigned', delivery_code: /^\d{4}$/ })
  t.notOk('driver' in assigned, 'no driver in the view before pickup')
  for (let i = 0; i < 3; i++) {
    driver.send({ type: 'location', lat: 40 + i, lng: -70, seq: i })
    await driver.next((x) => x.type === 'ack' && x.seq === i)
  }
  t.ok(await watcher.none((x) => x.type === 'location', 300), 'no location frame before pickup')

  await driverStatus(s, d, o.id, 'picked_up')
  const picked = await watcher.next((x) => x.type === 'status')
  t.match(picked, { delivery_status: 'picked_up', driver: { name: d.name, lat: 42, lng: -70 } })
  // How fast it arrives is the tracking bench's question (bench/tracking.ts), not this test's.
  driver.send({ type: 'location', lat: 40.5, lng: -70.5, seq: 10 })
  const loc = await watcher.next((x) => x.type === 'location')
  t.match(loc, { order_id: o.id, driver: { name: d.name, lat: 40.5, lng: -70.5, location_updated_at: String } })

  await driverStatus(s, d, o.id, 'out_for_delivery')
  t.match(await watcher.next((x) => x.type === 'status'), { delivery_status: 'out_for_delivery' })
  driver.send({ type: 'location', lat: 40.6, lng: -70.6, seq: 11 })
  t.match(await watcher.next((x) => x.type === 'location'), { driver: { lat: 40.6 } })

  await driverStatus(s, d, o.id, 'delivered')
  const done = await watcher.next((x) => x.type === 'status')
  t.match(done, { delivery_status: 'delivered' })
  t.notOk('driver' in done, 'the driver disappears once delivered')
  await new Promise((r) => setTimeout(r, 30))
  watcher.frames.length = 0
  driver.send({ type: 'location', lat: 41, lng: -71, seq: 12 })
  await driver.next((x) => x.type === 'ack' && x.seq === 12)
  t.ok(await watcher.none((x) => x.type === 'location', 300), 'no location after delivery')
  await driver.close()
  await watcher.close()
})

t.test('kitchen status changes reach the watcher too; a late watcher gets the latest position', async (t) => {
  const d = f.addDriver()
  const o = await deliveryOrder(s, f)
  await assign(s, f, o.id, d.id)
  await driverStatus(s, d, o.id, 'picked_up')
  const early = await WsClient.open(trackUrl(o.track_token))
  t.match(await early.next((x) => x.type === 'snapshot'), { status: 'ready' }, 'picked up: the kitchen status is ready (docs/orders.md)')
  await s.req('PUT', `/restaurants/${f.storeId}/orders/${o.id}/status`, { token: f.ownerToken, body: { status: 'completed' } })
  t.match(await early.next((x) => x.type === 'status'), { status: 'completed' })
  await s.req('PUT', '/driver/location', { token: d.token, body: { lat: 1.5, lng: 2.5 } })
  t.match(await early.next((x) => x.type === 'location'), { driver: { lat: 1.5, lng: 2.5 } }, 'HTTP locations are published like socket ones')
  const late = await WsClient.open(trackUrl(o.track_token))
  t.match(await late.next(), { type: 'snapshot', driver: { lat: 1.5, lng: 2.5 } })
  await early.close()
  await late.close()
})

t.test('MessagePack frames on request; bad frames answered, socket kept', async (t) => {
  const o = await deliveryOrder(s, f)
  const c = await WsClient.open(trackUrl(o.track_token, '?format=msgpack'))
  const snap = await c.next()
  t.match(snap, { type: 'snapshot', id: o.id })
  c.ws.send('{oops')
  t.equal((await c.next((x) => x.type === 'error')).code, 'bad_frame')
  c.send({ type: 'location', lat: 1, lng: 1 })
  t.equal((await c.next((x) => x.type === 'error')).code, 'unknown_type', 'watchers cannot move drivers')
  c.send({ type: 'ping' })
  t.equal((await c.next((x) => x.type === 'pong')).type, 'pong')
  await c.close()
})

t.test('a slow watcher is skipped, not queued without bound, and catches up with the latest position', async (t) => {
  // A long driver name makes every location frame ~8 KB, so a paused reader fills the kernel
  // buffers and uWS's per-socket limit quickly.
  const d = f.addDriver()
  db.prepare('UPDATE drivers SET name = ? WHERE id = ?').run(`Slow ${'x'.repeat(8000)}`, d.id)
  s.app.svc.actors.drivers.evict(d.id)
  const o = await deliveryOrder(s, f)
  await assign(s, f, o.id, d.id)
  await driverStatus(s, d, o.id, 'picked_up')
  const slow = await WsClient.open(trackUrl(o.track_token))
  await slow.next((x) => x.type === 'snapshot')
  const fast = await WsClient.open(trackUrl(o.track_token))
  await fast.next((x) => x.type === 'snapshot')
  const socket = (slow.ws as unknown as { _socket: { pause(): void; resume(): void } })._socket
  socket.pause()

  const driver = await WsClient.open(`${wsBase(s)}/ws/driver`, { token: d.token })
  const N = 1500
  for (let i = 0; i < N; i++) {
    driver.send({ type: 'location', lat: 10 + i / 10_000, lng: 20, seq: i })
    // Wait for each ack so every position is its own frame (the server coalesces within a turn).
    await driver.next((x) => x.type === 'ack' && x.seq === i, 5000)
  }
  const lastLat = 10 + (N - 1) / 10_000
  let fastGot = 0
  for (;;) { const x = await fast.next((y) => y.type === 'location', 5000); fastGot++; if (x.driver.lat === lastLat) break }
  t.equal(fastGot, N, 'the fast watcher got every position')

  socket.resume()
  let got = 0
  for (;;) {
    const x = await slow.next((y) => y.type === 'location', 5000)
    got++
    if (x.driver.lat === lastLat) break
  }
  t.ok(got < N, `the slow watcher skipped stale positions (${got} of ${N} frames) and ended on the latest`)
  await driver.close()
  await slow.close()
  await fast.close()
})
