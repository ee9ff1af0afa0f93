/**
 * Kitchen display over HTTP and the kitchen socket (api-v1 §3, §4.7; docs/kds.md): tickets by
 * station, bump/recall with the status rule and `order.status_changed`, concurrent bumps through
 * the order actor, tenancy and permissions, and the socket's snapshot + live frames.
 */
import t from 'tap'
import { refusal, startServer } from './helpers/server.ts'
import { createAccount, createCategory, createItem, createStaff, isError, outbox, postOrder } from './helpers/fixtures.ts'
import { WsClient, wsBase } from './helpers/ws-client.ts'

const s = await startServer({ RATE_LIMIT_PER_MINUTE: '100000' })
t.teardown(() => s.close())
const db = s.app.svc.db
const acct = createAccount(db)
const { menu } = acct
// A second station: drinks go to the bar.
const cola = createItem(db, acct.storeId, createCategory(db, acct.storeId, 'Drinks', { station: 'bar', position: 1 }), 'Cola', 300)

const manager = createStaff(db, acct.storeId, { role: 'manager' })
const cook = createStaff(db, acct.storeId, { role: 'kitchen', station: 'grill' })
const barman = createStaff(db, acct.storeId, { role: 'kitchen', station: 'bar' })
const cashier = createStaff(db, acct.storeId, { role: 'cashier' })
const other = createAccount(db)
const otherCook = createStaff(db, other.storeId, { role: 'kitchen' })

const order = async (body: Record<string, unknown> = {}) => {
  const r = await postOrder(s, acct.token, acct.storeId, { type: 'takeaway', items: [{ item_id: menu.burger.id, quantity: 2 }, { item_id: cola, quantity: 1 }], ...body })
  if (r.status !== 200) throw new Error(`order failed: ${r.status} ${r.text}`)
  return r.body as { id: number; items: Array<{ id: number; item_id: number; station: string }> }
}
const bump = (token: string, itemId: number) => s.req('PUT', `/staff/kds/items/${itemId}/bump`, { token })
const recall = (token: string, itemId: number) => s.req('PUT', `/staff/kds/items/${itemId}/recall`, { token })
const wsUrl = `${wsBase(s)}/ws/kds`

t.test('GET /staff/kds lists live tickets filtered to the station', async (t) => {
  const o = await order()
  const grill = await s.req('GET', '/staff/kds', { token: cook.token })
  t.equal(grill.status, 200)
  t.equal(grill.body.station, 'grill', 'the member\'s station by default')
  const tk = grill.body.tickets.find((x: { order_id: number }) => x.order_id === o.id)
  t.ok(tk, 'the new order is a ticket')
  t.same(tk.items.map((i: { name: string }) => i.name), ['Burger'], 'only grill items on the grill screen')
  t.match(tk.items[0], { kds_state: 'queued', station: 'grill', quantity: 2, kds_timeline: { queued_at: String } })
  const bar = await s.req('GET', '/staff/kds?station_id=bar', { token: cook.token })
  t.same(bar.body.tickets.find((x: { order_id: number }) => x.order_id === o.id).items.map((i: { name: string }) => i.name), ['Cola'], '`station_id` picks another station')
  const all = await s.req('GET', '/staff/kds', { token: manager.token })
  t.equal(all.body.station, null)
  t.same(all.body.tickets.find((x: { order_id: number }) => x.order_id === o.id).items.map((i: { name: string }) => i.name), ['Burger', 'Cola'], 'no station: every item')
})

t.test('bump and recall move one step, re-derive the order status and emit order.status_changed', async (t) => {
  const o = await order()
  const [burger, colaLine] = o.items as unknown as [{ id: number }, { id: number }]
  const before = outbox(db, 'order.status_changed').length
  const b1 = await bump(cook.token, burger.id)
  t.equal(b1.status, 200)
  t.match(b1.body, { order_id: o.id, order_status: 'preparing', item: { id: burger.id, kds_state: 'preparing', kds_timeline: { queued_at: String, preparing_at: String } } })
  const ev = outbox(db, 'order.status_changed').slice(before)
  t.same(ev.map((e) => [e.data.order_id, e.data.status, e.data.previous_status]), [[o.id, 'preparing', 'new']], 'one event for new → preparing')
  t.match((await bump(cook.token, burger.id)).body, { order_status: 'preparing', item: { kds_state: 'ready' } }, 'one item ready, one queued: still preparing')
  t.match((await bump(barman.token, colaLine.id)).body, { order_status: 'preparing' })
  t.match((await bump(barman.token, colaLine.id)).body, { order_status: 'ready', item: { kds_state: 'ready' } }, 'all items ready → ready')
  t.equal(outbox(db, 'order.status_changed').length - before, 2, 'preparing and ready')
  t.match((await s.req('GET', `/restaurants/${acct.storeId}/orders/${o.id}`, { token: acct.token })).body, { status: 'ready', timeline: { preparing_at: String, ready_at: String } })
  t.match((await recall(barman.token, colaLine.id)).body, { order_status: 'preparing', item: { kds_state: 'preparing' } }, 'a recall steps back and re-derives')
  const r = (await recall(barman.token, colaLine.id)).body
  t.equal(r.item.kds_state, 'queued')
  t.notOk('preparing_at' in r.item.kds_timeline, 'the recalled stamp is dropped')
  isError(t, await recall(barman.token, colaLine.id), 422, 'invalid_transition', 'recalling a queued item')
})

t.test('served items leave the screen; all served: on-table orders become delivered, takeaway stays ready', async (t) => {
  const table = await order({ type: 'on-table', table_number: 4 })
  for (const line of table.items) for (let i = 0; i < 3; i++) t.equal((await bump(manager.token, line.id)).status, 200)
  t.equal((await s.req('GET', `/restaurants/${acct.storeId}/orders/${table.id}`, { token: acct.token })).body.status, 'delivered')
  isError(t, await bump(manager.token, table.items[0]!.id), 422, 'invalid_transition', 'bumping a served item')
  const live = await s.req('GET', '/staff/kds', { token: manager.token })
  t.notOk(live.body.tickets.some((x: { order_id: number }) => x.order_id === table.id), 'no ticket once everything is served')
  const take = await order()
  for (const line of take.items) for (let i = 0; i < 3; i++) await bump(manager.token, line.id)
  t.equal((await s.req('GET', `/restaurants/${acct.storeId}/orders/${take.id}`, { token: acct.token })).body.status, 'ready')
})

t.test('two cooks bumping at once never lose a step (the order actor serialises them)', async (t) => {
  const o = await order()
  const id = o.items[0]!.id
  const results = await Promise.all([bump(cook.token, id), bump(manager.token, id), bump(cook.token, id), bump(manager.token, id)])
  t.same(results.map((r) => r.status).sort(), [200, 200, 200, 422], 'three steps exist; the fourth bump finds the item served')
  t.same(results.filter((r) => r.status === 200).map((r) => r.body.item.kds_state).sort(), ['preparing', 'ready', 'served'], 'each bump saw the previous one')
  const row = db.prepare('SELECT kds_state FROM order_lines WHERE id = ?').get(id) as { kds_state: string }
  t.equal(row.kds_state, 'served', 'stored')
  // Different items of one order at once: the status is derived from all of them.
  const o2 = await order()
  await Promise.all(o2.items.flatMap((l) => [bump(l.station === 'bar' ? barman.token : cook.token, l.id), bump(manager.token, l.id)]))
  t.same(db.prepare('SELECT kds_state FROM order_lines WHERE order_id = ? ORDER BY id').pluck().all(o2.id), ['ready', 'ready'])
  t.equal((db.prepare('SELECT status FROM orders WHERE id = ?').get(o2.id) as { status: string }).status, 'ready')
})

t.test('cancelled orders leave the screens and their items cannot be bumped', async (t) => {
  const o = await order()
  await s.req('PUT', `/restaurants/${acct.storeId}/orders/${o.id}/status`, { token: acct.token, body: { status: 'cancelled' } })
  isError(t, await bump(manager.token, o.items[0]!.id), 422, 'invalid_transition')
  const live = await s.req('GET', '/staff/kds', { token: manager.token })
  t.notOk(live.body.tickets.some((x: { order_id: number }) => x.order_id === o.id))
})

t.test('permissions and tenancy: no kds → 403; another store\'s item → 404', async (t) => {
  const o = await order()
  isError(t, await s.req('GET', '/staff/kds', { token: cashier.token }), 403, 'forbidden', 'cashier GET /staff/kds')
  isError(t, await bump(cashier.token, o.items[0]!.id), 403, 'forbidden', 'cashier bump')
  isError(t, await bump(otherCook.token, o.items[0]!.id), 404, 'not_found', 'a cook of another store')
  isError(t, await recall(otherCook.token, o.items[0]!.id), 404, 'not_found')
  // Once the store's own cook has bumped it, the line's order is cached: still not another store's.
  t.equal((await bump(cook.token, o.items[0]!.id)).status, 200)
  isError(t, await bump(otherCook.token, o.items[0]!.id), 404, 'not_found', 'a cached line is still not found for another store')
  t.equal((await recall(cook.token, o.items[0]!.id)).status, 200)
  const theirs = await s.req('GET', '/staff/kds', { token: otherCook.token })
  t.same(theirs.body.tickets, [], 'another store sees none of these tickets')
  isError(t, await s.req('GET', '/staff/kds'), 401, 'unauthenticated')
  t.equal((db.prepare('SELECT kds_state FROM order_lines WHERE id = ?').get(o.items[0]!.id) as { kds_state: string }).kds_state, 'queued', 'untouched')
})

// An item of a category without a station: it shows on the all-station screens only.
const special = createItem(db, acct.storeId, createCategory(db, acct.storeId, 'Specials', { position: 2 }), 'Special', 900)
const lineOf = (o: { items: Array<{ id: number; item_id: number }> }, itemId: number) => o.items.find((l) => l.item_id === itemId)!.id
const kdsState = (lineId: number) => db.prepare('SELECT kds_state FROM order_lines WHERE id = ?').pluck().get(lineId)

t.test('the station rule over HTTP: a member bound to a station moves only its items; a manager or an unbound member, any', async (t) => {
  const floater = createStaff(db, acct.storeId, { role: 'kitchen' })
  const barManager = createStaff(db, acct.storeId, { role: 'manager', station: 'bar' })
  const o = await order({ items: [{ item_id: menu.burger.id, quantity: 1 }, { item_id: cola, quantity: 1 }, { item_id: special, quantity: 1 }] })
  const [burger, colaLine, specialLine] = [lineOf(o, menu.burger.id), lineOf(o, cola), lineOf(o, special)]
  // First a line no bump has looked up yet (its station read from SQLite), then the same line from the cache.
  const refused = await bump(cook.token, colaLine)
  isError(t, refused, 403, 'forbidden', 'the grill cook cannot bump a bar item')
  t.match(refused.body.message, /station "bar".*station "grill"/, 'the refusal names both stations')
  t.equal(kdsState(colaLine), 'queued', 'untouched')
  t.equal((await bump(barman.token, colaLine)).status, 200, 'the bar\'s own member can')
  isError(t, await bump(cook.token, colaLine), 403, 'forbidden', 'still refused once the line is cached')
  isError(t, await recall(cook.token, colaLine), 403, 'forbidden', 'nor recall it')
  t.equal(kdsState(colaLine), 'preparing', 'only the bar member\'s bump moved it')
  isError(t, await bump(cook.token, specialLine), 403, 'forbidden', 'an item of no station is the all-station screens\', not a bound member\'s')
  t.equal((await bump(cook.token, burger)).status, 200, 'its own station\'s item: allowed')
  t.equal((await bump(barManager.token, burger)).status, 200, 'a manager bound to a station still moves every item')
  t.equal((await bump(floater.token, specialLine)).status, 200, 'a member bound to no station moves any item')
  t.equal((await recall(floater.token, colaLine)).status, 200)
  isError(t, await bump(cook.token, 1e9), 404, 'not_found', 'tenancy first: an unknown line is 404, not 403')
  t.same([burger, colaLine, specialLine].map(kdsState), ['ready', 'queued', 'preparing'])
})

t.test('the station rule over the kitchen socket: the same refusal as HTTP; a new station applies to an open screen', async (t) => {
  const mover = createStaff(db, acct.storeId, { role: 'kitchen', station: 'grill' })
  const o = await order()
  const [burger, colaLine] = [lineOf(o, menu.burger.id), lineOf(o, cola)]
  const grill = await WsClient.open(wsUrl, { token: mover.token })
  const watching = await WsClient.open(`${wsUrl}?station_id=bar`, { token: mover.token })
  t.teardown(() => Promise.all([grill, watching].map((c) => c.close())))
  await grill.next((f) => f.type === 'snapshot')
  t.equal((await watching.next((f) => f.type === 'snapshot')).station, 'bar', 'a bound member may watch another station')

  grill.send({ type: 'bump', item_id: colaLine, seq: 1 })
  t.match(await grill.next((f) => f.seq === 1), { type: 'error', code: 'forbidden', message: /station "bar"/ }, 'a bar item from the grill member\'s screen')
  watching.send({ type: 'recall', item_id: colaLine, seq: 2 })
  t.match(await watching.next((f) => f.seq === 2), { type: 'error', code: 'forbidden' }, 'watching the bar is not working it')
  grill.send({ type: 'bump', item_id: burger, seq: 3 })
  t.match(await grill.next((f) => f.seq === 3), { type: 'ack', item_id: burger, kds_state: 'preparing' }, 'its own station\'s item')
  t.equal(kdsState(colaLine), 'queued', 'the bar item did not move')

  // The owner moves the member to the bar: its open screens follow at once, like its HTTP calls.
  t.equal((await s.req('PUT', `/restaurants/${acct.storeId}/staff/${mover.id}`, { token: acct.token, body: { station: 'bar' } })).status, 200)
  grill.send({ type: 'bump', item_id: colaLine, seq: 4 })
  t.match(await grill.next((f) => f.seq === 4), { type: 'ack', kds_state: 'preparing' }, 'now a bar item is its own')
  grill.send({ type: 'bump', item_id: burger, seq: 5 })
  t.match(await grill.next((f) => f.seq === 5), { type: 'error', code: 'forbidden', message: /station "grill"/ }, 'and a grill item no longer is')
  isError(t, await bump(mover.token, burger), 403, 'forbidden', 'over HTTP too')
  t.same([burger, colaLine].map(kdsState), ['preparing', 'preparing'])
})

t.test('kitchen socket: auth, snapshot first, then new orders, bumps, status changes and cancellations of its station', async (t) => {
  t.match(await refusal(WsClient.open(wsUrl)), { status: 401 }, 'no token: 401')
  t.match(await refusal(WsClient.open(`${wsUrl}?token=${cashier.token}`)), { status: 403 }, 'no kds permission: 403')
  t.match(await refusal(WsClient.open(`${wsUrl}?token=dst_nope`)), { status: 401 })

  const existing = await order()
  const grill = await WsClient.open(wsUrl, { token: cook.token })
  const bar = await WsClient.open(`${wsUrl}?token=${encodeURIComponent(cook.token)}&station_id=bar`)
  const all = await WsClient.open(`${wsUrl}?token=${encodeURIComponent(manager.token)}`)
  const elsewhere = await WsClient.open(`${wsUrl}?token=${encodeURIComponent(otherCook.token)}`)
  t.teardown(() => Promise.all([grill, bar, all, elsewhere].map((c) => c.close())))

  const snap = await grill.next()
  t.equal(snap.type, 'snapshot', 'the first frame is the snapshot')
  t.equal(snap.station, 'grill')
  t.same(snap.tickets.find((x: { order_id: number }) => x.order_id === existing.id).items.map((i: { name: string }) => i.name), ['Burger'])
  t.equal((await bar.next((f) => f.type === 'snapshot')).station, 'bar')

  const o = await order()
  const gt = await grill.next((f) => f.type === 'ticket' && f.ticket.order_id === o.id)
  t.same(gt.ticket.items.map((i: { name: string }) => i.name), ['Burger'], 'the grill gets the grill part of the new order')
  const bt = await bar.next((f) => f.type === 'ticket' && f.ticket.order_id === o.id)
  t.same(bt.ticket.items.map((i: { name: string }) => i.name), ['Cola'])
  t.equal((await all.next((f) => f.type === 'ticket' && f.ticket.order_id === o.id)).ticket.items.length, 2)

  const burgerLine = o.items.find((i) => i.item_id === menu.burger.id)!
  await bump(manager.token, burgerLine.id)
  const item = await grill.next((f) => f.type === 'item' && f.order_id === o.id)
  t.match(item, { order_status: 'preparing', items: [{ id: burgerLine.id, kds_state: 'preparing' }] })
  await all.next((f) => f.type === 'item' && f.order_id === o.id)
  const st = await bar.next((f) => f.type === 'status' && f.order_id === o.id)
  t.match(st, { status: 'preparing', previous_status: 'new' }, 'every station of the order hears its status change')
  t.notOk(bar.frames.some((f) => f.type === 'item' && f.order_id === o.id), 'the bar does not get grill bumps')

  // Bump from the screen itself: acknowledged after it is durable.
  grill.send({ type: 'bump', item_id: burgerLine.id, seq: 7 })
  const ack = await grill.next((f) => f.type === 'ack' && f.seq === 7)
  t.match(ack, { item_id: burgerLine.id, kds_state: 'ready', order_id: o.id })
  grill.send({ type: 'bump', item_id: (await order()).items[0]!.id + 1e6, seq: 8 })
  t.match(await grill.next((f) => f.seq === 8), { type: 'error', code: 'not_found' })
  elsewhere.send({ type: 'bump', item_id: burgerLine.id, seq: 9 })
  t.match(await elsewhere.next((f) => f.seq === 9), { type: 'error', code: 'not_found' }, 'another store\'s screen cannot bump it')
  grill.send({ type: 'nope' })
  t.match(await grill.next((f) => f.type === 'error' && f.code === 'unknown_type'), { type: 'error' })

  await s.req('PUT', `/restaurants/${acct.storeId}/orders/${o.id}/status`, { token: acct.token, body: { status: 'cancelled' } })
  t.match(await grill.next((f) => f.type === 'status' && f.status === 'cancelled'), { order_id: o.id })
  t.match(await bar.next((f) => f.type === 'status' && f.status === 'cancelled'), { order_id: o.id })
  t.notOk(elsewhere.frames.some((f) => f.order_id === o.id || f.ticket?.order_id === o.id), 'nothing of this store reached another store\'s screen')
})

t.test('signing out closes that token\'s kitchen sockets', async (t) => {
  const member = createStaff(db, acct.storeId, { role: 'kitchen' })
  const c = await WsClient.open(`${wsUrl}?token=${encodeURIComponent(member.token)}`)
  await c.next((f) => f.type === 'snapshot')
  t.equal((await s.req('POST', '/staff/logout', { token: member.token })).status, 200)
  t.equal((await c.closedWithin()).code, 4001)
  t.match(await refusal(WsClient.open(`${wsUrl}?token=${encodeURIComponent(member.token)}`)), { status: 401 }, 'the token no longer opens a socket')
})
