/**
 * How the kitchen status follows the delivery status (issue 34 item 2, docs/orders.md "How the two
 * statuses move together"): a driver's pickup makes a `new`/`preparing` order `ready`, a delivery
 * makes it `delivered`, in the same write as the delivery move, with `order.status_changed`
 * (`source: "delivery"`) after the delivery's own event; analytics "by status" counts what the
 * board shows. The pure rule is checked over every pair of statuses.
 */
import t from 'tap'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startServer } from './helpers/server.ts'
import { assign, createFleet, deliveryOrder, driverStatus } from './helpers/delivery.ts'
import { createEndpoint, startReceiver } from './helpers/webhook-receiver.ts'
import { DELIVERY_STATUSES, KITCHEN_STATUSES, kitchenAfterDelivery } from '../src/domain/order-state.ts'
import { reduceOrder, type OrderState } from '../src/actors/order.ts'

t.test('the rule, over every pair of statuses', async (t) => {
  for (const k of KITCHEN_STATUSES) {
    for (const d of DELIVERY_STATUSES) {
      const want = d === 'delivered' && ['new', 'preparing', 'ready'].includes(k) ? 'delivered'
        : (d === 'picked_up' || d === 'out_for_delivery') && ['new', 'preparing'].includes(k) ? 'ready'
          : k
      t.equal(kitchenAfterDelivery(k, d), want, `${k} + ${d}`)
    }
    t.equal(kitchenAfterDelivery(k, null), k, `${k} without a delivery`)
  }
})

t.test('the order reducer applies it to every road that moves the delivery, and only forward', async (t) => {
  const s0: OrderState = { id: 1, storeId: 2, ownerId: 3, type: 'delivery', status: 'new', deliveryStatus: 'assigned', driverId: 9, timeline: { created_at: 'T0' } }
  const picked = reduceOrder(s0, { type: 'driver_status', driverId: 9, status: 'picked_up', replyTo: null as never }, 'T1')
  if (!picked.ok) throw new Error('refused')
  t.equal(picked.state.status, 'ready')
  t.same(picked.state.timeline, { created_at: 'T0', picked_up_at: 'T1', ready_at: 'T1' })
  t.same(picked.events.map((e) => [e.event, e.data.source]), [['order.status_changed', 'delivery']], 'picked_up has no delivery event of its own; the kitchen change has one')
  const done = reduceOrder(picked.state, { type: 'set_delivery_status', status: 'delivered', replyTo: null as never }, 'T2')
  if (!done.ok) throw new Error('refused')
  t.equal(done.state.status, 'delivered')
  t.same(done.events.map((e) => e.event), ['order.delivered', 'order.status_changed'], 'the delivery event first, then the kitchen change')
  t.same(done.events[1]!.data, { order_id: 1, restaurant_id: 2, status: 'delivered', previous_status: 'ready', source: 'delivery' })
  const back = reduceOrder(done.state, { type: 'set_delivery_status', status: 'assigned', replyTo: null as never }, 'T3')
  if (!back.ok) throw new Error('refused')
  t.equal(back.state.status, 'delivered', 'the owner setting the delivery back does not take the kitchen back')
  t.same(back.events, [], 'no event for the kitchen')
  const cancelled = reduceOrder({ ...s0, status: 'cancelled' }, { type: 'set_delivery_status', status: 'delivered', replyTo: null as never }, 'T4')
  if (!cancelled.ok) throw new Error('refused')
  t.equal(cancelled.state.status, 'cancelled', 'a cancelled order stays cancelled')
  t.same(cancelled.events.map((e) => e.event), ['order.delivered'])
})

const s = await startServer({ WEBHOOK_ALLOW_LOOPBACK: '1', WEBHOOK_RETRY_SCHEDULE: '0.3', RATE_LIMIT_PER_MINUTE: '100000' })
const rcv = await startReceiver()
t.teardown(async () => { await s.close(); await rcv.close() })
const f = createFleet(s.app.svc.db)
await createEndpoint(s.base, f.ownerToken, `${rcv.url}/hook`, ['order.status_changed', 'order.delivered', 'order.out_for_delivery'])

t.test('a driver\'s pickup and delivery move the kitchen status through the real API, with webhooks', async (t) => {
  const d = f.drivers[0]!
  const o = await deliveryOrder(s, f)
  await assign(s, f, o.id, d.id)
  const get = async () => (await s.req('GET', `/restaurants/${f.storeId}/orders/${o.id}`, { token: f.ownerToken })).body
  t.equal((await get()).status, 'new', 'assigning a driver says nothing about the food')
  t.equal((await driverStatus(s, d, o.id, 'picked_up')).status, 200)
  let order = await get()
  t.equal(order.status, 'ready', 'picked up: the kitchen is done with it')
  t.ok(order.timeline.ready_at, 'ready is stamped')
  t.equal((await driverStatus(s, d, o.id, 'out_for_delivery')).status, 200)
  t.equal((await driverStatus(s, d, o.id, 'delivered')).status, 200)
  order = await get()
  t.equal(order.status, 'delivered')
  t.equal(order.delivery_status, 'delivered')
  const track = await s.req('GET', `/track/${o.track_token}`)
  t.equal(track.body.status, 'delivered', 'the tracking view agrees')
  t.ok(track.body.timeline.ready_at && track.body.timeline.delivered_at, 'ready and delivered both on the timeline')
  const mine = () => rcv.received.filter((r) => r.body.data.order_id === o.id)
  await rcv.until(() => mine().length >= 4, 5000, 'four events')
  // Deliveries to one endpoint run concurrently (WEBHOOK_CONCURRENCY): compared in a fixed order (the reducer test checks the events' order).
  t.same(mine().map((r) => [r.body.event, r.body.data.status ?? r.body.data.delivery_status, r.body.data.source ?? null]).sort(), [
    ['order.delivered', 'delivered', null],
    ['order.out_for_delivery', 'out_for_delivery', null],
    ['order.status_changed', 'delivered', 'delivery'],
    ['order.status_changed', 'ready', 'delivery'],
  ], 'the spec\'s events, the implied kitchen changes as order.status_changed with source "delivery"')
})

t.test('analytics "by status" counts delivered orders as delivered, not new', async (t) => {
  const g = createFleet(s.app.svc.db)
  const d = g.drivers[0]!
  const o = await deliveryOrder(s, g)
  await assign(s, g, o.id, d.id)
  await s.req('PUT', `/restaurants/${g.storeId}/orders/${o.id}/delivery-status`, { token: g.ownerToken, body: { delivery_status: 'delivered' } })
  await deliveryOrder(s, g)
  const a = await s.req('GET', `/restaurants/${g.storeId}/analytics`, { token: g.ownerToken })
  t.equal(a.status, 200)
  t.same(a.body.orders.by_status, { delivered: 1, new: 1 })
})

t.test('migration 042 brings orders written before the rule to what it would have made them', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'dispatch-042-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const DB_PATH = join(dir, 'old.db')
  const a = await startServer({ DB_PATH, RATE_LIMIT_PER_MINUTE: '100000' })
  const g = createFleet(a.app.svc.db)
  const d = g.drivers[0]!
  const placed = async (moves: string[]) => {
    const o = await deliveryOrder(a, g)
    if (moves.length) await assign(a, g, o.id, d.id)
    for (const m of moves) if ((await driverStatus(a, d, o.id, m)).status !== 200) throw new Error(m)
    return o.id
  }
  const delivered = await placed(['picked_up', 'out_for_delivery', 'delivered'])
  const onTheWay = await placed(['picked_up', 'out_for_delivery'])
  const waiting = await placed([])
  const cancelled = await placed(['picked_up', 'out_for_delivery', 'delivered'])
  // As the server wrote them before the rule: the kitchen status left behind, no ready/delivered kitchen stamp.
  const db = a.app.svc.db
  db.prepare("UPDATE orders SET status = 'new', timeline = json_remove(timeline, '$.ready_at') WHERE id IN (?, ?)").run(delivered, onTheWay)
  db.prepare("UPDATE orders SET status = 'preparing' WHERE id = ?").run(waiting)
  db.prepare("UPDATE orders SET status = 'cancelled' WHERE id = ?").run(cancelled)
  db.prepare("UPDATE order_lines SET kds_state = 'queued' WHERE order_id IN (?, ?)").run(delivered, onTheWay)
  // Migration 042's SQL as the runner applies it (re-running it by deleting its record would run it
  // after the newer migrations already applied, which the runner refuses as out of order).
  db.exec(readFileSync(new URL('../src/storage/migrations/042_kitchen_follows_delivery.sql', import.meta.url), 'utf8'))
  await a.close()

  const b = await startServer({ DB_PATH, RATE_LIMIT_PER_MINUTE: '100000' })
  t.teardown(() => b.close())
  const get = async (id: number) => (await b.req('GET', `/restaurants/${g.storeId}/orders/${id}`, { token: g.ownerToken })).body
  const o1 = await get(delivered)
  t.equal(o1.status, 'delivered', 'a delivered order is delivered')
  t.ok(o1.timeline.delivered_at, 'with its delivery time')
  t.same(o1.items.map((l: { kds_state: string }) => l.kds_state), ['served'], 'its lines are off the kitchen screens')
  const o2 = await get(onTheWay)
  t.equal(o2.status, 'ready', 'an order on its way is ready')
  t.equal(o2.timeline.ready_at, o2.timeline.picked_up_at, 'ready when it was picked up')
  t.equal((await get(waiting)).status, 'preparing', 'an order no driver has picked up keeps its status')
  t.equal((await get(cancelled)).status, 'cancelled', 'a cancelled order stays cancelled')
  const a2 = await b.req('GET', `/restaurants/${g.storeId}/analytics`, { token: g.ownerToken })
  t.same(a2.body.orders.by_status, { cancelled: 1, delivered: 1, preparing: 1, ready: 1 })
})
