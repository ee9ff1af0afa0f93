/**
 * Reservations for owner and staff (issue 17 item 4; docs/operations.md "Reservations"): tables with
 * capacities, no double booking beyond capacity even when ten parties ask at once, the booking
 * rules, cancel / no-show / seat (seating opens an on-table order at the table), the events at a
 * real webhook receiver, tenancy (another owner's store or reservation is a 404, also with a bad
 * body), staff permissions and the plan feature.
 */
import t from 'tap'
import { startServer } from './helpers/server.ts'
import { createAccount, createPlan, createStaff, outbox } from './helpers/fixtures.ts'
import { createEndpoint, startReceiver } from './helpers/webhook-receiver.ts'

const s = await startServer({ RATE_LIMIT_PER_MINUTE: '100000', WEBHOOK_ALLOW_LOOPBACK: '1' })
t.teardown(() => s.close())
const db = s.app.svc.db

const day = (n: number) => new Date(Date.now() + n * 86_400_000).toISOString().slice(0, 10)
const at = (n: number, hhmm: string) => `${day(n)}T${hhmm}:00Z`

async function ok(p: Promise<{ status: number; body: any; text: string }>, what = 'request') {
  const r = await p
  if (r.status !== 200) throw new Error(`${what}: ${r.status} ${r.text}`)
  return r.body
}

const a = createAccount(db)
const R = `/restaurants/${a.storeId}`
const addTable = (name: string, capacity: number) => ok(s.req('POST', `${R}/tables`, { token: a.token, body: { name, capacity } }), `table ${name}`)

t.test('tables: create, list, rename, kind by vertical, unique names', async (t) => {
  const t1 = await addTable('T1', 2)
  t.match(t1, { name: 'T1', capacity: 2, kind: 'table', active: true })
  const dup = await s.req('POST', `${R}/tables`, { token: a.token, body: { name: 't1', capacity: 4 } })
  t.equal(dup.status, 422, 'names are unique per store, case-insensitive')
  t.ok(dup.body.errors.name)
  const renamed = await ok(s.req('PUT', `${R}/tables/${t1.id}`, { token: a.token, body: { name: 'Window' } }))
  t.match(renamed, { id: t1.id, name: 'Window', capacity: 2 })
  const hotel = createAccount(db, { type: 'hotel' })
  const room = await ok(s.req('POST', `/restaurants/${hotel.storeId}/tables`, { token: hotel.token, body: { name: '101', capacity: 2 } }))
  t.equal(room.kind, 'room', 'a hotel books rooms')
  const list = await ok(s.req('GET', `${R}/tables`, { token: a.token }))
  t.ok(list.some((x: any) => x.id === t1.id))
  t.equal((await s.req('POST', `${R}/tables`, { token: a.token, body: { name: 'X', capacity: 0 } })).status, 422)
})

t.test('ten concurrent bookings for a slot with three fitting tables: exactly three succeed', async (t) => {
  const b = createAccount(db)
  const BR = `/restaurants/${b.storeId}`
  for (const [name, cap] of [['A', 4], ['B', 4], ['C', 6], ['Small', 2]] as const) await ok(s.req('POST', `${BR}/tables`, { token: b.token, body: { name, capacity: cap } }))
  const starts = at(3, '19:00')
  const tries = await Promise.all(Array.from({ length: 10 }, (_, i) =>
    s.req('POST', `${BR}/reservations`, { token: b.token, body: { name: `Party ${i}`, party_size: 3, starts_at: starts } })))
  const won = tries.filter((r) => r.status === 200)
  t.equal(won.length, 3, 'three tables seat 3')
  t.ok(tries.filter((r) => r.status !== 200).every((r) => r.status === 409 && r.body.code === 'no_table_available'), 'the rest: 409 no_table_available')
  t.same(new Set(won.map((r) => r.body.table.name)), new Set(['A', 'B', 'C']), 'each on its own table, never the 2-seater')
  // A booking that overlaps (starts 30 min later) finds none; one after the first ends finds one.
  t.equal((await s.req('POST', `${BR}/reservations`, { token: b.token, body: { name: 'Late', party_size: 2, starts_at: at(3, '19:30') } })).body.table?.name, 'Small')
  t.equal((await s.req('POST', `${BR}/reservations`, { token: b.token, body: { name: 'Later', party_size: 3, starts_at: at(3, '19:30') } })).status, 409)
  const after = await ok(s.req('POST', `${BR}/reservations`, { token: b.token, body: { name: 'After', party_size: 3, starts_at: at(3, '20:30') } }))
  t.equal(after.table.name, 'A', 'free again when the first booking ends (90 min)')
  // Availability agrees: 19:00 has no table for 3, 21:00 has some.
  const av = await ok(s.req('GET', `${BR}/reservations/availability?date=${day(3)}&party_size=3`, { token: b.token }))
  const slot = (hhmm: string) => av.slots.find((x: any) => x.starts_at.startsWith(`${day(3)}T${hhmm}`))
  t.notOk(slot('19:00'), '19:00 full')
  t.match(slot('22:00'), { free_tables: 3 })
  t.equal(av.slot_minutes, 30)
})

t.test('an explicit table: must fit and be free', async (t) => {
  const c = createAccount(db)
  const CR = `/restaurants/${c.storeId}`
  const small = await ok(s.req('POST', `${CR}/tables`, { token: c.token, body: { name: 'S', capacity: 2 } }))
  const big = await ok(s.req('POST', `${CR}/tables`, { token: c.token, body: { name: 'B', capacity: 8 } }))
  t.equal((await s.req('POST', `${CR}/reservations`, { token: c.token, body: { name: 'X', party_size: 4, starts_at: at(2, '12:00'), table_id: small.id } })).status, 409, 'too small')
  const r = await ok(s.req('POST', `${CR}/reservations`, { token: c.token, body: { name: 'X', party_size: 2, starts_at: at(2, '12:00'), table_id: big.id } }))
  t.equal(r.table.id, big.id)
  t.equal((await s.req('POST', `${CR}/reservations`, { token: c.token, body: { name: 'Y', party_size: 2, starts_at: at(2, '12:30'), table_id: big.id } })).status, 409, 'taken')
  // Delete a table with an upcoming booking: refused; after cancelling: fine.
  const del = await s.req('DELETE', `${CR}/tables/${big.id}`, { token: c.token })
  t.equal(del.status, 409)
  t.equal(del.body.code, 'table_has_bookings')
  await ok(s.req('POST', `${CR}/reservations/${r.id}/cancel`, { token: c.token, body: {} }))
  t.equal((await s.req('DELETE', `${CR}/tables/${big.id}`, { token: c.token })).status, 204)
  const kept = await ok(s.req('GET', `${CR}/reservations/${r.id}`, { token: c.token }))
  t.equal(kept.table, null, 'the past booking keeps its history, naming no table')
})

t.test('booking rules: party size, slot grid, days ahead, past; settings validated', async (t) => {
  const d = createAccount(db)
  const DR = `/restaurants/${d.storeId}`
  await ok(s.req('POST', `${DR}/tables`, { token: d.token, body: { name: 'T', capacity: 20 } }))
  const bad = await s.req('PUT', `${DR}/settings`, { token: d.token, body: { reservations: { slot_minutes: 2 } } })
  t.equal(bad.status, 422, 'out-of-bounds rule')
  t.equal((await s.req('PUT', `${DR}/settings`, { token: d.token, body: { reservations: { bogus: 1 } } })).status, 422, 'unknown rule key')
  const set = await ok(s.req('PUT', `${DR}/settings`, { token: d.token, body: { reservations: { max_party_size: 6, slot_minutes: 15, max_days_ahead: 10 } } }))
  t.match(set.reservations, { max_party_size: 6, slot_minutes: 15, max_days_ahead: 10, duration_minutes: 90, lead_minutes: 60, enabled: true })
  const book = (body: Record<string, unknown>) => s.req('POST', `${DR}/reservations`, { token: d.token, body: { name: 'Z', party_size: 2, starts_at: at(2, '18:00'), ...body } })
  const big = await book({ party_size: 7 })
  t.equal(big.status, 422)
  t.ok(big.body.errors.party_size)
  t.ok((await book({ starts_at: at(2, '18:10') })).body.errors?.starts_at, 'off the 15-minute grid')
  t.equal((await book({ starts_at: at(2, '18:15') })).status, 200, 'on the grid')
  t.ok((await book({ starts_at: at(11, '18:00') })).body.errors?.starts_at, 'more than 10 days ahead')
  t.ok((await book({ starts_at: at(-1, '18:00') })).body.errors?.starts_at, 'in the past')
  // The owner is not bound by the lead time (a walk-in in half an hour).
  const soon = new Date(Math.ceil((Date.now() + 20 * 60_000) / (15 * 60_000)) * 15 * 60_000).toISOString()
  t.equal((await book({ starts_at: soon })).status, 200, 'owner books inside the lead time')
  t.equal((await book({ starts_at: 'tomorrow' })).status, 422)
  t.equal((await book({ party_size: 0 })).status, 422)
})

t.test('cancel, no-show, update and seat (on-table order at the table); events at a real receiver', async (t) => {
  const e = createAccount(db)
  const ER = `/restaurants/${e.storeId}`
  const rcv = await startReceiver()
  t.teardown(() => rcv.close())
  await createEndpoint(s.base, e.token, rcv.url + '/hook', ['reservation.created', 'reservation.cancelled'])
  const t2 = await ok(s.req('POST', `${ER}/tables`, { token: e.token, body: { name: '12', capacity: 2 } }))
  const t4 = await ok(s.req('POST', `${ER}/tables`, { token: e.token, body: { name: '14', capacity: 4 } }))
  const r1 = await ok(s.req('POST', `${ER}/reservations`, { token: e.token, body: { name: 'Ada', phone: '+1 555 010 2000', party_size: 2, starts_at: at(2, '19:00'), note: 'window' } }))
  t.match(r1, { status: 'booked', source: 'owner', party_size: 2, table: { id: t2.id }, phone: '+15550102000' })

  const moved = await ok(s.req('PUT', `${ER}/reservations/${r1.id}`, { token: e.token, body: { party_size: 4 } }))
  t.equal(moved.table.id, t4.id, 'a larger party moves to a table that seats it')
  t.equal(moved.starts_at.slice(0, 16), at(2, '19:00').slice(0, 16))

  const r2 = await ok(s.req('POST', `${ER}/reservations`, { token: e.token, body: { name: 'Bob', party_size: 2, starts_at: at(2, '20:00') } }))
  const cancelled = await ok(s.req('POST', `${ER}/reservations/${r2.id}/cancel`, { token: e.token, body: { reason: 'ill' } }))
  t.match(cancelled, { status: 'cancelled', cancel_reason: 'ill' })
  const again = await s.req('POST', `${ER}/reservations/${r2.id}/cancel`, { token: e.token, body: {} })
  t.equal(again.status, 422)
  t.match(again.body, { code: 'validation_failed', reason: 'invalid_transition' })
  t.match((await s.req('PUT', `${ER}/reservations/${r2.id}`, { token: e.token, body: { name: 'x' } })).body, { code: 'validation_failed', reason: 'invalid_transition' })

  const r3 = await ok(s.req('POST', `${ER}/reservations`, { token: e.token, body: { name: 'Cy', party_size: 1, starts_at: at(2, '12:00') } }))
  t.match(await ok(s.req('POST', `${ER}/reservations/${r3.id}/no-show`, { token: e.token, body: {} })), { status: 'no_show' })

  const seated = await ok(s.req('POST', `${ER}/reservations/${r1.id}/seat`, { token: e.token, body: { items: [{ item_id: e.menu.fries, quantity: 2 }] } }))
  t.equal(seated.status, 'seated')
  t.equal(seated.order.type, 'on-table')
  t.equal(seated.order.table_number, '14', 'the order is at the reservation\'s table')
  t.equal(seated.order_id, seated.order.id)
  const order = await ok(s.req('GET', `${ER}/orders/${seated.order_id}`, { token: e.token }))
  t.match(order, { type: 'on-table', table_number: '14', customer_name: 'Ada', total: 6 })
  t.match((await s.req('POST', `${ER}/reservations/${r1.id}/seat`, { token: e.token, body: {} })).body, { code: 'validation_failed', reason: 'invalid_transition' }, 'seated once')

  const list = await ok(s.req('GET', `${ER}/reservations?from=${day(2)}&to=${day(2)}`, { token: e.token }))
  t.equal(list.total, 3)
  t.match(list, { current_page: 1, per_page: 30, last_page: 1 })
  t.same(list.data.map((x: any) => x.id), [r3.id, r1.id, r2.id], 'in start order')
  t.equal((await ok(s.req('GET', `${ER}/reservations?status=cancelled`, { token: e.token }))).total, 1)
  t.equal((await ok(s.req('GET', `${ER}/reservations?from=${day(3)}`, { token: e.token }))).total, 0)
  t.equal((await s.req('GET', `${ER}/reservations?status=gone`, { token: e.token })).status, 422)

  await rcv.until((all) => all.filter((x) => x.body.event === 'reservation.created').length === 3 && all.some((x) => x.body.event === 'reservation.cancelled'), 10_000, 'reservation events')
  const created = rcv.of('reservation.created').map((x) => x.body.data)
  t.match(created.find((x: any) => x.reservation_id === r1.id), { restaurant_id: e.storeId, party_size: 2, guest_name: 'Ada', source: 'owner', table_id: t2.id })
  t.match(rcv.of('reservation.cancelled')[0]!.body.data, { reservation_id: r2.id, restaurant_id: e.storeId, reason: 'ill', source: 'owner' })
  t.equal(rcv.of('reservation.cancelled').length, 1, 'a refused second cancel emits nothing')
  t.equal(outbox(db, 'reservation.cancelled').filter((x) => x.store_id === e.storeId).length, 1)
})

t.test('another owner\'s store or reservation: 404, also with an invalid body', async (t) => {
  const mine = createAccount(db)
  const theirs = createAccount(db)
  await ok(s.req('POST', `/restaurants/${theirs.storeId}/tables`, { token: theirs.token, body: { name: 'T', capacity: 4 } }))
  const r = await ok(s.req('POST', `/restaurants/${theirs.storeId}/reservations`, { token: theirs.token, body: { name: 'Q', party_size: 2, starts_at: at(2, '19:00') } }))
  for (const [m, p, body] of [
    ['GET', `/restaurants/${theirs.storeId}/reservations`, undefined],
    ['POST', `/restaurants/${theirs.storeId}/reservations`, { party_size: 'x' }],
    ['GET', `/restaurants/${theirs.storeId}/tables`, undefined],
    ['POST', `/restaurants/${theirs.storeId}/reservations/${r.id}/cancel`, { reason: 5 }],
  ] as const) {
    const res = await s.req(m, p, { token: mine.token, ...(body ? { body } : {}) })
    t.equal(res.status, 404, `${m} ${p}`)
    t.equal(res.body.code, 'not_found')
  }
  // Their reservation id under my store: 404, and still booked.
  await ok(s.req('POST', `/restaurants/${mine.storeId}/tables`, { token: mine.token, body: { name: 'T', capacity: 4 } }))
  for (const p of [`/reservations/${r.id}/cancel`, `/reservations/${r.id}/seat`, `/reservations/${r.id}/no-show`]) {
    t.equal((await s.req('POST', `/restaurants/${mine.storeId}${p}`, { token: mine.token, body: {} })).status, 404, p)
  }
  t.equal((await s.req('GET', `/restaurants/${mine.storeId}/reservations/${r.id}`, { token: mine.token })).status, 404)
  t.equal((await ok(s.req('GET', `/restaurants/${theirs.storeId}/reservations/${r.id}`, { token: theirs.token }))).status, 'booked')
})

t.test('staff: permission orders books in their own store; without it 403', async (t) => {
  const f = createAccount(db)
  const manager = createStaff(db, f.storeId)
  const noOrders = createStaff(db, f.storeId, { role: 'waiter', permissions: { revoke: ['orders'] } })
  const tb = await ok(s.req('POST', '/staff/tables', { token: manager.token, body: { name: 'S1', capacity: 4 } }))
  const r = await ok(s.req('POST', '/staff/reservations', { token: manager.token, body: { name: 'Walk', party_size: 3, starts_at: at(1, '13:00') } }))
  t.match(r, { source: 'staff', restaurant_id: f.storeId, table: { id: tb.id } })
  t.equal((await ok(s.req('GET', '/staff/reservations', { token: manager.token }))).total, 1)
  t.equal((await ok(s.req('GET', `/staff/reservations/${r.id}`, { token: manager.token }))).id, r.id)
  for (const [m, p] of [['GET', '/staff/reservations'], ['POST', '/staff/reservations'], ['GET', '/staff/tables'], ['POST', `/staff/reservations/${r.id}/cancel`]] as const) {
    const res = await s.req(m, p, { token: noOrders.token, body: m === 'POST' ? {} : undefined })
    t.equal(res.status, 403, `${m} ${p}`)
    t.equal(res.body.code, 'forbidden')
  }
  // Another store's staff do not see it.
  const g = createAccount(db)
  const otherStaff = createStaff(db, g.storeId)
  t.equal((await s.req('GET', `/staff/reservations/${r.id}`, { token: otherStaff.token })).status, 404)
  t.equal((await s.req('POST', `/staff/reservations/${r.id}/cancel`, { token: otherStaff.token, body: {} })).status, 404)
})

t.test('a plan without reservations: 403 feature_not_in_plan', async (t) => {
  const plan = createPlan(db, ['kds', 'analytics'])
  const h = createAccount(db, { plan })
  for (const [m, p] of [['GET', `/restaurants/${h.storeId}/reservations`], ['POST', `/restaurants/${h.storeId}/tables`]] as const) {
    const res = await s.req(m, p, { token: h.token, body: m === 'POST' ? { name: 'T', capacity: 2 } : undefined })
    t.equal(res.status, 403, `${m} ${p}`)
    t.match(res.body, { code: 'forbidden', reason: 'feature_not_in_plan' })
  }
})

t.test('two seats of one booking at once: one wins, the loser\'s order is not left open (review fix)', async (t) => {
  const e = createAccount(db)
  const ER = `/restaurants/${e.storeId}`
  await ok(s.req('POST', `${ER}/tables`, { token: e.token, body: { name: '21', capacity: 2 } }))
  const r4 = await ok(s.req('POST', `${ER}/reservations`, { token: e.token, body: { name: 'Di', party_size: 2, starts_at: at(2, '13:00') } }))
  const seats = await Promise.all([1, 2].map(() => s.req('POST', `${ER}/reservations/${r4.id}/seat`, { token: e.token, body: {} })))
  t.same(seats.map((x) => x.status).sort(), [200, 422], 'one seat wins')
  const won = seats.find((x) => x.status === 200)!.body
  const open = db.prepare("SELECT id FROM orders WHERE store_id = ? AND status != 'cancelled'").pluck().all(e.storeId)
  t.same(open, [won.order_id], 'only the winner\'s order stays open at the table')
})
