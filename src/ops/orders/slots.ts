/**
 * Availability of pickup slots and appointment times (issue 18 item 5; docs/verticals.md
 * "Fulfillment modes"): the store's grid for one local day with what is booked, so a client offers
 * only valid times. The store actor re-checks every order against capacity (these are reads).
 */
import * as v from 'valibot'
import { defineOp, type OpCtx } from '../op.ts'
import { storeOf } from '../scope.ts'
import { DateStr } from './analytics-query.ts'
import { dateTime, named } from '../schemas/named.ts'
import { SLOT_KINDS, appointmentRulesOf, gridStarts, peakOverlap, slotGridOf, utcIso, type SlotGrid } from '../../domain/fulfillment.ts'
import { verticalOf } from '../../domain/verticals.ts'
import { timeZoneOf, zonedInstant } from '../../domain/business-hours.ts'
import { parseSettings } from '../../storage/stores.ts'
import { appointmentsBetween, slotCounts } from '../../storage/fulfillment.ts'
import { invalidField } from '../../errors.ts'

const tag = 'Fulfillment'
const MIN = 60_000
const SlotListSchema = named('SlotList', {
  type: 'object', required: ['date', 'timezone', 'capacity', 'minutes', 'slots'],
  properties: {
    date: { type: 'string', format: 'date' }, timezone: { type: 'string' }, capacity: { type: 'integer' }, minutes: { type: 'integer' },
    kind: { type: 'string', enum: [...SLOT_KINDS] },
    slots: { type: 'array', items: { type: 'object', required: ['start', 'end', 'booked', 'available'], properties: { start: dateTime, end: dateTime, booked: { type: 'integer' }, available: { type: 'integer' } } } },
  },
})

const dayBounds = (tz: string, date: string) => {
  const next = new Date(Date.parse(`${date}T00:00:00Z`) + 86_400_000).toISOString().slice(0, 10)
  return [utcIso(zonedInstant(tz, date, 0)), utcIso(zonedInstant(tz, next, 0) + 1440 * MIN)] as const
}

function needMode(store: { store_type: string }, mode: string) {
  if (!(verticalOf(store.store_type).fulfillment_modes as string[]).includes(mode)) throw invalidField('type', `This store does not take ${mode} orders.`)
}

/** The scope's store (refused unless its type takes `mode` orders), its settings, its time zone and the UTC bounds of `date` there. */
function storeDay(ctx: OpCtx, mode: string, date: string) {
  const store = storeOf(ctx)
  needMode(store, mode)
  const settings = parseSettings(store.settings)
  const timezone = timeZoneOf(settings)
  const [from, to] = dayBounds(timezone, date)
  return { store, settings, timezone, from, to }
}

/** The starts of `date` an order could still take now, each `minutes` long, with what `bookedIn` counts booked then against the grid's capacity. */
function slotList(settings: Record<string, unknown>, grid: SlotGrid, date: string, minutes: number, bookedIn: (start: string, end: string) => number) {
  return gridStarts(settings, grid, date, minutes, Date.now()).map((ms) => {
    const [start, end] = [utcIso(ms), utcIso(ms + minutes * MIN)]
    const booked = bookedIn(start, end)
    return { start, end, booked, available: Math.max(0, grid.capacity - booked) }
  })
}

export const listPickupSlots = defineOp({
  id: 'fulfillment.pickup_slots.list', tag, summary: 'Pickup slots of a local day with what is booked (`?date=YYYY-MM-DD&kind=pickup|dropoff`)',
  description: 'The grid comes from the store\'s `pickup_slots` settings (`slot_minutes`, `capacity`, `lead_minutes`, `days_ahead`) inside its business hours; only slots an order could still take now are listed. 422 when the store type has no `pickup_slot` mode.',
  access: { owner: 'orders:read', staff: 'orders' }, scope: ['store'],
  input: v.object({ date: DateStr, kind: v.optional(v.picklist(SLOT_KINDS)) }),
  output: SlotListSchema,
  run: (ctx, { date, kind = 'pickup' }) => {
    const { store, settings, timezone, from, to } = storeDay(ctx, 'pickup_slot', date)
    const grid = slotGridOf(settings)
    const counts = new Map(slotCounts(ctx.svc.db, store.id, from, to).filter((c) => c.kind === kind).map((c) => [c.start, c.n]))
    const slots = slotList(settings, grid, date, grid.slot_minutes, (start) => counts.get(start) ?? 0)
    return { date, timezone, kind, capacity: grid.capacity, minutes: grid.slot_minutes, slots }
  },
})

export const listAppointmentSlots = defineOp({
  id: 'fulfillment.appointment_slots.list', tag, summary: 'Appointment start times of a local day with what overlaps them (`?date=YYYY-MM-DD`)',
  description: 'From the store\'s `appointments` settings (`duration_minutes`, `slot_minutes`, `capacity`, `lead_minutes`, `days_ahead`); `booked` is the most appointments overlapping at any moment of that window. 422 when the store type has no `appointment` mode.',
  access: { owner: 'orders:read', staff: 'orders' }, scope: ['store'],
  input: v.object({ date: DateStr }),
  output: SlotListSchema,
  run: (ctx, { date }) => {
    const { store, settings, timezone, from, to } = storeDay(ctx, 'appointment', date)
    const rules = appointmentRulesOf(settings)
    const booked = appointmentsBetween(ctx.svc.db, store.id, from, to)
    const slots = slotList(settings, rules, date, rules.duration_minutes, (start, end) => peakOverlap(booked, start, end))
    return { date, timezone, capacity: rules.capacity, minutes: rules.duration_minutes, slots }
  },
})

export const slotOps = [listPickupSlots, listAppointmentSlots]
