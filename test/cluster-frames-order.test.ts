/**
 * Live frames over NATS, the parts without NATS or sockets (src/cluster/frames.ts): the wire form,
 * the primary's watch registry and numbering, and how a replica's room puts frames in order against
 * the primary's catch-up and its own snapshot (docs/cluster.md "Sockets on any node").
 */
import t from 'tap'
import { decodeFrame, DriverPresence, encodeFrame, frameSubjects, newerThan, TopicRoomFrames, TrackPublisher, TrackRoomFrames, WATCH_TTL_MS, type RoomOut, type WireFrame } from '../src/cluster/frames.ts'
import type { TrackLocationFrame } from '../src/ws/location-frames.ts'
import { servesTracking } from '../src/ws/replica-sockets.ts'

const loc = (lat: number, lng = 13.4): TrackLocationFrame => ({ type: 'location', order_id: 7, driver: { name: 'D', lat, lng, location_updated_at: '2026-11-29T20:00:00.000Z' }, eta: null })
const status = (delivery: string | null) => ({ type: 'status', id: 7, status: 'ready', delivery_status: delivery })
const wire = (n: number, seq: number, frame: unknown): WireFrame => {
  const l = frame as TrackLocationFrame
  return l.type === 'location' ? { n, seq, kind: 'location', json: JSON.stringify(frame), at: [l.driver.lat, l.driver.lng] } : { n, seq, kind: 'status', json: JSON.stringify(frame) }
}

/** A room's output as the list of (kind, n) it passed on. */
function recorder(): RoomOut & { got: string[] } {
  const got: string[] = []
  return { got, status: (f) => got.push(`status#${f.n}`), location: (f) => got.push(`location#${f.n}`) }
}

t.test('subjects carry the cluster name and the shard id', async (t) => {
  const s = frameSubjects('dispatch')
  t.equal(s.track(42), 'dispatch.frames.0.track.42')
  t.equal(s.watch, 'dispatch.frames.0.watch')
  t.equal(s.topic('orders/5'), 'dispatch.frames.0.orders.5', 'an orders board')
  t.equal(s.topic('dispatch/5'), 'dispatch.frames.0.dispatch.5', 'a dispatch feed')
  t.equal(s.topic('fleet/3'), 'dispatch.frames.0.fleet.3', 'an owner\'s fleet')
  t.equal(s.topic('driver/5'), 'dispatch.frames.0.driver.5', 'a driver\'s app')
  t.equal(s.presence, 'dispatch.frames.0.presence', 'the driver apps a replica serves')
  t.equal(s.topic('kds/5/*'), 'dispatch.frames.0.kds.5.all', 'a store\'s all-station kitchen screens')
  t.equal(s.topic(`kds/5/st/${encodeURIComponent('grill.1 *')}`), `dispatch.frames.0.kds.5.st.${Buffer.from('grill.1%20*').toString('hex')}`, 'a station\'s, its name in hex')
  for (const other of ['track/5', 'driver/0', 'kds/5', 'kds/5/st/a b', 'kds/5/st/a>', 'orders/5.6', 'orders/>', 'orders/0']) t.equal(s.topic(other), null, `${other} does not travel as a topic`)
})

t.test('hub topics: the primary publishes only watched ones, numbered with the tracking frames; a replica keeps them in order against its snapshot', async (t) => {
  let now = 1_000
  let seq = 20
  const sent: Array<{ topic: string; wire: WireFrame }> = []
  const p = new TrackPublisher(() => {}, () => seq, () => now, (topic, text) => sent.push({ topic, wire: decodeFrame(text) }))
  t.equal(p.topics, 0)
  p.watch([], ['orders/5', 'track/5'])
  t.equal(p.topics, 1, 'a topic that does not travel is not watched')
  p.watch([], ['kds/7/st/grill', 'kds/7/*'])
  p.watch([], ['kds/7/*'])
  t.ok(p.watchingFamily('kds/7'), 'a store\'s kitchen topics are watched')
  t.notOk(p.watchingFamily('kds/5'), 'another store\'s are not')
  now += WATCH_TTL_MS - 1
  p.watch([], ['orders/5', 'kds/7/*'])
  now += 2
  p.sweep()
  t.ok(p.watchingFamily('kds/7'), 'one of its topics named again: still watched')
  now += WATCH_TTL_MS
  p.sweep()
  t.notOk(p.watchingFamily('kds/7'), 'none named again: no longer')
  p.watch([], ['orders/5'])
  t.ok(p.watchingTopic('orders/5'))
  t.notOk(p.watchingTopic('orders/6'))
  p.topicFrame('orders/5', '{"type":"order"}')
  t.same(sent, [{ topic: 'orders/5', wire: { n: 1, seq: 20, kind: 'topic', json: '{"type":"order"}', topic: 'orders/5' } }], 'its JSON text, numbered, with the sequence and the topic')
  t.throws(() => decodeFrame('1 2 topic\n{}'), /without its topic/)
  t.throws(() => decodeFrame('1 2 topic track/1\n{}'), /without its topic/)
  now += WATCH_TTL_MS + 1
  p.sweep()
  t.equal(p.topics, 0, 'forgotten once no replica names it')

  const room = new TopicRoomFrames()
  const out: number[] = []
  const f = (n: number, s: number, json = '{"type":"order"}'): WireFrame => ({ n, seq: s, kind: 'topic', json, topic: 'orders/5' })
  room.take(f(4, 30), (x) => out.push(x.n))
  room.take(f(6, 32), (x) => out.push(x.n))
  t.same(out, [], 'nothing passes before the primary answers the watch')
  room.answer({ n: 5, seq: 31 }, (x) => out.push(x.n))
  t.same(out, [6], 'a frame in the catch-up (numbered at or below the answer) is dropped; a later one passes')
  t.equal(room.since, 31, 'a snapshot must hold what the primary had when it answered')
  room.take(f(6, 32), (x) => out.push(x.n))
  room.take(f(7, 33), (x) => out.push(x.n))
  t.same(out, [6, 7], 'a repeated frame passes once')
  t.same(room.after(32).map((x) => x.n), [7], 'a socket whose snapshot holds sequence 32 still needs frame 7 only')
  t.notOk(newerThan(f(8, 32), 32), 'a frame built from data the snapshot holds is not sent after it')
  t.ok(newerThan(f(9, 12, '{"type":"driver","driver_id":1,"connected":true}'), 32), 'a driver\'s presence is the primary\'s live state: always sent')
})

t.test('drivers\' presence on a replica: the primary\'s answer, then its later frames', async (t) => {
  const p = new DriverPresence()
  const presence = (n: number, id: number, connected: boolean): WireFrame => ({ n, seq: 1, kind: 'topic', json: JSON.stringify({ type: 'driver', driver_id: id, connected }), topic: 'dispatch/1' })
  p.take(presence(3, 1, true))
  p.answer(5, [2])
  t.notOk(p.connected(1), 'an answer numbered after a frame overrides it')
  t.ok(p.connected(2))
  p.take(presence(4, 2, false))
  t.ok(p.connected(2), 'a frame older than the answer changes nothing')
  p.take(presence(6, 2, false))
  t.notOk(p.connected(2), 'a later frame does')
  p.answer(5, [2])
  t.notOk(p.connected(2), 'and an older answer does not undo it')
  p.take({ n: 7, seq: 1, kind: 'topic', json: '{"type":"location","driver_id":2}', topic: 'dispatch/1' })
  t.notOk(p.connected(2), 'other frames are not presence')
})

t.test('a frame travels as its number, sequence and kind, then its JSON text as built', async (t) => {
  const f = wire(3, 17, loc(52.5))
  t.same(decodeFrame(encodeFrame(f)), f)
  t.throws(() => decodeFrame('{"type":"status"}'), /not a live frame/, 'no head line: refused')
  t.throws(() => decodeFrame('1 2 other\n{}'), /not a live frame/, 'an unknown kind: refused')
  t.throws(() => decodeFrame('x 2 status\n{}'), /not a live frame/, 'a number that is not one: refused')
  t.throws(() => decodeFrame('1 2 location\n{}'), /without its position/, 'a location without its position: refused')
  t.same(decodeFrame(encodeFrame(wire(4, 5, status('picked_up')))).at, undefined, 'a status frame names no position')
})

t.test('the primary builds frames only for watched orders, numbers them, and forgets orders nobody names again', async (t) => {
  let now = 1_000
  let seq = 10
  const sent: Array<{ orderId: number; wire: WireFrame }> = []
  const p = new TrackPublisher((orderId, text) => sent.push({ orderId, wire: decodeFrame(text) }), () => seq, () => now)
  t.notOk(p.watching(7), 'nobody watches yet')
  p.watch([7])
  t.ok(p.watching(7))
  p.location(7, loc(52.5))
  seq = 11
  p.status(7, status('out_for_delivery') as never)
  t.same(sent.map((s) => [s.orderId, s.wire.n, s.wire.seq, s.wire.kind, s.wire.at]), [[7, 1, 10, 'location', [52.5, 13.4]], [7, 2, 11, 'status', undefined]], 'numbered in order, each with the sequence its content reflects')
  t.same(JSON.parse(sent[0]!.wire.json), loc(52.5), 'the location frame\'s text is the one the primary\'s own sockets get')
  t.same(p.lastLocation(7), loc(52.5))
  const reply = p.reply('n1', [7], (id) => ({ ...loc(52.5), order_id: id, trail: [[52.5, 13.4]] }))
  t.match(reply, { node: 'n1', n: 2, seq: 11, locations: { 7: { trail: [[52.5, 13.4]] } } }, 'the reply names the last frame number: later frames are not in its catch-up')
  p.clearLocation(7)
  t.equal(p.lastLocation(7), null, 'a driver no longer visible: no location to catch up with')
  now += WATCH_TTL_MS - 1
  p.sweep()
  t.ok(p.watching(7), 'kept within the TTL')
  p.watch([7])
  now += WATCH_TTL_MS - 1
  p.sweep()
  t.ok(p.watching(7), 'named again: kept')
  now += 2
  p.sweep()
  t.notOk(p.watching(7), 'not named for the TTL: forgotten')
  t.equal(p.size, 0)
})

t.test('a replica\'s room: frames before the primary\'s answer wait; those in its catch-up are dropped; the rest go out in order', async (t) => {
  const room = new TrackRoomFrames()
  const out = recorder()
  room.take(wire(4, 20, loc(52.4)), out) // published before the primary answered: in its catch-up
  room.take(wire(5, 21, loc(52.5)), out) // after: not in it
  room.take(wire(6, 22, status('out_for_delivery')), out)
  t.same(out.got, [], 'nothing goes out before the answer')
  t.notOk(room.answered)
  room.answer({ n: 4, seq: 20, location: { ...loc(52.4), trail: [[52.3, 13.4], [52.4, 13.4]] } }, out)
  t.ok(room.answered)
  t.equal(room.since, 20, 'a snapshot must hold the primary\'s data as of its answer')
  t.same(out.got, ['location#5', 'status#6'], 'frame 4 was in the catch-up; 5 and 6 go out, in order')
  t.same(room.location?.trail, [[52.3, 13.4], [52.4, 13.4], [52.5, 13.4]], 'the route so far grows with each position')
  room.take(wire(5, 21, loc(52.5)), out)
  t.same(out.got, ['location#5', 'status#6'], 'a frame already taken is not passed on again')
  room.take(wire(7, 22, loc(52.5)), out)
  t.same(room.location?.trail.length, 3, 'the same spot again adds no point to the route')
  t.match(room.location, { driver: { lat: 52.5 } }, 'the latest position')
})

t.test('a replica\'s room: status frames newer than a socket\'s snapshot are sent after it; older ones are already in it', async (t) => {
  const room = new TrackRoomFrames()
  const out = recorder()
  room.answer({ n: 0, seq: 10, location: null }, out)
  room.take(wire(1, 11, status('picked_up')), out)
  room.take(wire(2, 12, status('out_for_delivery')), out)
  t.same(room.after(11).map((s) => s.f.n), [2], 'a snapshot at 11 holds frame 1, not frame 2')
  t.same(room.after(10).map((s) => s.f.n), [2], 'forgotten once a snapshot held it: the copy only grows')
  t.same(room.after(12), [], 'a snapshot at 12 holds both')
  room.take(wire(3, 13, loc(52.5)), out)
  t.ok(room.location, 'a location while the driver is visible')
  room.take(wire(4, 14, status('delivered')), out)
  t.equal(room.location, null, 'delivered: the last location goes, as on the primary')
})

t.test('a replica serves a tracking socket itself only when joined, ready and following another node; else it tunnels it', async (t) => {
  const ready = { role: 'replica' as const, ready: true, primary: 'n1', node: 'n2' }
  t.ok(servesTracking(ready, true), 'a ready replica with a primary serves it')
  t.notOk(servesTracking(ready, false), 'not joined yet (no NATS link): tunnelled')
  t.notOk(servesTracking({ ...ready, ready: false }, true), 'behind CLUSTER_MAX_LAG_MS (or stopped applying): tunnelled')
  t.notOk(servesTracking({ ...ready, primary: null }, true), 'no primary known: tunnelled (which answers 503)')
  t.notOk(servesTracking({ ...ready, role: 'promoting' }, true), 'becoming primary: not served by the replica listener')
  t.notOk(servesTracking({ ...ready, primary: 'n2' }, true), 'the lease names this node: not served as a replica')
})
