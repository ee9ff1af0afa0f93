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
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { request } from './helpers/server.ts'
import { WsClient } from './helpers/ws-client.ts'
import { parseMetrics } from './helpers/prometheus.ts'
import { appliedUpTo, hasNats, NATS_SERVER, primaryOf, startNats, startNode, waitFor, type ClusterNodeProcess } from './helpers/cluster.ts'

t.setTimeout(300_000)

if (!hasNats()) {
  t.fail(`${NATS_SERVER} is missing: apt-get install -y nats-server (.ci/run does this)`)
} else {
  const dir = mkdtempSync(join(tmpdir(), 'dispatch-frames-'))
  // One nats-server is enough here: live frames are core NATS, replication is the other test's.
  const nats = await startNats(1)
  const nodes: ClusterNodeProcess[] = []
  t.teardown(async () => {
    for (const n of nodes) await n.stop()
    await nats.stop()
    rmSync(dir, { recursive: true, force: true })
  })
  const METRICS_TOKEN = 'frames-test-metrics-token-0123456789'
  const CLUSTER = `f${process.pid}`
  const start = async (id: string) => {
    const n = await startNode(nats, CLUSTER, id, dir, { METRICS_TOKEN })
    nodes.push(n)
    return n
  }
  const n1 = await start('n1')
  let primary = await primaryOf([n1])
  await waitFor(() => n1.output().includes('Demo account created'), 60_000, 'the demo account')
  const demo = JSON.parse(/Demo account created \(shown once, keep it\):\n(\{[\s\S]*?\n\})\n/.exec(n1.output())![1]!) as { owner: { token: string }; store: { id: number } }
  const n2 = await start('n2')
  const replica = n2
  const token = demo.owner.token
  const storeId = demo.store.id
  const api = async (node: ClusterNodeProcess, method: string, path: string, body?: unknown, as = token) => {
    const r = await request(`${node.sp.base}${path}`, method, { token: as, body })
    if (r.status !== 200) throw new Error(`${method} ${path} on ${node.id}: ${r.status} ${r.text.slice(0, 300)}`)
    return r.body
  }
  const ws = (node: ClusterNodeProcess) => node.sp.base.replace(/^http/, 'ws')
  /** The primary's open sockets of a kind, from its /metrics. */
  const primarySockets = async (kind: string) => {
    const r = await fetch(`${primary.sp.site}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })
    return parseMetrics(await r.text()).find((s) => s.name === 'dispatch_ws_open_sockets' && s.labels.kind === kind)?.value ?? -1
  }
  /** The replica has applied everything the primary has written so far, and is ready. */
  const caughtUp = async () => {
    await appliedUpTo(replica, (await primary.readyz()).body.applied_seq as number)
    await waitFor(async () => (await replica.readyz()).status === 200, 60_000, 'the replica ready')
  }

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
    primary = await primaryOf(nodes, 120_000)
    const again = await WsClient.open(`${ws(replica)}/ws/track/${order.track_token}`)
    t.teardown(() => again.ws.terminate())
    t.match(await again.next((f) => f.type === 'snapshot', 30_000), { type: 'snapshot', id: order.id, delivery_status: 'out_for_delivery' }, 'the reconnect gets the snapshot')
  })
}
