/**
 * Reservations, pure (issue 17 item 4; docs/operations.md "Reservations"): a store's booking rules,
 * which start times a booker may choose, which tables fit a party and are free, and the states a
 * booking moves through. No I/O and no clock: callers pass `now`.
 *
 * Capacity model: a table (or a hotel room) holds one booking at a time. A booking holds its table
 * from `starts_at` to `ends_at` while it is `booked` or `seated`; a party fits a table whose
 * capacity is at least the party size. Auto-assignment takes the smallest fitting free table
 * (then the lowest id), so large tables stay free for large parties.
 */
import type { FieldErrors } from '../errors.ts'
import { isoInZone, openStatus, timeZoneOf, zonedInstant, type HoursSettings } from './business-hours.ts'

export const RESERVATION_STATUSES = ['booked', 'seated', 'completed', 'cancelled', 'no_show'] as const
export type ReservationStatus = (typeof RESERVATION_STATUSES)[number]
/** Who made (or changes) a booking: the front door's family. The events carry it as `source`. */
export const BOOKERS = ['owner', 'staff', 'customer'] as const
export type Booker = (typeof BOOKERS)[number]
export type TableKind = 'table' | 'room'

/** The store's booking rules: `settings.reservations` (docs/stores.md), every key with a default. */
export interface BookingRules {
  /** false: customers cannot book (owner and staff still can, e.g. a phone booking). */
  enabled: boolean
  /** Start times lie on this grid, counted from the store's local midnight. */
  slot_minutes: number
  /** How long a booking holds its table. */
  duration_minutes: number
  /** Customers book at least this far ahead; owner and staff are not bound by it. */
  lead_minutes: number
  /** Nobody books further ahead than this. */
  max_days_ahead: number
  /** Nobody books for a larger party (a larger group is arranged by the store another way). */
  max_party_size: number
}

export const DEFAULT_RULES: Readonly<BookingRules> = Object.freeze({
  enabled: true, slot_minutes: 30, duration_minutes: 90, lead_minutes: 60, max_days_ahead: 60, max_party_size: 12,
})

/** Inclusive bounds of the numeric rules (a room booked for nights: duration up to 30 days). */
export const RULE_BOUNDS = {
  slot_minutes: [5, 1440], duration_minutes: [15, 43_200], lead_minutes: [0, 43_200], max_days_ahead: [1, 365], max_party_size: [1, 1000],
} as const satisfies Record<Exclude<keyof BookingRules, 'enabled'>, readonly [number, number]>

const MIN_MS = 60_000
const DAY_MS = 86_400_000

/** The rules in a store's settings; missing or out-of-bounds keys read as their defaults. */
export function rulesOf(settings: Record<string, unknown>): BookingRules {
  const raw = (settings.reservations && typeof settings.reservations === 'object' ? settings.reservations : {}) as Record<string, unknown>
  const rules: BookingRules = { ...DEFAULT_RULES, enabled: typeof raw.enabled === 'boolean' ? raw.enabled : DEFAULT_RULES.enabled }
  for (const [k, [lo, hi]] of Object.entries(RULE_BOUNDS) as Array<[keyof typeof RULE_BOUNDS, readonly [number, number]]>) {
    const x = raw[k]
    if (typeof x === 'number' && Number.isInteger(x) && x >= lo && x <= hi) rules[k] = x
  }
  return rules
}

/** The table kind a store's bookable places have: rooms for stays (hotels), tables otherwise. */
export const tableKindOf = (group: string): TableKind => (group === 'stays' ? 'room' : 'table')

/** Minutes since the local midnight of `ms` in `tz` (seconds must be zero to be on a grid). */
function localMinutes(ms: number, tz: string): { minutes: number; onMinute: boolean } {
  const iso = isoInZone(ms, tz)
  return { minutes: Number(iso.slice(11, 13)) * 60 + Number(iso.slice(14, 16)), onMinute: ms % MIN_MS === 0 }
}

/**
 * Why `booker` may not start a booking of `party` at `startsMs` (field errors), or null when the
 * rules allow it. Everyone: the slot grid, `max_days_ahead`, `max_party_size`, not in the past (a
 * walk-in in the current slot is fine). Customers only: `lead_minutes` and the business hours
 * (holidays included; the accepting-orders switch is about orders now, not future bookings) —
 * the owner's own bookings are not bound by hours, as the owner's own orders (docs/stores.md).
 */
export function bookingErrors(rules: BookingRules, settings: HoursSettings, booker: Booker, startsMs: number, party: number | null, nowMs: number): FieldErrors | null {
  const errors: FieldErrors = {}
  const add = (k: string, m: string) => { (errors[k] ??= []).push(m) }
  const tz = timeZoneOf(settings)
  const { minutes, onMinute } = localMinutes(startsMs, tz)
  if (!onMinute || minutes % rules.slot_minutes !== 0) add('starts_at', `Start on a ${rules.slot_minutes}-minute slot (local time ${tz}).`)
  if (startsMs > nowMs + rules.max_days_ahead * DAY_MS) add('starts_at', `Book at most ${rules.max_days_ahead} days ahead.`)
  if (booker === 'customer') {
    if (startsMs < nowMs + rules.lead_minutes * MIN_MS) add('starts_at', `Book at least ${rules.lead_minutes} minutes ahead.`)
    else if (!openStatus({ ...settings, accepting_orders: true }, new Date(startsMs)).open) add('starts_at', 'The store is closed at that time.')
  } else if (startsMs < nowMs - rules.slot_minutes * MIN_MS) {
    add('starts_at', 'That time has passed.')
  }
  if (party !== null && party > rules.max_party_size) add('party_size', `At most ${rules.max_party_size} guests per booking.`)
  return Object.keys(errors).length ? errors : null
}

/** A bookable place as the rules see it. */
export interface TableFit { id: number; capacity: number; active: number | boolean }
/** A booking that holds a table: `[starts_at, ends_at)` as same-width UTC ISO strings. */
export interface Hold { id: number; table_id: number | null; starts_at: string; ends_at: string }

const overlaps = (h: Hold, from: string, to: string): boolean => h.starts_at < to && h.ends_at > from

/**
 * The active tables that seat `party` and are free over `[from, to)`, smallest first (then lowest
 * id). `except`: a booking being moved does not block itself.
 */
export function freeTables<T extends TableFit>(tables: readonly T[], holds: readonly Hold[], from: string, to: string, party: number, except: number | null = null): T[] {
  const taken = new Set(holds.filter((h) => h.id !== except && h.table_id !== null && overlaps(h, from, to)).map((h) => h.table_id))
  return tables
    .filter((t) => (t.active === true || t.active === 1) && t.capacity >= party && !taken.has(t.id))
    .sort((a, b) => a.capacity - b.capacity || a.id - b.id)
}

/** Why a named table cannot take the booking, or null when it can. */
export function tableRefusal(table: TableFit | undefined, holds: readonly Hold[], from: string, to: string, party: number, except: number | null = null): string | null {
  if (!table || !(table.active === true || table.active === 1)) return 'No such bookable table.'
  if (table.capacity < party) return `This table seats ${table.capacity}.`
  return freeTables([table], holds, from, to, party, except).length ? null : 'This table is booked at that time.'
}

/** Allowed status changes (api-v1 §3 leaves them open; docs/operations.md "Reservations"). */
const NEXT: Readonly<Record<ReservationStatus, readonly ReservationStatus[]>> = {
  booked: ['seated', 'cancelled', 'no_show'],
  seated: ['completed'],
  completed: [],
  cancelled: [],
  no_show: [],
}
export const canMove = (from: ReservationStatus, to: ReservationStatus): boolean => NEXT[from].includes(to)

/** The start instants of `date` (local, in the store's zone) on the slot grid that `booker` may book. */
export function slotStarts(rules: BookingRules, settings: HoursSettings, booker: Booker, date: string, nowMs: number): number[] {
  const tz = timeZoneOf(settings)
  const out: number[] = []
  for (let m = 0; m < 1440; m += rules.slot_minutes) {
    const ms = zonedInstant(tz, date, m)
    // A DST gap moves a wall time forward: it is then not on the grid and not offered.
    if (out.at(-1) === ms) continue
    if (bookingErrors(rules, settings, booker, ms, null, nowMs) === null) out.push(ms)
  }
  return out
}

/** One bookable slot: when, and how many fitting tables are free for the whole booking. */
export interface Slot { starts_ms: number; ends_ms: number; free_tables: number }

/** The slots of `starts` with at least one fitting free table for `party`. */
export function availability(tables: readonly TableFit[], holds: readonly Hold[], starts: readonly number[], durationMinutes: number, party: number, iso: (ms: number) => string): Slot[] {
  const out: Slot[] = []
  for (const s of starts) {
    const e = s + durationMinutes * MIN_MS
    const n = freeTables(tables, holds, iso(s), iso(e), party).length
    if (n > 0) out.push({ starts_ms: s, ends_ms: e, free_tables: n })
  }
  return out
}
