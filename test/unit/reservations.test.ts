/**
 * The pure parts of reservations (domain/reservations.ts, actors/store-reservations.ts): rules with
 * defaults, who is bound by which rule, fitting free tables (smallest first), slots, transitions,
 * and the store actor's decisions without I/O.
 */
import t from 'tap'
import { DEFAULT_RULES, availability, bookingErrors, canMove, freeTables, rulesOf, slotStarts, tableKindOf, type Hold } from '../../src/domain/reservations.ts'
import { reduceReservation, type ReservationCtx } from '../../src/actors/store-reservations.ts'
import type { ReservationRow, TableRow } from '../../src/storage/reservations.ts'

const iso = (s: string) => new Date(s).toISOString().replace('Z', '+00:00')
const NOW = Date.parse('2030-06-10T12:00:00Z')
const table = (id: number, capacity: number, active = 1): TableRow => ({ id, store_id: 1, name: `T${id}`, capacity, kind: 'table', active, created_at: '', updated_at: '' })
const hold = (id: number, tableId: number, from: string, to: string): Hold => ({ id, table_id: tableId, starts_at: iso(from), ends_at: iso(to) })

t.test('rules: defaults, bounds, kind by vertical', async (t) => {
  t.same(rulesOf({}), DEFAULT_RULES)
  t.match(rulesOf({ reservations: { slot_minutes: 15, max_party_size: 0, enabled: false, lead_minutes: 'x' } }), { slot_minutes: 15, max_party_size: 12, enabled: false, lead_minutes: 60 })
  t.equal(tableKindOf('stays'), 'room')
  t.equal(tableKindOf('food'), 'table')
})

t.test('who is bound by which rule', async (t) => {
  const rules = { ...DEFAULT_RULES, lead_minutes: 120 }
  const hours = { business_hours: { mon: [['11:00', '22:00']], tue: [['11:00', '22:00']] } }
  const inAnHour = NOW + 60 * 60_000
  t.ok(bookingErrors(rules, {}, 'customer', inAnHour, 2, NOW)?.starts_at, 'customers: lead time')
  t.equal(bookingErrors(rules, {}, 'owner', inAnHour, 2, NOW), null, 'owner: no lead time')
  t.equal(bookingErrors(rules, {}, 'staff', inAnHour, 2, NOW), null, 'staff: no lead time')
  const tueMorning = Date.parse('2030-06-11T09:00:00Z') // a Tuesday
  t.match(bookingErrors(rules, hours, 'customer', tueMorning, 2, NOW)?.starts_at, [/closed/], 'customers: hours')
  t.equal(bookingErrors(rules, hours, 'owner', tueMorning, 2, NOW), null, 'owner: not bound by hours')
  t.equal(bookingErrors(rules, { ...hours, accepting_orders: false }, 'customer', Date.parse('2030-06-11T19:00:00Z'), 2, NOW), null, 'the accepting-orders switch is about orders now')
  t.ok(bookingErrors(rules, {}, 'owner', Date.parse('2030-06-11T19:10:00Z'), 2, NOW)?.starts_at, 'everyone: the slot grid')
  t.ok(bookingErrors(rules, {}, 'owner', NOW + 61 * 86_400_000, 2, NOW)?.starts_at, 'everyone: max days ahead')
  t.ok(bookingErrors(rules, {}, 'owner', Date.parse('2030-06-11T19:00:00Z'), 13, NOW)?.party_size, 'everyone: party size')
  t.ok(bookingErrors(rules, {}, 'owner', NOW - 60 * 60_000, 2, NOW)?.starts_at, 'nobody books the past')
  t.equal(bookingErrors(rules, { timezone: 'Asia/Kolkata' }, 'owner', Date.parse('2030-06-11T13:30:00Z'), 2, NOW), null, 'the grid is local: 19:00 in +05:30')
})

t.test('fitting free tables: smallest first, overlaps block, touching does not', async (t) => {
  const tables = [table(1, 6), table(2, 2), table(3, 4), table(4, 4), table(5, 8, 0)]
  const holds = [hold(10, 3, '2030-06-11T19:00:00Z', '2030-06-11T20:30:00Z')]
  const from = iso('2030-06-11T20:00:00Z'); const to = iso('2030-06-11T21:30:00Z')
  t.same(freeTables(tables, holds, from, to, 3).map((x) => x.id), [4, 1], 'table 3 is held, 2 too small, 5 inactive')
  t.same(freeTables(tables, holds, iso('2030-06-11T20:30:00Z'), iso('2030-06-11T22:00:00Z'), 3).map((x) => x.id), [3, 4, 1], 'a booking ending at 20:30 frees the table at 20:30')
  t.same(freeTables(tables, holds, from, to, 3, 10).map((x) => x.id), [3, 4, 1], 'a moved booking does not block itself')
})

t.test('slots and availability', async (t) => {
  const rules = { ...DEFAULT_RULES, slot_minutes: 60 }
  const starts = slotStarts(rules, { business_hours: { tue: [['18:00', '21:00']] } }, 'customer', '2030-06-11', NOW)
  t.same(starts.map((ms) => new Date(ms).toISOString().slice(11, 16)), ['18:00', '19:00', '20:00'])
  t.equal(slotStarts(rules, {}, 'owner', '2030-06-11', NOW).length, 24)
  const u = (ms: number) => new Date(ms).toISOString().replace('Z', '+00:00')
  const slots = availability([table(1, 4)], [hold(1, 1, '2030-06-11T19:00:00Z', '2030-06-11T20:30:00Z')], starts, 90, 2, u)
  t.same(slots.map((x) => new Date(x.starts_ms).toISOString().slice(11, 16)), [], 'each slot overlaps the held booking')
})

t.test('transitions', async (t) => {
  t.ok(canMove('booked', 'seated'))
  t.ok(canMove('booked', 'cancelled'))
  t.ok(canMove('booked', 'no_show'))
  t.ok(canMove('seated', 'completed'))
  t.notOk(canMove('cancelled', 'booked'))
  t.notOk(canMove('seated', 'cancelled'))
})

const booking = (table_id: number | null, from = '2030-06-11T19:00:00Z', to = '2030-06-11T20:30:00Z') => ({
  store_id: 1, table_id, customer_id: null, name: 'A', phone: null, email: null, party_size: 3, starts_at: iso(from), ends_at: iso(to), note: null, source: 'owner' as const, created_at: '',
})
const row = (over: Partial<ReservationRow> = {}): ReservationRow => ({
  ...booking(3), id: 9, status: 'booked', order_id: null, cancel_reason: null, cancelled_at: null, seated_at: null, updated_at: '', ...over,
})
const noop = (() => undefined) as never

t.test('the store actor\'s decisions', async (t) => {
  const ctx: ReservationCtx = { tables: [table(2, 2), table(3, 4), table(4, 6)], holds: [] }
  t.match(reduceReservation({ type: 'reservation_book', booking: booking(null), replyTo: noop }, ctx), { ok: true, effect: { kind: 'reservation_insert', row: { table_id: 3 } } }, 'smallest fitting')
  const full = { ...ctx, holds: [hold(1, 3, '2030-06-11T19:00:00Z', '2030-06-11T20:30:00Z'), hold(2, 4, '2030-06-11T18:00:00Z', '2030-06-11T19:30:00Z')] }
  t.match(reduceReservation({ type: 'reservation_book', booking: booking(null), replyTo: noop }, full), { ok: false, error: { code: 'no_table_available' } })
  t.match(reduceReservation({ type: 'reservation_book', booking: booking(2), replyTo: noop }, ctx), { ok: false, error: { code: 'no_table_available' } }, 'named table too small')
  t.match(reduceReservation({ type: 'reservation_move', reservationId: 9, to: 'cancelled', by: 'customer', customerId: 5, replyTo: noop }, { ...ctx, current: row({ customer_id: 6 }) }), { ok: false, error: { code: 'not_found' } }, 'another customer\'s')
  t.match(reduceReservation({ type: 'reservation_move', reservationId: 9, to: 'cancelled', by: 'owner', replyTo: noop }, { ...ctx, current: row({ status: 'seated' }) }), { ok: false, error: { code: 'invalid_transition' } })
  t.match(reduceReservation({ type: 'reservation_edit', reservationId: 9, patch: { party_size: 5 }, replyTo: noop }, { ...ctx, current: row() }), { ok: true, effect: { kind: 'reservation_edit', edit: { table_id: 4, party_size: 5 } } }, 'a larger party moves')
  t.match(reduceReservation({ type: 'reservation_edit', reservationId: 9, patch: { starts_at: iso('2030-06-11T21:00:00Z') }, replyTo: noop }, { ...ctx, current: row() }), { ok: true, effect: { edit: { table_id: 3, ends_at: iso('2030-06-11T22:30:00Z') } } }, 'a moved booking keeps its length and table')
  t.match(reduceReservation({ type: 'table_write', op: { kind: 'delete', tableId: 3 }, replyTo: noop }, { ...ctx, upcoming: 1 }), { ok: false, error: { code: 'table_has_bookings' } })
  t.match(reduceReservation({ type: 'table_write', op: { kind: 'delete', tableId: 99 }, replyTo: noop }, ctx), { ok: false, error: { code: 'not_found' } })
})
