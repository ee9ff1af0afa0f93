/**
 * The route so far and the ETA of deliveries on the way (issue 20 item 8, docs/tracking-page.md):
 * the driver's recent positions per order while the customer may see them (picked up, out for
 * delivery), kept in memory only — a position is superseded within seconds, and the drivers table
 * keeps the latest one. A tracking page opened mid-delivery gets the trail with its first location
 * frame; every location frame carries the estimate (src/domain/eta.ts).
 */
import { estimateArrival, type Eta, type Fix, type LatLng } from '../domain/eta.ts'

/** Positions kept per order: at one every 2–5 s, the last few minutes of the route. */
export const TRAIL_POINTS = 100
/** Orders with a trail at most (the oldest is dropped first): memory stays bounded whatever the fleet does. */
export const TRAIL_ORDERS = 20_000

interface Trail { fixes: Fix[]; destination?: LatLng | null }

export class DeliveryTrails {
  private readonly trails = new Map<number, Trail>()

  /** `destinationOf` is read once per order, the first time its estimate is needed. */
  constructor(private readonly destinationOf: (orderId: number) => LatLng | null) {}

  add(orderId: number, lat: number, lng: number, at: number): void {
    let t = this.trails.get(orderId)
    if (!t) {
      if (this.trails.size >= TRAIL_ORDERS) this.trails.delete(this.trails.keys().next().value!)
      this.trails.set(orderId, (t = { fixes: [] }))
    }
    const last = t.fixes[t.fixes.length - 1]
    // The same spot again (a driver's periodic resend) adds no route but still counts as time passing.
    if (last && last.lat === lat && last.lng === lng) t.fixes[t.fixes.length - 1] = { lat, lng, at }
    else t.fixes.push({ lat, lng, at })
    if (t.fixes.length > TRAIL_POINTS) t.fixes.shift()
  }

  /** The estimate from the latest position to the destination; null when either is unknown. */
  eta(orderId: number): Eta | null {
    const t = this.trails.get(orderId)
    if (!t) return null
    if (t.destination === undefined) t.destination = this.destinationOf(orderId)
    return estimateArrival(t.fixes, t.destination)
  }

  /** The positions so far as `[lat, lng]` pairs, oldest first. */
  points(orderId: number): Array<[number, number]> {
    return (this.trails.get(orderId)?.fixes ?? []).map((f) => [f.lat, f.lng])
  }

  /** The driver is no longer visible on this order (delivered, failed, unassigned). */
  forget(orderId: number): void {
    this.trails.delete(orderId)
  }
}
