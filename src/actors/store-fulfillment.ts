/**
 * The store actor's part of the fulfillment modes (issue 18 item 5; docs/verticals.md "Fulfillment
 * modes"): a slot's or appointment's capacity is checked in the actor's turn against the committed
 * bookings plus the orders still committing (order creation is pipelined), so concurrent orders for
 * the last place cannot both get it; the shipping fee is added to the total; the mode's fields and a
 * `ship` order's shipment are written in the order's own transaction.
 */
import { ApiError } from '../errors.ts'
import type { OrderDraft, OrderInput } from '../domain/orders.ts'
import { bookingWindow, planFulfillment, type Booked, type Fulfillment, type Interval } from '../domain/fulfillment.ts'
import type { Db } from '../storage/db.ts'
import type { NewOrder } from '../storage/orders.ts'
import { appointmentsOverlapping, slotHolders, writeFulfillment } from '../storage/fulfillment.ts'
import { insertShipment } from '../storage/shipments.ts'

const MODES = new Set(['room_service', 'ship', 'pickup_slot', 'appointment'])

/** Point reads of a store's bookings (StoreDeps.bookings; src/storage/fulfillment.ts). */
export interface BookingReads {
  slotHolders(storeId: number, start: string, kind: string): string[]
  appointmentsOverlapping(storeId: number, start: string, end: string): Array<Interval & { track_token: string }>
}
export const bookingReads = (db: Db): BookingReads => ({
  slotHolders: (storeId, start, kind) => slotHolders(db, storeId, start, kind),
  appointmentsOverlapping: (storeId, start, end) => appointmentsOverlapping(db, storeId, start, end),
})

/**
 * The shell's bookings in flight (track token → its slot or interval), held from the moment an
 * order leaves the actor until its commit settles. Counted by token, so an order that is committed
 * but not yet settled is counted once.
 */
export class InFlightBookings {
  private readonly held = new Map<string, { slot?: string; interval?: Interval }>()

  hold(o: NewOrder): void {
    const f = o.fulfillment
    if (f?.slot_start) this.held.set(o.track_token, { slot: `${f.slot_start}|${f.slot_kind}` })
    else if (f?.appointment_start) this.held.set(o.track_token, { interval: { start: f.appointment_start, end: f.appointment_end! } })
  }

  release(token: string): void {
    this.held.delete(token)
  }

  /** What holds the order's slot or overlaps its appointment now (undefined for other modes). */
  read(reads: BookingReads, storeId: number, input: OrderInput, settings: Record<string, unknown>): Booked | undefined {
    if (!MODES.has(input.type)) return undefined
    const w = bookingWindow(input, settings)
    if (!w) return undefined
    if (w.kind === 'slot') {
      const tokens = new Set(reads.slotHolders(storeId, w.start, w.slotKind))
      const key = `${w.start}|${w.slotKind}`
      for (const [t, b] of this.held) if (b.slot === key) tokens.add(t)
      return { kind: 'slot', count: tokens.size }
    }
    const byToken = new Map<string, Interval>()
    for (const r of reads.appointmentsOverlapping(storeId, w.start, w.end)) byToken.set(r.track_token, { start: r.start, end: r.end })
    for (const [t, b] of this.held) if (b.interval) byToken.set(t, b.interval)
    return { kind: 'appointment', intervals: [...byToken.values()] }
  }
}

/**
 * The draft with its mode applied (pure): the fulfillment fields and, for `ship`, the fee in the
 * total; or the refusal (422 for a time off the grid, 409 `slot_full` for a full slot or time).
 */
export function withFulfillment(draft: OrderDraft, input: OrderInput, settings: Record<string, unknown>, now: string, booked: Booked | undefined): (OrderDraft & { fulfillment?: Fulfillment }) | ApiError {
  if (!MODES.has(input.type)) return draft
  const p = planFulfillment(input, settings, draft.subtotal - draft.discount, Date.parse(now), booked)
  if (!p.ok) return p.full ? new ApiError('slot_full', p.message, undefined, undefined, { field: p.field }) : new ApiError('validation_failed', p.message, { [p.field]: [p.message] })
  // Object.assign: V8 is very slow to build `{ ...draft, new fields }` (see storage/orders.ts lineView).
  return Object.assign({}, draft, { total: draft.total + p.fulfillment.shipping_fee, fulfillment: p.fulfillment })
}

/** Inside the order's write: its mode's fields, and a `ship` order's pending shipment. */
export function writeOrderFulfillment(db: Db, orderId: number, o: NewOrder): void {
  const f = o.fulfillment
  if (!f) return
  writeFulfillment(db, orderId, f)
  if (f.shipping_address) insertShipment(db, o.store_id, orderId, f.shipping_address, o.created_at)
}
