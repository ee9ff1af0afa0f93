/**
 * The driver-position frames written as JSON text (src/ws/location-frames.ts) are exactly what
 * JSON.stringify of their objects gives: the same bytes reach every client as before.
 */
import t from 'tap'
import { feedLocationFrame, feedLocationJson, trackLocationJson, type TrackLocationFrame } from '../../src/ws/location-frames.ts'
import type { DriverPosition } from '../../src/actors/realtime.ts'

const names = ['Ana', 'Zoë "Z" O\'Neil', 'back\\slash\nnew line\u2028', '司机 🚗', '']
const coords: Array<[number, number]> = [[0, 0], [-0, -180], [52.520008, 13.404954], [-89.999999, 179.9999999], [1e-7, -1.5e-10]]

t.test('track and feed frames', async (t) => {
  for (const name of names) {
    for (const [lat, lng] of coords) {
      const pos: DriverPosition = { driverId: 42, ownerId: 1, restaurantId: 3, name, lat, lng, at: '2026-11-24T00:40:00.123+00:00', atMs: 0 }
      t.equal(feedLocationJson(pos), JSON.stringify(feedLocationFrame(pos)))
      for (const eta of [null, { distance_m: 1200, seconds: 300, arriving: false }, { distance_m: 10, seconds: null, arriving: true }]) {
        const f: TrackLocationFrame = { type: 'location', order_id: 7, driver: { name, lat, lng, location_updated_at: pos.at }, eta }
        t.equal(trackLocationJson(f), JSON.stringify(f))
      }
    }
  }
})
