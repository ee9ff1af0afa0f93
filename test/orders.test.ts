/**
 * Owner orders (api-v1 §2.4, §3, §4.2): server-side pricing with variations, extras and tip; the
 * store's fulfillment modes; whole-order rejection; initial statuses; the outbox; the kitchen
 * status override with its timeline; detail; the paginated list (30, newest first, `status`);
 * another owner's store or order is a 404 whatever the body (resolved before validation).
 */
import t from 'tap'
import { startServer } from './helpers/server.ts'
import { counts, createAccount, createMenu, createStore, isError, outbox, postOrder } from './helpers/fixtures.ts'

const s = await startServer({ RATE_LIMIT_PER_MINUTE: '100000' })
t.teardown(() => s.close())
const db = s.app.svc.db
const acct = createAccount(db)
const { menu } = acct
const create = (body: unknown, headers?: Record<string, string>) => postOrder(s, acct.token, acct.storeId, body, headers)

t.test('pricing is done by the server: variation replaces the price, extras add per unit, tip adds', async (t) => {
  const r = await create({
    type: 'takeaway', tip_amount: 2.5, customer_name: 'Ada', phone: '+15550100', note: 'ring', source: 'pos',
    total: 0.01, subtotal: 0.01, // client-sent totals are ignored
    items: [
      { item_id: menu.burger.id, quantity: 2, variation: menu.burger.double, extras: [menu.burger.cheese, menu.burger.bacon], note: 'well done', price: 0.01 },
      { item_id: menu.fries, quantity: 3 },
      { item_id: menu.burger.id, quantity: 1, variation: menu.burger.single, extras: [menu.burger.cheese] },
    ],
  })
  t.equal(r.status, 200)
  const o = r.body
  // (15.00 + 1.50 + 2.00) × 2 = 37.00; 3.00 × 3 = 9.00; (10.00 + 1.50) × 1 = 11.50; + tip 2.50
  t.equal(o.subtotal, 57.5)
  t.equal(o.tip_amount, 2.5)
  t.equal(o.discount, 0)
  t.equal(o.total, 60)
  t.equal(o.items.length, 3)
  t.match(o.items[0], { item_id: menu.burger.id, name: 'Burger', variation: { id: menu.burger.double, name: 'Double' }, quantity: 2, unit_price: 15, line_total: 37, note: 'well done', station: 'grill', kds_state: 'queued' })
  t.same(o.items[0].extras.map((e: { id: number; price: number }) => [e.id, e.price]), [[menu.burger.cheese, 1.5], [menu.burger.bacon, 2]])
  t.match(o.items[1], { item_id: menu.fries, variation: null, quantity: 3, unit_price: 3, line_total: 9, extras: [] })
  t.match(o.items[2], { variation: { id: menu.burger.single, name: 'Single' }, unit_price: 10, line_total: 11.5 }, 'a variation without its own price keeps the item price')
  t.equal(o.extras.length, 3, 'extras flattened with their line')
  // The create reply is built from the order in memory (storage/orders.ts viewOfNew), not read back:
  // it must be exactly what reading the stored order gives.
  const read = await s.req('GET', `/restaurants/${acct.storeId}/orders/${o.id}`, { token: acct.token })
  t.strictSame(r.body, read.body, 'the create reply equals the stored order read back')
  t.ok(o.extras.every((e: { line_id: number }) => o.items.some((l: { id: number }) => l.id === e.line_id)))
  t.match(o, { customer_name: 'Ada', phone: '+15550100', note: 'ring', source: 'pos', restaurant_id: acct.storeId, type: 'takeaway', is_paid: false, driver: null })

  const row = db.prepare('SELECT subtotal, tip_amount, total FROM orders WHERE id = ?').get(o.id)
  t.same(row, { subtotal: 5750, tip_amount: 250, total: 6000 }, 'stored in cents')
})

t.test('a created order starts new; delivery_status is pending for deliveries and null otherwise', async (t) => {
  const take = await create({ type: 'takeaway', items: [{ item_id: menu.fries, quantity: 1 }] })
  t.match(take.body, { status: 'new', delivery_status: null })
  t.match(take.body.timeline, { created_at: String })
  const table = await create({ type: 'on-table', table_number: 7, items: [{ item_id: menu.fries, quantity: 1 }] })
  t.equal(table.status, 200)
  t.match(table.body, { status: 'new', delivery_status: null, table_number: '7' })
  const del = await create({ type: 'delivery', address: '1 Main St', items: [{ item_id: menu.fries, quantity: 1 }] })
  t.equal(del.status, 200)
  t.match(del.body, { status: 'new', delivery_status: 'pending', address: '1 Main St' })
})

t.test('the response carries an unguessable track_token and the order.created event is in the outbox', async (t) => {
  const r = await create({ type: 'takeaway', tip_amount: 0.5, items: [{ item_id: menu.burger.id, quantity: 1, extras: [menu.burger.bacon] }] })
  t.equal(r.status, 200)
  const token: string = r.body.track_token
  t.match(token, /^trk_[A-Za-z0-9_-]+$/)
  t.ok(Buffer.from(token.slice(4), 'base64url').length * 8 >= 128, 'at least 128 random bits')
  t.match(r.body.track_url, new RegExp(`^${s.site}/`))
  const r2 = await create({ type: 'takeaway', items: [{ item_id: menu.fries, quantity: 1 }] })
  t.not(r2.body.track_token, token, 'every order gets its own token')

  const ev = outbox(db, 'order.created').find((e) => e.data.order_id === r.body.id)
  t.ok(ev, 'order.created written')
  t.equal(ev!.data.total, '12.50', 'total as a decimal string (10.00 + 2.00 + 0.50 tip)')
  t.equal(ev!.data.restaurant_id, acct.storeId)
  t.equal(ev!.owner_id, acct.ownerId)
  t.equal(ev!.store_id, acct.storeId)

  const detail = await s.req('GET', `/restaurants/${acct.storeId}/orders/${r.body.id}`, { token: acct.token })
  t.equal(detail.status, 200)
  t.same(detail.body, r.body, 'detail equals what creation returned')
})

t.test('order type is limited to the store vertical fulfillment modes', async (t) => {
  const retail = createStore(db, acct.ownerId, { type: 'retail' })
  const retailMenu = createMenu(db, retail.id)
  const detail = await s.req('GET', `/restaurants/${retail.id}`, { token: acct.token })
  t.same(detail.body.vertical.fulfillment_modes.sort(), ['delivery', 'in_store', 'pickup_slot', 'ship'])
  const line = [{ item_id: retailMenu.fries, quantity: 1 }]
  for (const type of ['on-table', 'takeaway', 'room_service', 'appointment']) {
    const r = await postOrder(s, acct.token, retail.id, { type, table_number: 1, items: line })
    isError(t, r, 422, 'validation_failed', `retail ${type}`)
    t.ok(r.body.errors?.type, 'keyed by type')
  }
  // Each mode with the fields it needs (docs/verticals.md "Fulfillment modes"; their refusals: test/fulfillment-modes.test.ts).
  const tomorrow = new Date(Date.now() + 86_400_000).toISOString().slice(0, 10)
  const modeFields: Record<string, Record<string, unknown>> = {
    ship: { shipping_address: { name: 'Ada', line1: '1 Main St', city: 'London', postal_code: 'N1 9GU', country: 'GB' } },
    in_store: {},
    pickup_slot: { slot_start: `${tomorrow}T10:00:00Z` },
  }
  for (const [type, fields] of Object.entries(modeFields)) {
    const r = await postOrder(s, acct.token, retail.id, { type, ...fields, items: line })
    t.equal(r.status, 200, `retail ${type}: ${r.text}`)
  }
  for (const type of ['ship', 'room_service', 'in_store']) {
    t.equal((await create({ type, items: [{ item_id: menu.fries, quantity: 1 }] })).status, 422, `restaurant ${type}`)
  }
  const hotel = createStore(db, acct.ownerId, { type: 'hotel' })
  const hotelMenu = createMenu(db, hotel.id)
  t.equal((await postOrder(s, acct.token, hotel.id, { type: 'room_service', room_number: '12', items: [{ item_id: hotelMenu.fries, quantity: 1 }] })).status, 200, 'hotel room_service')
  t.equal((await postOrder(s, acct.token, hotel.id, { type: 'delivery', address: 'x', items: [{ item_id: hotelMenu.fries, quantity: 1 }] })).status, 422, 'hotel delivery')
})

t.test('on-table needs table_number, delivery needs address', async (t) => {
  const before = counts(db)
  const items = [{ item_id: menu.fries, quantity: 1 }]
  for (const [body, key] of [
    [{ type: 'on-table', items }, 'table_number'],
    [{ type: 'on-table', table_number: '  ', items }, 'table_number'],
    [{ type: 'on-table', table_number: null, items }, 'table_number'],
    [{ type: 'delivery', items }, 'address'],
    [{ type: 'delivery', address: '', items }, 'address'],
  ] as const) {
    const r = await create(body)
    isError(t, r, 422, 'validation_failed', JSON.stringify(body))
    t.ok(r.body.errors?.[key], `keyed by ${key}`)
  }
  t.same(counts(db), before, 'nothing written')
})

t.test('a sold-out item, another store\'s item or a bad variation/extra rejects the whole order', async (t) => {
  const other = createStore(db, acct.ownerId)
  const otherMenu = createMenu(db, other.id)
  const before = counts(db)
  const ok = { item_id: menu.fries, quantity: 1 }
  const cases: Array<[string, unknown[], string]> = [
    ['sold-out item', [ok, { item_id: menu.soup, quantity: 1 }], 'items.1.item_id'],
    ["another store's item", [ok, { item_id: otherMenu.fries, quantity: 1 }], 'items.1.item_id'],
    ['variation of another item', [{ item_id: menu.fries, quantity: 1, variation: menu.burger.double }], 'items.0.variation'],
    ["variation of another store's item", [{ item_id: menu.burger.id, quantity: 1, variation: otherMenu.burger.double }], 'items.0.variation'],
    ['extra of another item', [{ item_id: menu.fries, quantity: 1, extras: [menu.burger.cheese] }], 'items.0.extras.0'],
    ['the same extra twice', [{ item_id: menu.burger.id, quantity: 1, extras: [menu.burger.cheese, menu.burger.cheese] }], 'items.0.extras.1'],
  ]
  for (const [what, items, key] of cases) {
    const r = await create({ type: 'takeaway', items })
    isError(t, r, 422, 'validation_failed', what)
    t.ok(r.body.errors?.[key], `${what}: keyed by ${key} (got ${Object.keys(r.body.errors ?? {}).join(', ')})`)
  }
  t.same(counts(db), before, 'no order, line or event written')
})

t.test('PUT status sets the kitchen status, stamps <status>_at and emits order.status_changed', async (t) => {
  const o = (await create({ type: 'takeaway', items: [{ item_id: menu.fries, quantity: 1 }] })).body
  const path = `/restaurants/${acct.storeId}/orders/${o.id}/status`
  const r = await s.req('PUT', path, { token: acct.token, body: { status: 'preparing' } })
  t.equal(r.status, 200)
  t.equal(r.body.status, 'preparing')
  t.match(r.body.timeline, { created_at: String, preparing_at: String })
  const ev = outbox(db, 'order.status_changed').filter((e) => e.data.order_id === o.id)
  t.equal(ev.length, 1)
  t.match(ev[0]!.data, { order_id: o.id, restaurant_id: acct.storeId, status: 'preparing', previous_status: 'new' })

  const again = await s.req('PUT', path, { token: acct.token, body: { status: 'preparing' } })
  t.equal(again.status, 200, 'setting the same status again is accepted')
  t.equal(outbox(db, 'order.status_changed').filter((e) => e.data.order_id === o.id).length, 1, '… and emits nothing')

  for (const st of ['ready', 'completed']) t.equal((await s.req('PUT', path, { token: acct.token, body: { status: st } })).status, 200)
  const detail = (await s.req('GET', `/restaurants/${acct.storeId}/orders/${o.id}`, { token: acct.token })).body
  t.equal(detail.status, 'completed')
  t.ok(detail.timeline.ready_at && detail.timeline.completed_at, 'every stage reached is on the timeline')
  t.equal(db.prepare('SELECT status FROM orders WHERE id = ?').pluck().get(o.id), 'completed', 'written through to SQLite')
  t.equal(outbox(db, 'order.status_changed').filter((e) => e.data.order_id === o.id).length, 3)

  for (const body of [{ status: 'bogus' }, {}, { status: 'out_for_delivery' }]) {
    isError(t, await s.req('PUT', path, { token: acct.token, body }), 422, 'validation_failed', JSON.stringify(body))
  }
  isError(t, await s.req('PUT', `/restaurants/${acct.storeId}/orders/999999/status`, { token: acct.token, body: { status: 'ready' } }), 404, 'not_found', 'unknown order')
})

t.test('another owner\'s store or order is a 404 before the body is validated (issue 11 item 3); own store: 422', async (t) => {
  const other = createAccount(db)
  const mine = (await create({ type: 'takeaway', items: [{ item_id: menu.fries, quantity: 1 }] })).body
  const before = counts(db)
  const bad = { type: 'bogus', items: [] }
  isError(t, await postOrder(s, other.token, acct.storeId, bad), 404, 'not_found', 'create in another owner\'s store, invalid body')
  isError(t, await postOrder(s, other.token, acct.storeId, [0]), 404, 'not_found', 'create in another owner\'s store, body not an object')
  isError(t, await s.req('PUT', `/restaurants/${acct.storeId}/orders/${mine.id}/status`, { token: other.token, body: { status: 'bogus' } }), 404, 'not_found', 'status of another owner\'s order, invalid body')
  isError(t, await s.req('PUT', `/restaurants/${other.storeId}/orders/${mine.id}/status`, { token: other.token, body: { status: 'bogus' } }), 404, 'not_found', 'an order of another store under one\'s own store id')
  isError(t, await s.req('GET', `/restaurants/${acct.storeId}/orders?page=0`, { token: other.token }), 404, 'not_found', 'list of another owner\'s store, invalid query')
  t.same(counts(db), before, 'nothing written')
  isError(t, await postOrder(s, acct.token, acct.storeId, bad), 422, 'validation_failed', 'the same body in one\'s own store')
  isError(t, await s.req('PUT', `/restaurants/${acct.storeId}/orders/${mine.id}/status`, { token: acct.token, body: { status: 'bogus' } }), 422, 'validation_failed', 'the same status body on one\'s own order')
})

t.test('the order list: 30 per page, newest first, status filter, pagination edges', async (t) => {
  const store = createStore(db, acct.ownerId)
  const m = createMenu(db, store.id)
  const ids: number[] = []
  for (let i = 0; i < 33; i++) {
    const r = await postOrder(s, acct.token, store.id, { type: 'takeaway', items: [{ item_id: m.fries, quantity: 1 + (i % 3) }] })
    ids.push(r.body.id)
  }
  for (const id of ids.slice(0, 4)) await s.req('PUT', `/restaurants/${store.id}/orders/${id}/status`, { token: acct.token, body: { status: 'cancelled' } })

  const list = (q = '') => s.req('GET', `/restaurants/${store.id}/orders${q}`, { token: acct.token })
  const p1 = await list()
  t.equal(p1.status, 200)
  t.match(p1.body, { current_page: 1, last_page: 2, per_page: 30, total: 33 })
  t.equal(p1.body.data.length, 30)
  t.same(p1.body.data.map((o: { id: number }) => o.id), [...ids].reverse().slice(0, 30), 'newest first')
  t.ok(Array.isArray(p1.body.data[0].items) && p1.body.data[0].items.length === 1, 'list items are full orders with lines')
  const p2 = await list('?page=2')
  t.match(p2.body, { current_page: 2, last_page: 2, per_page: 30, total: 33 })
  t.same(p2.body.data.map((o: { id: number }) => o.id), [...ids].reverse().slice(30))
  const p9 = await list('?page=9')
  t.equal(p9.status, 200)
  t.same(p9.body, { data: [], current_page: 9, last_page: 2, per_page: 30, total: 33 }, 'beyond the last page: empty data, same envelope')

  const cancelled = await list('?status=cancelled')
  t.match(cancelled.body, { total: 4, last_page: 1 })
  t.same(cancelled.body.data.map((o: { id: number }) => o.id), ids.slice(0, 4).reverse())
  const fresh = await list('?status=new&page=2')
  t.match(fresh.body, { total: 29, current_page: 2, last_page: 1, data: [] })
  t.match((await list('?status=ready')).body, { total: 0, last_page: 1, data: [] }, 'an empty filter still has last_page 1')

  for (const q of ['?page=0', '?page=abc', '?status=nope']) isError(t, await list(q), 422, 'validation_failed', q)
})

t.test('the same contract holds with one transaction per write (GROUP_COMMIT=0)', async (t) => {
  const s0 = await startServer({ GROUP_COMMIT: '0', RATE_LIMIT_PER_MINUTE: '100000' })
  t.teardown(() => s0.close())
  t.equal(s0.app.svc.config.groupCommit, false)
  const a = createAccount(s0.app.svc.db)
  const rs = await Promise.all(Array.from({ length: 10 }, (_, i) => postOrder(s0, a.token, a.storeId, { type: 'takeaway', items: [{ item_id: a.menu.burger.id, quantity: 1, variation: a.menu.burger.double }] }, i < 2 ? { 'idempotency-key': 'k' } : {})))
  // Nine orders are created (200, api-v1 §4); the second request with the key is a replay (200 + Idempotent-Replayed) or in flight (409).
  const created = rs.filter((r) => r.status === 200 && r.headers.get('idempotent-replayed') === null)
  t.equal(created.length, 9)
  t.same(rs.filter((r) => !created.includes(r)).map((r) => [r.status, r.headers.get('idempotent-replayed')]), [rs.some((r) => r.status === 409) ? [409, null] : [200, 'true']])
  t.ok(created.every((r) => r.body.total === 15))
  const o = created[0]!.body
  const st = await s0.req('PUT', `/restaurants/${a.storeId}/orders/${o.id}/status`, { token: a.token, body: { status: 'ready' } })
  t.equal(st.status, 200)
  t.equal(outbox(s0.app.svc.db, 'order.created').length, 9)
  t.equal(outbox(s0.app.svc.db, 'order.status_changed').length, 1)
  t.equal(s0.app.svc.committer.stats.batches, s0.app.svc.committer.stats.writes, 'every write its own transaction')
})
