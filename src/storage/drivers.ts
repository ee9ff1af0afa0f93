/**
 * Driver and delivery storage (api-v1 §2.7, §4.2 deliveries, §4.6): the direct reads ARCHITECTURE 7
 * allows (lists, views, lookups) in `createDriverQueries`, and the writes as functions of the
 * database that the driver actor and the driver operations run inside `committer.write`.
 */
import { perDb, type Db } from './db.ts'
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

export interface ShiftRow { id: number; started_at: string; ended_at: string | null }
export interface LoginCodeRow { id: number; code_hash: string; attempts: number }
export interface DeviceRow { device_token: string; platform: string }

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

/** A driver row with its latest position, which lives in its own narrow table (migration 026). */
const WITH_POSITION = 'SELECT d.*, p.lat, p.lng, p.location_updated_at FROM drivers d LEFT JOIN driver_positions p ON p.driver_id = d.id'

/** A store's dispatch fleet: its drivers and the owner's unbound ones, each found by index (migration 030). Parameters: owner, store, owner. */
export const FLEET_SQL = `SELECT d.id, d.name, p.lat, p.lng, p.location_updated_at, d.on_shift, d.restaurant_id FROM drivers d LEFT JOIN driver_positions p ON p.driver_id = d.id
    WHERE d.owner_id = ? AND d.restaurant_id = ?
  UNION ALL
  SELECT d.id, d.name, p.lat, p.lng, p.location_updated_at, d.on_shift, d.restaurant_id FROM drivers d LEFT JOIN driver_positions p ON p.driver_id = d.id
    WHERE d.owner_id = ? AND d.restaurant_id IS NULL
  ORDER BY 1`

export function createDriverQueries(db: Db) {
  const q = {
    byId: db.prepare<[number], DriverRow>(`${WITH_POSITION} WHERE d.id = ?`),
    ownedBy: db.prepare<[number, number], DriverRow>(`${WITH_POSITION} WHERE d.id = ? AND d.owner_id = ?`),
    byPhone: db.prepare<[string], DriverRow>(`${WITH_POSITION} WHERE d.phone = ? ORDER BY d.id`),
    count: db.prepare<[number], number>('SELECT COUNT(*) FROM drivers WHERE owner_id = ?').pluck(),
    page: db.prepare<[number, number, number], DriverRow>(`${WITH_POSITION} WHERE d.owner_id = ? ORDER BY d.id LIMIT ? OFFSET ?`),
    countStore: db.prepare<[number, number], number>('SELECT COUNT(*) FROM drivers WHERE owner_id = ? AND restaurant_id = ?').pluck(),
    pageStore: db.prepare<[number, number, number, number], DriverRow>(`${WITH_POSITION} WHERE d.owner_id = ? AND d.restaurant_id = ? ORDER BY d.id LIMIT ? OFFSET ?`),
    active: db.prepare<[number], { id: number; store_id: number; delivery_status: DeliveryStatus }>(
      "SELECT id, store_id, delivery_status FROM orders WHERE driver_id = ? AND delivery_status IN ('assigned', 'picked_up', 'out_for_delivery') ORDER BY id",
    ),
    delivery: db.prepare<[number], DeliveryRow>('SELECT * FROM deliveries WHERE order_id = ?'),
    offer: db.prepare<[number], OfferRow>('SELECT * FROM delivery_offers WHERE id = ?'),
    pendingOffers: db.prepare<[number, string], OfferRow>(
      "SELECT * FROM delivery_offers WHERE driver_id = ? AND status = 'pending' AND expires_at > ? ORDER BY expires_at, id",
    ),
    storeTitle: db.prepare<[number], { id: number; title: string }>('SELECT id, title FROM stores WHERE id = ?'),
    lastShift: db.prepare<[number], ShiftRow>('SELECT id, started_at, ended_at FROM driver_shifts WHERE driver_id = ? ORDER BY id DESC LIMIT 1'),
    loginCode: db.prepare<[string, string], LoginCodeRow>(
      'SELECT id, code_hash, attempts FROM driver_login_codes WHERE phone = ? AND used_at IS NULL AND expires_at > ? ORDER BY id DESC LIMIT 1',
    ),
    devices: db.prepare<[number], DeviceRow>('SELECT device_token, platform FROM driver_devices WHERE driver_id = ?'),
    openOffers: db.prepare<[number, string], OfferRow>("SELECT * FROM delivery_offers WHERE order_id = ? AND status = 'pending' AND expires_at > ? ORDER BY id"),
    fleet: db.prepare<[number, number, number], { id: number; name: string; lat: number | null; lng: number | null; location_updated_at: string | null; on_shift: number; restaurant_id: number | null }>(FLEET_SQL),
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
    /** The driver's latest shift, open or not. */
    lastShift: (driverId: number) => q.lastShift.get(driverId),
    /** The newest unused, unexpired SMS login code sent to a phone. */
    openLoginCode: (phone: string, now: string) => q.loginCode.get(phone, now),
    /** Push devices registered to a driver. */
    devices: (driverId: number) => q.devices.all(driverId),
    /** An order's open (pending, unexpired) offers, oldest first. */
    openOffers: (orderId: number, now: string) => q.openOffers.all(orderId, now),
    /** Drivers holding an open (pending, unexpired) offer for an order. */
    pendingOfferDrivers: (orderId: number, now: string) =>
      db.prepare<[number, string], number>("SELECT driver_id FROM delivery_offers WHERE order_id = ? AND status = 'pending' AND expires_at > ?").pluck().all(orderId, now) as number[],
    /** Drivers a store's dispatcher sees: bound to the store, or unbound drivers of the same owner. */
    fleetFor(ownerId: number, storeId: number) {
      return q.fleet.all(ownerId, storeId, ownerId)
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

const writes = perDb((db) => ({
  insert: db.prepare<[number, number | null, string, string, string, string]>(
    'INSERT INTO drivers (owner_id, restaurant_id, name, phone, token_hash, created_at) VALUES (?, ?, ?, ?, ?, ?)',
  ),
  profile: db.prepare<[string, string, number | null, number]>('UPDATE drivers SET name = ?, phone = ?, restaurant_id = ? WHERE id = ?'),
  rotate: db.prepare<[string, number]>('UPDATE drivers SET token_hash = ? WHERE id = ?'),
  revokeDevices: db.prepare<[string, number]>('UPDATE driver_tokens SET revoked_at = ? WHERE driver_id = ? AND revoked_at IS NULL'),
  onShift: db.prepare<[number, number]>('UPDATE drivers SET on_shift = ? WHERE id = ?'),
  startShift: db.prepare<[number, string]>('INSERT INTO driver_shifts (driver_id, started_at) VALUES (?, ?)'),
  endShift: db.prepare<[string, number]>('UPDATE driver_shifts SET ended_at = ? WHERE driver_id = ? AND ended_at IS NULL'),
  // Off shift means no offers (docs/drivers.md "Shifts"): open ones are withdrawn with the shift's end.
  withdrawOffers: db.prepare<[string, number], { id: number; order_id: number }>(
    "UPDATE delivery_offers SET status = 'withdrawn', responded_at = ? WHERE driver_id = ? AND status = 'pending' RETURNING id, order_id",
  ),
  loginCode: db.prepare<[string, string, string, string]>('INSERT INTO driver_login_codes (phone, code_hash, expires_at, created_at) VALUES (?, ?, ?, ?)'),
  loginAttempt: db.prepare<[number]>('UPDATE driver_login_codes SET attempts = attempts + 1 WHERE id = ?'),
  useCode: db.prepare<[string, number]>('UPDATE driver_login_codes SET used_at = ? WHERE id = ?'),
  deviceToken: db.prepare<[number, string, string | null, string]>('INSERT INTO driver_tokens (driver_id, token_hash, device, created_at) VALUES (?, ?, ?, ?)'),
  registerDevice: db.prepare<[number, string, string, string, string]>(`INSERT INTO driver_devices (driver_id, device_token, platform, created_at, updated_at) VALUES (?, ?, ?, ?, ?)
    ON CONFLICT(device_token) DO UPDATE SET driver_id = excluded.driver_id, platform = excluded.platform, updated_at = excluded.updated_at`),
  unregisterDevice: db.prepare<[string, number]>('DELETE FROM driver_devices WHERE device_token = ? AND driver_id = ?'),
}))

/** A new driver with its owner-issued token (only the hash is stored, api-v1 §2.7); returns its id. */
export function insertDriver(db: Db, d: { ownerId: number; restaurantId: number | null; name: string; phone: string; tokenHash: string; at: string }): number {
  return Number(writes(db).insert.run(d.ownerId, d.restaurantId, d.name, d.phone, d.tokenHash, d.at).lastInsertRowid)
}

export function saveDriverProfile(db: Db, id: number, p: { name: string; phone: string; restaurantId: number | null }): void {
  writes(db).profile.run(p.name, p.phone, p.restaurantId, id)
}

/** Replace the owner-issued token and revoke every device token from the SMS login. */
export function rotateDriverToken(db: Db, id: number, tokenHash: string, at: string): void {
  const w = writes(db)
  w.rotate.run(tokenHash, id)
  w.revokeDevices.run(at, id)
}

/** Start or end a shift; ending one withdraws the driver's open offers, which are returned. */
export function setDriverShift(db: Db, id: number, onShift: boolean, at: string): Array<{ id: number; order_id: number }> {
  const w = writes(db)
  w.onShift.run(onShift ? 1 : 0, id)
  if (onShift) { w.startShift.run(id, at); return [] }
  w.endShift.run(at, id)
  return w.withdrawOffers.all(at, id)
}

/** Remember an SMS login code (its digest only) until `expiresAt`. */
export function insertLoginCode(db: Db, phone: string, codeHash: string, expiresAt: string, at: string): void {
  writes(db).loginCode.run(phone, codeHash, expiresAt, at)
}

/** A wrong code counts against the code's attempts. */
export function countLoginAttempt(db: Db, codeId: number): void {
  writes(db).loginAttempt.run(codeId)
}

/** Use a login code up and issue a device token for the chosen driver, in one write. */
export function redeemLoginCode(db: Db, codeId: number, driverId: number, tokenHash: string, device: string | null, at: string): void {
  const w = writes(db)
  w.useCode.run(at, codeId)
  w.deviceToken.run(driverId, tokenHash, device, at)
}

/** Register a push device to a driver; a device token already registered moves to this driver. */
export function registerDriverDevice(db: Db, driverId: number, deviceToken: string, platform: string, at: string): void {
  writes(db).registerDevice.run(driverId, deviceToken, platform, at, at)
}

/** False when the device was not registered to this driver. */
export function unregisterDriverDevice(db: Db, driverId: number, deviceToken: string): boolean {
  return writes(db).unregisterDevice.run(deviceToken, driverId).changes > 0
}

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
    delivery_notes: o.delivery_notes,
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

/** Offer rows to change with an order, in the same transaction. */
export type OfferWrite =
  | { id: number; status: OfferStatus }
  | { withdrawPendingExcept: number | null }
  | { create: { driverId: number; fee: number; expiresAt: string } }

/** A delivery's fee, proof and note as the order actor keeps them (actors/order-delivery.ts `DeliveryInfo`). */
export interface DeliverySave {
  fee: number
  podAttempts: number
  podVerifiedAt: string | null
  photo: { path: string; type: string; bytes: number; at: string } | null
  note: string | null
}

/** Statements the order actor shell uses to write the delivery side, inside its transaction. */
export function deliveryWriter(db: Db) {
  const upsert = db.prepare(`INSERT INTO deliveries (order_id, driver_fee, pod_attempts, pod_verified_at, photo_path, photo_type, photo_bytes, photo_at, note, updated_at)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
    ON CONFLICT(order_id) DO UPDATE SET driver_fee = excluded.driver_fee, pod_attempts = excluded.pod_attempts, pod_verified_at = excluded.pod_verified_at,
      photo_path = excluded.photo_path, photo_type = excluded.photo_type, photo_bytes = excluded.photo_bytes, photo_at = excluded.photo_at,
      note = excluded.note, updated_at = excluded.updated_at`)
  // A new proof photo replaces the old one: its bytes (pod_photos, src/storage/pod-photos.ts) go in the same write.
  const dropReplacedPhoto = db.prepare('DELETE FROM pod_photos WHERE path = (SELECT photo_path FROM deliveries WHERE order_id = ?) AND path IS NOT ?')
  const setOffer = db.prepare("UPDATE delivery_offers SET status = ?, responded_at = ? WHERE id = ? AND status = 'pending'")
  const create = db.prepare<[number, number, number, number, string, string], { id: number; driver_id: number; expires_at: string }>(
    "INSERT INTO delivery_offers (order_id, store_id, driver_id, fee, status, expires_at, created_at) VALUES (?, ?, ?, ?, 'pending', ?, ?) RETURNING id, driver_id, expires_at",
  )
  const withdraw = db.prepare<[string, number, number], { id: number; driver_id: number }>(
    "UPDATE delivery_offers SET status = 'withdrawn', responded_at = ? WHERE order_id = ? AND status = 'pending' AND id != ? RETURNING id, driver_id",
  )
  return {
    save(orderId: number, d: DeliverySave, now: string): void {
      if (d.photo) dropReplacedPhoto.run(orderId, d.photo.path)
      upsert.run(orderId, d.fee, d.podAttempts, d.podVerifiedAt, d.photo?.path ?? null, d.photo?.type ?? null, d.photo?.bytes ?? null, d.photo?.at ?? null, d.note, now)
    },
    /** Apply offer writes; returns the offers created and those withdrawn (their drivers are told), and those answered. */
    offers(orderId: number, storeId: number, writes: readonly OfferWrite[], now: string): OfferChanges {
      const out: OfferChanges = { created: [], withdrawn: [], closed: [] }
      for (const w of writes) {
        if ('id' in w) { if (setOffer.run(w.status, now, w.id).changes > 0) out.closed.push(w.id) }
        else if ('create' in w) out.created.push(create.get(orderId, storeId, w.create.driverId, w.create.fee, w.create.expiresAt, now)!)
        else out.withdrawn.push(...withdraw.all(now, orderId, w.withdrawPendingExcept ?? 0))
      }
      return out
    },
  }
}

/** `closed`: offers answered (accepted, rejected, expired), by id. */
export interface OfferChanges { created: Array<{ id: number; driver_id: number; expires_at: string }>; withdrawn: Array<{ id: number; driver_id: number }>; closed: number[] }
