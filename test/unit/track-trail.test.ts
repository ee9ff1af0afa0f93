/**
 * The delivery trail (src/ws/track-trail.ts) keeps positions in a ring of numbers, not an object per
 * position: it must give what the plain list it replaced gave — the last TRAIL_POINTS positions,
 * a repeated spot only moving the last one's time, the estimate over them — in every order of adds
 * and forgets.
 */
import t from 'tap'
import { DeliveryTrails, TRAIL_POINTS } from '../../src/ws/track-trail.ts'
import { estimateArrival, type Fix } from '../../src/domain/eta.ts'

t.test('the ring gives what the list of positions gave', async (t) => {
  const dest = { lat: 52.52, lng: 13.405 }
  const destinationOf = (id: number) => (id % 2 ? dest : null)
  const trails = new DeliveryTrails(destinationOf)
  const model = new Map<number, Fix[]>()
  let seed = 7
  const rand = () => ((seed = (seed * 16807) % 2147483647) / 2147483647)
  const mismatches: number[] = []
  for (let step = 0; step < 6000; step++) {
    const id = 1 + Math.floor(rand() * 5)
    const m = model.get(id) ?? []
    model.set(id, m)
    const last = m[m.length - 1]
    const again = last && rand() < 0.2
    const lat = again ? last.lat : 52.5 + rand() / 10
    const lng = again ? last.lng : 13.4 + rand() / 10
    const at = 1e12 + step * 500
    trails.add(id, lat, lng, at)
    if (last && last.lat === lat && last.lng === lng) m[m.length - 1] = { lat, lng, at }
    else m.push({ lat, lng, at })
    if (m.length > TRAIL_POINTS) m.shift()
    if (rand() < 0.003) { trails.forget(id); model.delete(id) }
    const mm = model.get(id)
    const want = JSON.stringify([mm ? estimateArrival(mm, destinationOf(id)) : null, (mm ?? []).map((f) => [f.lat, f.lng])])
    if (JSON.stringify([trails.eta(id), trails.points(id)]) !== want) mismatches.push(step)
  }
  t.same(mismatches, [])
  t.ok([...model.values()].some((m) => m.length === TRAIL_POINTS), 'some trail wrapped around')
})
