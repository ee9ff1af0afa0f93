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

/**
 * One order's trail: a ring of (lat, lng, at) triples in a Float64Array, oldest at `start`. Not an
 * object per position: at a fleet of 10,000 drivers the trails hold up to a million positions, and
 * as objects each one lived just long enough to reach V8's old generation and be collected there
 * (GC was ~17 % of the server's JS time at D = W = 9,950 in bench/tracking.ts).
 */
interface Trail { buf: Float64Array; start: number; len: number; destination?: LatLng | null }

/** Room for this many positions when a trail starts; doubled as it fills, up to TRAIL_POINTS. */
const FIRST_CAPACITY = 8

export class DeliveryTrails {
  private readonly trails = new Map<number, Trail>()

  /** `destinationOf` is read once per order, the first time its estimate is needed. */
  constructor(private readonly destinationOf: (orderId: number) => LatLng | null) {}

  add(orderId: number, lat: number, lng: number, at: number): void {
    let t = this.trails.get(orderId)
    if (!t) {
      if (this.trails.size >= TRAIL_ORDERS) this.trails.delete(this.trails.keys().next().value!)
      this.trails.set(orderId, (t = { buf: new Float64Array(FIRST_CAPACITY * 3), start: 0, len: 0 }))
    }
    const cap = t.buf.length / 3
    if (t.len > 0) {
      const last = ((t.start + t.len - 1) % cap) * 3
      // The same spot again (a driver's periodic resend) adds no route but still counts as time passing.
      if (t.buf[last] === lat && t.buf[last + 1] === lng) { t.buf[last + 2] = at; return }
    }
    if (t.len === cap && cap < TRAIL_POINTS) {
      const grown = new Float64Array(Math.min(cap * 2, TRAIL_POINTS) * 3)
      for (let i = 0; i < t.len; i++) grown.set(t.buf.subarray(((t.start + i) % cap) * 3, ((t.start + i) % cap) * 3 + 3), i * 3)
      t.buf = grown
      t.start = 0
    }
    const size = t.buf.length / 3
    let slot: number
    if (t.len < size) slot = (t.start + t.len++) % size
    else { slot = t.start; t.start = (t.start + 1) % size } // full: the oldest position makes room
    t.buf[slot * 3] = lat
    t.buf[slot * 3 + 1] = lng
    t.buf[slot * 3 + 2] = at
  }

  /** The estimate from the latest position to the destination; null when either is unknown. */
  eta(orderId: number): Eta | null {
    const t = this.trails.get(orderId)
    if (!t) return null
    if (t.destination === undefined) t.destination = this.destinationOf(orderId)
    // Without a destination there is no estimate: the positions need not be read at all.
    if (t.destination === null) return null
    return estimateArrival(fixesOf(t), t.destination)
  }

  /** The positions so far as `[lat, lng]` pairs, oldest first. */
  points(orderId: number): Array<[number, number]> {
    const t = this.trails.get(orderId)
    return t ? fixesOf(t).map((f) => [f.lat, f.lng]) : []
  }

  /** The driver is no longer visible on this order (delivered, failed, unassigned). */
  forget(orderId: number): void {
    this.trails.delete(orderId)
  }
}

/** A trail's positions, oldest first. */
function fixesOf(t: Trail): Fix[] {
  const size = t.buf.length / 3
  const out: Fix[] = new Array(t.len)
  for (let i = 0; i < t.len; i++) {
    const k = ((t.start + i) % size) * 3
    out[i] = { lat: t.buf[k]!, lng: t.buf[k + 1]!, at: t.buf[k + 2]! }
  }
  return out
}
