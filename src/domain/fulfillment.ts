/**
 * Fulfillment modes beyond the restaurant's (issue 18 item 5; api-v1 §2.4; docs/verticals.md
 * "Fulfillment modes"), pure: which fields each order type needs, the store's slot grid and
 * appointment rules from its settings, the shipping fee, and the capacity arithmetic the store
 * actor applies in its serialised turn.
 *
 * Times are UTC ISO 8601 with `+00:00` (the storage form, so text order is time order); the grid
 * is laid on the store's local wall clock (business-hours.ts) so a slot starts at e.g. 10:00 local.
 */
import type { FieldErrors } from '../errors.ts'
import { isOpenAt, isoInZone, timeZoneOf, zonedInstant, type HoursSettings } from './business-hours.ts'
import { toCents } from './money.ts'

export const SLOT_KINDS = ['pickup', 'dropoff'] as const
export type SlotKind = (typeof SLOT_KINDS)[number]

export interface ShippingAddress {
  name: string
  line1: string
  line2?: string | null
  city: string
  postal_code: string
  /** ISO 3166-1 alpha-2, upper case. */
  country: string
  phone?: string | null
}

/** What an order's mode adds to it (all null / 0 for the restaurant's own modes). */
export interface Fulfillment {
  room_number: string | null
  shipping_address: ShippingAddress | null
  shipping_fee: number
  slot_start: string | null
  slot_end: string | null
  slot_kind: SlotKind | null
  appointment_start: string | null
  appointment_end: string | null
}

export interface FulfillmentInput {
  type: string
  room_number?: string | number | null | undefined
  shipping_address?: ShippingAddress | null | undefined
  slot_start?: string | null | undefined
  slot_kind?: SlotKind | null | undefined
  appointment_start?: string | null | undefined
}

export const NO_FULFILLMENT: Fulfillment = {
  room_number: null, shipping_address: null, shipping_fee: 0, slot_start: null, slot_end: null, slot_kind: null, appointment_start: null, appointment_end: null,
}

const blank = (s: unknown): boolean => s == null || String(s).trim() === ''

/** The fields each mode requires (checked with the rest of the order, before pricing). */
export function fulfillmentErrors(input: FulfillmentInput): FieldErrors {
  const e: FieldErrors = {}
  if (input.type === 'room_service' && blank(input.room_number)) e.room_number = ['A room number is required for room_service orders.']
  if (input.type === 'ship' && input.shipping_address == null) e.shipping_address = ['A shipping address is required for ship orders.']
  if (input.type === 'pickup_slot' && blank(input.slot_start)) e.slot_start = ['A slot (slot_start) is required for pickup_slot orders.']
  if (input.type === 'appointment' && blank(input.appointment_start)) e.appointment_start = ['A time (appointment_start) is required for appointment orders.']
  return e
}

// ---- settings --------------------------------------------------------------------------------------

/** `settings.pickup_slots` (docs/stores.md); defaults when the store has not set it. */
export interface SlotGrid { slot_minutes: number; capacity: number; lead_minutes: number; days_ahead: number }
/** `settings.appointments`: every appointment lasts `duration_minutes`; starts on a `slot_minutes` grid. */
export interface AppointmentRules extends SlotGrid { duration_minutes: number }
/** `settings.shipping`, in cents: `free_over` null means never free. */
export interface ShippingRule { flat_fee: number; free_over: number | null }

export const DEFAULT_SLOT_GRID: SlotGrid = { slot_minutes: 30, capacity: 5, lead_minutes: 60, days_ahead: 14 }
export const DEFAULT_APPOINTMENTS: AppointmentRules = { slot_minutes: 30, capacity: 1, lead_minutes: 60, days_ahead: 30, duration_minutes: 60 }

const num = (x: unknown, d: number): number => (typeof x === 'number' && Number.isFinite(x) ? x : d)
const objOf = (x: unknown): Record<string, unknown> => (x && typeof x === 'object' ? (x as Record<string, unknown>) : {})

export function slotGridOf(settings: Record<string, unknown>): SlotGrid {
  const g = objOf(settings.pickup_slots)
  const d = DEFAULT_SLOT_GRID
  return { slot_minutes: num(g.slot_minutes, d.slot_minutes), capacity: num(g.capacity, d.capacity), lead_minutes: num(g.lead_minutes, d.lead_minutes), days_ahead: num(g.days_ahead, d.days_ahead) }
}

export function appointmentRulesOf(settings: Record<string, unknown>): AppointmentRules {
  const g = objOf(settings.appointments)
  const d = DEFAULT_APPOINTMENTS
  return {
    slot_minutes: num(g.slot_minutes, d.slot_minutes), capacity: num(g.capacity, d.capacity), lead_minutes: num(g.lead_minutes, d.lead_minutes),
    days_ahead: num(g.days_ahead, d.days_ahead), duration_minutes: num(g.duration_minutes, d.duration_minutes),
  }
}

export function shippingRuleOf(settings: Record<string, unknown>): ShippingRule {
  const g = objOf(settings.shipping)
  return { flat_fee: toCents(num(g.flat_fee, 0)), free_over: typeof g.free_over === 'number' ? toCents(g.free_over) : null }
}

/** The fee for goods worth `subtotal` cents (after discounts): flat, or free from `free_over` up. */
export const shippingFee = (rule: ShippingRule, subtotal: number): number => (rule.free_over !== null && subtotal >= rule.free_over ? 0 : rule.flat_fee)

// ---- time grid -------------------------------------------------------------------------------------

const MIN = 60_000
export const utcIso = (ms: number): string => new Date(ms).toISOString().replace('Z', '+00:00')
/** ISO 8601 with a zone (Z or ±HH:MM); the instant, or null. */
export function parseInstant(s: string): number | null {
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?(Z|[+-]\d{2}:\d{2})$/.test(s)) return null
  const ms = Date.parse(s)
  return Number.isNaN(ms) ? null : ms
}

/** Hours only: the accepting-orders switch closes ordering now, not the grid of later days. */
const hoursOnly = (settings: HoursSettings): HoursSettings => ({ ...settings, accepting_orders: true })

/**
 * Why `start` (ms) is not a bookable start of a `minutes`-long window on `grid`, or null: on the
 * grid of the store's local day, at least `lead_minutes` ahead, at most `days_ahead` days ahead,
 * and open for the whole window (its first and last minute inside business hours).
 */
export function offGrid(settings: HoursSettings, grid: SlotGrid, start: number, minutes: number, now: number): string | null {
  const tz = timeZoneOf(settings)
  const local = isoInZone(start, tz)
  const wall = Number(local.slice(11, 13)) * 60 + Number(local.slice(14, 16))
  if (start % MIN !== 0 || wall % grid.slot_minutes !== 0) return `Pick a start on the store's ${grid.slot_minutes}-minute grid.`
  if (start < now + grid.lead_minutes * MIN) return `Pick a time at least ${grid.lead_minutes} minutes from now.`
  if (start > now + grid.days_ahead * 1440 * MIN) return `Pick a time at most ${grid.days_ahead} days ahead.`
  const h = hoursOnly(settings)
  if (!isOpenAt(h, new Date(start)) || !isOpenAt(h, new Date(start + (minutes - 1) * MIN))) return 'The store is closed at that time.'
  return null
}

/** Every window start of the local `date` on `grid` that `offGrid` accepts. */
export function gridStarts(settings: HoursSettings, grid: SlotGrid, date: string, minutes: number, now: number): number[] {
  const tz = timeZoneOf(settings)
  const out: number[] = []
  for (let m = 0; m < 1440; m += grid.slot_minutes) {
    const start = zonedInstant(tz, date, m)
    if (isoInZone(start, tz).slice(0, 10) !== date) continue // a DST gap moved it into another day
    if (offGrid(settings, grid, start, minutes, now) === null && !out.includes(start)) out.push(start)
  }
  return out
}

// ---- capacity --------------------------------------------------------------------------------------

export interface Interval { start: string; end: string }

/**
 * The most bookings that overlap at any moment of [start, end) (a sweep over the ones that touch
 * it): an appointment fits while that stays below the capacity.
 */
export function peakOverlap(booked: readonly Interval[], start: string, end: string): number {
  const points: Array<[string, number]> = []
  for (const b of booked) {
    if (b.start >= end || b.end <= start) continue
    points.push([b.start < start ? start : b.start, 1], [b.end, -1])
  }
  // Ends before starts at the same instant: back-to-back bookings do not overlap.
  points.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : a[1] - b[1]))
  let cur = 0
  let peak = 0
  for (const [, d] of points) peak = Math.max(peak, (cur += d))
  return peak
}

/** What the store actor read of a mode's bookings in its turn (committed plus in-flight). */
export type Booked = { kind: 'slot'; count: number } | { kind: 'appointment'; intervals: Interval[] }

export type Planned = { ok: true; fulfillment: Fulfillment } | { ok: false; field: string; message: string; full?: boolean }

/** The start an order asks for in `field`, `minutes` long, on the grid at `now`: its instant, or the refusal naming the field. */
function startOnGrid(settings: Record<string, unknown>, grid: SlotGrid, minutes: number, now: number, field: string, asked: string | null | undefined): number | Planned {
  const start = parseInstant(asked ?? '')
  if (start === null) return { ok: false, field, message: 'Use an ISO 8601 date-time with an offset.' }
  const why = offGrid(settings, grid, start, minutes, now)
  return why ? { ok: false, field, message: why } : start
}

/**
 * The order's fulfillment against the store's settings at `now`: grid and hours checks, end times,
 * and for `ship` the fee on `goods` (subtotal after discount, cents). `booked` is what already
 * holds the slot or overlaps the appointment; `full` marks a capacity refusal (409).
 */
export function planFulfillment(input: FulfillmentInput, settings: Record<string, unknown>, goods: number, now: number, booked?: Booked): Planned {
  const f: Fulfillment = { ...NO_FULFILLMENT }
  switch (input.type) {
    case 'room_service':
      f.room_number = String(input.room_number).trim()
      return { ok: true, fulfillment: f }
    case 'ship': {
      const a = input.shipping_address!
      f.shipping_address = { ...a, country: a.country.toUpperCase() }
      f.shipping_fee = shippingFee(shippingRuleOf(settings), goods)
      return { ok: true, fulfillment: f }
    }
    case 'pickup_slot': {
      const grid = slotGridOf(settings)
      const start = startOnGrid(settings, grid, grid.slot_minutes, now, 'slot_start', input.slot_start)
      if (typeof start !== 'number') return start
      if (booked?.kind === 'slot' && booked.count >= grid.capacity) return { ok: false, field: 'slot_start', message: 'This slot is full; pick another.', full: true }
      Object.assign(f, { slot_start: utcIso(start), slot_end: utcIso(start + grid.slot_minutes * MIN), slot_kind: input.slot_kind ?? 'pickup' })
      return { ok: true, fulfillment: f }
    }
    case 'appointment': {
      const rules = appointmentRulesOf(settings)
      const start = startOnGrid(settings, rules, rules.duration_minutes, now, 'appointment_start', input.appointment_start)
      if (typeof start !== 'number') return start
      const [s, e] = [utcIso(start), utcIso(start + rules.duration_minutes * MIN)]
      if (booked?.kind === 'appointment' && peakOverlap(booked.intervals, s, e) >= rules.capacity) {
        return { ok: false, field: 'appointment_start', message: 'That time is fully booked; pick another.', full: true }
      }
      Object.assign(f, { appointment_start: s, appointment_end: e })
      return { ok: true, fulfillment: f }
    }
    default:
      return { ok: true, fulfillment: f }
  }
}

/** The window the shell reads bookings for (before planning): a slot's start and kind, or an appointment's span. */
export function bookingWindow(input: FulfillmentInput, settings: Record<string, unknown>): { kind: 'slot'; start: string; slotKind: SlotKind } | { kind: 'appointment'; start: string; end: string } | null {
  if (input.type === 'pickup_slot') {
    const start = parseInstant(input.slot_start ?? '')
    return start === null ? null : { kind: 'slot', start: utcIso(start), slotKind: input.slot_kind ?? 'pickup' }
  }
  if (input.type === 'appointment') {
    const start = parseInstant(input.appointment_start ?? '')
    return start === null ? null : { kind: 'appointment', start: utcIso(start), end: utcIso(start + appointmentRulesOf(settings).duration_minutes * MIN) }
  }
  return null
}
