/**
 * The public tracking view (api-v1 §2.5), shared by `GET /track/{token}`, the tracking socket and
 * the tracking page. The driver appears only while the order is picked up or out for delivery;
 * the proof-of-delivery code appears while a driver is on the way (docs/drivers.md). The store's
 * name and position, and the destination while the driver is visible, are for the tracking page's
 * map (docs/tracking-page.md).
 */
import type { DeliveryEta } from '../domain/eta.ts'
import type { Db } from './db.ts'
import type { OrderRow } from './orders.ts'
import { driverVisible, type DeliveryStatus } from '../domain/order-state.ts'
import { isActiveDelivery } from '../domain/delivery.ts'
import { fromCents } from '../domain/money.ts'
import { deliveryCode } from '../auth/delivery-code.ts'
import { validLatLng } from '../domain/delivery.ts'
import type { LatLng } from '../domain/eta.ts'
import { trackingShipment } from './shipments.ts'

type DriverLoc = { name: string; lat: number | null; lng: number | null; location_updated_at: string | null }
const driverStmts = new WeakMap<Db, import('better-sqlite3').Statement<[number], DriverLoc>>()
type StoreLoc = { name: string; currency: string; lat: unknown; lng: unknown }
const storeStmts = new WeakMap<Db, import('better-sqlite3').Statement<[number], StoreLoc>>()
const destStmts = new WeakMap<Db, import('better-sqlite3').Statement<[number, string], { lat: number; lng: number }>>()

/** The store's name and, when its settings hold one, its position (`stores.settings.update` `location`). */
function storePlace(db: Db, storeId: number): { name: string; currency: string; lat: number | null; lng: number | null } | null {
  let stmt = storeStmts.get(db)
  if (!stmt) storeStmts.set(db, (stmt = db.prepare<[number], StoreLoc>("SELECT title AS name, currency, json_extract(settings, '$.location.lat') AS lat, json_extract(settings, '$.location.lng') AS lng FROM stores WHERE id = ?")))
  const r = stmt.get(storeId)
  if (!r) return null
  return validLatLng(r.lat, r.lng) ? { name: r.name, currency: r.currency, lat: r.lat as number, lng: r.lng as number } : { name: r.name, currency: r.currency, lat: null, lng: null }
}

/**
 * Where a delivery goes, when known: the ordering customer's saved address with that text and a
 * position (orders keep the address text only; a customer order by `address_id` copies it).
 */
export function deliveryDestination(db: Db, o: Pick<OrderRow, 'customer_id' | 'address' | 'dest_lat' | 'dest_lng'>): LatLng | null {
  // The order's own position (lat/lng given when placed, docs/dispatch.md), else the customer's saved address.
  if (o.dest_lat != null && o.dest_lng != null && validLatLng(o.dest_lat, o.dest_lng)) return { lat: o.dest_lat, lng: o.dest_lng }
  if (o.customer_id == null || !o.address) return null
  let stmt = destStmts.get(db)
  if (!stmt) {
    destStmts.set(db, (stmt = db.prepare<[number, string], { lat: number; lng: number }>(
      'SELECT lat, lng FROM customer_addresses WHERE customer_id = ? AND address = ? AND lat IS NOT NULL AND lng IS NOT NULL ORDER BY is_default DESC, id DESC LIMIT 1')))
  }
  const r = stmt.get(o.customer_id, o.address)
  return r && validLatLng(r.lat, r.lng) ? { lat: r.lat, lng: r.lng } : null
}

/**
 * The tracking view (api-v1 §2.5): the body of `GET /track/{token}`, of the tracking socket's
 * `snapshot` and `status` frames and of the tracking page's first drawing (src/browser/track.ts reads
 * it through this type). Optional keys are absent, never null.
 */
export type TrackingView = {
  id: number
  status: string
  delivery_status: DeliveryStatus | null
  is_paid: boolean
  total: number
  /** The breakdown of `total` (issue 34 item 6): total = subtotal − discount + tip_amount + delivery_fee. */
  subtotal: number
  discount: number
  tip_amount: number
  delivery_fee: number
  /** The store's currency (ISO 4217), for showing the amounts. */
  currency: string
  timeline: Record<string, string>
  /** Each line as ordered: its variation (size) and extras by name. */
  items: Array<{ name: string; quantity: number; variation: string | null; extras: string[] }>
  order_type: string
  room_number?: string
  slot?: { start: string; end: string | null; kind: string }
  appointment?: { start: string; end: string | null }
  shipment?: ReturnType<typeof trackingShipment>
  store?: { name: string; lat: number | null; lng: number | null }
  driver?: DriverLoc
  destination?: LatLng
  /** The delivery's street address as the customer gave it, with `destination` (while the driver is visible). */
  destination_address?: string
  delivery_code?: string
  /** The estimate promised when a delivery order was placed (docs/dispatch.md "Estimates"). */
  eta?: DeliveryEta
}

/** A tracking socket's view frames: the first (`snapshot`) and each change (`status`). */
export type TrackViewFrame = TrackingView & { type: 'snapshot' | 'status' }

type TrackLine = { name: string; quantity: number; variant_name: string | null; extras: string }

export function trackingView(svc: { db: Db; orders: { lines(orderId: number): TrackLine[] } }, o: OrderRow): TrackingView {
  const status = o.delivery_status as DeliveryStatus | null
  const place = storePlace(svc.db, o.store_id)
  const view: TrackingView = {
    id: o.id,
    status: o.status,
    delivery_status: status,
    is_paid: o.is_paid === 1,
    total: fromCents(o.total),
    subtotal: fromCents(o.subtotal),
    discount: fromCents(o.discount),
    tip_amount: fromCents(o.tip_amount),
    delivery_fee: fromCents(o.delivery_fee),
    currency: place?.currency ?? 'USD',
    timeline: JSON.parse(o.timeline) as Record<string, string>,
    items: svc.orders.lines(o.id).map((l) => ({
      name: l.name, quantity: l.quantity, variation: l.variant_name,
      extras: (JSON.parse(l.extras) as Array<{ name: string }>).map((e) => e.name),
    })),
    // The order's mode in a fitting form (docs/verticals.md): room, slot, appointment, the parcel (never its address).
    order_type: o.type, // not `type`: socket frames use that key for the frame kind
  }
  if (o.room_number) view.room_number = o.room_number
  if (o.slot_start) view.slot = { start: o.slot_start, end: o.slot_end ?? null, kind: o.slot_kind ?? 'pickup' }
  if (o.appointment_start) view.appointment = { start: o.appointment_start, end: o.appointment_end ?? null }
  if (o.type === 'ship') view.shipment = trackingShipment(svc.db, o.id)
  // The estimate promised when placed (docs/dispatch.md "Estimates"): the page shows it until the live ETA replaces it.
  if (o.eta) view.eta = JSON.parse(o.eta) as DeliveryEta
  if (place) view.store = { name: place.name, lat: place.lat, lng: place.lng }
  if (o.driver_id != null && driverVisible(status)) {
    let stmt = driverStmts.get(svc.db)
    if (!stmt) driverStmts.set(svc.db, (stmt = svc.db.prepare<[number], DriverLoc>('SELECT d.name, p.lat, p.lng, p.location_updated_at FROM drivers d LEFT JOIN driver_positions p ON p.driver_id = d.id WHERE d.id = ?')))
    const d = stmt.get(o.driver_id)
    if (d) view.driver = d
    // The customer's position and address only while the driver is visible: the link may be forwarded,
    // and afterwards it would keep showing where the customer lives.
    const dest = deliveryDestination(svc.db, o)
    if (dest) view.destination = dest
    // The page names where the driver is going in words, not coordinates (issue 34 item 5).
    if (o.address) view.destination_address = o.address
  }
  if (o.driver_id != null && isActiveDelivery(status)) view.delivery_code = deliveryCode(o.track_token)
  return view
}
