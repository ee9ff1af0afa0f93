/**
 * Driver and delivery reads (api-v1 §2.7, §4.2 deliveries, §4.6). Writes happen in the driver and
 * order actors; these are the direct reads ARCHITECTURE 5 allows (lists, views, lookups).
 */
import type { Db } from './db.ts'
import { fromCents } from '../domain/money.ts'
import type { DeliveryStatus, Timeline } from '../domain/order-state.ts'
import type { Offer, OfferStatus } from '../domain/delivery.ts'
import { ACTIVE_DELIVERY, offerStatusAt } from '../domain/delivery.ts'
import type { OrderRow } from './orders.ts'

export interface DriverRow {
  id: number
  owner_id: number
  restaurant_id: number | null
  name: string
  phone: string
  token_hash: string | null
  lat: number | null
  lng: number | null
  location_updated_at: string | null
  on_shift: number
  created_at: string
}

export interface DeliveryRow {
  order_id: number
  driver_fee: number
  pod_attempts: number
  pod_verified_at: string | null
  photo_path: string | null
  photo_type: string | null
  photo_bytes: number | null
  photo_at: string | null
  note: string | null
  updated_at: string
}

export interface OfferRow {
  id: number
  order_id: number
  store_id: number
  driver_id: number
  fee: number
  status: OfferStatus
  expires_at: string
  created_at: string
  responded_at: string | null
}

export const offerOf = (r: OfferRow): Offer => ({ id: r.id, orderId: r.order_id, driverId: r.driver_id, status: r.status, expiresAt: r.expires_at })

/** Live parts of a driver that only its actor knows. */
export interface DriverLiveExtras { connected: boolean; active_deliveries: number[] }

/** A driver as the owner API shows it (api-v1 §2.7 plus shift and location). The token is never here. */
export function driverView(d: DriverRow, live?: DriverLiveExtras) {
  return {
    id: d.id,
    name: d.name,
    phone: d.phone,
    restaurant_id: d.restaurant_id,
    on_shift: d.on_shift === 1,
    location: d.lat == null || d.lng == null ? null : { lat: d.lat, lng: d.lng, location_updated_at: d.location_updated_at },
    created_at: d.created_at,
    ...(live ?? {}),
  }
}

export function createDriverQueries(db: Db) {
  const q = {
    byId: db.prepare<[number], DriverRow>('SELECT * FROM drivers WHERE id = ?'),
    ownedBy: db.prepare<[number, number], DriverRow>('SELECT * FROM drivers WHERE id = ? AND owner_id = ?'),
    byPhone: db.prepare<[string], DriverRow>('SELECT * FROM drivers WHERE phone = ? ORDER BY id'),
    count: db.prepare<[number], number>('SELECT COUNT(*) FROM drivers WHERE owner_id = ?').pluck(),
    page: db.prepare<[number, number, number], DriverRow>('SELECT * FROM drivers WHERE owner_id = ? ORDER BY id LIMIT ? OFFSET ?'),
    countStore: db.prepare<[number, number], number>('SELECT COUNT(*) FROM drivers WHERE owner_id = ? AND restaurant_id = ?').pluck(),
    pageStore: db.prepare<[number, number, number, number], DriverRow>('SELECT * FROM drivers WHERE owner_id = ? AND restaurant_id = ? ORDER BY id LIMIT ? OFFSET ?'),
    active: db.prepare<[number], { id: number; store_id: number; delivery_status: DeliveryStatus }>(
      "SELECT id, store_id, delivery_status FROM orders WHERE driver_id = ? AND delivery_status IN ('assigned', 'picked_up', 'out_for_delivery') ORDER BY id",
    ),
    delivery: db.prepare<[number], DeliveryRow>('SELECT * FROM deliveries WHERE order_id = ?'),
    offer: db.prepare<[number], OfferRow>('SELECT * FROM delivery_offers WHERE id = ?'),
    pendingOffers: db.prepare<[number, string], OfferRow>(
      "SELECT * FROM delivery_offers WHERE driver_id = ? AND status = 'pending' AND expires_at > ? ORDER BY expires_at, id",
    ),
    storeTitle: db.prepare<[number], { id: number; title: string }>('SELECT id, title FROM stores WHERE id = ?'),
    bound: db.prepare<[number], { id: number; name: string; lat: number | null; lng: number | null; location_updated_at: string | null; on_shift: number; restaurant_id: number | null }>(
      'SELECT id, name, lat, lng, location_updated_at, on_shift, restaurant_id FROM drivers WHERE owner_id = ? ORDER BY id',
    ),
  }
  return {
    byId: (id: number) => q.byId.get(id),
    /** Tenancy at lookup (ARCHITECTURE 7): another owner's driver is simply not found. */
    ownedBy: (id: number, ownerId: number) => q.ownedBy.get(id, ownerId),
    byPhone: (phone: string) => q.byPhone.all(phone),
    page(ownerId: number, page: number, perPage: number, restaurantId?: number) {
      const offset = (page - 1) * perPage
      return restaurantId === undefined
        ? { total: q.count.get(ownerId) as number, rows: q.page.all(ownerId, perPage, offset) }
        : { total: q.countStore.get(ownerId, restaurantId) as number, rows: q.pageStore.all(ownerId, restaurantId, perPage, offset) }
    },
    activeOrders: (driverId: number) => q.active.all(driverId),
    delivery: (orderId: number) => q.delivery.get(orderId),
    offer: (id: number) => q.offer.get(id),
    pendingOffers: (driverId: number, now: string) => q.pendingOffers.all(driverId, now),
    storeTitle: (id: number) => q.storeTitle.get(id),
    /** Drivers holding an open (pending, unexpired) offer for an order. */
    pendingOfferDrivers: (orderId: number, now: string) =>
      db.prepare<[number, string], number>("SELECT driver_id FROM delivery_offers WHERE order_id = ? AND status = 'pending' AND expires_at > ?").pluck().all(orderId, now) as number[],
    /** Drivers a store's dispatcher sees: bound to the store, or unbound drivers of the same owner. */
    fleetFor(ownerId: number, storeId: number) {
      return q.bound.all(ownerId).filter((d) => d.restaurant_id === null || d.restaurant_id === storeId)
    },
    /** Unassigned delivery orders a driver may claim (api-v1 §4.6 `available`), oldest first. */
    available(ownerId: number, restaurantId: number | null, limit = 50): OrderRow[] {
      const where = restaurantId === null ? 's.owner_id = ?' : 's.owner_id = ? AND o.store_id = ?'
      const args = restaurantId === null ? [ownerId, limit] : [ownerId, restaurantId, limit]
      return db.prepare(`SELECT o.* FROM orders o JOIN stores s ON s.id = o.store_id
        WHERE ${where} AND o.delivery_status = 'pending' AND o.driver_id IS NULL AND o.status NOT IN ('cancelled', 'completed')
        ORDER BY o.id LIMIT ?`).all(...args) as OrderRow[]
    },
    /** A driver's deliveries, newest first; `active` hides delivered and failed (api-v1 §4.6). */
    forDriver(driverId: number, active: boolean, page: number, perPage: number) {
      const filter = active ? " AND delivery_status IN ('assigned', 'picked_up', 'out_for_delivery')" : ''
      const total = db.prepare(`SELECT COUNT(*) FROM orders WHERE driver_id = ?${filter}`).pluck().get(driverId) as number
      const rows = db.prepare(`SELECT * FROM orders WHERE driver_id = ?${filter} ORDER BY id DESC LIMIT ? OFFSET ?`).all(driverId, perPage, (page - 1) * perPage) as OrderRow[]
      return { total, rows }
    },
    /** A store's delivery orders, newest first, filtered by delivery status and driver (api-v1 §4.2). */
    forStore(storeId: number, f: { delivery_status?: string; driver_id?: number }, page: number, perPage: number) {
      let where = 'store_id = ? AND delivery_status IS NOT NULL'
      const args: unknown[] = [storeId]
      if (f.delivery_status) { where += ' AND delivery_status = ?'; args.push(f.delivery_status) }
      if (f.driver_id !== undefined) { where += ' AND driver_id = ?'; args.push(f.driver_id) }
      const total = db.prepare(`SELECT COUNT(*) FROM orders WHERE ${where}`).pluck().get(...args) as number
      const rows = db.prepare(`SELECT * FROM orders WHERE ${where} ORDER BY id DESC LIMIT ? OFFSET ?`).all(...args, perPage, (page - 1) * perPage) as OrderRow[]
      return { total, rows }
    },
    /** Active deliveries of a store, for the dispatch feed snapshot. */
    activeForStore: (storeId: number) =>
      db.prepare("SELECT * FROM orders WHERE store_id = ? AND delivery_status IN ('pending', 'assigned', 'picked_up', 'out_for_delivery') ORDER BY id").all(storeId) as OrderRow[],
    /** Delivered orders of a driver in [from, to) by `delivered_at`, with fee and tip (cents). */
    earnings(driverId: number, fromIso: string, toIso: string) {
      return db.prepare(`SELECT substr(json_extract(o.timeline, '$.delivered_at'), 1, 10) AS day, COALESCE(d.driver_fee, 0) AS fee, o.tip_amount AS tip
        FROM orders o LEFT JOIN deliveries d ON d.order_id = o.id
        WHERE o.driver_id = ? AND o.delivery_status = 'delivered'
          AND json_extract(o.timeline, '$.delivered_at') >= ? AND json_extract(o.timeline, '$.delivered_at') < ?`)
        .all(driverId, fromIso, toIso) as Array<{ day: string; fee: number; tip: number }>
    },
  }
}
export type DriverQueries = ReturnType<typeof createDriverQueries>

const deleteStatements = new WeakMap<Db, import('better-sqlite3').Statement<[number, number]>>()

/**
 * Delete a driver unless an order still has it on an active delivery, decided inside the write
 * itself: an assignment committed after the driver actor's own `driver_busy` check (its view of
 * active deliveries arrives by message) still refuses the delete, instead of the foreign key
 * (orders.driver_id ON DELETE SET NULL, migration 006) leaving an assigned order with no driver.
 * Delivered and failed orders stay, naming no driver; offers, shifts and tokens go with it.
 * Returns false when refused (answer `driver_busy`) or when the driver is already gone.
 */
export function deleteIdleDriver(db: Db, driverId: number): boolean {
  let stmt = deleteStatements.get(db)
  if (!stmt) {
    const active = [...ACTIVE_DELIVERY].map((st) => `'${st}'`).join(', ')
    stmt = db.prepare(`DELETE FROM drivers WHERE id = ?
      AND NOT EXISTS (SELECT 1 FROM orders WHERE driver_id = ? AND delivery_status IN (${active}))`)
    deleteStatements.set(db, stmt)
  }
  return stmt.run(driverId, driverId).changes === 1
}

/** Proof of delivery as shown to owners and drivers; `photoUrl` only where the caller may fetch it. */
export function proofView(d: DeliveryRow | undefined, photoUrl: string | null) {
  return {
    code_verified_at: d?.pod_verified_at ?? null,
    code_attempts: d?.pod_attempts ?? 0,
    photo: d?.photo_path ? { type: d.photo_type, bytes: d.photo_bytes, uploaded_at: d.photo_at, ...(photoUrl ? { url: photoUrl } : {}) } : null,
  }
}

/** A delivery as the driver app sees it (api-v1 §4.6): what to pick up, where to, what it pays. */
export function driverDeliveryView(o: OrderRow, lines: Array<{ name: string; quantity: number }>, d: DeliveryRow | undefined, store: { id: number; title: string } | undefined) {
  return {
    id: o.id,
    restaurant: store ? { id: store.id, title: store.title } : { id: o.store_id, title: '' },
    status: o.status,
    delivery_status: o.delivery_status as DeliveryStatus | null,
    customer_name: o.customer_name,
    phone: o.phone,
    address: o.address,
    note: o.note,
    items: lines.map((l) => ({ name: l.name, quantity: l.quantity })),
    total: fromCents(o.total),
    is_paid: o.is_paid === 1,
    tip_amount: fromCents(o.tip_amount),
    fee: fromCents(d?.driver_fee ?? 0),
    timeline: JSON.parse(o.timeline) as Timeline,
    proof: proofView(d, null),
    created_at: o.created_at,
    updated_at: o.updated_at,
  }
}

/** An offer as the driver sees it; `status` already accounts for expiry. */
export function offerView(r: OfferRow, o: OrderRow | undefined, store: { id: number; title: string } | undefined, now: string) {
  return {
    id: r.id,
    order_id: r.order_id,
    restaurant: store ? { id: store.id, title: store.title } : { id: r.store_id, title: '' },
    address: o?.address ?? null,
    total: o ? fromCents(o.total) : null,
    tip_amount: o ? fromCents(o.tip_amount) : null,
    fee: fromCents(r.fee),
    status: offerStatusAt(offerOf(r), now),
    expires_at: r.expires_at,
    expires_in: Math.max(0, Math.round((Date.parse(r.expires_at) - Date.parse(now)) / 1000)),
    created_at: r.created_at,
  }
}
