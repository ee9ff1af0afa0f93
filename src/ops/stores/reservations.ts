/**
 * Reservations (issue 17 item 4; api-v1 §4.2 `/reservations`; docs/operations.md "Reservations").
 * One operation per action for owner (capability `orders:read`/`orders:write`) and staff (permission
 * `orders`); the customer app has its own (own bookings only, every rule applies). The booking
 * rules are the store's `settings.reservations` (domain/reservations.ts); capacity is decided by the
 * store actor (actors/store-reservations.ts), one booking at a time, so a slot with three fitting
 * tables takes exactly three parties however many ask at once.
 */
import { keyCaller } from '../../domain/idempotency.ts'
import * as v from 'valibot'
import { defineOp, type OpCtx } from '../op.ts'
import { storeOf } from '../scope.ts'
import { Id, OrderLineInput, PageQuery, PaginatedSchema, pageOf, paginate } from '../schemas/common.ts'
import { named } from '../schemas/named.ts'
import { bookingRead, bookingWrite, tableView } from './tables.ts'
import { placeOrder } from '../orders/order-create.ts'
import { ApiError, notFound } from '../../errors.ts'
import { RESERVATION_STATUSES, availability, bookingErrors, rulesOf, slotStarts, type Booker, type BookingRules } from '../../domain/reservations.ts'
import { isDate, isoInZone, timeZoneOf, zonedInstant } from '../../domain/business-hours.ts'
import { normalizePhone } from '../../domain/delivery.ts'
import { nowIso } from '../../storage/db.ts'
import { parseSettings, type StoreRow } from '../../storage/stores.ts'
import { reservationReads, tableReads, type ReservationRow } from '../../storage/reservations.ts'
import type { BookingPatch } from '../../actors/store-reservations.ts'
import type { OrderView } from '../../storage/orders.ts'
import type { Services } from '../../services.ts'

const tag = 'Reservations'
const PER_PAGE = 30

// ---- input -----------------------------------------------------------------------------------------

export const IsoTime = v.pipe(v.string(), v.isoTimestamp('Use an ISO 8601 timestamp with offset, e.g. 2026-11-23T19:30:00+01:00.'))
/** A date (`YYYY-MM-DD`, the store's local day) or a timestamp with offset. */
const DateOrTime = v.pipe(v.string(), v.check((s) => isDate(s) || v.is(IsoTime, s), 'Use a date YYYY-MM-DD or an ISO 8601 timestamp with offset.'))
export const Phone = v.pipe(v.string(), v.maxLength(40), v.transform((s) => normalizePhone(s) ?? ''), v.minLength(1, 'Not a phone number.'))
const Email = v.pipe(v.string(), v.trim(), v.toLowerCase(), v.email(), v.maxLength(254))
export const Name = v.pipe(v.string(), v.trim(), v.minLength(1), v.maxLength(120))
export const Note = v.pipe(v.string(), v.trim(), v.maxLength(500))
export const Party = v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(1000))
const reservationId = { reservation_id: Id }

const bookingFields = {
  name: Name,
  phone: v.optional(v.nullable(Phone)),
  email: v.optional(v.nullable(Email)),
  party_size: Party,
  starts_at: IsoTime,
  /** Absent or null: the smallest free table that seats the party. */
  table_id: v.optional(v.nullable(Id)),
  note: v.optional(v.nullable(Note)),
}
const BookingBody = v.object(bookingFields)
const EditBody = v.object({ ...reservationId, ...v.partial(v.object(bookingFields)).entries })
const ListQuery = v.object({ ...PageQuery.entries, from: v.optional(DateOrTime), to: v.optional(DateOrTime), status: v.optional(v.picklist(RESERVATION_STATUSES)) })
export const AvailabilityQuery = v.object({
  date: v.pipe(v.string(), v.check((s) => isDate(s), 'Use a date YYYY-MM-DD.')),
  party_size: v.pipe(v.string(), v.regex(/^[1-9]\d{0,3}$/, 'party_size is a whole number of guests.'), v.transform(Number)),
})
const CancelBody = v.object({ ...reservationId, reason: v.optional(v.nullable(Note)) })
const SeatBody = v.object({ ...reservationId, table_id: v.optional(v.nullable(Id)), items: v.optional(v.pipe(v.array(OrderLineInput), v.maxLength(100))) })

// ---- output ----------------------------------------------------------------------------------------

export const ReservationSchema = {
  type: 'object',
  required: ['id', 'restaurant_id', 'table', 'name', 'party_size', 'starts_at', 'ends_at', 'status', 'source'],
  properties: {
    id: { type: 'integer' }, restaurant_id: { type: 'integer' },
    table: { type: ['object', 'null'], properties: { id: { type: 'integer' }, name: { type: 'string' }, capacity: { type: 'integer' }, kind: { type: 'string' } } },
    customer_id: { type: ['integer', 'null'], description: 'set when booked through the customer app' },
    name: { type: 'string' }, phone: { type: ['string', 'null'] }, email: { type: ['string', 'null'] }, party_size: { type: 'integer' },
    starts_at: { type: 'string', format: 'date-time', description: 'in the store\'s time zone' }, ends_at: { type: 'string', format: 'date-time' },
    status: { type: 'string', enum: [...RESERVATION_STATUSES] }, note: { type: ['string', 'null'] },
    source: { type: 'string', enum: ['owner', 'staff', 'customer'] }, order_id: { type: ['integer', 'null'], description: 'the on-table order opened when seated' },
    cancel_reason: { type: ['string', 'null'] }, cancelled_at: { type: ['string', 'null'] }, seated_at: { type: ['string', 'null'] },
    created_at: { type: 'string' }, updated_at: { type: 'string' },
  },
}
named('Reservation', ReservationSchema)

const AvailabilitySchema = {
  type: 'object', required: ['date', 'party_size', 'timezone', 'slot_minutes', 'duration_minutes', 'slots'],
  properties: {
    date: { type: 'string', format: 'date' }, party_size: { type: 'integer' }, timezone: { type: 'string' },
    slot_minutes: { type: 'integer' }, duration_minutes: { type: 'integer' },
    slots: { type: 'array', items: { type: 'object', properties: { starts_at: { type: 'string' }, ends_at: { type: 'string' }, free_tables: { type: 'integer' } } } },
  },
}

/** A reservation as the API shows it; times in the store's zone. */
export function reservationView(db: Services['db'], store: Pick<StoreRow, 'id' | 'settings'>, r: ReservationRow) {
  const tz = timeZoneOf(parseSettings(store.settings))
  const t = r.table_id === null ? undefined : tableReads.byId(db, store.id, r.table_id)
  const table = t ? (({ id, name, capacity, kind }) => ({ id, name, capacity, kind }))(tableView(t)) : null
  return {
    id: r.id, restaurant_id: r.store_id, table, customer_id: r.customer_id, name: r.name, phone: r.phone, email: r.email, party_size: r.party_size,
    starts_at: isoInZone(Date.parse(r.starts_at), tz), ends_at: isoInZone(Date.parse(r.ends_at), tz), status: r.status, note: r.note, source: r.source,
    order_id: r.order_id, cancel_reason: r.cancel_reason, cancelled_at: r.cancelled_at, seated_at: r.seated_at, created_at: r.created_at, updated_at: r.updated_at,
  }
}

// ---- shared steps ----------------------------------------------------------------------------------

const bookerOf = (ctx: OpCtx): Booker => (ctx.principal?.kind === 'staff' ? 'staff' : ctx.principal?.kind === 'customer' ? 'customer' : 'owner')

/** The rules' refusal of a start time (422 with field errors), for this booker; else the rules. */
function checkRules(store: StoreRow, booker: Booker, startsMs: number, party: number | null): BookingRules {
  const settings = parseSettings(store.settings)
  const rules = rulesOf(settings)
  const errors = bookingErrors(rules, settings, booker, startsMs, party, Date.now())
  if (errors) throw new ApiError('validation_failed', undefined, errors)
  return rules
}

/** A reservation of this store; anything else is a 404. */
function reservationIn(svc: Services, storeId: number, id: number): ReservationRow {
  const r = reservationReads.byId(svc.db, storeId, id)
  if (!r) throw notFound('reservation')
  return r
}

export interface BookingInput { name: string; phone?: string | null | undefined; email?: string | null | undefined; party_size: number; starts_at: string; table_id?: number | null | undefined; note?: string | null | undefined }

/** Check the rules, then ask the store actor to book (it picks or checks the table). */
export async function book(ctx: OpCtx, store: StoreRow, input: BookingInput, customerId: number | null): Promise<ReservationRow> {
  const booker = bookerOf(ctx)
  const startsMs = Date.parse(input.starts_at)
  const rules = checkRules(store, booker, startsMs, input.party_size)
  const booking = {
    store_id: store.id, table_id: input.table_id ?? null, customer_id: customerId, name: input.name, phone: input.phone ?? null, email: input.email ?? null,
    party_size: input.party_size, starts_at: nowIso(startsMs), ends_at: nowIso(startsMs + rules.duration_minutes * 60_000), note: input.note ?? null,
    source: booker, created_at: nowIso(),
  }
  return ctx.svc.actors.stores.ask<ReservationRow>(store.id, (replyTo) => ({ type: 'reservation_book', booking, replyTo }))
}

/** Move a booking to `to` through the store actor. */
export function move(ctx: OpCtx, storeId: number, reservationId: number, to: ReservationRow['status'], extra: { reason?: string | null; orderId?: number; tableId?: number | null; customerId?: number } = {}): Promise<ReservationRow> {
  return ctx.svc.actors.stores.ask<ReservationRow>(storeId, (replyTo) => ({ type: 'reservation_move', reservationId, to, by: bookerOf(ctx), ...extra, replyTo }))
}

/** Free slots of a local date for a party, as `booker` may book them. */
export function slotsFor(svc: Services, store: StoreRow, booker: Booker, date: string, party: number) {
  const settings = parseSettings(store.settings)
  const rules = rulesOf(settings)
  const tz = timeZoneOf(settings)
  const starts = party > rules.max_party_size ? [] : slotStarts(rules, settings, booker, date, Date.now())
  const from = zonedInstant(tz, date, 0)
  const to = from + 2 * 86_400_000 + rules.duration_minutes * 60_000
  const holds = reservationReads.holds(svc.db, store.id, nowIso(from), nowIso(to))
  const slots = availability(tableReads.list(svc.db, store.id), holds, starts, rules.duration_minutes, party, nowIso)
  return {
    date, party_size: party, timezone: tz, slot_minutes: rules.slot_minutes, duration_minutes: rules.duration_minutes,
    slots: slots.map((s) => ({ starts_at: isoInZone(s.starts_ms, tz), ends_at: isoInZone(s.ends_ms, tz), free_tables: s.free_tables })),
  }
}

/** `from`/`to` of a list query as UTC bounds: a date is the store's local day (`to` inclusive). */
function bounds(store: StoreRow, from?: string, to?: string): { from?: string; to?: string } {
  const tz = timeZoneOf(parseSettings(store.settings))
  const at = (s: string, endOfDay: boolean) => (isDate(s) ? zonedInstant(tz, endOfDay ? new Date(Date.parse(`${s}T00:00:00Z`) + 86_400_000).toISOString().slice(0, 10) : s, 0) : Date.parse(s))
  return { ...(from !== undefined ? { from: nowIso(at(from, false)) } : {}), ...(to !== undefined ? { to: nowIso(at(to, true)) } : {}) }
}

// ---- owner and staff -------------------------------------------------------------------------------

export const listReservations = defineOp({
  id: 'reservations.list', tag, summary: 'The store\'s reservations in start order (30 per page)', access: bookingRead, scope: ['store'], feature: 'reservations',
  description: 'Query `from`, `to` (a local date `YYYY-MM-DD`, `to` inclusive, or a timestamp with offset), `status`, `page`.',
  input: ListQuery, output: PaginatedSchema(ReservationSchema),
  run: (ctx, q) => {
    const store = storeOf(ctx)
    const page = pageOf(q)
    const { data, total } = reservationReads.page(ctx.svc.db, store.id, { ...bounds(store, q.from, q.to), ...(q.status ? { status: q.status } : {}) }, page, PER_PAGE)
    return paginate(data.map((r) => reservationView(ctx.svc.db, store, r)), page, PER_PAGE, total)
  },
})

export const createReservation = defineOp({
  id: 'reservations.create', tag, summary: 'Book a table', access: bookingWrite, scope: ['store'], feature: 'reservations',
  description: 'Body `{name, phone?, email?, party_size, starts_at, table_id?, note?}`. Without `table_id` the smallest free table that seats the party is taken; none free: 409 `no_table_available`. The store\'s booking rules apply (docs/operations.md), except lead time and business hours, which bind customers only.',
  input: BookingBody, output: ReservationSchema,
  run: async (ctx, input) => {
    const store = storeOf(ctx)
    return reservationView(ctx.svc.db, store, await book(ctx, store, input, null))
  },
})

export const getReservation = defineOp({
  id: 'reservations.get', tag, summary: 'One reservation', access: bookingRead, scope: ['store'], feature: 'reservations',
  input: v.object(reservationId), output: ReservationSchema,
  run: (ctx, { reservation_id }) => {
    const store = storeOf(ctx)
    return reservationView(ctx.svc.db, store, reservationIn(ctx.svc, store.id, reservation_id))
  },
})

export const updateReservation = defineOp({
  id: 'reservations.update', tag, summary: 'Change a booked reservation (keys left out stay)', access: bookingWrite, scope: ['store'], feature: 'reservations',
  description: 'A new `starts_at` keeps the booking\'s length; the table is kept when it still fits and is free, else the smallest free fitting one is taken (409 `no_table_available` when none). Only `booked` reservations change (422 `invalid_transition`).',
  input: EditBody, output: ReservationSchema,
  run: async (ctx, { reservation_id, ...input }) => {
    const store = storeOf(ctx)
    // 404 before the rules' 422; the store actor re-reads the row in its turn.
    const cur = reservationIn(ctx.svc, store.id, reservation_id)
    if (input.starts_at !== undefined || input.party_size !== undefined) {
      checkRules(store, bookerOf(ctx), Date.parse(input.starts_at ?? cur.starts_at), input.party_size ?? null)
    }
    const patch: BookingPatch = {
      ...(input.name !== undefined ? { name: input.name } : {}), ...(input.phone !== undefined ? { phone: input.phone } : {}),
      ...(input.email !== undefined ? { email: input.email } : {}), ...(input.party_size !== undefined ? { party_size: input.party_size } : {}),
      ...(input.starts_at !== undefined ? { starts_at: nowIso(Date.parse(input.starts_at)) } : {}), ...(input.table_id != null ? { table_id: input.table_id } : {}),
      ...(input.note !== undefined ? { note: input.note } : {}),
    }
    const row = await ctx.svc.actors.stores.ask<ReservationRow>(store.id, (replyTo) => ({ type: 'reservation_edit', reservationId: reservation_id, patch, replyTo }))
    return reservationView(ctx.svc.db, store, row)
  },
})

export const cancelReservation = defineOp({
  id: 'reservations.cancel', tag, summary: 'Cancel a booked reservation', access: bookingWrite, scope: ['store'], feature: 'reservations',
  description: 'Body `{reason?}`. Emits `reservation.cancelled`. Only a `booked` reservation can be cancelled (422 `invalid_transition`).',
  input: CancelBody, output: ReservationSchema,
  run: async (ctx, { reservation_id, reason }) => {
    const store = storeOf(ctx)
    return reservationView(ctx.svc.db, store, await move(ctx, store.id, reservation_id, 'cancelled', { reason: reason ?? null }))
  },
})

export const noShowReservation = defineOp({
  id: 'reservations.no_show', tag, summary: 'Mark a booked reservation as a no-show', access: bookingWrite, scope: ['store'], feature: 'reservations',
  input: v.object(reservationId), output: ReservationSchema,
  run: async (ctx, { reservation_id }) => {
    const store = storeOf(ctx)
    return reservationView(ctx.svc.db, store, await move(ctx, store.id, reservation_id, 'no_show'))
  },
})

export const seatReservation = defineOp({
  id: 'reservations.seat', tag, summary: 'Seat the party: opens an on-table order at its table', access: bookingWrite, scope: ['store'], feature: 'reservations',
  description: 'Body `{items?, table_id?}`: the order is created like any order (priced by the store actor, `order.created`), type `on-table`, the table\'s name as table number, the guest\'s name and phone, with `items` (may be empty). `table_id` seats the party at another free table. The reservation records `order_id`.',
  input: SeatBody, output: { ...ReservationSchema, properties: { ...ReservationSchema.properties, order: { type: 'object' } } },
  run: async (ctx, { reservation_id, table_id, items }) => {
    const store = storeOf(ctx)
    const r = reservationIn(ctx.svc, store.id, reservation_id)
    if (r.status !== 'booked') throw new ApiError('invalid_transition', `A ${r.status} reservation cannot be seated.`)
    const tid = table_id ?? r.table_id
    const table = tid === null ? undefined : tableReads.byId(ctx.svc.db, store.id, tid)
    if (!table) throw new ApiError('validation_failed', undefined, { table_id: ['Name the table to seat the party at.'] })
    const order: OrderView = (await placeOrder(ctx.svc, {
      storeId: store.id, caller: keyCaller.reservation(r.id), ignoreHours: true, customerId: r.customer_id,
      input: { type: 'on-table', table_number: table.name, customer_name: r.name, phone: r.phone, note: r.note, source: 'reservation', items: items ?? [] },
    })).value
    let seated: ReservationRow
    try {
      seated = await move(ctx, store.id, r.id, 'seated', { orderId: order.id, tableId: table.id })
    } catch (err) {
      // The order was opened before the store actor decided the seat (the status check above is
      // outside it): when a concurrent seat won, or the table was refused, this request's order is
      // not left open at the table — it is cancelled through its actor, then the refusal answers.
      await ctx.svc.actors.orders.ask(order.id, (replyTo) => ({ type: 'set_status', status: 'cancelled', replyTo })).catch(() => undefined)
      throw err
    }
    return { ...reservationView(ctx.svc.db, store, seated), order }
  },
})

export const reservationAvailability = defineOp({
  id: 'reservations.availability', tag, summary: 'Free slots of a day for a party size', access: bookingRead, scope: ['store'], feature: 'reservations',
  description: 'Query `date` (the store\'s local date) and `party_size`: every slot of the day on the store\'s grid with at least one free table that seats the party for the whole booking, with how many. Owner and staff see slots outside the hours and inside the lead time too.',
  input: AvailabilityQuery, output: AvailabilitySchema,
  run: (ctx, { date, party_size }) => slotsFor(ctx.svc, storeOf(ctx), bookerOf(ctx), date, party_size),
})

export const reservationOps = [listReservations, createReservation, getReservation, updateReservation, cancelReservation, noShowReservation, seatReservation, reservationAvailability]
