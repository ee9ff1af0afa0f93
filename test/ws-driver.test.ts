/**
 * The driver socket `{base_url}/ws/driver` (docs/realtime.md): authenticated upgrades only,
 * location frames acknowledged once durable and coalesced under floods, error frames for bad
 * frames (the socket survives), MessagePack on request, assignments pushed as they happen.
 */
import t from 'tap'
import { pack } from 'msgpackr'
import { refusal, startServer } from './helpers/server.ts'
import { assign, createFleet, deliveryOrder } from './helpers/delivery.ts'
import { WsClient, wsBase } from './helpers/ws-client.ts'

const s = await startServer({ RATE_LIMIT_PER_MINUTE: '100000' })
t.teardown(() => s.close())
const db = s.app.svc.db
const f = createFleet(db)
const url = `${wsBase(s)}/ws/driver`

t.test('unauthenticated upgrades are refused with the error envelope', async (t) => {
  const none = await refusal(WsClient.open(url))
  t.match(none, { status: 401, body: { code: 'unauthenticated', message: String } })
  t.match(await refusal(WsClient.open(url, { token: 'dsd_forged' })), { status: 401 })
  t.match(await refusal(WsClient.open(url, { token: f.ownerToken })), { status: 401 }, 'an owner token is not a driver token')
  const viaQuery = await WsClient.open(`${url}?token=${encodeURIComponent(f.drivers[0]!.token)}`)
  t.equal((await viaQuery.next((x) => x.type === 'hello')).driver.id, f.drivers[0]!.id, '?token= works for clients that cannot set headers')
  await viaQuery.close()
})

t.test('hello carries the profile, active deliveries and open offers; connection is live state', async (t) => {
  const d = f.addDriver({ onShift: true })
  const o = await deliveryOrder(s, f)
  await assign(s, f, o.id, d.id)
  const c = await WsClient.open(url, { token: d.token })
  const hello = await c.next((x) => x.type === 'hello')
  t.match(hello, { driver: { id: d.id, on_shift: true, connected: true, active_deliveries: [o.id] }, deliveries: [{ id: o.id, delivery_status: 'assigned' }], offers: [] })
  await new Promise((r) => setTimeout(r, 20))
  t.equal((await s.req('GET', `/drivers/${d.id}`, { token: f.ownerToken })).body.connected, true)
  await c.close()
  await new Promise((r) => setTimeout(r, 20))
  t.equal((await s.req('GET', `/drivers/${d.id}`, { token: f.ownerToken })).body.connected, false)
})

t.test('a location frame is acknowledged after it is durable', async (t) => {
  const d = f.addDriver()
  const c = await WsClient.open(url, { token: d.token })
  c.send({ type: 'location', lat: 48.8566, lng: 2.3522, seq: 7 })
  const ack = await c.next((x) => x.type === 'ack')
  t.match(ack, { seq: 7, lat: 48.8566, lng: 2.3522, location_updated_at: String })
  t.same(db.prepare('SELECT p.lat, p.lng FROM drivers d LEFT JOIN driver_positions p ON p.driver_id = d.id WHERE d.id = ?').get(d.id), { lat: 48.8566, lng: 2.3522 })
  c.send({ type: 'location', lat: 1, lng: 2 })
  t.ok(await c.none((x) => x.type === 'ack', 300), 'without seq a position is fire-and-forget: no ack')
  t.equal(db.prepare('SELECT p.lat FROM drivers d LEFT JOIN driver_positions p ON p.driver_id = d.id WHERE d.id = ?').pluck().get(d.id), 1, 'and still stored')
  c.send({ type: 'location', lat: 3, lng: 4, seq: 8 })
  t.match(await c.next((x) => x.type === 'ack'), { seq: 8, lat: 3, lng: 4 })
  t.equal(db.pragma('synchronous', { simple: true }), 2, 'orders and other writes stay synchronous=FULL after a position commit')
  await c.close()
})

t.test('a flood is coalesced: the latest position wins and every frame is acknowledged', async (t) => {
  const d = f.addDriver()
  const c = await WsClient.open(url, { token: d.token })
  await c.next((x) => x.type === 'hello')
  for (let i = 0; i < 500; i++) c.send({ type: 'location', lat: 10 + i / 1000, lng: 20, seq: i })
  let last = -1
  while (last < 499) last = (await c.next((x) => x.type === 'ack', 5000)).seq
  t.equal(last, 499)
  const acks = 1 + c.frames.filter((x) => x.type === 'ack').length
  t.ok(acks < 500, `fewer acknowledgements (${acks}) than frames: positions were coalesced`)
  t.same(db.prepare('SELECT p.lat, p.lng FROM drivers d LEFT JOIN driver_positions p ON p.driver_id = d.id WHERE d.id = ?').get(d.id), { lat: 10.499, lng: 20 })
  await c.close()
})

t.test('bad frames get an error frame and the socket stays usable', async (t) => {
  const d = f.addDriver()
  const c = await WsClient.open(url, { token: d.token })
  await c.next((x) => x.type === 'hello')
  const cases: Array<[string | Buffer, string]> = [
    ['{not json', 'bad_frame'],
    ['42', 'bad_frame'],
    ['[1,2]', 'bad_frame'],
    ['{"type":"teleport"}', 'unknown_type'],
    ['{"lat":1,"lng":2}', 'unknown_type'],
    ['{"type":"location","lat":95,"lng":2}', 'validation_failed'],
    ['{"type":"location","lat":"1","lng":2}', 'validation_failed'],
    ['{"type":"location","lat":1,"lng":2,"seq":-1}', 'validation_failed'],
    [Buffer.from([0xc1, 0xff, 0x00]), 'bad_frame'],
  ]
  for (const [raw, code] of cases) {
    c.ws.send(raw)
    const e = await c.next((x) => x.type === 'error')
    t.equal(e.code, code, String(raw))
  }
  const v = await (async () => { c.ws.send('{"type":"location","lat":91,"lng":181,"seq":3}'); return c.next((x) => x.type === 'error') })()
  t.ok(v.errors.lat && v.errors.lng)
  t.equal(v.seq, 3)
  c.send({ type: 'ping' })
  t.equal((await c.next((x) => x.type === 'pong')).type, 'pong', 'still open and answering')
  t.equal(db.prepare('SELECT p.lat FROM drivers d LEFT JOIN driver_positions p ON p.driver_id = d.id WHERE d.id = ?').pluck().get(d.id), null, 'no bad position stored')
  await c.close()
})

t.test('MessagePack: ?format=msgpack or the msgpack subprotocol, both directions', async (t) => {
  const d = f.addDriver()
  for (const opts of [{ q: '?format=msgpack', protocols: [] as string[] }, { q: '', protocols: ['msgpack'] }]) {
    const c = await WsClient.open(`${url}${opts.q}`, { token: d.token, protocols: opts.protocols })
    if (opts.protocols.length) t.equal(c.ws.protocol, 'msgpack', 'the subprotocol is echoed')
    const hello = await c.next((x) => x.type === 'hello')
    t.equal(hello.driver.id, d.id, 'frames arrive as MessagePack (decoded by the helper)')
    c.ws.send(pack({ type: 'location', lat: 5.5, lng: 6.5, seq: 1 }))
    t.match(await c.next((x) => x.type === 'ack'), { seq: 1, lat: 5.5, lng: 6.5 })
    c.ws.send('{"type":"location","lat":5.6,"lng":6.6,"seq":2}')
    t.match(await c.next((x) => x.type === 'ack'), { seq: 2 }, 'JSON frames are accepted on a MessagePack socket too')
    await c.close()
  }
})

t.test('assignments, delivery changes and un-assignments are pushed to the driver', async (t) => {
  const d1 = f.addDriver()
  const d2 = f.addDriver()
  const c1 = await WsClient.open(url, { token: d1.token })
  await c1.next((x) => x.type === 'hello')
  const o = await deliveryOrder(s, f)
  await assign(s, f, o.id, d1.id)
  const a = await c1.next((x) => x.type === 'assignment')
  t.match(a.delivery, { id: o.id, delivery_status: 'assigned', address: '1 Main St' })
  await s.req('PUT', `/restaurants/${f.storeId}/orders/${o.id}/status`, { token: f.ownerToken, body: { status: 'ready' } })
  t.match((await c1.next((x) => x.type === 'delivery')).delivery, { id: o.id, status: 'ready' })
  await assign(s, f, o.id, d2.id)
  t.same(await c1.next((x) => x.type === 'unassigned'), { type: 'unassigned', order_id: o.id })
  await c1.close()
})
