/**
 * The customer app's bookings (issue 17 item 4; docs/operations.md "Reservations"): a signed-in
 * customer books, lists and cancels their own reservations at their store. Identity comes only
 * from the token (api-v1 §4.5): another customer's reservation is a 404. Every booking rule binds
 * customers: `enabled`, lead time, business hours, days ahead, party size.
 */
import * as v from 'valibot'
import { defineOp } from '../op.ts'
import { customerOf, storeOf } from '../scope.ts'
import { Id, PageQuery, PaginatedSchema, pageOf, paginate } from '../schemas/common.ts'
import { AvailabilityQuery, IsoTime, Name, Note, Party, Phone, ReservationSchema, book, move, reservationView, slotsFor } from '../stores/reservations.ts'
import { ApiError } from '../../errors.ts'
import { rulesOf } from '../../domain/reservations.ts'
import { parseSettings } from '../../storage/stores.ts'
import { customers } from '../../storage/customers.ts'
import { reservationReads } from '../../storage/reservations.ts'

const tag = 'Customer app'
const access = { customer: true } as const
const PER_PAGE = 30

const Body = v.object({
  party_size: Party,
  starts_at: IsoTime,
  /** Default: the profile's name and phone. */
  name: v.optional(Name),
  phone: v.optional(Phone),
  note: v.optional(v.nullable(Note)),
})

export const listMyReservations = defineOp({
  id: 'customer.reservations.list', tag, summary: 'Own reservations, latest start first (30 per page)', access, scope: ['store'], feature: 'reservations',
  input: PageQuery, output: PaginatedSchema(ReservationSchema),
  run: (ctx, q) => {
    const me = customerOf(ctx)
    const store = storeOf(ctx)
    const page = pageOf(q)
    const { data, total } = reservationReads.page(ctx.svc.db, store.id, { customerId: me.customerId }, page, PER_PAGE)
    return paginate(data.map((r) => reservationView(ctx.svc.db, store, r)), page, PER_PAGE, total)
  },
})

export const createMyReservation = defineOp({
  id: 'customer.reservations.create', tag, summary: 'Book a table as the signed-in customer', access, scope: ['store'], feature: 'reservations',
  description: 'Body `{party_size, starts_at, name?, phone?, note?}`; name and phone default to the profile. The store picks the table. Refused: 422 `bookings_disabled` when the store takes no bookings through the app, 422 `validation_failed` for the rules (lead time, hours, days ahead, party size, slot grid), 409 `no_table_available`.',
  input: Body, output: ReservationSchema,
  run: async (ctx, input) => {
    const me = customerOf(ctx)
    const store = storeOf(ctx)
    if (!rulesOf(parseSettings(store.settings)).enabled) throw new ApiError('bookings_disabled')
    const profile = customers.byId(ctx.svc.db, me.customerId)
    const name = input.name ?? profile?.name ?? null
    if (!name) throw new ApiError('validation_failed', undefined, { name: ['Give a name for the booking (the profile has none).'] })
    const row = await book(ctx, store, { name, phone: input.phone ?? profile?.phone ?? null, email: profile?.email ?? null, party_size: input.party_size, starts_at: input.starts_at, note: input.note ?? null }, me.customerId)
    return reservationView(ctx.svc.db, store, row)
  },
})

export const cancelMyReservation = defineOp({
  id: 'customer.reservations.cancel', tag, summary: 'Cancel an own booked reservation', access, scope: ['store'], feature: 'reservations',
  description: 'Body `{reason?}`. Another customer\'s reservation is a 404. Emits `reservation.cancelled` with `source: customer`.',
  input: v.object({ reservation_id: Id, reason: v.optional(v.nullable(Note)) }), output: ReservationSchema,
  run: async (ctx, { reservation_id, reason }) => {
    const me = customerOf(ctx)
    const store = storeOf(ctx)
    // The store actor answers 404 for a reservation that is not this customer's (customerId).
    return reservationView(ctx.svc.db, store, await move(ctx, store.id, reservation_id, 'cancelled', { reason: reason ?? null, customerId: me.customerId }))
  },
})

export const myAvailability = defineOp({
  id: 'customer.reservations.availability', tag, summary: 'Free slots of a day for a party size', access, scope: ['store'], feature: 'reservations',
  description: 'Query `date` (the store\'s local date) and `party_size`. Only slots a customer may book: inside the hours, after the lead time.',
  input: AvailabilityQuery,
  run: (ctx, { date, party_size }) => {
    customerOf(ctx)
    const store = storeOf(ctx)
    if (!rulesOf(parseSettings(store.settings)).enabled) throw new ApiError('bookings_disabled')
    return slotsFor(ctx.svc, store, 'customer', date, party_size)
  },
})

export const customerReservationOps = [listMyReservations, createMyReservation, cancelMyReservation, myAvailability]
