/** The dispatcher's durable state (migration 037; docs/dispatch.md "Policy"): one job per delivery order it works on. */
import { stmt, type Db } from './db.ts'
import type { OfferRow } from './drivers.ts'
import type { LoadSeed } from '../domain/fleet-loads.ts'

export type JobState = 'waiting' | 'offered' | 'assigned' | 'closed'

export interface JobRow {
  order_id: number
  store_id: number
  mode: 'offer' | 'auto'
  state: JobState
  due_at: string | null
  offer_id: number | null
  tried: string
  decisions: string
  /** No new wait for a driver finishing nearby after this (ISO; migration 048), set at the first. */
  hold_until: string | null
  created_at: string
  updated_at: string
}

/** Decisions kept per job (the oldest are dropped). */
export const DECISIONS_KEPT = 20

/** A store's delivery orders waiting for a driver (none yet, not cancelled), oldest first: the Dispatch page's list. */
export const waitingDeliveries = (db: Db, storeId: number, limit: number) =>
  stmt<[number, number], { id: number; driver_id: number | null }>(db, `SELECT id, driver_id FROM orders WHERE store_id = ? AND delivery_status = 'pending'
    AND driver_id IS NULL AND status <> 'cancelled' ORDER BY id LIMIT ?`).all(storeId, limit)

export const dispatchJobs = {
  get: (db: Db, orderId: number) => stmt<[number], JobRow>(db, 'SELECT * FROM dispatch_jobs WHERE order_id = ?').get(orderId),
  open: (db: Db) => stmt<[], JobRow>(db, "SELECT * FROM dispatch_jobs WHERE state IN ('waiting', 'offered') ORDER BY order_id").all(),
  /** A job for a new delivery order (no-op when it exists: an event delivered twice). */
  create(db: Db, orderId: number, storeId: number, mode: 'offer' | 'auto', now: string): void {
    stmt(db, `INSERT INTO dispatch_jobs (order_id, store_id, mode, state, created_at, updated_at) VALUES (?, ?, ?, 'waiting', ?, ?)
      ON CONFLICT(order_id) DO NOTHING`).run(orderId, storeId, mode, now, now)
  },
  /** An offer the dispatcher moves on from because it ran out: recorded as expired (not withdrawn later by the acceptance of another). */
  expire(db: Db, offerId: number, now: string): void {
    stmt(db, "UPDATE delivery_offers SET status = 'expired', responded_at = expires_at WHERE id = ? AND status = 'pending' AND expires_at <= ?").run(offerId, now)
  },
  save(db: Db, j: Pick<JobRow, 'order_id' | 'state' | 'due_at' | 'offer_id' | 'tried' | 'decisions' | 'hold_until'>, now: string): void {
    stmt(db, 'UPDATE dispatch_jobs SET state = ?, due_at = ?, offer_id = ?, tried = ?, decisions = ?, hold_until = ?, updated_at = ? WHERE order_id = ?')
      .run(j.state, j.due_at, j.offer_id, j.tried, j.decisions, j.hold_until, now, j.order_id)
  },
}

/**
 * What a decision reads of a driver besides its position, from SQLite (the truth; src/domain/fleet-loads.ts
 * keeps it in memory from there): its active deliveries, its open offers, and when its last delivery
 * ended (the newest delivered or failed order's last change; by the index, whatever the history's size).
 */
export function driverLoadSeed(db: Db, driverId: number, now: string): LoadSeed {
  const active = stmt<[number], number>(db, `SELECT id FROM orders WHERE driver_id = ? AND delivery_status IN ('assigned', 'picked_up', 'out_for_delivery')`).pluck().all(driverId)
  const offers = stmt<[number, string], { id: number; expires_at: string }>(db, `SELECT id, expires_at FROM delivery_offers WHERE driver_id = ? AND status = 'pending' AND expires_at > ?`).all(driverId, now)
  const last = stmt<[number, number], string | null>(db, `SELECT MAX(
      (SELECT updated_at FROM orders WHERE driver_id = ? AND delivery_status = 'delivered' ORDER BY id DESC LIMIT 1),
      (SELECT updated_at FROM orders WHERE driver_id = ? AND delivery_status = 'failed' ORDER BY id DESC LIMIT 1))`).pluck().get(driverId, driverId)
  return { active, offers: offers.map((o) => ({ id: o.id, expiresAtMs: Date.parse(o.expires_at) })), lastEndMs: last ? Date.parse(last) : null }
}

/** A driver's load now (active deliveries + open offers) as SQLite has it: the check before an offer or assignment is committed. */
export const driverLoadNow = (db: Db, driverId: number, now: string): number =>
  stmt<[number, number, string], number>(db, `SELECT (SELECT COUNT(*) FROM orders WHERE driver_id = ? AND delivery_status IN ('assigned', 'picked_up', 'out_for_delivery'))
    + (SELECT COUNT(*) FROM delivery_offers WHERE driver_id = ? AND status = 'pending' AND expires_at > ?)`).pluck().get(driverId, driverId, now)!

/** On-shift drivers with a stored position, to fill the spatial index at start. */
export function onShiftPositions(db: Db): Array<{ id: number; owner_id: number; restaurant_id: number | null; lat: number; lng: number; location_updated_at: string }> {
  return stmt<[], { id: number; owner_id: number; restaurant_id: number | null; lat: number; lng: number; location_updated_at: string }>(db,
    `SELECT d.id, d.owner_id, d.restaurant_id, p.lat, p.lng, p.location_updated_at FROM drivers d JOIN driver_positions p ON p.driver_id = d.id
     WHERE d.on_shift = 1 AND p.lat IS NOT NULL AND p.lng IS NOT NULL AND p.location_updated_at IS NOT NULL`).all()
}

/** Every offer of an order, oldest first (the explain view). */
export const orderOffers = (db: Db, orderId: number): OfferRow[] => stmt<[number], OfferRow>(db, 'SELECT * FROM delivery_offers WHERE order_id = ? ORDER BY id').all(orderId)
