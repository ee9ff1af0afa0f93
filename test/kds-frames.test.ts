/**
 * What the bump path builds from the order actor's memory instead of reading the order back
 * (issue 19 item 3, docs/kds.md "Benchmark"): the `item` frames, the bump replies and the ack are
 * the order as stored; each screen gets exactly the bumps of its station and store; and a bump
 * that leaves the order's status alone writes only what moved (status, delivery status and driver
 * stay as they are).
 */
import t from 'tap'
import { startServer } from './helpers/server.ts'
import { createAccount, createCategory, createItem, createStaff } from './helpers/fixtures.ts'
import { WsClient, wsBase } from './helpers/ws-client.ts'
import { assign, createFleet, deliveryOrder } from './helpers/delivery.ts'

const s = await startServer({ RATE_LIMIT_PER_MINUTE: '100000' })
t.teardown(() => s.close())
const db = s.app.svc.db
const acct = createAccount(db)
const { menu } = acct
const cola = createItem(db, acct.storeId, createCategory(db, acct.storeId, 'Drinks', { station: 'bar', position: 1 }), 'Cola', 300)
const manager = createStaff(db, acct.storeId, { role: 'manager' })
const other = createAccount(db)
const otherManager = createStaff(db, other.storeId, { role: 'manager' })
const wsUrl = `${wsBase(s)}/ws/kds`

type Line = { id: number; item_id: number; station: string | null }
const place = async (a: typeof acct, items: unknown[], extra: Record<string, unknown> = {}) => {
  const r = await s.req('POST', `/restaurants/${a.storeId}/orders`, { token: a.token, body: { type: 'on-table', table_number: '12', customer_name: 'Ada', note: 'no onions', items, ...extra } })
  if (r.status !== 200) throw new Error(`order failed: ${r.status} ${r.text}`)
  return r.body as { id: number; items: Line[] }
}
const bump = (token: string, itemId: number) => s.req('PUT', `/staff/kds/items/${itemId}/bump`, { token })
const ticketOf = async (token: string, orderId: number) =>
  ((await s.req('GET', '/staff/kds', { token })).body.tickets as Array<{ order_id: number; items: Array<{ id: number }> }>).find((x) => x.order_id === orderId)
/** Wait until `c` has received a frame matching `pred`, without taking any (`next` would). */
async function until(c: WsClient, pred: (f: Record<string, any>) => boolean): Promise<void> {
  for (let i = 0; i < 1000 && !c.frames.some(pred); i++) await new Promise((r) => setTimeout(r, 5))
  if (!c.frames.some(pred)) throw new Error('frame not received within 5 s')
}
const columns = (orderId: number) => db.prepare('SELECT status, delivery_status, driver_id, timeline, updated_at FROM orders WHERE id = ?').get(orderId) as Record<string, unknown>

t.test('item frames, bump replies and acks are the order as stored (variation, extras, note, head)', async (t) => {
  const all = await WsClient.open(wsUrl, { token: manager.token })
  t.teardown(() => all.close())
  await all.next((f) => f.type === 'snapshot')
  const o = await place(acct, [
    { item_id: menu.burger.id, quantity: 2, variation: menu.burger.double, extras: [menu.burger.cheese, menu.burger.bacon], note: 'well done' },
    { item_id: cola, quantity: 1 },
  ])
  const burger = o.items.find((l) => l.item_id === menu.burger.id)!
  const r = await bump(manager.token, burger.id)
  t.equal(r.status, 200)
  const frame = await all.next((f) => f.type === 'item' && f.order_id === o.id)
  // The stored view, read after the fact: what the screens and the reply used to be built from.
  const stored = (await ticketOf(manager.token, o.id))!
  const storedBurger = stored.items.find((i) => i.id === burger.id)
  t.same(frame.items, [storedBurger], 'the frame\'s item is the stored line')
  t.match(storedBurger, { variation: 'Double', extras: ['Cheese', 'Bacon'], note: 'well done', quantity: 2, kds_state: 'preparing' })
  const { items: _items, ...head } = stored as unknown as Record<string, unknown>
  t.same({ ...frame.order, order_id: o.id }, { ...head, order_id: o.id, status: frame.order.status }, 'the frame\'s order head is the stored order')
  t.same(r.body, { order_id: o.id, order_status: 'preparing', item: storedBurger }, 'the HTTP reply is the stored line')
  all.send({ type: 'bump', item_id: burger.id, seq: 1 })
  t.match(await all.next((f) => f.type === 'ack' && f.seq === 1), { item_id: burger.id, kds_state: 'ready', order_id: o.id, order_status: 'preparing' }, 'the socket\'s ack')
  t.match(columns(o.id), { status: 'preparing' })
})

t.test('each screen gets exactly the bumps of its station and store', async (t) => {
  const grill = await WsClient.open(`${wsUrl}?token=${encodeURIComponent(manager.token)}&station_id=grill`)
  const bar = await WsClient.open(`${wsUrl}?token=${encodeURIComponent(manager.token)}&station_id=bar`)
  const all = await WsClient.open(wsUrl, { token: manager.token })
  const elsewhere = await WsClient.open(wsUrl, { token: otherManager.token })
  t.teardown(() => Promise.all([grill, bar, all, elsewhere].map((c) => c.close())))
  for (const c of [grill, bar, all, elsewhere]) await c.next((f) => f.type === 'snapshot')

  const mine = await Promise.all([1, 2, 3].map(() => place(acct, [{ item_id: menu.burger.id, quantity: 1 }, { item_id: menu.fries, quantity: 1 }, { item_id: cola, quantity: 1 }])))
  const theirs = await place(other, [{ item_id: other.menu.burger.id, quantity: 1 }])
  const lines = mine.flatMap((o) => o.items)
  // Bumped concurrently, so several share a commit and a fan-out.
  const replies = await Promise.all([...lines, ...theirs.items].map((l) => bump(l.item_id === other.menu.burger.id ? otherManager.token : manager.token, l.id)))
  t.ok(replies.every((r) => r.status === 200), 'every bump answered 200')
  // Every bump was answered after its frames were published: wait for the last of each screen's frames.
  const has = (id: number) => (f: Record<string, any>) => f.type === 'item' && f.items.some((i: { id: number }) => i.id === id)
  for (const l of lines) {
    await until(all, has(l.id))
    await until(l.station === 'bar' ? bar : grill, has(l.id))
  }
  await until(elsewhere, has(theirs.items[0]!.id))
  await new Promise((r) => setTimeout(r, 50)) // room for a stray frame to show up

  const itemIds = (c: WsClient) => c.frames.filter((f) => f.type === 'item').flatMap((f) => f.items.map((i: { id: number }) => i.id)).sort((a: number, b: number) => a - b)
  const ids = (ls: Line[]) => ls.map((l) => l.id).sort((a, b) => a - b)
  t.same(itemIds(grill), ids(lines.filter((l) => l.station === 'grill')), 'the grill screen: every grill bump, once, and nothing else')
  t.same(itemIds(bar), ids(lines.filter((l) => l.station === 'bar')), 'the bar screen: every bar bump, once, and nothing else')
  t.same(itemIds(all), ids(lines), 'the all-station screen: every bump of its store, once')
  t.same(itemIds(elsewhere), ids(theirs.items), 'another account\'s screen: only its own store\'s bump')
  t.notOk([grill, bar, all].some((c) => c.frames.some((f) => f.order_id === theirs.id)), 'nothing of the other account reached this store\'s screens')
})

t.test('a bump writes only what moved: status, delivery status and driver stay as stored', async (t) => {
  const o = await place(acct, [{ item_id: menu.burger.id, quantity: 1 }, { item_id: menu.fries, quantity: 1 }])
  const [a, b] = o.items as [Line, Line]
  const placed = columns(o.id)
  await bump(manager.token, a.id) // new → preparing: the status and its timeline stamp are written
  const afterFirst = columns(o.id)
  t.match(afterFirst, { status: 'preparing' })
  t.not(afterFirst.timeline, placed.timeline, 'the timeline was stamped')
  await new Promise((r) => setTimeout(r, 5))
  await bump(manager.token, b.id) // still preparing: only updated_at moves
  const afterSecond = columns(o.id)
  t.same({ ...afterSecond, updated_at: null }, { ...afterFirst, updated_at: null }, 'status, delivery status, driver and timeline as they were')
  t.not(afterSecond.updated_at, afterFirst.updated_at, 'updated_at moved')

  // A delivery with a driver: bumps leave its delivery status and driver alone.
  const fleet = createFleet(db)
  const d = await deliveryOrder(s, fleet)
  await assign(s, fleet, d.id, fleet.drivers[0]!.id)
  const before = columns(d.id)
  const staff = createStaff(db, fleet.storeId, { role: 'manager' })
  for (const l of d.items as Line[]) t.equal((await bump(staff.token, l.id)).status, 200)
  t.match(columns(d.id), { delivery_status: before.delivery_status, driver_id: before.driver_id, status: 'preparing' })
})
