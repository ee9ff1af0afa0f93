/**
 * The fulfillment columns of orders (migration 022; docs/verticals.md "Fulfillment modes"): written
 * in the order's own transaction, and the bookings the store actor counts a slot or appointment
 * against. Cancelled orders hold no capacity.
 */
import { stmt, type Db } from './db.ts'
import type { Fulfillment, Interval } from '../domain/fulfillment.ts'
import { fromCents } from '../domain/money.ts'

/** Write a new order's fulfillment fields (only for the modes that have any; inside the order's write). */
export function writeFulfillment(db: Db, orderId: number, f: Fulfillment): void {
  stmt(db, `UPDATE orders SET room_number = ?, shipping_address = ?, shipping_fee = ?, slot_start = ?, slot_end = ?, slot_kind = ?,
    appointment_start = ?, appointment_end = ? WHERE id = ?`).run(
    f.room_number, f.shipping_address ? JSON.stringify(f.shipping_address) : null, f.shipping_fee, f.slot_start, f.slot_end, f.slot_kind,
    f.appointment_start, f.appointment_end, orderId)
}

/** The orders holding a pickup slot (their track tokens: the actor adds its in-flight ones without counting twice). */
export function slotHolders(db: Db, storeId: number, start: string, kind: string): string[] {
  return stmt<[number, string, string], string>(db,
    "SELECT track_token FROM orders WHERE store_id = ? AND slot_start = ? AND slot_kind = ? AND status != 'cancelled'").pluck().all(storeId, start, kind)
}

/** Appointments overlapping [start, end), with their track tokens. */
export function appointmentsOverlapping(db: Db, storeId: number, start: string, end: string): Array<Interval & { track_token: string }> {
  return stmt<[number, string, string], Interval & { track_token: string }>(db,
    `SELECT appointment_start AS start, appointment_end AS "end", track_token FROM orders
     WHERE store_id = ? AND appointment_start IS NOT NULL AND appointment_start < ? AND appointment_end > ? AND status != 'cancelled'`)
    .all(storeId, end, start)
}

/** Slot bookings of a store between two instants, counted per start and kind (availability reads). */
export function slotCounts(db: Db, storeId: number, from: string, to: string): Array<{ start: string; kind: string; n: number }> {
  return stmt<[number, string, string], { start: string; kind: string; n: number }>(db,
    `SELECT slot_start AS start, slot_kind AS kind, COUNT(*) AS n FROM orders
     WHERE store_id = ? AND slot_start >= ? AND slot_start < ? AND status != 'cancelled' GROUP BY slot_start, slot_kind`).all(storeId, from, to)
}

/** Appointments of a store touching [from, to) (availability reads). */
export function appointmentsBetween(db: Db, storeId: number, from: string, to: string): Interval[] {
  return stmt<[number, string, string], Interval>(db,
    `SELECT appointment_start AS start, appointment_end AS "end" FROM orders
     WHERE store_id = ? AND appointment_start IS NOT NULL AND appointment_start < ? AND appointment_end > ? AND status != 'cancelled'`).all(storeId, to, from)
}

/** The fulfillment columns as an order row holds them (absent on rows built in memory for other modes). */
export interface FulfillmentColumns {
  room_number?: string | null
  shipping_address?: string | null
  shipping_fee?: number
  slot_start?: string | null
  slot_end?: string | null
  slot_kind?: string | null
  appointment_start?: string | null
  appointment_end?: string | null
}

/** The row columns of a new order's fulfillment (for the view built from memory). */
export const fulfillmentColumns = (f: Fulfillment | null | undefined): FulfillmentColumns =>
  f ? { ...f, shipping_address: f.shipping_address ? JSON.stringify(f.shipping_address) : null } : {}

/** The order view's fulfillment fields (api-v1 §2.4; docs/verticals.md): null where the mode has none. */
export function fulfillmentView(o: FulfillmentColumns) {
  return {
    room_number: o.room_number ?? null,
    shipping_address: o.shipping_address ? (JSON.parse(o.shipping_address) as Fulfillment['shipping_address']) : null,
    shipping_fee: fromCents(o.shipping_fee ?? 0),
    slot: o.slot_start ? { start: o.slot_start, end: o.slot_end ?? null, kind: o.slot_kind ?? 'pickup' } : null,
    appointment: o.appointment_start ? { start: o.appointment_start, end: o.appointment_end ?? null } : null,
  }
}
