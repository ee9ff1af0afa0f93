/**
 * The driver app's socket on a cluster replica (issue 35 "Sockets on any node"; docs/cluster.md): a
 * ready replica serves `/ws/driver` itself — the primary holds no driver socket
 * (`dispatch_ws_open_sockets{kind="driver"}` on the primary stays 0) — with the primary's wire
 * behaviour: `hello` equal to the primary's, `pong`, bad and out-of-range frames refused as the
 * primary refuses them; a position is acknowledged after the primary's commit and is then the
 * primary's (and, once applied, the replica's); an assignment made on the primary reaches the app;
 * the primary's dispatch feed counts the app as connected while its socket is open on the replica,
 * and not after (nor after its replica died); a rotated token closes it with 4001; when the primary
 * goes away it closes with 1012.
 * A nats-server and two nodes as child processes (test/helpers/cluster.ts). No timing assertions.
 */
import t from 'tap'
import { WsClient } from './helpers/ws-client.ts'
import { liveFramesCluster, primaryOf, waitFor } from './helpers/cluster.ts'

t.setTimeout(300_000)

// Null (after a failing assertion) without nats-server.
const c = await liveFramesCluster(t, 'd', { SITE_URL: 'http://dispatch.test' })
if (c) {
  const { nodes, replica, demo, api, ws, primarySockets, caughtUp } = c
  const primary = c.primary
  const storeId = demo.store.id
  const itemId = (await api(primary, 'GET', `/restaurants/${storeId}/menu`))[0].items[0].id as number
  const driver = await api(primary, 'POST', '/drivers', { name: 'Replica Driver', phone: '+15550109921', restaurant_id: storeId }) as { id: number; token: string }
  const newOrder = (name: string) => api(primary, 'POST', `/restaurants/${storeId}/orders`, {
    type: 'delivery', address: '3 Replica St', customer_name: name, phone: '+15550109922', items: [{ item_id: itemId, quantity: 1 }],
  }) as Promise<{ id: number }>
  const connected = async () => (await api(primary, 'GET', `/drivers/${driver.id}`) as { connected: boolean }).connected
  const onReplica = async (token = driver.token) => {
    const app = await WsClient.open(`${ws(replica)}/ws/driver`, { token })
    t.teardown(() => app.ws.terminate())
    return app
  }

  t.test('refusals on the replica are the primary\'s: no token 401, a wrong token 401', async (t) => {
    await caughtUp()
    for (const node of [replica, primary]) {
      const none = await WsClient.open(`${ws(node)}/ws/driver`).then(() => null, (e: { status: number; body: unknown }) => e)
      t.match(none, { status: 401, body: { code: 'unauthenticated' } }, `${node === replica ? 'replica' : 'primary'}: no token`)
      const wrong = await WsClient.open(`${ws(node)}/ws/driver`, { token: 'drv_not-a-token' }).then(() => null, (e: { status: number; body: unknown }) => e)
      t.match(wrong, { status: 401, body: { code: 'unauthenticated' } }, `${node === replica ? 'replica' : 'primary'}: a wrong token`)
    }
  })

  t.test('served by the replica: hello equal to the primary\'s, pong, bad frames refused as on the primary', async (t) => {
    await caughtUp()
    const app = await onReplica()
    const hello = await app.next((f) => f.type === 'hello', 30_000)
    t.equal(await primarySockets('driver'), 0, 'the primary holds no driver socket: the replica serves it')
    const other = await WsClient.open(`${ws(primary)}/ws/driver`, { token: driver.token })
    t.same(hello, await other.next((f) => f.type === 'hello', 30_000), 'hello equals the primary\'s')

    const bad: Array<[string, string | Record<string, unknown>]> = [
      ['not JSON', '{nope'],
      ['not an object', '[1]'],
      ['an unknown type', { type: 'shout' }],
      ['a latitude out of range', { type: 'location', lat: 91, lng: 13.4, seq: 3 }],
      ['a missing longitude', { type: 'location', lat: 52.5, seq: 4 }],
      ['a bad seq', { type: 'location', lat: 52.5, lng: 13.4, seq: -1 }],
      ['ping', { type: 'ping' }],
    ]
    for (const [what, frame] of bad) {
      for (const s of [app, other]) s.ws.send(typeof frame === 'string' ? frame : JSON.stringify(frame))
      const mine = await app.next(() => true, 30_000)
      t.same(mine, await other.next(() => true, 30_000), `${what}: answered as the primary answers it (${mine.type} ${mine.code ?? ''})`)
    }
    other.ws.terminate()
    t.notOk((await api(primary, 'GET', `/drivers/${driver.id}`) as { location: unknown }).location, 'nothing refused was stored')
    app.ws.terminate()
  })

  t.test('a position sent to the replica: acknowledged after the primary\'s commit, the primary\'s, then the replica\'s', async (t) => {
    // Ready, so the replica serves the socket itself (the primary's driver-socket count below).
    await caughtUp()
    const app = await onReplica()
    await app.next((f) => f.type === 'hello', 30_000)
    app.send({ type: 'location', lat: 52.52, lng: 13.405, seq: 7 })
    const ack = await app.next((f) => f.type === 'ack' || f.type === 'error', 30_000)
    t.match(ack, { type: 'ack', seq: 7, lat: 52.52, lng: 13.405, location_updated_at: String }, 'acknowledged')
    t.same(Object.keys(ack), ['type', 'seq', 'lat', 'lng', 'location_updated_at'], 'the primary\'s ack fields, in its order')
    t.match(await api(primary, 'GET', `/drivers/${driver.id}`), { location: { lat: 52.52, lng: 13.405, location_updated_at: ack.location_updated_at } }, 'in the primary\'s data when acknowledged')

    // Several frames at once: coalesced, and the last seq acknowledged with the last position.
    app.ws.send(JSON.stringify({ type: 'location', lat: 52.53, lng: 13.41, seq: 8 }))
    app.ws.send(JSON.stringify({ type: 'location', lat: 52.54, lng: 13.42, seq: 9 }))
    t.match(await app.next((f) => (f.type === 'ack' && f.seq === 9) || f.type === 'error', 30_000), { type: 'ack', seq: 9, lat: 52.54, lng: 13.42 }, 'the last one acknowledged')
    t.match(await api(primary, 'GET', `/drivers/${driver.id}`), { location: { lat: 52.54, lng: 13.42 } }, 'the latest position is the primary\'s')

    // The replica's own copy has it once applied: a new socket's hello is read from it.
    await caughtUp()
    const again = await onReplica()
    t.match(await again.next((f) => f.type === 'hello', 30_000), { type: 'hello', driver: { id: driver.id, location: { lat: 52.54, lng: 13.42 } } }, 'hello from the replica\'s copy holds it')
    t.equal(await primarySockets('driver'), 0, 'still no driver socket on the primary')
    app.ws.terminate()
    again.ws.terminate()
  })

  t.test('frames to the driver: an assignment and a re-assignment made on the primary reach the app on the replica', async (t) => {
    await caughtUp()
    const app = await onReplica()
    await app.next((f) => f.type === 'hello', 30_000)
    const placed = await newOrder('Assigned')
    await api(primary, 'POST', `/restaurants/${storeId}/orders/${placed.id}/assign`, { driver_id: driver.id })
    t.match(await app.next((f) => f.type === 'assignment', 30_000), { type: 'assignment', delivery: { id: placed.id } }, 'the assignment')
    const other = await api(primary, 'POST', '/drivers', { name: 'Other Driver', phone: '+15550109923', restaurant_id: storeId }) as { id: number }
    await api(primary, 'POST', `/restaurants/${storeId}/orders/${placed.id}/assign`, { driver_id: other.id })
    t.match(await app.next((f) => f.type === 'unassigned', 30_000), { type: 'unassigned', order_id: placed.id }, 'given to another driver: un-assigned')
    app.ws.terminate()
  })

  t.test('presence: the primary counts the app on the replica as connected, and not after it closes', async (t) => {
    await waitFor(async () => !(await connected()), 60_000, 'no app of the driver connected')
    await caughtUp()
    const feed = await WsClient.open(`${ws(primary)}/ws/dispatch/${storeId}`, { token: demo.owner.token })
    t.teardown(() => feed.ws.terminate())
    t.match((await feed.next((f) => f.type === 'snapshot', 30_000)).drivers.find((d: { id: number }) => d.id === driver.id), { connected: false }, 'not connected before')
    const app = await onReplica()
    await app.next((f) => f.type === 'hello', 30_000)
    t.match(await feed.next((f) => f.type === 'driver' && f.driver_id === driver.id, 30_000), { type: 'driver', connected: true }, 'the primary\'s dispatch feed: connected')
    t.equal(await connected(), true, 'the primary\'s driver: connected')
    t.equal(await primarySockets('driver'), 0, 'while its socket is on the replica')
    const fresh = await WsClient.open(`${ws(primary)}/ws/dispatch/${storeId}`, { token: demo.owner.token })
    t.match((await fresh.next((f) => f.type === 'snapshot', 30_000)).drivers.find((d: { id: number }) => d.id === driver.id), { connected: true }, 'a new dispatch snapshot says so too')
    fresh.ws.terminate()
    await app.close()
    t.match(await feed.next((f) => f.type === 'driver' && f.driver_id === driver.id, 30_000), { type: 'driver', connected: false }, 'closed: no longer connected')
    t.equal(await connected(), false, 'the primary\'s driver: not connected')
  })

  t.test('a rotated token closes the app\'s socket on the replica with 4001', async (t) => {
    await caughtUp()
    const app = await onReplica()
    await app.next((f) => f.type === 'hello', 30_000)
    const rotated = await api(primary, 'POST', `/drivers/${driver.id}/rotate-token`) as { token: string }
    const closed = await app.closedWithin(60_000)
    t.equal(closed.code, 4001, `closed with 4001 (${closed.reason})`)
    t.match(closed.reason, /^(token_rotated|token_revoked)$/, 'the primary\'s cause, or the re-check\'s if the replica applied the rotation first')
    await caughtUp()
    t.match(await WsClient.open(`${ws(replica)}/ws/driver`, { token: driver.token }).then(() => null, (e: { status: number }) => e), { status: 401 }, 'the old token opens nothing more')
    driver.token = rotated.token
  })

  t.test('deleting the driver closes its app\'s socket on the replica with 4001', async (t) => {
    const gone = await api(primary, 'POST', '/drivers', { name: 'Leaving Driver', phone: '+15550109924', restaurant_id: storeId }) as { id: number; token: string }
    await caughtUp()
    const app = await onReplica(gone.token)
    t.match(await app.next((f) => f.type === 'hello', 30_000), { type: 'hello', driver: { id: gone.id } })
    await api(c.primary, 'DELETE', `/drivers/${gone.id}`)
    const closed = await app.closedWithin(60_000)
    t.equal(closed.code, 4001, `closed with 4001 (${closed.reason})`)
    t.match(closed.reason, /^(driver_deleted|token_revoked)$/, 'the primary\'s cause, or the re-check\'s if the replica applied the deletion first')
  })

  t.test('a replica that dies: the primary stops counting the app it served once the replica no longer names it', async (t) => {
    await caughtUp()
    const app = await onReplica()
    await app.next((f) => f.type === 'hello', 30_000)
    await waitFor(connected, 60_000, 'the app on the replica counted as connected')
    await replica.kill()
    await app.closedWithin(60_000)
    // Nothing tells the primary the socket closed: its count lapses (WATCH_TTL_MS), as for a watch.
    await waitFor(async () => !(await connected()), 60_000, 'the primary forgets the dead replica\'s app')
    t.equal(await connected(), false, 'not connected any more')
  })

  t.test('when the primary goes away the app\'s socket on the replica closes with 1012', async (t) => {
    await caughtUp()
    const app = await onReplica()
    await app.next((f) => f.type === 'hello', 30_000)
    await c.primary.kill()
    t.equal((await app.closedWithin(60_000)).code, 1012, 'closed with 1012 (service restart)')
    c.primary = await primaryOf(nodes, 120_000)
  })
}
