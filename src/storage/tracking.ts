/**
 * The public tracking view (api-v1 §2.5), shared by `GET /track/{token}`, the tracking socket and
 * the tracking page. The driver appears only while the order is picked up or out for delivery;
 * the proof-of-delivery code appears while a driver is on the way (docs/drivers.md).
 */
import type { Db } from './db.ts'
import type { OrderRow } from './orders.ts'
import { driverVisible, type DeliveryStatus } from '../domain/order-state.ts'
import { isActiveDelivery } from '../domain/delivery.ts'
import { fromCents } from '../domain/money.ts'
import { deliveryCode } from '../auth/delivery-code.ts'

type DriverLoc = { name: string; lat: number | null; lng: number | null; location_updated_at: string | null }
const driverStmts = new WeakMap<Db, import('better-sqlite3').Statement<[number], DriverLoc>>()

export function trackingView(svc: { db: Db; orders: { lines(orderId: number): Array<{ name: string; quantity: number }> } }, o: OrderRow) {
  const status = o.delivery_status as DeliveryStatus | null
  const view: Record<string, unknown> = {
    id: o.id,
    status: o.status,
    delivery_status: status,
    is_paid: o.is_paid === 1,
    total: fromCents(o.total),
    timeline: JSON.parse(o.timeline) as Record<string, string>,
    items: svc.orders.lines(o.id).map((l) => ({ name: l.name, quantity: l.quantity })),
  }
  if (o.driver_id != null && driverVisible(status)) {
    let stmt = driverStmts.get(svc.db)
    if (!stmt) driverStmts.set(svc.db, (stmt = svc.db.prepare<[number], DriverLoc>('SELECT name, lat, lng, location_updated_at FROM drivers WHERE id = ?')))
    const d = stmt.get(o.driver_id)
    if (d) view.driver = d
  }
  if (o.driver_id != null && isActiveDelivery(status)) view.delivery_code = deliveryCode(o.track_token)
  return view
}
