/**
 * The owner's feed sockets on any node (issue 35 "Sockets on any node"; docs/cluster.md): the orders
 * board (`/ws/orders/{id}`) and the dispatch feed (`/ws/dispatch/{id}`) on a replica are served by the
 * replica itself — admission and snapshot from its own copy, frames from the primary over NATS —
 * while the primary holds no socket of that kind (its `dispatch_ws_open_sockets`). Their snapshots
 * equal the primary's; changes made on the primary (a new order, a status, an assignment, a driver's
 * presence and positions) reach them; a token revoked on the primary closes them once the replica has
 * applied it; another owner's store is 404; and when the primary goes away they close with 1012.
 * A nats-server and two nodes as child processes (test/helpers/cluster.ts). No timing assertions.
 */
import t, { type Test } from 'tap'
import Database from 'better-sqlite3'
import { WsClient } from './helpers/ws-client.ts'
import { hasNats, liveFramesCluster, NATS_SERVER, primaryOf } from './helpers/cluster.ts'

t.setTimeout(300_000)

if (!hasNats()) {
  t.fail(`${NATS_SERVER} is missing: apt-get install -y nats-server (.ci/run does this)`)
} else {
  // One SITE_URL for every node, as deployed: the orders carry absolute links made from it.
  const c = (await liveFramesCluster(t, 'g', { SITE_URL: 'http://dispatch.test' }))!
  const { nodes, replica, demo, api, ws, primarySockets, caughtUp } = c
  const primary = c.primary
  const token = demo.owner.token
  const storeId = demo.store.id
  const refusal = (p: Promise<WsClient>) => p.then(() => null, (e: { status: number; body: unknown }) => e)

  // Another owner's store, written on the primary's file as the operator CLI writes (captured and sent to the stream).
  const file = new Database(primary.dbPath)
  const now = new Date().toISOString()
  const otherOwner = Number(file.prepare('INSERT INTO owners (name, email, created_at) VALUES (?, ?, ?)').run('Other', `other-${process.pid}@example.test`, now).lastInsertRowid)
  const foreignStore = Number(file.prepare('INSERT INTO stores (owner_id, title, slug, created_at) VALUES (?, ?, ?, ?)').run(otherOwner, 'Elsewhere', `elsewhere-${process.pid}`, now).lastInsertRowid)
  file.close()

  const itemId = (await api(primary, 'GET', `/restaurants/${storeId}/menu`))[0].items[0].id as number
  const driver = await api(primary, 'POST', '/drivers', { name: 'Feed Driver', phone: '+15550109911', restaurant_id: storeId }) as { id: number; token: string }
  const newOrder = (name: string) => api(primary, 'POST', `/restaurants/${storeId}/orders`, {
    type: 'delivery', address: '2 Feed St', customer_name: name, phone: '+15550109912', items: [{ item_id: itemId, quantity: 1 }],
  }) as Promise<{ id: number }>
  await newOrder('First')
  // The driver's app is connected to the primary: the dispatch snapshot of every node says so.
  const driverApp = await WsClient.open(`${ws(primary)}/ws/driver`, { token: driver.token })
  t.teardown(() => driverApp.ws.terminate())

  t.test('refusals on the replica: no token 401, another owner\'s store 404, as on the primary', async (t) => {
    await caughtUp()
    for (const kind of ['orders', 'dispatch']) {
      t.match(await refusal(WsClient.open(`${ws(replica)}/ws/${kind}/${storeId}`)), { status: 401 }, `${kind}: no token`)
      t.match(await refusal(WsClient.open(`${ws(replica)}/ws/${kind}/${foreignStore}`, { token })), { status: 404, body: { code: 'not_found' } }, `${kind}: another owner's store`)
      t.match(await refusal(WsClient.open(`${ws(primary)}/ws/${kind}/${foreignStore}`, { token })), { status: 404, body: { code: 'not_found' } }, `${kind}: the same on the primary`)
    }
  })

  /** A `kind` feed of the store opened on the replica: served by it (none on the primary), its snapshot the primary's. */
  const servedByReplica = async (t: Test, kind: 'orders' | 'dispatch') => {
    const socket = await WsClient.open(`${ws(replica)}/ws/${kind}/${storeId}`, { token })
    t.teardown(() => socket.ws.terminate())
    const snap = await socket.next((f) => f.type === 'snapshot', 30_000)
    t.equal(await primarySockets(kind), 0, `the primary holds no ${kind} socket: the replica serves it`)
    const onPrimary = await WsClient.open(`${ws(primary)}/ws/${kind}/${storeId}`, { token })
    t.same(snap, await onPrimary.next((f) => f.type === 'snapshot', 30_000), 'the snapshot equals the primary\'s')
    onPrimary.ws.terminate()
    return { socket, snap }
  }

  t.test('the orders board on a replica: served by it, the primary\'s snapshot, the primary\'s changes', async (t) => {
    await caughtUp()
    const { socket: board } = await servedByReplica(t, 'orders')

    const placed = await newOrder('Second')
    t.match(await board.next((f) => f.type === 'order' && f.order.id === placed.id, 30_000), { type: 'order', order: { id: placed.id, customer_name: 'Second' } }, 'a new order placed on the primary')
    await api(primary, 'PUT', `/restaurants/${storeId}/orders/${placed.id}/status`, { status: 'preparing' })
    t.match(await board.next((f) => f.type === 'order' && f.order.id === placed.id && f.order.status === 'preparing', 30_000), { order: { status: 'preparing' } }, 'its status change')
    await api(primary, 'POST', `/restaurants/${storeId}/orders/${placed.id}/assign`, { driver_id: driver.id })
    t.match(await board.next((f) => f.type === 'order' && f.order.id === placed.id && f.order.driver?.id === driver.id, 30_000), { order: { driver: { id: driver.id }, delivery_status: 'assigned' } }, 'its assignment')

    board.send({ type: 'refresh' })
    t.match(await board.next((f) => f.type === 'snapshot', 30_000), { type: 'snapshot', restaurant_id: storeId }, 'refresh: a new snapshot from the replica')
    board.send({ type: 'ping' })
    t.match(await board.next((f) => f.type === 'pong', 30_000), { type: 'pong' })
    t.equal(await primarySockets('orders'), 0, 'still none on the primary')
  })

  t.test('the dispatch feed on a replica: served by it, the primary\'s snapshot, assignments, presence and positions', async (t) => {
    await caughtUp()
    const { socket: feed, snap } = await servedByReplica(t, 'dispatch')
    t.match(snap.drivers.find((d: { id: number }) => d.id === driver.id), { connected: true }, 'the driver connected to the primary, as the primary says')

    const placed = await newOrder('Third')
    await api(primary, 'POST', `/restaurants/${storeId}/orders/${placed.id}/assign`, { driver_id: driver.id })
    t.match(await feed.next((f) => f.type === 'delivery' && f.delivery.id === placed.id && f.delivery.driver_id === driver.id, 30_000), { type: 'delivery' }, 'an assignment made on the primary')

    driverApp.send({ type: 'location', lat: 48.1, lng: 11.5, seq: 1 })
    t.match(await driverApp.next((f) => f.type === 'ack' || f.type === 'error', 30_000), { type: 'ack', seq: 1 })
    t.match(await feed.next((f) => f.type === 'location' && f.lat === 48.1, 30_000), { type: 'location', driver_id: driver.id, lng: 11.5 }, 'the driver\'s position')

    const second = await WsClient.open(`${ws(primary)}/ws/driver`, { token: driver.token })
    second.ws.terminate()
    driverApp.ws.terminate()
    t.match(await feed.next((f) => f.type === 'driver' && f.driver_id === driver.id && f.connected === false, 30_000), { type: 'driver', connected: false }, 'the driver\'s app went away')
    // A refresh reads this node's copy: once it holds the position (no sooner: it follows the stream).
    await caughtUp()
    feed.send({ type: 'refresh' })
    const again = await feed.next((f) => f.type === 'snapshot', 30_000)
    t.match(again.drivers.find((d: { id: number }) => d.id === driver.id), { connected: false, location: { lat: 48.1, lng: 11.5 } }, 'a new snapshot knows it')
    t.equal(await primarySockets('dispatch'), 0, 'still none on the primary')
  })

  /** A staff token of the demo's manager (every station), for one device. */
  const staffToken = async (device: string) => {
    const manager = (demo as unknown as { staff: Array<{ role: string; email: string; password: string }> }).staff.find((m) => m.role === 'manager')!
    return (await api(primary, 'POST', `/restaurants/${storeId}/staff/login`, { email: manager.email, password: manager.password, device }, '') as { token: string }).token
  }

  t.test('the kitchen screen on a replica: served by it, the primary\'s snapshot and changes, its bumps run by the primary', async (t) => {
    const screenToken = await staffToken('kds-replica')
    const otherScreen = await staffToken('kds-primary')
    await caughtUp()
    const screen = await WsClient.open(`${ws(replica)}/ws/kds`, { token: screenToken })
    t.teardown(() => screen.ws.terminate())
    const snap = await screen.next((f) => f.type === 'snapshot', 30_000)
    t.equal(await primarySockets('kds'), 0, 'the primary holds no kitchen socket: the replica serves it')
    const onPrimary = await WsClient.open(`${ws(primary)}/ws/kds`, { token: otherScreen })
    t.same(snap, await onPrimary.next((f) => f.type === 'snapshot', 30_000), 'the snapshot equals the primary\'s')
    onPrimary.ws.terminate()

    const placed = await newOrder('Kitchen')
    const ticket = await screen.next((f) => f.type === 'ticket' && f.ticket.order_id === placed.id, 30_000)
    t.match(ticket, { type: 'ticket', ticket: { order_id: placed.id } }, 'a new order placed on the primary: its ticket')
    const lineId = ticket.ticket.items[0].id as number

    screen.send({ type: 'bump', item_id: lineId, seq: 41 })
    t.match(await screen.next((f) => (f.type === 'ack' || f.type === 'error') && f.seq === 41, 30_000), { type: 'ack', seq: 41, item_id: lineId, kds_state: 'preparing', order_id: placed.id }, 'a bump sent to the replica: acknowledged')
    const live = (await api(primary, 'GET', '/staff/kds', undefined, otherScreen) as { tickets: Array<{ order_id: number; items: Array<{ id: number; kds_state: string }> }> }).tickets
    t.equal(live.find((x) => x.order_id === placed.id)?.items.find((i) => i.id === lineId)?.kds_state, 'preparing', 'and in the primary\'s data when acknowledged')
    t.match(await screen.next((f) => f.type === 'item' && f.items[0]?.id === lineId && f.items[0]?.kds_state === 'preparing', 30_000), { type: 'item', order_id: placed.id }, 'its item frame reaches the screen too')

    await api(primary, 'PUT', `/staff/kds/items/${lineId}/bump`, undefined, otherScreen)
    t.match(await screen.next((f) => f.type === 'item' && f.items[0]?.id === lineId && f.items[0]?.kds_state === 'ready', 30_000), { type: 'item', items: [{ kds_state: 'ready' }] }, 'a bump from another screen, on the primary')

    screen.send({ type: 'bump', item_id: 999999, seq: 42 })
    t.match(await screen.next((f) => (f.type === 'ack' || f.type === 'error') && f.seq === 42, 30_000), { type: 'error', code: 'not_found', seq: 42 }, 'a refused bump: the primary\'s refusal')
    t.equal(await primarySockets('kds'), 0, 'still none on the primary')

    await api(primary, 'POST', '/staff/logout', undefined, screenToken)
    t.equal((await screen.closedWithin(60_000)).code, 4001, 'signed out on the primary: the replica\'s screen closes with 4001')
  })

  t.test('a token revoked on the primary closes the replica\'s sockets opened with it', async (t) => {
    const made = await api(primary, 'POST', '/tokens', { name: 'screen', capabilities: ['orders:read', 'drivers:read'] }) as { id: number; token: string }
    await caughtUp()
    const board = await WsClient.open(`${ws(replica)}/ws/orders/${storeId}`, { token: made.token })
    const feed = await WsClient.open(`${ws(replica)}/ws/dispatch/${storeId}?token=${made.token}`)
    t.teardown(() => { board.ws.terminate(); feed.ws.terminate() })
    await board.next((f) => f.type === 'snapshot', 30_000)
    await feed.next((f) => f.type === 'snapshot', 30_000)
    await api(primary, 'DELETE', `/tokens/${made.id}`)
    t.equal((await board.closedWithin(60_000)).code, 4001, 'the orders board closes with 4001')
    t.equal((await feed.closedWithin(60_000)).code, 4001, 'the dispatch feed closes with 4001')
    t.match(await refusal(WsClient.open(`${ws(replica)}/ws/orders/${storeId}`, { token: made.token })), { status: 401 }, 'and the token opens nothing more')
  })

  t.test('when the primary goes away the replica\'s feeds close with 1012; a reconnect gets a snapshot', async (t) => {
    const screenToken = await staffToken('kds-failover')
    await caughtUp()
    const board = await WsClient.open(`${ws(replica)}/ws/orders/${storeId}`, { token })
    const feed = await WsClient.open(`${ws(replica)}/ws/dispatch/${storeId}`, { token })
    const screen = await WsClient.open(`${ws(replica)}/ws/kds`, { token: screenToken })
    t.teardown(() => { board.ws.terminate(); feed.ws.terminate(); screen.ws.terminate() })
    await board.next((f) => f.type === 'snapshot', 30_000)
    await feed.next((f) => f.type === 'snapshot', 30_000)
    await screen.next((f) => f.type === 'snapshot', 30_000)
    t.equal(await primarySockets('kds'), 0, 'served by the replica')
    await c.primary.kill()
    t.equal((await board.closedWithin(60_000)).code, 1012, 'the orders board: 1012 (service restart)')
    t.equal((await feed.closedWithin(60_000)).code, 1012, 'the dispatch feed: 1012')
    t.equal((await screen.closedWithin(60_000)).code, 1012, 'the kitchen screen: 1012')
    c.primary = await primaryOf(nodes, 120_000)
    const again = await WsClient.open(`${ws(replica)}/ws/orders/${storeId}`, { token })
    t.teardown(() => again.ws.terminate())
    t.match(await again.next((f) => f.type === 'snapshot', 30_000), { type: 'snapshot', restaurant_id: storeId }, 'the reconnect gets its snapshot')
  })
}
