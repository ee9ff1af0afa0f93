/**
 * Arrival estimates for the tracking view (issue 20 item 8, docs/tracking-page.md "ETA"): the
 * remaining straight-line distance from the driver to the destination, stretched by a detour
 * factor for roads, divided by the driver's recent speed. Pure; computed once, on the server,
 * into the tracking socket's `location` frames, so the page only displays it.
 */

export interface LatLng { lat: number; lng: number }
/** A driver position and when the server received it (ms since the epoch). */
export interface Fix extends LatLng { at: number }

/** The estimate as the tracking socket sends it. */
export interface Eta {
  /** Straight-line metres from the driver to the destination. */
  distance_m: number
  /** Estimated seconds to arrival; null while the speed is unknown (fewer than two positions, too short a span). */
  seconds: number | null
  /** The driver is within ETA_RULES.arrivingWithinM of the destination. */
  arriving: boolean
}

export const ETA_RULES = {
  /** Speed is measured over the positions of the last two minutes: recent enough to follow traffic. */
  windowMs: 120_000,
  /** …spanning at least this long, so two positions a few milliseconds apart give no speed at all. */
  minSpanMs: 2_000,
  /** m/s floor (about 7 km/h): a driver waiting at a light is still coming, the ETA stays finite. */
  minSpeed: 2,
  /** m/s ceiling (72 km/h): a GPS jump must not promise an impossible arrival. */
  maxSpeed: 20,
  /** Roads are longer than the straight line; 1.3 is the usual urban circuity factor. */
  detour: 1.3,
  /** Closer than this the page says "arriving" instead of a number of minutes. */
  arrivingWithinM: 150,
} as const

const EARTH_RADIUS_M = 6_371_008.8
const rad = (deg: number) => (deg * Math.PI) / 180

/** Great-circle distance in metres (haversine). */
export function haversineMeters(a: LatLng, b: LatLng): number {
  const dLat = rad(b.lat - a.lat)
  const dLng = rad(b.lng - a.lng)
  const h = Math.sin(dLat / 2) ** 2 + Math.cos(rad(a.lat)) * Math.cos(rad(b.lat)) * Math.sin(dLng / 2) ** 2
  return 2 * EARTH_RADIUS_M * Math.asin(Math.min(1, Math.sqrt(h)))
}

/**
 * The driver's speed in m/s over the positions of the last `windowMs` (path length / time), held
 * between `minSpeed` and `maxSpeed`; null with fewer than two positions or less than `minSpanMs`
 * between the first and the last. `fixes` are in the order received.
 */
export function recentSpeed(fixes: readonly Fix[]): number | null {
  const last = fixes[fixes.length - 1]
  if (!last) return null
  let i = fixes.length - 1
  while (i > 0 && fixes[i - 1]!.at >= last.at - ETA_RULES.windowMs) i--
  const span = last.at - fixes[i]!.at
  if (span < ETA_RULES.minSpanMs) return null
  let path = 0
  for (let k = i + 1; k < fixes.length; k++) path += haversineMeters(fixes[k - 1]!, fixes[k]!)
  return Math.min(ETA_RULES.maxSpeed, Math.max(ETA_RULES.minSpeed, path / (span / 1000)))
}

/** The estimate from the driver's recent positions (latest last) to `destination`; null when either is unknown. */
export function estimateArrival(fixes: readonly Fix[], destination: LatLng | null): Eta | null {
  const here = fixes[fixes.length - 1]
  if (!here || !destination) return null
  const distance = haversineMeters(here, destination)
  const arriving = distance <= ETA_RULES.arrivingWithinM
  const speed = recentSpeed(fixes)
  const seconds = arriving ? 0 : speed === null ? null : Math.round((distance * ETA_RULES.detour) / speed)
  return { distance_m: Math.round(distance), seconds, arriving }
}

/**
 * Travel time without a road network (ROUTER=straight, the default; docs/dispatch.md "Router"): the
 * great-circle distance stretched by ETA_RULES.detour, at a city driving speed.
 */
export const STRAIGHT_ROUTER = {
  detour: ETA_RULES.detour,
  /** m/s: 25 km/h, door to door in a city (lights, parking) for a car or a scooter. */
  speed: 25 / 3.6,
} as const

/** Seconds from `a` to `b` by the straight-line router. */
export const straightSeconds = (a: LatLng, b: LatLng): number => Math.round((haversineMeters(a, b) * STRAIGHT_ROUTER.detour) / STRAIGHT_ROUTER.speed)

/** A delivery's promise (issue 37 item 2; docs/dispatch.md "Quotes"): ISO 8601 UTC instants. */
export interface DeliveryEta { ready_at: string; pickup_at: string; dropoff_at: string }

/**
 * The estimate of a delivery placed at `nowMs`: ready after the store's prep time; picked up when
 * ready, or when the nearest driver can be there if later (`toStoreS`, when known); dropped off
 * after the ride from the store (`rideS`; 0 when a position is unknown).
 */
export function deliveryEta(nowMs: number, prepMinutes: number, rideS: number, toStoreS = 0): DeliveryEta {
  const ready = nowMs + prepMinutes * 60_000
  const pickup = Math.max(ready, nowMs + toStoreS * 1000)
  return { ready_at: new Date(ready).toISOString(), pickup_at: new Date(pickup).toISOString(), dropoff_at: new Date(pickup + rideS * 1000).toISOString() }
}
