/**
 * Store settings (issue 12 item 3; docs/stores.md): business hours with a time zone, holiday
 * closures, prep minutes, the accepting-orders switch, the public-listing opt-out, city and the
 * owner's contact data. Writes go through the store actor (`settings_write`): it checks orders
 * against the hours it holds, so it must hold what was written, and it replies once durable.
 */
import * as v from 'valibot'
import { defineOp } from '../op.ts'
import { storeOf } from '../scope.ts'
import { Nullable, ShortText } from '../schemas/common.ts'
import { WEEKDAYS, canonicalHours, isDate, isTimeZone, isoInZone, minutesOf, nextOpening, openStatus, DEFAULT_TIMEZONE, type WeeklyHours } from '../../domain/business-hours.ts'
import { basePrepMinutes } from '../../domain/integration.ts'
import { normalizePhone } from '../../domain/delivery.ts'
import { storePosition } from '../../actors/store-delivery.ts'
import { parseSettings, type StoreRow } from '../../storage/stores.ts'
import type { Services } from '../../services.ts'
import { named } from '../schemas/named.ts'
import { fulfillmentSettings } from '../schemas/fulfillment.ts'
import { BookingRulesInput, BookingRulesSchema } from './reservation-rules.ts'
import { rulesOf } from '../../domain/reservations.ts'
import { DISPATCH_LIMITS, DISPATCH_MODES, dispatchSettingsOf } from '../../domain/dispatch.ts'

const tag = 'Restaurants'
/** api-v1 §8-style bounds, chosen so a settings document stays small. */
export const SETTINGS_LIMITS = { intervalsPerDay: 6, holidays: 200, holidayDays: 366 } as const

// ---- input -----------------------------------------------------------------------------------------

const Time = v.pipe(v.string(), v.check((t) => minutesOf(t) !== null, 'Use HH:MM (00:00–23:59; 24:00 only as a closing time).'))
const IntervalInput = v.pipe(
  v.tuple([Time, Time]),
  v.check(([o, c]) => o !== c && o !== '24:00', 'An interval is [open, close] with open ≠ close; a close at or before the open runs overnight.'),
)
const DayInput = v.pipe(v.array(IntervalInput), v.maxLength(SETTINGS_LIMITS.intervalsPerDay, `At most ${SETTINGS_LIMITS.intervalsPerDay} intervals per day.`))
/** Canonical `{mon: [['11:00', '22:00']], …}`; the legacy `{mon_sun: '11:00-22:00'}` is accepted and stored canonical. */
const HoursInput = v.pipe(
  v.union([
    v.strictObject(Object.fromEntries(WEEKDAYS.map((d) => [d, v.optional(DayInput)])) as Record<(typeof WEEKDAYS)[number], v.OptionalSchema<typeof DayInput, undefined>>),
    v.record(v.string(), v.pipe(v.string(), v.maxLength(200))),
  ], 'Use {mon: [["11:00", "22:00"]], …} with weekdays mon…sun.'),
  v.transform((h) => canonicalHours(h)),
  v.check((h): h is WeeklyHours => h !== null, 'Use {mon: [["11:00", "22:00"]], …} with weekdays mon…sun (legacy {"mon_sun": "11:00-22:00"} is read too).'),
  v.transform((h) => fullWeek(h!)),
  v.description('Per weekday mon…sun, [open, close] intervals "HH:MM" in the store\'s time zone, e.g. {"mon": [["11:00", "14:30"], ["17:00", "22:00"]], "fri": [["18:00", "02:00"]]}; a close at or before the open runs overnight; a missing day is closed.'),
)
const DateInput = v.pipe(v.string(), v.check((d: string) => isDate(d), 'Use a date YYYY-MM-DD.'))
const spanDays = (from: string, to: string) => (Date.parse(to) - Date.parse(from)) / 86_400_000 + 1
const HolidayInput = v.pipe(
  v.strictObject({ date: v.optional(DateInput), from: v.optional(DateInput), to: v.optional(DateInput), note: Nullable(v.pipe(v.string(), v.trim(), v.maxLength(200))) }),
  v.check((h) => (h.date != null && h.from == null && h.to == null) || (h.date == null && h.from != null && h.to != null),
    'Send `date`, or `from` and `to`.'),
  v.check((h) => h.from == null || h.to == null || (h.from <= h.to && spanDays(h.from, h.to) <= SETTINGS_LIMITS.holidayDays),
    `\`from\` is on or before \`to\`, at most ${SETTINGS_LIMITS.holidayDays} days apart.`),
  v.transform((h) => ({ ...(h.date != null ? { date: h.date } : { from: h.from!, to: h.to! }), ...(h.note ? { note: h.note } : {}) })),
)
const HolidaysInput = v.pipe(v.array(HolidayInput), v.maxLength(SETTINGS_LIMITS.holidays, `At most ${SETTINGS_LIMITS.holidays} holidays.`),
  v.description('Closures, whole local dates: [{"date": "2026-12-25", "note": "Christmas"}, {"from": "2027-01-01", "to": "2027-01-03"}].'))
const TimeZoneInput = v.pipe(v.string(), v.check((tz: string) => isTimeZone(tz), 'Use an IANA time zone such as Europe/Berlin or America/New_York.'),
  v.description('IANA time zone, e.g. Europe/Berlin'))

const hoursFields = {
  timezone: Nullable(TimeZoneInput),
  holidays: Nullable(HolidaysInput),
}
const HoursBody = v.object({ business_hours: v.nullable(HoursInput), ...hoursFields })
const SettingsBody = v.object({
  business_hours: Nullable(HoursInput),
  ...hoursFields,
  prep_minutes: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(240))),
  accepting_orders: v.optional(v.boolean()),
  public_listing: v.optional(v.boolean()),
  address: Nullable(v.pipe(v.string(), v.trim(), v.maxLength(300))),
  phone: Nullable(v.pipe(v.string(), v.maxLength(40), v.transform((s) => normalizePhone(s) ?? ''), v.minLength(1, 'Not a phone number.'))),
  email: Nullable(v.pipe(v.string(), v.trim(), v.toLowerCase(), v.email(), v.maxLength(254))),
  city: Nullable(v.pipe(v.string(), v.trim(), v.minLength(1), v.maxLength(100))),
  // Where the store is, for the tracking page's map (docs/tracking-page.md); lat and lng together.
  reservations: Nullable(BookingRulesInput),
  location: Nullable(v.strictObject({ lat: v.pipe(v.number(), v.minValue(-90), v.maxValue(90)), lng: v.pipe(v.number(), v.minValue(-180), v.maxValue(180)) })),
  // Automatic dispatch (docs/dispatch.md "Policy"); keys left out take the defaults.
  dispatch: Nullable(v.pipe(v.strictObject({
    mode: v.optional(v.picklist(DISPATCH_MODES)),
    offer_seconds: v.optional(v.pipe(v.number(), v.integer(), v.minValue(DISPATCH_LIMITS.offerSeconds.min), v.maxValue(DISPATCH_LIMITS.offerSeconds.max))),
    max_active_per_driver: v.optional(v.pipe(v.number(), v.integer(), v.minValue(DISPATCH_LIMITS.maxActive.min), v.maxValue(DISPATCH_LIMITS.maxActive.max))),
    batch: v.optional(v.boolean()),
  }), v.forward(v.partialCheck([['batch'], ['max_active_per_driver']], (d) => d.batch !== true || (d.max_active_per_driver ?? 1) >= 2,
    'Batching needs max_active_per_driver of at least 2 (a driver carrying one order takes a second).'), ['batch']))),
  ...fulfillmentSettings,
})

/** All seven days, in order, a missing one as `[]` (closed), so a stored week reads unambiguously. */
function fullWeek(h: WeeklyHours): Record<string, Array<[string, string]>> {
  return Object.fromEntries(WEEKDAYS.map((d) => [d, h[d] ?? []]))
}

// ---- output ----------------------------------------------------------------------------------------

const Intervals = { type: 'array', items: { type: 'array', items: { type: 'string', pattern: '^\\d{2}:\\d{2}$' }, minItems: 2, maxItems: 2 } }
export const StoreSettingsSchema = {
  type: 'object',
  required: ['restaurant_id', 'timezone', 'business_hours', 'holidays', 'prep_minutes', 'accepting_orders', 'public_listing', 'address', 'phone', 'email', 'city', 'open_now', 'next_opening'],
  properties: {
    restaurant_id: { type: 'integer' },
    timezone: { type: 'string', description: 'IANA time zone the hours and holiday dates are in (default UTC)' },
    business_hours: {
      type: ['object', 'null'], description: 'Per weekday, [open, close] intervals; close at or before open runs overnight; null: no hours set, always open',
      properties: Object.fromEntries(WEEKDAYS.map((d) => [d, Intervals])),
    },
    holidays: { type: 'array', items: { type: 'object', properties: { date: { type: 'string', format: 'date' }, from: { type: 'string', format: 'date' }, to: { type: 'string', format: 'date' }, note: { type: 'string' } } } },
    prep_minutes: { type: 'integer' },
    accepting_orders: { type: 'boolean' },
    public_listing: { type: 'boolean', description: 'false hides the store from the public catalog' },
    address: { type: ['string', 'null'] },
    phone: { type: ['string', 'null'] },
    email: { type: ['string', 'null'] },
    city: { type: ['string', 'null'] },
    location: { type: ['object', 'null'], description: 'Where the store is (the tracking page shows it on the map)', properties: { lat: { type: 'number' }, lng: { type: 'number' } } },
    reservations: BookingRulesSchema,
    dispatch: {
      type: 'object', required: ['mode', 'offer_seconds', 'max_active_per_driver', 'batch'], description: 'Automatic dispatch (docs/dispatch.md "Policy")',
      properties: {
        mode: { type: 'string', enum: [...DISPATCH_MODES], description: '`manual` (default): people decide; `offer`: the best candidate is offered the order, then the next; `auto`: the best candidate is assigned' },
        offer_seconds: { type: 'integer', description: 'how long each offer stands (default 30)' },
        max_active_per_driver: { type: 'integer', description: 'a driver with this many active deliveries and open offers is not a candidate (default 1)' },
        batch: { type: 'boolean', description: 'a driver carrying orders of this store may take another when it adds at most 10 minutes to their route (docs/dispatch.md "Batching"; default false)' },
      },
    },
    open_now: { type: 'boolean', description: 'Would a storefront or customer order be accepted now?' },
    closed_reason: { type: ['string', 'null'], enum: ['hours', 'holiday', 'not_accepting', null] },
    next_opening: { type: ['string', 'null'], format: 'date-time', description: 'When closed: the next opening, ISO 8601 in the store\'s time zone (null when open or not known)' },
  },
}
named('StoreSettings', StoreSettingsSchema)

const str = (x: unknown): string | null => (typeof x === 'string' ? x : null)

/**
 * A store's hours as stored (canonical; a missing day left out), with whether it is open at `at`
 * and when it next opens: what the settings view and the storefront agent's hours both show.
 */
export function hoursStatus(s: Record<string, unknown>, at: Date) {
  const timezone = isTimeZone(s.timezone) ? s.timezone : DEFAULT_TIMEZONE
  const status = openStatus(s, at)
  const next = status.open ? null : nextOpening(s, at)
  return {
    timezone,
    business_hours: s.business_hours == null ? null : canonicalHours(s.business_hours),
    holidays: Array.isArray(s.holidays) ? (s.holidays as unknown[]) : [],
    accepting_orders: s.accepting_orders !== false,
    open_now: status.open,
    closed_reason: status.reason,
    next_opening: next && isoInZone(next.getTime(), timezone),
  }
}

/** The documented settings of a store, with whether it is open at `at`. */
export function settingsView(store: StoreRow, at: Date = new Date()) {
  const s = parseSettings(store.settings)
  const h = hoursStatus(s, at)
  return {
    restaurant_id: store.id,
    timezone: h.timezone,
    business_hours: h.business_hours && fullWeek(h.business_hours),
    holidays: h.holidays,
    prep_minutes: basePrepMinutes(store.settings),
    accepting_orders: h.accepting_orders,
    public_listing: s.public_listing !== false,
    address: str(s.address),
    phone: str(s.phone),
    email: str(s.email),
    city: store.city,
    location: storePosition(s),
    reservations: rulesOf(s),
    dispatch: dispatchSettingsOf(s),
    open_now: h.open_now,
    closed_reason: h.closed_reason,
    next_opening: h.next_opening,
  }
}

/** Send a settings patch through the store actor; the reply is the row as written. */
async function writeSettings(svc: Services, storeId: number, patch: Record<string, unknown>, city?: string | null): Promise<StoreRow> {
  return svc.actors.stores.ask<StoreRow>(storeId, (replyTo) => ({ type: 'settings_write', patch, city, replyTo }))
}

// ---- operations ------------------------------------------------------------------------------------

export const getStoreSettings = defineOp({
  id: 'stores.settings.get', tag, summary: 'The store\'s settings: hours, time zone, holidays, prep time, accepting orders, listing, contact',
  description: 'Also says whether the store is open now (`open_now`, `closed_reason`) and, when closed, `next_opening`. Keys and the hours format: docs/stores.md.',
  access: { owner: 'restaurants:read', staff: 'any' }, scope: ['store'], output: StoreSettingsSchema,
  run: (ctx) => settingsView(storeOf(ctx)),
})

export const updateStoreSettings = defineOp({
  id: 'stores.settings.update', tag, summary: 'Change some settings (keys left out stay; null clears one)',
  description: 'Body: any of `timezone` (IANA), `business_hours` (`{mon: [["11:00","22:00"]], …}`; null = always open), `holidays` (`[{date, note?} | {from, to, note?}]`), `prep_minutes` (1–240), `accepting_orders`, `public_listing`, `address`, `phone`, `email`, `city`, `location` (`{lat, lng}`), `reservations` (booking rules: docs/operations.md "Reservations"), `dispatch` (`{mode: manual|offer|auto, offer_seconds, max_active_per_driver, batch}`: docs/dispatch.md "Policy"; `batch: true` needs `max_active_per_driver` ≥ 2). Invalid input: 422 and nothing changes. Other keys of the store\'s settings (e.g. `driver_fee`) are kept.',
  access: { owner: 'restaurants:write' }, scope: ['store'], input: SettingsBody, output: StoreSettingsSchema,
  run: async (ctx, { city, ...patch }) => settingsView(await writeSettings(ctx.svc, storeOf(ctx).id, patch, city)),
})

export const updateBusinessHours = defineOp({
  id: 'stores.business_hours.update', tag, summary: 'Set the weekly business hours (and optionally the time zone and holidays)',
  description: 'Body `{business_hours, timezone?, holidays?}`; `business_hours: null` removes the hours (always open). Storefront and customer orders outside the hours are refused with 422 `store_closed`; the owner\'s own orders are not (docs/stores.md).',
  access: { owner: 'restaurants:write' }, scope: ['store'], input: HoursBody, output: StoreSettingsSchema,
  run: async (ctx, patch) => settingsView(await writeSettings(ctx.svc, storeOf(ctx).id, patch)),
})

export const storeSettingsOps = [getStoreSettings, updateStoreSettings, updateBusinessHours]
