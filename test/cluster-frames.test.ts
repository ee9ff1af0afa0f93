/**
 * Live frames over NATS (issue 35 "Sockets on any node"; docs/cluster.md): a nats-server with
 * JetStream and two server nodes as child processes on loopback (test/helpers/cluster.ts). A tracking
 * socket on a replica is served by the replica itself — refusals and the snapshot from its own copy,
 * then the frames the primary publishes on NATS (a status change made on the primary, driver
 * positions sent to either node) — while the primary holds no socket for it (its
 * `dispatch_ws_open_sockets`); a driver's position sent through the replica is acknowledged after the
 * primary's commit and reaches watchers on both nodes; when the primary goes away the replica's own
 * sockets close with 1012 and a reconnect gets the catch-up again.
 * No timing assertions: every wait is "until", with generous bounds.
 */
import t from 'tap'
import { WsClient } from './helpers/ws-client.ts'
import { hasNats, liveFramesCluster, NATS_SERVER, primaryOf } from './helpers/cluster.ts'

t.setTimeout(300_000)

if (!hasNats()) {
  t.fail(`${NATS_SERVER} is missing: apt-get install -y nats-server (.ci/run does this)`)
} else {
  const c = (await liveFramesCluster(t, 'f'))!
  const { nodes, replica, demo, api, ws, primarySockets, caughtUp } = c
  let primary = c.primary
  const storeId = demo.store.id

  // A driver with a delivery picked up: its positions are visible on the order's tracking view.
  const itemId = (await api(primary, 'GET', `/restaurants/${storeId}/menu`))[0].items[0].id as number
  const driver = await api(primary, 'POST', '/drivers', { name: 'Frames Driver', phone: '+15550109901', restaurant_id: storeId }) as { id: number; token: string }
  const order = await api(primary, 'POST', `/restaurants/${storeId}/orders`, {
    type: 'delivery', address: '1 Frame St', customer_name: 'Watcher', phone: '+15550109902', items: [{ item_id: itemId, quantity: 1 }],
  }) as { id: number; track_token: string }
  await api(primary, 'POST', `/restaurants/${storeId}/orders/${order.id}/assign`, { driver_id: driver.id })
  await api(primary, 'PUT', `/restaurants/${storeId}/orders/${order.id}/delivery-status`, { delivery_status: 'picked_up' })

  t.test('a tracking socket on a replica is served by the replica: refusals and snapshot from its copy, frames from NATS', async (t) => {
    await caughtUp()
    const unknown = await WsClient.open(`${ws(replica)}/ws/track/trk_nothing_here`).then(() => null, (e: { status: number; body: unknown }) => e)
    t.equal(unknown?.status, 404, 'an unknown tracking token: 404 from the replica')
    t.match(unknown?.body, { code: 'not_found' })

    const watcher = await WsClient.open(`${ws(replica)}/ws/track/${order.track_token}`)
    t.teardown(() => watcher.ws.terminate())
    t.match(await watcher.next((f) => f.type === 'snapshot', 30_000), { type: 'snapshot', id: order.id, delivery_status: 'picked_up' }, 'the snapshot, read from the replica\'s copy')
    t.equal(await primarySockets('track'), 0, 'the primary holds no tracking socket: the replica serves it, not a tunnel')

    // A status change on the primary reaches the replica's socket over NATS.
    await api(primary, 'PUT', `/restaurants/${storeId}/orders/${order.id}/delivery-status`, { delivery_status: 'out_for_delivery' })
    t.match(await watcher.next((f) => f.type === 'status', 30_000), { type: 'status', id: order.id, delivery_status: 'out_for_delivery' }, 'the status frame of a change made on the primary')

    // A driver's position sent to the primary reaches it too.
    const onPrimary = await WsClient.open(`${ws(primary)}/ws/driver`, { token: driver.token })
    t.teardown(() => onPrimary.ws.terminate())
    onPrimary.send({ type: 'location', lat: 52.5, lng: 13.4, seq: 1 })
    t.match(await onPrimary.next((f) => f.type === 'ack' || f.type === 'error', 30_000), { type: 'ack', seq: 1 })
    t.match(await watcher.next((f) => f.type === 'location' && f.driver?.lat === 52.5, 30_000), { type: 'location', order_id: order.id, driver: { name: 'Frames Driver', lat: 52.5, lng: 13.4 } })
    t.equal(await primarySockets('track'), 0, 'still no tracking socket on the primary')

    // MessagePack sockets get the same frames, encoded by the replica.
    const packed = await WsClient.open(`${ws(replica)}/ws/track/${order.track_token}?format=msgpack`)
    t.teardown(() => packed.ws.terminate())
    t.match(await packed.next((f) => f.type === 'snapshot', 30_000), { type: 'snapshot', id: order.id, delivery_status: 'out_for_delivery' })
    t.match(await packed.next((f) => f.type === 'location', 30_000), { type: 'location', order_id: order.id, trail: [[52.5, 13.4]] }, 'a socket that joins later gets the latest location with the route so far')
    packed.send({ type: 'ping' })
    t.match(await packed.next((f) => f.type === 'pong', 30_000), { type: 'pong' }, 'ping answers pong, as on the primary')
  })

  t.test('a driver position sent to a replica is acknowledged after the primary\'s commit and reaches watchers on both nodes', async (t) => {
    // Ready, so the replica serves its tracking socket itself (a replica not ready tunnels it, which
    // the primary's count below would show).
    await caughtUp()
    const onReplica = await WsClient.open(`${ws(replica)}/ws/track/${order.track_token}`)
    t.teardown(() => onReplica.ws.terminate())
    const onPrimary = await WsClient.open(`${ws(primary)}/ws/track/${order.track_token}`)
    t.teardown(() => onPrimary.ws.terminate())
    await onReplica.next((f) => f.type === 'snapshot', 30_000)
    await onPrimary.next((f) => f.type === 'snapshot', 30_000)
    t.equal(await primarySockets('track'), 1, 'one tracking socket on the primary: its own watcher')

    const d = await WsClient.open(`${ws(replica)}/ws/driver`, { token: driver.token })
    t.teardown(() => d.ws.terminate())
    d.send({ type: 'location', lat: 52.51, lng: 13.41, seq: 7 })
    t.match(await d.next((f) => f.type === 'ack' || f.type === 'error', 30_000), { type: 'ack', seq: 7, lat: 52.51, lng: 13.41 }, 'acknowledged through the replica')
    t.match((await api(primary, 'GET', `/drivers/${driver.id}`)).location, { lat: 52.51, lng: 13.41 }, 'the position is in the primary\'s data')
    for (const [where, c] of [['the replica', onReplica], ['the primary', onPrimary]] as const) {
      t.match(await c.next((f) => f.type === 'location' && f.driver?.lat === 52.51, 30_000), { type: 'location', order_id: order.id, driver: { lat: 52.51, lng: 13.41 } }, `a watcher on ${where} gets it`)
    }
  })

  t.test('when the primary goes away the replica\'s own sockets close with 1012; a reconnect gets the catch-up again', async (t) => {
    const watcher = await WsClient.open(`${ws(replica)}/ws/track/${order.track_token}`)
    t.teardown(() => watcher.ws.terminate())
    await watcher.next((f) => f.type === 'snapshot', 30_000)
    const killed = primary
    await killed.kill()
    const closed = await watcher.closedWithin(60_000)
    t.equal(closed.code, 1012, 'closed with 1012 (service restart): reconnect')
    primary = c.primary = await primaryOf(nodes, 120_000)
    const again = await WsClient.open(`${ws(replica)}/ws/track/${order.track_token}`)
    t.teardown(() => again.ws.terminate())
    t.match(await again.next((f) => f.type === 'snapshot', 30_000), { type: 'snapshot', id: order.id, delivery_status: 'out_for_delivery' }, 'the reconnect gets the snapshot')
  })
}
