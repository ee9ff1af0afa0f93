/** Shipment rows (migration 022; docs/verticals.md "Shipments"): one per `ship` order. */
import { stmt, type Db } from './db.ts'
import type { ShipmentStatus, ShipmentStep } from '../domain/shipments.ts'
import type { ShippingAddress } from '../domain/fulfillment.ts'

export interface ShipmentRow {
  id: number
  store_id: number
  order_id: number
  status: ShipmentStatus
  carrier: string | null
  tracking_number: string | null
  tracking_url: string | null
  address: string
  timeline: string
  created_at: string
  updated_at: string
}

/** The shipment as the API shows it. */
export function shipmentView(r: ShipmentRow) {
  return {
    id: r.id,
    restaurant_id: r.store_id,
    order_id: r.order_id,
    status: r.status,
    carrier: r.carrier,
    tracking_number: r.tracking_number,
    tracking_url: r.tracking_url,
    address: JSON.parse(r.address) as ShippingAddress,
    timeline: JSON.parse(r.timeline) as ShipmentStep[],
    created_at: r.created_at,
    updated_at: r.updated_at,
  }
}
export type ShipmentView = ReturnType<typeof shipmentView>

/** A new `ship` order's shipment, `pending`; inside the order's own write. */
export function insertShipment(db: Db, storeId: number, orderId: number, address: ShippingAddress, now: string): void {
  const timeline: ShipmentStep[] = [{ status: 'pending', at: now }]
  stmt(db, `INSERT INTO shipments (store_id, order_id, status, address, timeline, created_at, updated_at) VALUES (?, ?, 'pending', ?, ?, ?, ?)`)
    .run(storeId, orderId, JSON.stringify(address), JSON.stringify(timeline), now, now)
}

export const shipmentOfOrder = (db: Db, storeId: number, orderId: number): ShipmentRow | undefined =>
  stmt<[number, number], ShipmentRow>(db, 'SELECT * FROM shipments WHERE order_id = ? AND store_id = ?').get(orderId, storeId)

/** Set carrier and tracking fields (null clears one; undefined keeps it); the row as written. */
export function setShipmentTracking(db: Db, id: number, f: { carrier?: string | null | undefined; tracking_number?: string | null | undefined; tracking_url?: string | null | undefined }, now: string): ShipmentRow {
  return stmt<unknown[], ShipmentRow>(db, `UPDATE shipments SET carrier = CASE WHEN ? THEN ? ELSE carrier END, tracking_number = CASE WHEN ? THEN ? ELSE tracking_number END,
    tracking_url = CASE WHEN ? THEN ? ELSE tracking_url END, updated_at = ? WHERE id = ? RETURNING *`).get(
    f.carrier !== undefined ? 1 : 0, f.carrier ?? null, f.tracking_number !== undefined ? 1 : 0, f.tracking_number ?? null,
    f.tracking_url !== undefined ? 1 : 0, f.tracking_url ?? null, now, id)!
}

/**
 * Move a shipment from `from` to `to`, appending to its timeline: the row as written, or undefined
 * when it is no longer in `from` (a concurrent move won: the caller answers 409 rather than lose a step).
 */
export function moveShipment(db: Db, id: number, from: ShipmentStatus, to: ShipmentStatus, step: ShipmentStep, now: string): ShipmentRow | undefined {
  return stmt<unknown[], ShipmentRow>(db, `UPDATE shipments SET status = ?, timeline = json_insert(timeline, '$[#]', json(?)), updated_at = ? WHERE id = ? AND status = ? RETURNING *`)
    .get(to, JSON.stringify(step), now, id, from)
}

export interface ShipmentFilter { status?: string | undefined; carrier?: string | undefined; from?: string | undefined; to?: string | undefined }

/** A store's shipments, newest first, filtered by status, carrier and creation day (`from`/`to` inclusive UTC days). */
export function shipmentPage(db: Db, storeId: number, page: number, perPage: number, f: ShipmentFilter): { total: number; data: ShipmentRow[] } {
  const where = ['store_id = ?']
  const args: Array<string | number> = [storeId]
  if (f.status) { where.push('status = ?'); args.push(f.status) }
  if (f.carrier) { where.push('carrier = ? COLLATE NOCASE'); args.push(f.carrier) }
  if (f.from) { where.push('created_at >= ?'); args.push(`${f.from}T00:00:00`) }
  if (f.to) { where.push('created_at < ?'); args.push(new Date(Date.parse(`${f.to}T00:00:00Z`) + 86_400_000).toISOString().slice(0, 10) + 'T00:00:00') }
  const sql = where.join(' AND ')
  const total = stmt<unknown[], number>(db, `SELECT COUNT(*) FROM shipments WHERE ${sql}`).pluck().get(...args)!
  const data = stmt<unknown[], ShipmentRow>(db, `SELECT * FROM shipments WHERE ${sql} ORDER BY id DESC LIMIT ? OFFSET ?`).all(...args, perPage, (page - 1) * perPage)
  return { total, data }
}

/** A shipment for the public tracking view (api-v1 §2.5): no address. */
export function trackingShipment(db: Db, orderId: number) {
  const r = stmt<[number], ShipmentRow>(db, 'SELECT * FROM shipments WHERE order_id = ?').get(orderId)
  if (!r) return null
  return { status: r.status, carrier: r.carrier, tracking_number: r.tracking_number, tracking_url: r.tracking_url, timeline: JSON.parse(r.timeline) as ShipmentStep[], updated_at: r.updated_at }
}
