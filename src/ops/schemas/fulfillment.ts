/** Order input fields of the fulfillment modes (issue 18 item 5; docs/verticals.md "Fulfillment modes"). */
import * as v from 'valibot'
import { SLOT_KINDS, parseInstant } from '../../domain/fulfillment.ts'
import { hasAtMostTwoDecimals } from '../../domain/money.ts'

const Text = (max: number) => v.pipe(v.string(), v.trim(), v.minLength(1, 'Required.'), v.maxLength(max))
const Opt = <S extends v.GenericSchema>(s: S) => v.optional(v.nullable(s))

export const ShippingAddressInput = v.pipe(
  v.strictObject({
    name: Text(120),
    line1: Text(200),
    line2: Opt(v.pipe(v.string(), v.trim(), v.maxLength(200))),
    city: Text(100),
    postal_code: Text(20),
    country: v.pipe(v.string(), v.regex(/^[A-Za-z]{2}$/, 'Use an ISO 3166-1 alpha-2 country code, e.g. DE.'), v.toUpperCase()),
    phone: Opt(v.pipe(v.string(), v.trim(), v.maxLength(40))),
  }),
  v.description('`ship` orders: where the parcel goes. `country` is ISO 3166-1 alpha-2 (e.g. "DE").'),
)

const DateTime = (what: string) => v.pipe(v.string(), v.check((s) => parseInstant(s) !== null, 'Use an ISO 8601 date-time with an offset, e.g. 2026-05-04T10:00:00+02:00.'), v.description(what))

/** Spread into the create-order input (src/ops/schemas/common.ts). */
export const fulfillmentFields = {
  room_number: Opt(v.pipe(v.union([v.pipe(v.string(), v.maxLength(20)), v.pipe(v.number(), v.integer(), v.minValue(0))]), v.description('`room_service` orders (hotels): required, the guest\'s room.'))),
  shipping_address: Opt(ShippingAddressInput),
  slot_start: Opt(DateTime('`pickup_slot` orders: required, the start of a free slot on the store\'s grid (`GET /restaurants/{id}/pickup-slots`).')),
  slot_kind: Opt(v.pipe(v.picklist(SLOT_KINDS), v.description('`pickup_slot` orders: `pickup` (default: the customer collects, or laundry is collected from them) or `dropoff` (laundry brought back); each kind has its own capacity.'))),
  appointment_start: Opt(DateTime('`appointment` orders: required, the start; the duration and capacity come from the store\'s `appointments` settings (`GET /restaurants/{id}/appointment-slots`).')),
}

const Int = (min: number, max: number) => v.pipe(v.number(), v.integer(), v.minValue(min), v.maxValue(max))
const Amount = v.pipe(v.number(), v.minValue(0), v.maxValue(100_000), v.check(hasAtMostTwoDecimals, 'Use at most two decimals.'))
const Grid = {
  slot_minutes: Int(5, 480),
  capacity: Int(1, 1000),
  lead_minutes: v.optional(Int(0, 10_080)),
  days_ahead: v.optional(Int(1, 365)),
}

/** Store settings keys of the fulfillment modes (src/ops/stores/store-settings.ts; docs/stores.md). */
export const fulfillmentSettings = {
  shipping: v.optional(v.nullable(v.pipe(v.strictObject({ flat_fee: Amount, free_over: v.optional(v.nullable(Amount)) }),
    v.description('`ship` orders: `{flat_fee, free_over?}` — the fee added to the total, waived when the goods (after discount) reach `free_over`.')))),
  pickup_slots: v.optional(v.nullable(v.pipe(v.strictObject(Grid),
    v.description('`pickup_slot` orders: `{slot_minutes, capacity, lead_minutes?, days_ahead?}`; slots lie on the local grid inside business hours; each slot (and kind) takes `capacity` orders.')))),
  appointments: v.optional(v.nullable(v.pipe(v.strictObject({ ...Grid, duration_minutes: Int(5, 1440) }),
    v.description('`appointment` orders: `{duration_minutes, slot_minutes, capacity, lead_minutes?, days_ahead?}`; at most `capacity` appointments overlap at any moment.')))),
}
