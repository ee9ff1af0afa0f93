/**
 * The route planner (src/domain/route.ts; docs/dispatch.md "Batching"): cheapest insertion with
 * each pickup before its drop-off, ties keeping the route as it was, and the detour one more order adds.
 */
import t from 'tap'
import { batchPlan, planRoute, type Matrix } from '../../src/domain/route.ts'

/** Points on a line: travel time is the distance between positions (seconds). */
const line = (xs: number[]): Matrix => xs.map((a) => xs.map((b) => Math.abs(a - b)))

t.test('a drop-off on the way goes before the farther one, whatever the order ids', async (t) => {
  // 0: driver at 50, 1: store at 0, 2: drop-off of order 1 at 300, 3: drop-off of order 2 at 150.
  const m = line([50, 0, 300, 150])
  const r = planRoute([{ order_id: 1, pickup: 1, dropoff: 2 }, { order_id: 2, pickup: 1, dropoff: 3 }], m)
  t.same(r.stops.map((s) => `${s.type}${s.order_id}`), ['pickup1', 'pickup2', 'dropoff2', 'dropoff1'])
  t.same(r.stops.map((s) => s.at_s), [50, 50, 200, 350])
  t.equal(r.total_s, 350)
})

t.test('a pickup never comes after its drop-off; a picked-up order has only its drop-off', async (t) => {
  // The drop-off (point 2) is right at the driver, the store far: still pickup first.
  const m = line([0, 500, 1])
  t.same(planRoute([{ order_id: 7, pickup: 1, dropoff: 2 }], m).stops.map((s) => s.type), ['pickup', 'dropoff'])
  t.same(planRoute([{ order_id: 7, pickup: null, dropoff: 2 }], m).stops.map((s) => s.type), ['dropoff'])
})

t.test('the detour of one more order: after − before, and when the driver reaches its store', async (t) => {
  // Driver at 100 carrying order 1 (picked up) to 200; the store at 0; order 2 to 250 or to -400.
  const m = line([100, 200, 0, 250, -400])
  const onTheWay = batchPlan([{ order_id: 1, pickup: null, dropoff: 1 }], { order_id: 2, pickup: 2, dropoff: 3 }, m)
  t.same({ before: onTheWay.before_s, after: onTheWay.after_s, detour: onTheWay.detour_s, pickup: onTheWay.pickup_s }, { before: 100, after: 350, detour: 250, pickup: 100 })
  const away = batchPlan([{ order_id: 1, pickup: null, dropoff: 1 }], { order_id: 2, pickup: 2, dropoff: 4 }, m)
  // Cheapest: deliver order 1 first (100), back to the store (200), out to -400 (400) = 700, vs 900 and 1100 store first.
  t.same({ after: away.after_s, detour: away.detour_s, pickup: away.pickup_s }, { after: 700, detour: 600, pickup: 300 }, 'the carried order is delivered on the way to the store')
})
