/** What a driver's route is made of (docs/dispatch.md "Batching"): their active deliveries and where they go. */
import { stmt, type Db } from './db.ts'

export interface ActiveLeg {
  id: number
  driver_id: number
  store_id: number
  delivery_status: 'assigned' | 'picked_up' | 'out_for_delivery'
  address: string | null
  dest_lat: number | null
  dest_lng: number | null
}

/** The active deliveries (assigned, picked up, out for delivery) of these drivers, oldest first. */
export function activeLegs(db: Db, driverIds: readonly number[]): ActiveLeg[] {
  if (driverIds.length === 0) return []
  return stmt<unknown[], ActiveLeg>(db, `SELECT id, driver_id, store_id, delivery_status, address, dest_lat, dest_lng FROM orders
    WHERE driver_id IN (${driverIds.map(() => '?').join(',')}) AND delivery_status IN ('assigned', 'picked_up', 'out_for_delivery') ORDER BY id`).all(...driverIds)
}

/** A driver's last stored position. */
export const lastPosition = (db: Db, driverId: number) =>
  stmt<[number], { lat: number; lng: number }>(db, 'SELECT lat, lng FROM driver_positions WHERE driver_id = ? AND lat IS NOT NULL AND lng IS NOT NULL').get(driverId) ?? null
