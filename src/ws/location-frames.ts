/**
 * The two frames a driver position becomes (docs/realtime.md), written out as JSON text directly:
 * they are the hottest frames of the server (one per position per topic), and a template costs a
 * fraction of `JSON.stringify` walking the nested object. The text is exactly what JSON.stringify
 * of the object gives (same keys, same order; numbers are finite, checked on the way in), and the
 * objects still exist for MessagePack subscribers and for re-sending the latest frame. Times are
 * the driver actor's ISO-8601 text (digits, `-`, `:`, `.`, `T`, `+`): nothing in them to escape.
 */
import type { DriverPosition } from '../actors/realtime.ts'
import type { Eta } from '../domain/eta.ts'

/** A tracking view's `location` frame (api-v1 §2.5 `driver`, plus the ETA). */
export interface TrackLocationFrame {
  type: 'location'
  order_id: number
  driver: { name: string; lat: number; lng: number; location_updated_at: string }
  eta: Eta | null
}

/**
 * What a tracking socket gets when it joins or catches up (src/ws/realtime.ts `lastTrackLocation`):
 * the latest location frame, or one with the ETA alone when the room has none yet, with the route so
 * far as `[lat, lng]` pairs.
 */
export type TrackCatchUpFrame = (TrackLocationFrame | { type: 'location'; order_id: number; eta: Eta | null }) & { trail: Array<[number, number]> }

/** Every location frame of a tracking socket (the tracking page reads both, src/browser/track.ts). */
export type TrackLocationFrames = TrackLocationFrame | TrackCatchUpFrame

export function trackLocationJson(f: TrackLocationFrame): string {
  const d = f.driver
  return `{"type":"location","order_id":${f.order_id},"driver":{"name":${JSON.stringify(d.name)},"lat":${d.lat},"lng":${d.lng},` +
    `"location_updated_at":"${d.location_updated_at}"},"eta":${f.eta === null ? 'null' : JSON.stringify(f.eta)}}`
}

/** A dispatch feed's `location` frame. */
export function feedLocationFrame(p: DriverPosition) {
  return { type: 'location', driver_id: p.driverId, name: p.name, lat: p.lat, lng: p.lng, location_updated_at: p.at }
}

export function feedLocationJson(p: DriverPosition): string {
  return `{"type":"location","driver_id":${p.driverId},"name":${JSON.stringify(p.name)},"lat":${p.lat},"lng":${p.lng},"location_updated_at":"${p.at}"}`
}
