/**
 * Leaving the kitchen (issue 20 item 9; docs/kds.md "Leaving the kitchen"): an order that leaves
 * the kitchen by any road — a kitchen status set by the owner or staff (ready, delivered,
 * completed, cancelled), a driver picking it up, the owner's delivery-status override — leaves
 * every screen at once with its lines resolved (`served`), over the kitchen socket and in
 * `GET /staff/kds`; a `ready` reached by bumping keeps its lines on the pass.
 */
import t, { type Test } from 'tap'
import { startServer } from './helpers/server.ts'
import { createAccount, createDriver, createStaff, postOrder } from './helpers/fixtures.ts'
import { WsClient, wsBase } from './helpers/ws-client.ts'

const s = await startServer({ RATE_LIMIT_PER_MINUTE: '100000' })
t.teardown(() => s.close())
const db = s.app.svc.db
const acct = createAccount(db)
const manager = createStaff(db, acct.storeId, { role: 'manager' })
const driver = createDriver(db, acct.ownerId, acct.storeId, { onShift: true })
const wsUrl = `${wsBase(s)}/ws/kds`

type Order = { id: number; items: Array<{ id: number }> }
const order = async (body: Record<string, unknown> = { type: 'takeaway' }): Promise<Order> => {
  const r = await postOrder(s, acct.token, acct.storeId, { items: [{ item_id: acct.menu.burger.id, quantity: 1 }, { item_id: acct.menu.fries, quantity: 1 }], ...body })
  if (r.status !== 200) throw new Error(`order failed: ${r.status} ${r.text}`)
  return r.body as Order
}
const states = (o: Order) => db.prepare('SELECT kds_state FROM order_lines WHERE order_id = ? ORDER BY id').pluck().all(o.id)
const onBoard = async (o: Order) => ((await s.req('GET', '/staff/kds', { token: manager.token })).body.tickets as Array<{ order_id: number }>).some((x) => x.order_id === o.id)
const bump = (lineId: number) => s.req('PUT', `/staff/kds/items/${lineId}/bump`, { token: manager.token })

/** A screen that has the order's card; returns it after checking it sees every line leave. */
async function screenWith(t: Test, o: Order): Promise<WsClient> {
  const c = await WsClient.open(`${wsUrl}?token=${encodeURIComponent(manager.token)}`)
  t.teardown(() => c.close())
  const snap = await c.next((f) => f.type === 'snapshot')
  t.ok(snap.tickets.some((x: { order_id: number }) => x.order_id === o.id), 'the card is on the screen first')
  return c
}
async function leaves(t: Test, c: WsClient, o: Order) {
  const f = await c.next((f) => f.type === 'item' && f.order_id === o.id && f.items.length === o.items.length)
  t.same(f.items.map((i: { kds_state: string }) => i.kds_state), o.items.map(() => 'served'), 'the screen hears every line resolved')
  t.same(states(o), o.items.map(() => 'served'), 'stored as served')
  t.notOk(await onBoard(o), 'not in GET /staff/kds')
  const again = await WsClient.open(`${wsUrl}?token=${encodeURIComponent(manager.token)}`)
  t.teardown(() => again.close())
  t.notOk((await again.next((f) => f.type === 'snapshot')).tickets.some((x: { order_id: number }) => x.order_id === o.id), 'not in a new snapshot')
}

for (const status of ['ready', 'delivered', 'completed', 'cancelled']) {
  t.test(`the owner sets the kitchen status to ${status}: the order leaves the screens`, async (t) => {
    const o = await order()
    await bump(o.items[0]!.id) // one line started, one still queued
    const c = await screenWith(t, o)
    t.equal((await s.req('PUT', `/restaurants/${acct.storeId}/orders/${o.id}/status`, { token: acct.token, body: { status } })).status, 200)
    await leaves(t, c, o)
    t.match(await c.next((f) => f.type === 'status' && f.order_id === o.id), { status })
  })
}

t.test('staff set the status: the order leaves the screens', async (t) => {
  const o = await order()
  const c = await screenWith(t, o)
  t.equal((await s.req('PUT', `/staff/orders/${o.id}/status`, { token: manager.token, body: { status: 'completed' } })).status, 200)
  await leaves(t, c, o)
})

t.test('a driver picks the order up: it leaves the screens, its kitchen status becomes ready (docs/orders.md)', async (t) => {
  const o = await order({ type: 'delivery', address: '1 Pass St' })
  t.equal((await s.req('POST', `/restaurants/${acct.storeId}/orders/${o.id}/assign`, { token: acct.token, body: { driver_id: driver.id } })).status, 200)
  t.ok(await onBoard(o), 'assigning a driver does not take it off the screens')
  const c = await screenWith(t, o)
  const r = await s.req('PUT', `/driver/deliveries/${o.id}/status`, { token: driver.token, body: { delivery_status: 'picked_up' } })
  t.equal(r.status, 200, r.text)
  t.equal(r.body.status, 'ready', 'the kitchen status follows the food: ready')
  await leaves(t, c, o)
})

t.test('the owner marks it out for delivery: it leaves the screens', async (t) => {
  const o = await order({ type: 'delivery', address: '2 Pass St' })
  const c = await screenWith(t, o)
  const r = await s.req('PUT', `/restaurants/${acct.storeId}/orders/${o.id}/delivery-status`, { token: acct.token, body: { delivery_status: 'out_for_delivery' } })
  t.equal(r.status, 200, r.text)
  await leaves(t, c, o)
})

t.test('ready by bumping is not a road out: its lines stay on the pass', async (t) => {
  const o = await order()
  for (const l of o.items) { await bump(l.id); await bump(l.id) }
  t.same(states(o), ['ready', 'ready'])
  t.ok(await onBoard(o), 'still on the screens until served')
  // And an order already resolved keeps its served lines when set again.
  t.equal((await s.req('PUT', `/restaurants/${acct.storeId}/orders/${o.id}/status`, { token: acct.token, body: { status: 'completed' } })).status, 200)
  t.same(states(o), ['served', 'served'])
  t.equal((await bump(o.items[0]!.id)).status, 422, 'nothing left to bump')
})
