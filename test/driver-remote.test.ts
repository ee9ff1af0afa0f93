/**
 * A driver app's socket served by a cluster replica (docs/cluster.md "Sockets on any node"), the
 * parts without NATS: on the primary, `driverRemoteLocation` resolves the driver's credential again
 * and admits the frame before the driver actor stores it (an unknown or rotated credential, or a bad
 * position, is refused and nothing is written); on the replica, positions the primary does not
 * answer get the `unavailable` error with their seq, never an ack; the primary counts a replica's
 * driver apps while the replica names them and forgets them WATCH_TTL_MS after it stopped (a dead
 * replica); a replica that is not ready tunnels the socket to the primary, as before. The whole
 * road over NATS: test/cluster-driver.test.ts.
 */
import t from 'tap'
import { startServer } from './helpers/server.ts'
import { createAccount, createDriver } from './helpers/fixtures.ts'
import { driverRemoteLocation, driverRemoteLocations } from '../src/ws/driver.ts'
import { driverClose, driverOnReplica } from '../src/ws/replica-driver.ts'
import { DriverSocketsElsewhere, WATCH_TTL_MS, type WireFrame } from '../src/cluster/frames.ts'
import type { FrameLink } from '../src/cluster/frame-link.ts'
import type { Hub } from '../src/ws/hub.ts'
import { nowIso } from '../src/storage/db.ts'
import { replicaServer } from '../src/http/replica.ts'
import { forwarder } from '../src/http/forward.ts'
import { replicaFeeds } from '../src/ws/replica-feeds.ts'
import { databaseReadiness } from '../src/storage/health.ts'
import { withClusterSecret } from '../src/net/client-address.ts'
import type { ClusterStatus } from '../src/cluster/node.ts'
import type { ReadView } from '../src/cluster/read-view.ts'
import { WsClient } from './helpers/ws-client.ts'

/** Wait for `ok`; a bug fails the test rather than hang it. */
async function until(ok: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 20_000
  while (!ok()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 5))
  }
}

const s = await startServer({ RATE_LIMIT_PER_MINUTE: '100000' })
t.teardown(() => s.close())
const db = s.app.svc.db
const acct = createAccount(db)
const driver = createDriver(db, acct.ownerId, acct.storeId)
const store = s.app.realtime.remoteLocations!
const position = () => db.prepare('SELECT lat, lng, location_updated_at FROM driver_positions WHERE driver_id = ?').get(driver.id) as { lat: number; lng: number; location_updated_at: string } | undefined

t.test('on the primary: the credential is resolved and the frame admitted again, then the actor stores it', async (t) => {
  const at = (lat: number) => ({ type: 'location', lat, lng: 13.4 })
  t.match(await driverRemoteLocation(s.app.svc, store, { bearer: 'drv_not-a-token', frame: at(52.5) }), { type: 'error', code: 'unauthenticated' }, 'an unknown credential: refused')
  t.match(await driverRemoteLocation(s.app.svc, store, { frame: at(52.5) }), { type: 'error', code: 'unauthenticated' }, 'no credential: refused')
  t.match(await driverRemoteLocation(s.app.svc, store, { bearer: acct.token, frame: at(52.5) }), { type: 'error', code: 'unauthenticated' }, 'an owner token is no driver credential')
  t.match(await driverRemoteLocation(s.app.svc, store, { bearer: driver.token, frame: at(91) }), { type: 'error', code: 'validation_failed', errors: { lat: Array } }, 'a position out of range: refused')
  t.match(await driverRemoteLocation(s.app.svc, store, { bearer: driver.token, frame: { type: 'bump' } }), { type: 'error', code: 'unknown_type' }, 'not a position')
  t.equal(position(), undefined, 'nothing written')

  const received = Date.now() - 1500
  const ack = await driverRemoteLocation(s.app.svc, store, { bearer: driver.token, frame: at(52.51), at: received })
  t.same(ack, { type: 'ack', lat: 52.51, lng: 13.4, location_updated_at: nowIso(received) }, 'acknowledged with the time the replica received it')
  t.same(position(), { lat: 52.51, lng: 13.4, location_updated_at: nowIso(received) }, 'stored when acknowledged')
  const future = await driverRemoteLocation(s.app.svc, store, { bearer: driver.token, frame: at(52.52), at: Date.now() + 3_600_000 }) as { location_updated_at: string }
  t.ok(Date.parse(future.location_updated_at) <= Date.now(), 'a time from the future (a replica\'s clock ahead) is not taken')
})

t.test('on a replica: positions the primary does not answer get the unavailable error with their seq, never an ack', async (t) => {
  const sent: unknown[] = []
  const ws = {
    getUserData: () => ({ closed: false, format: 'json', driverId: driver.id, who: { principal: s.app.svc.auth.driver({ headers: {}, query: {}, bearer: driver.token })! }, session: { bearer: driver.token } }),
    getBufferedAmount: () => 0,
    send: (m: string) => { sent.push(JSON.parse(m)); return 1 },
  }
  const hub = { send: (w: typeof ws, msg: unknown) => w.send(JSON.stringify(msg)) } as unknown as Hub
  const frame = (f: unknown) => new TextEncoder().encode(JSON.stringify(f)).buffer as ArrayBuffer
  const answers = (n: number) => until(() => sent.length >= n, `${n} answers`)
  const silent = { nc: { request: () => Promise.reject(new Error('TIMEOUT')) }, cluster: 'c', node: 'n2' } as unknown as FrameLink
  const onReplica = driverOnReplica().messages(hub, () => silent, () => {})
  await onReplica(ws as never, frame({ type: 'location', lat: 52.6, lng: 13.4, seq: 9 }), false)
  await answers(1)
  t.match(sent, [{ type: 'error', code: 'unavailable', seq: 9 }], 'the primary did not answer: unavailable')
  await driverOnReplica().messages(hub, () => null, () => {})(ws as never, frame({ type: 'location', lat: 52.6, lng: 13.4, seq: 10 }), false)
  await answers(2)
  t.match(sent[1], { type: 'error', code: 'unavailable', seq: 10 }, 'no NATS connection: the same')
  await onReplica(ws as never, frame({ type: 'location', lat: 95, lng: 13.4, seq: 11 }), false)
  t.match(sent[2], { type: 'error', code: 'validation_failed', seq: 11 }, 'a bad position is refused on the replica, never sent on')
  t.equal(position()?.lat, 52.52, 'nothing written')
  t.match(await driverRemoteLocations(s.app.svc, store, { positions: [{ bearer: driver.token, lat: 99, lng: 1, at: Date.now() }, 'x'] }), [
    { type: 'error', code: 'validation_failed', errors: { lat: [String] } },
    { type: 'error', code: 'unauthenticated' },
  ], 'on the primary, a request\'s positions are each admitted again')
})

t.test('on a replica: the drivers\' latest positions of a turn go to the primary in one request, each socket gets its own answer', async (t) => {
  const second = createDriver(db, acct.ownerId, acct.storeId)
  const socket = (d: typeof driver) => {
    const sent: any[] = []
    const ws = {
      getUserData: () => ({ closed: false, format: 'json', driverId: d.id, who: { principal: s.app.svc.auth.driver({ headers: {}, query: {}, bearer: d.token })! }, session: { bearer: d.token } }),
      getBufferedAmount: () => 0,
      send: (m: string) => { sent.push(JSON.parse(m)); return 1 },
    }
    return { ws, sent }
  }
  const hub = { send: (w: { send(m: string): number }, msg: unknown) => w.send(JSON.stringify(msg)) } as unknown as Hub
  const requests: any[] = []
  // The primary's side of the request, in process: what answerFrameOps runs for a driver's positions.
  const link = { nc: { request: async (_subject: string, data: Uint8Array) => {
    const req = JSON.parse(new TextDecoder().decode(data))
    requests.push(req)
    const answers = await driverRemoteLocations(s.app.svc, store, req)
    return { json: () => answers }
  } }, cluster: 'c', node: 'n2' } as unknown as FrameLink
  const onReplica = driverOnReplica().messages(hub, () => link, () => {})
  const a = socket(driver)
  const b = socket(second)
  const frame = (f: unknown) => new TextEncoder().encode(JSON.stringify(f)).buffer as ArrayBuffer
  await onReplica(a.ws as never, frame({ type: 'location', lat: 50.1, lng: 8.1, seq: 1 }), false)
  await onReplica(a.ws as never, frame({ type: 'location', lat: 50.2, lng: 8.2, seq: 2 }), false)
  await onReplica(b.ws as never, frame({ type: 'location', lat: 51.1, lng: 9.1, seq: 5 }), false)
  await until(() => a.sent.length + b.sent.length >= 2, 'both answers')
  t.equal(requests.length, 1, 'one request for the turn')
  t.match(requests[0], { socket: 'driver', positions: [{ bearer: driver.token, lat: 50.2, lng: 8.2 }, { bearer: second.token, lat: 51.1, lng: 9.1 }] }, 'each driver\'s latest position, with its credential')
  t.match(a.sent, [{ type: 'ack', seq: 2, lat: 50.2, lng: 8.2 }], 'the first driver: one ack for both frames (cumulative, as on the primary)')
  t.match(b.sent, [{ type: 'ack', seq: 5, lat: 51.1, lng: 9.1 }], 'the second driver: its own')
  t.equal(position()?.lat, 50.2, 'stored on the primary when acknowledged')
})

t.test('the primary counts a replica\'s driver apps while it names them, and forgets them after WATCH_TTL_MS', (t) => {
  let now = 1_000_000
  const p = new DriverSocketsElsewhere(() => now)
  t.same(p.take({ node: 'n2', drivers: [[7, 1]] }), [7], 'a socket opened on n2: driver 7 changed')
  t.same(p.take({ node: 'n3', drivers: [[7, 2], [8, 1]] }), [7, 8], 'and on n3')
  t.equal(p.sockets(7), 3)
  t.same(p.drivers().sort(), [7, 8])
  t.same(p.take({ node: 'n3', drivers: [[7, 2]] }), [], 'named again with the same count: no change')
  t.same(p.take({ node: 'n2', drivers: [[7, 0]] }), [7], 'closed on n2')
  t.equal(p.sockets(7), 2)
  t.same(p.take({ node: 'n4', drivers: [[0, 1], [-3, 1], [9, -1], 'x' as never] }), [], 'nonsense is ignored')
  t.same(p.take({ drivers: [[9, 1]] }), [], 'a message without its node is ignored')
  now += WATCH_TTL_MS / 2
  t.same(p.take({ node: 'n3', drivers: [[7, 2]] }), [], 'n3 repeats driver 7, not driver 8')
  now += WATCH_TTL_MS / 2 + 1
  t.same(p.sweep(), [8], 'driver 8, not named for WATCH_TTL_MS (its replica died), is forgotten')
  t.equal(p.sockets(8), 0)
  t.equal(p.sockets(7), 2, 'driver 7, named again, is still counted')
  now += WATCH_TTL_MS + 1
  t.same(p.sweep(), [7], 'then it too')
  t.same(p.drivers(), [])
  t.end()
})

t.test('a replica tells the primary at once when a driver\'s socket opens and when its last one closes', (t) => {
  const published: Array<{ subject: string; body: unknown }> = []
  const link = { nc: { publish: (subject: string, data: Uint8Array) => { published.push({ subject, body: JSON.parse(new TextDecoder().decode(data)) }) } }, cluster: 'c', node: 'n2' } as unknown as FrameLink
  const feed = driverOnReplica()
  const ws = (driverId: number) => ({ getUserData: () => ({ driverId }) }) as never
  const first = ws(7)
  const second = ws(7)
  feed.opened!(first, link)
  feed.opened!(second, link)
  feed.closed!(first, link)
  t.same(published.map((p) => p.body), [{ node: 'n2', drivers: [[7, 1]] }, { node: 'n2', drivers: [[7, 2]] }, { node: 'n2', drivers: [[7, 1]] }], 'each open and close names the driver\'s count on this node')
  t.ok(published.every((p) => p.subject === 'c.frames.0.presence'), 'on the presence subject')
  feed.closed!(second, link)
  t.same(published.at(-1)?.body, { node: 'n2', drivers: [[7, 0]] }, 'the last one closed: 0, so the primary stops counting it now, not after WATCH_TTL_MS')
  published.length = 0
  feed.tick!(link)
  t.same(published, [], 'nothing left to repeat')
  t.end()
})

t.test('the primary\'s close of a driver\'s sockets, as a replica reads it off the driver\'s topic', (t) => {
  const f = (json: string): WireFrame => ({ n: 1, seq: 1, kind: 'topic', topic: 'driver/1', json })
  t.same(driverClose(f('{"type":"_close","code":4001,"reason":"token_rotated"}')), { code: 4001, reason: 'token_rotated' })
  t.equal(driverClose(f('{"type":"assignment","delivery":{}}')), null, 'any other frame goes to the app')
  t.end()
})

t.test('a replica that is not ready tunnels the driver socket to the primary', async (t) => {
  const svc = s.app.svc
  const config = { ...svc.config, cluster: { maxLagMs: 5000 } } as typeof svc.config
  // Joined and following n1, but further behind than CLUSTER_MAX_LAG_MS: not ready.
  const status = (): ClusterStatus => ({ role: 'replica', node: 'n2', primary: 'n1', applied_seq: 10, lag_ms: 9000, problem: null, apply_delay_ms: null, ready: false })
  const secret = 'x'.repeat(64)
  const fwd = forwarder({ secret, trust: withClusterSecret(config.trustProxy, secret), bodyLimitBytes: config.bodyLimitBytes, log: svc.log })
  // Linked and holding a view of its copy: only its readiness keeps it from serving the socket itself.
  const link = { nc: {}, cluster: 'c', node: 'n2' } as unknown as FrameLink
  const own = replicaFeeds({ config, log: svc.log, status, link: () => link, view: () => ({ svc }) as unknown as ReadView, feeds: [driverOnReplica()] })
  const replica = replicaServer(() => databaseReadiness(db), status, () => s.site, () => fwd, svc.log, own)
  const port = await replica.listen('127.0.0.1', 0)
  t.teardown(async () => { own.close(); replica.close(); await fwd.close() })
  t.equal(s.app.realtime.connections(driver.id), 0, 'no app of the driver on the primary yet')
  const app = await WsClient.open(`ws://127.0.0.1:${port}/api/v1/ws/driver`, { token: driver.token })
  t.teardown(() => app.ws.terminate())
  t.match(await app.next((f) => f.type === 'hello', 30_000), { type: 'hello', driver: { id: driver.id } }, 'hello')
  t.equal(s.app.realtime.connections(driver.id), 1, 'from the primary: the socket is the primary\'s own, through the tunnel')
  t.equal(own.open, 0, 'the replica serves none itself')
  app.send({ type: 'location', lat: 52.7, lng: 13.4, seq: 1 })
  t.match(await app.next((f) => f.type === 'ack' || f.type === 'error', 30_000), { type: 'ack', seq: 1, lat: 52.7 }, 'acknowledged by the primary')
})
