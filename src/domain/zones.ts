/**
 * Delivery zones (issue 37 item 1; docs/dispatch.md "Zones"): pure, no I/O. A store's zones are a
 * list of areas — a GeoJSON Polygon's `coordinates` (`[[[lng, lat], …]]`, outer ring first, holes
 * after) or a circle `{center, radius_m}` — each with a fee and a minimum order. A delivery to a
 * point is priced by the cheapest zone that contains it (ties: the one listed first); a point on a
 * polygon's edge or exactly at a circle's radius is inside.
 */
import { haversineMeters, type LatLng } from './eta.ts'

/** Bounds, so a zones document stays small and a lookup stays cheap. */
export const ZONE_LIMITS = { zones: 50, rings: 10, vertices: 1000, radiusM: 100_000 } as const

/** A zone as stored in the store's settings (`delivery_zones`): money in cents. */
export interface StoredZone {
  name: string
  polygon?: number[][][]
  center?: LatLng
  radius_m?: number
  fee: number
  min_order: number
}

/** The zone a point falls in, as quotes and orders use it. */
export interface ZoneMatch { index: number; name: string; fee: number; min_order: number }

/** `settings.delivery_zones` as stored, or [] (no zones: any address, no fee — the behaviour before zones). */
export function zonesOf(settings: Record<string, unknown>): StoredZone[] {
  const z = settings.delivery_zones
  return Array.isArray(z) ? (z as StoredZone[]) : []
}

/** Is `p` (lng, lat) on the segment a–b (planar, in degrees)? */
function onSegment(px: number, py: number, ax: number, ay: number, bx: number, by: number): boolean {
  const cross = (bx - ax) * (py - ay) - (by - ay) * (px - ax)
  const len = Math.hypot(bx - ax, by - ay)
  // ~1e-9 degrees is about 0.1 mm: "on the edge" within floating-point noise.
  if (Math.abs(cross) > 1e-9 * Math.max(len, 1e-12)) return false
  return px >= Math.min(ax, bx) - 1e-12 && px <= Math.max(ax, bx) + 1e-12 && py >= Math.min(ay, by) - 1e-12 && py <= Math.max(ay, by) + 1e-12
}

/** Where `p` is against one closed ring: 'edge', 'in' or 'out' (even-odd ray casting). */
function ringSide(ring: readonly number[][], x: number, y: number): 'edge' | 'in' | 'out' {
  let inside = false
  for (let i = 0, j = ring.length - 1; i < ring.length; j = i++) {
    const [xi, yi] = ring[i] as [number, number]
    const [xj, yj] = ring[j] as [number, number]
    if (onSegment(x, y, xj, yj, xi, yi)) return 'edge'
    if ((yi > y) !== (yj > y) && x < ((xj - xi) * (y - yi)) / (yj - yi) + xi) inside = !inside
  }
  return inside ? 'in' : 'out'
}

/** Does the polygon (outer ring, then holes) contain `p`? Its edges, and a hole's edges, count as inside. */
export function polygonContains(polygon: readonly (readonly number[][])[], p: LatLng): boolean {
  const [outer, ...holes] = polygon
  if (!outer || ringSide(outer, p.lng, p.lat) === 'out') return false
  for (const h of holes) if (ringSide(h, p.lng, p.lat) === 'in') return false
  return true
}

/** Does the zone contain `p`? */
export function zoneContains(z: StoredZone, p: LatLng): boolean {
  if (z.polygon) return polygonContains(z.polygon, p)
  if (z.center && z.radius_m !== undefined) return haversineMeters(z.center, p) <= z.radius_m
  return false
}

/** The cheapest zone containing `p` (the first listed among equally cheap ones), or null. */
export function matchZone(zones: readonly StoredZone[], p: LatLng): ZoneMatch | null {
  let best: ZoneMatch | null = null
  zones.forEach((z, index) => {
    if ((best === null || z.fee < best.fee) && zoneContains(z, p)) best = { index, name: z.name, fee: z.fee, min_order: z.min_order }
  })
  return best
}

/** Why a polygon is not usable, or null: closed rings of at least four positions, [lng, lat] in range. */
export function polygonProblem(polygon: readonly (readonly number[][])[]): string | null {
  if (polygon.length === 0) return 'A polygon needs at least its outer ring.'
  for (const [r, ring] of polygon.entries()) {
    if (ring.length < 4) return `Ring ${r} needs at least four positions (a closed triangle).`
    for (const pos of ring) {
      if (pos.length !== 2) return `Ring ${r}: every position is [lng, lat].`
      const [lng, lat] = pos as [number, number]
      if (!(lng >= -180 && lng <= 180 && lat >= -90 && lat <= 90)) return `Ring ${r}: [${lng}, ${lat}] is not a [lng, lat] position.`
    }
    const a = ring[0]!
    const b = ring[ring.length - 1]!
    if (a[0] !== b[0] || a[1] !== b[1]) return `Ring ${r} is not closed: its last position must repeat its first (GeoJSON).`
  }
  return null
}

// ---- A delivery's price and estimate ---------------------------------------------------------------

/** Why a delivery cannot be placed or quoted here: the field, the catalog reason, the message. */
export interface ZoneRefusal { field: 'lat' | 'address' | 'items'; reason: 'validation_failed' | 'outside_delivery_zone' | 'below_minimum_order'; message: string }

/** The zone pricing a delivery to `dest` with goods worth `goodsCents` (subtotal after discounts). */
export type ZoneDecision = { ok: true; zone: ZoneMatch | null } | { ok: false; refusal: ZoneRefusal }

/**
 * The zone of a delivery (no zones: any destination, no fee, as before zones existed). With zones a
 * position is required; outside every zone is refused on `address`, under the zone's minimum on `items`.
 */
export function decideZone(zones: readonly StoredZone[], dest: LatLng | null, goodsCents: number, currencyCents: (c: number) => string): ZoneDecision {
  if (zones.length === 0) return { ok: true, zone: null }
  if (!dest) return { ok: false, refusal: { field: 'lat', reason: 'validation_failed', message: 'This store delivers within zones: send the address\'s lat and lng (or a saved address with a position).' } }
  const zone = matchZone(zones, dest)
  if (!zone) return { ok: false, refusal: { field: 'address', reason: 'outside_delivery_zone', message: 'This address is outside the store\'s delivery zones.' } }
  if (goodsCents < zone.min_order) {
    return { ok: false, refusal: { field: 'items', reason: 'below_minimum_order', message: `Orders delivered to ${zone.name} start at ${currencyCents(zone.min_order)}.` } }
  }
  return { ok: true, zone }
}
