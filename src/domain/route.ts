/**
 * A driver's route through their deliveries (issue 37 item 3, batching; docs/dispatch.md
 * "Batching"): pure. Where the stops go, in which order, and what one more order adds to the route.
 *
 * A route starts at the driver's last position and visits, per order, the store (pickup, unless
 * already picked up) and then the customer (drop-off). It is built by cheapest insertion: the
 * orders are taken in id order and each is inserted where it adds the least travel time, its
 * pickup before its drop-off. The same function plans the route a batching decision judges and the
 * `stops` the driver app lists, so the two agree.
 */

/** What a batching decision allows (docs/dispatch.md "Batching"). */
export const BATCH_RULES = {
  /**
   * Seconds of travel one more order may add to the driver's planned route (10 minutes): the new
   * route's travel time minus the current route's. Over it, the driver is not a candidate for the order.
   */
  maxDetourS: 600,
} as const

/** An order on a route; `pickup` and `dropoff` are indices into the travel matrix (0 is the start). */
export interface RouteOrder {
  order_id: number
  /** The store's point, or null once picked up (only the drop-off is left). */
  pickup: number | null
  dropoff: number
}

export interface RouteStop {
  type: 'pickup' | 'dropoff'
  order_id: number
  point: number
  /** Seconds from the start to this stop along the route. */
  at_s: number
}

export interface Route { stops: RouteStop[]; total_s: number }

/** `secs[i][j]`: travel seconds from point i to point j. */
export type Matrix = readonly (readonly number[])[]

type Node = { type: 'pickup' | 'dropoff'; order_id: number; point: number }

function cost(nodes: readonly Node[], secs: Matrix): number {
  let t = 0
  let at = 0
  for (const n of nodes) { t += secs[at]![n.point]!; at = n.point }
  return t
}

/** Insert one order where it adds the least time (pickup before drop-off; the latest of equally cheap places). */
function insert(nodes: Node[], o: RouteOrder, secs: Matrix): Node[] {
  const drop: Node = { type: 'dropoff', order_id: o.order_id, point: o.dropoff }
  let best: Node[] | null = null
  let bestCost = Infinity
  if (o.pickup === null) {
    for (let j = 0; j <= nodes.length; j++) {
      const c = [...nodes.slice(0, j), drop, ...nodes.slice(j)]
      const t = cost(c, secs)
      if (t <= bestCost) { bestCost = t; best = c }
    }
    return best!
  }
  const pick: Node = { type: 'pickup', order_id: o.order_id, point: o.pickup }
  for (let i = 0; i <= nodes.length; i++) {
    for (let j = i; j <= nodes.length; j++) {
      const c = [...nodes.slice(0, i), pick, ...nodes.slice(i, j), drop, ...nodes.slice(j)]
      const t = cost(c, secs)
      if (t <= bestCost) { bestCost = t; best = c }
    }
  }
  return best!
}

/** The route through `orders` from point 0: cheapest insertion in order id order. */
export function planRoute(orders: readonly RouteOrder[], secs: Matrix): Route {
  let nodes: Node[] = []
  for (const o of [...orders].sort((a, b) => a.order_id - b.order_id)) nodes = insert(nodes, o, secs)
  const stops: RouteStop[] = []
  let t = 0
  let at = 0
  for (const n of nodes) { t += secs[at]![n.point]!; at = n.point; stops.push({ ...n, at_s: t }) }
  return { stops, total_s: t }
}

/** What taking `extra` on top of `carried` means for the driver: the two routes and the difference. */
export interface BatchPlan {
  /** Travel seconds of the current route. */
  before_s: number
  /** …and with the new order. */
  after_s: number
  /** after − before: what the new order adds. */
  detour_s: number
  /** Seconds until the driver reaches the new order's store on the new route. */
  pickup_s: number
  route: Route
}

export function batchPlan(carried: readonly RouteOrder[], extra: RouteOrder, secs: Matrix): BatchPlan {
  const before = planRoute(carried, secs)
  const route = planRoute([...carried, extra], secs)
  const pickup = route.stops.find((s) => s.order_id === extra.order_id && s.type === 'pickup') ?? route.stops.find((s) => s.order_id === extra.order_id)!
  return { before_s: before.total_s, after_s: route.total_s, detour_s: route.total_s - before.total_s, pickup_s: pickup.at_s, route }
}
