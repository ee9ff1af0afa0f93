/**
 * Delivery zones, pure (src/domain/zones.ts; docs/dispatch.md "Zones"): polygons with holes (edges
 * inside, a hole's inside out), circles by great-circle distance, the cheapest of overlapping zones
 * (the first listed among equals), ring validation, and the refusals a delivery gets.
 */
import t from 'tap'
import { decideZone, matchZone, polygonContains, polygonProblem, type StoredZone } from '../../src/domain/zones.ts'
import { deliveryEta, straightSeconds, STRAIGHT_ROUTER } from '../../src/domain/eta.ts'

const square = [[[0, 0], [10, 0], [10, 10], [0, 10], [0, 0]]]
const withHole = [square[0]!, [[4, 4], [6, 4], [6, 6], [4, 6], [4, 4]]]
const p = (lng: number, lat: number) => ({ lat, lng })

t.test('polygons: inside, outside, edges and vertices inside, holes out (their edges in)', async (t) => {
  t.ok(polygonContains(square, p(5, 5)))
  t.notOk(polygonContains(square, p(11, 5)))
  t.ok(polygonContains(square, p(10, 5)), 'on an edge')
  t.ok(polygonContains(square, p(0, 0)), 'a vertex')
  t.notOk(polygonContains(withHole, p(5, 5)), 'in the hole')
  t.ok(polygonContains(withHole, p(4, 5)), 'on the hole\'s edge')
  t.ok(polygonContains(withHole, p(2, 2)))
  const concave = [[[0, 0], [10, 0], [10, 10], [5, 5], [0, 10], [0, 0]]]
  t.notOk(polygonContains(concave, p(5, 8)), 'the notch of a concave polygon is outside')
  t.ok(polygonContains(concave, p(5, 3)))
})

t.test('the cheapest containing zone wins; the first among equals; circles by distance', async (t) => {
  const zones: StoredZone[] = [
    { name: 'big', polygon: square, fee: 300, min_order: 0 },
    { name: 'small', polygon: [[[4, 4], [6, 4], [6, 6], [4, 6], [4, 4]]], fee: 100, min_order: 0 },
    { name: 'same', polygon: [[[4, 4], [6, 4], [6, 6], [4, 6], [4, 4]]], fee: 100, min_order: 0 },
    { name: 'circle', center: { lat: 20, lng: 20 }, radius_m: 1000, fee: 50, min_order: 0 },
  ]
  t.equal(matchZone(zones, p(5, 5))?.name, 'small')
  t.equal(matchZone(zones, p(1, 1))?.name, 'big')
  t.equal(matchZone(zones, { lat: 20.008, lng: 20 })?.name, 'circle', '~890 m from the center')
  t.equal(matchZone(zones, { lat: 20.01, lng: 20 }), null, '~1.1 km from the center')
})

t.test('rings: closed, four positions, [lng, lat] in range', async (t) => {
  t.equal(polygonProblem(square), null)
  t.match(polygonProblem([[[0, 0], [1, 0], [1, 1], [0, 1]]]), /not closed/)
  t.match(polygonProblem([[[0, 0], [1, 0], [0, 0]]]), /at least four/)
  t.match(polygonProblem([[[0, 0], [1, 95], [1, 1], [0, 0]]]), /not a \[lng, lat\]/)
})

t.test('a delivery: no zones any position; a position required; outside; minimum', async (t) => {
  const money = (c: number) => (c / 100).toFixed(2)
  const zones: StoredZone[] = [{ name: 'Z', polygon: square, fee: 250, min_order: 1500 }]
  t.same(decideZone([], null, 0, money), { ok: true, zone: null })
  t.match(decideZone(zones, null, 5000, money), { ok: false, refusal: { field: 'lat', reason: 'validation_failed' } })
  t.match(decideZone(zones, p(20, 20), 5000, money), { ok: false, refusal: { field: 'address', reason: 'outside_delivery_zone' } })
  t.match(decideZone(zones, p(5, 5), 1499, money), { ok: false, refusal: { field: 'items', reason: 'below_minimum_order', message: /15\.00/ } })
  t.match(decideZone(zones, p(5, 5), 1500, money), { ok: true, zone: { name: 'Z', fee: 250 } })
})

t.test('estimates: ready after prep, picked up when ready or when a driver can be there, dropped off after the ride', async (t) => {
  const s = straightSeconds({ lat: 0, lng: 0 }, { lat: 0.01, lng: 0 })
  t.equal(s, Math.round((1111.95 * STRAIGHT_ROUTER.detour) / STRAIGHT_ROUTER.speed))
  const e = deliveryEta(0, 15, 600)
  t.same(e, { ready_at: new Date(900_000).toISOString(), pickup_at: new Date(900_000).toISOString(), dropoff_at: new Date(1_500_000).toISOString() })
  t.equal(deliveryEta(0, 15, 600, 1200).pickup_at, new Date(1_200_000).toISOString(), 'a driver 20 min away picks up after ready')
})
