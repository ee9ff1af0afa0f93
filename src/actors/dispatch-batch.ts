/**
 * Batching (issue 37 item 3; docs/dispatch.md "Batching"): with a store's `dispatch.batch` on, a
 * driver already carrying orders of the same store may take another when it adds at most
 * BATCH_RULES.maxDetourS to their planned route; and the stops of a driver's route, in visiting
 * order, for the driver app. Travel times come from the router (src/providers/router.ts); the route
 * itself is planned by the pure src/domain/route.ts, the same way for a decision and for the stops.
 */
import type { Services } from '../services.ts'
import type { Router } from '../providers/router.ts'
import type { LatLng } from '../domain/eta.ts'
import { BATCH_RULES, batchPlan, planRoute, type RouteOrder } from '../domain/route.ts'
import type { Candidate, Exclusion } from '../domain/dispatch.ts'
import { activeLegs, lastPosition, type ActiveLeg } from '../storage/routes.ts'
import { parseSettings } from '../storage/stores.ts'
import { storePosition } from './store-delivery.ts'

interface RouterNote { source: 'straight' | 'osrm'; fallback: string | null }

/**
 * Seconds between the points (`secs[i][j]`, i to j), one router `toOne` per destination, all at once
 * (with OSRM: one cached `table` request each, in parallel). Point 0 is the start and may be unknown (null): then the route
 * starts at its first stop. Nobody travels back to the start.
 */
export async function travelMatrix(router: Router, points: ReadonlyArray<LatLng | null>): Promise<{ secs: number[][]; router: RouterNote }> {
  const n = points.length
  const secs = points.map(() => new Array<number>(n).fill(0))
  let note: RouterNote = { source: router.kind, fallback: null }
  const from = points.map((p, i) => ({ p, i })).filter((x): x is { p: LatLng; i: number } => x.p !== null)
  // All columns at once: a router that is down costs one time limit, not one per stop.
  const columns = await Promise.all(points.map((to, j) => (j === 0 || !to ? Promise.resolve(null) : router.toOne(from.map((x) => x.p), to))))
  columns.forEach((t, j) => {
    if (!t) return
    from.forEach((x, k) => { secs[x.i]![j] = t.seconds[k]! })
    if (t.fallback && !note.fallback) note = { source: t.source, fallback: t.fallback }
  })
  return { secs, router: note }
}

/** Stores' positions by id, kept while their settings are the same text (a route reads them for every stop; parsing the settings each time showed in the decision's profile). */
const positions = new Map<number, { settings: string | null; at: LatLng | null }>()
function storePositionById(svc: Services, storeId: number): LatLng | null {
  const row = svc.stores.byId(storeId)
  if (!row) return null
  const known = positions.get(storeId)
  if (known && known.settings === row.settings) return known.at
  const at = storePosition(parseSettings(row.settings))
  if (positions.size > 10_000) positions.clear()
  positions.set(storeId, { settings: row.settings, at })
  return at
}

/** Points of a route: the start, each store once, each drop-off; the legs as route orders (null when a position is missing). */
function routePoints(svc: Services, start: LatLng | null, legs: ReadonlyArray<Pick<ActiveLeg, 'id' | 'store_id' | 'delivery_status' | 'dest_lat' | 'dest_lng'>>) {
  const points: Array<LatLng | null> = [start]
  const storeAt = new Map<number, number | null>()
  const storePoint = (storeId: number): number | null => {
    if (!storeAt.has(storeId)) {
      const p = storePositionById(svc, storeId)
      storeAt.set(storeId, p ? points.push(p) - 1 : null)
    }
    return storeAt.get(storeId)!
  }
  const orders = legs.map((l): RouteOrder | null => {
    const pickup = l.delivery_status === 'assigned' ? storePoint(l.store_id) : null
    if ((l.delivery_status === 'assigned' && pickup === null) || l.dest_lat === null || l.dest_lng === null) return null
    return { order_id: l.id, pickup, dropoff: points.push({ lat: l.dest_lat, lng: l.dest_lng }) - 1 }
  })
  return { points, orders, storePoint }
}

/** The active deliveries of these drivers, by driver, oldest first (one query for all). */
function legsByDriver(svc: Services, drivers: ReadonlyArray<{ id: number }>): Map<number, ActiveLeg[]> {
  const byDriver = new Map<number, ActiveLeg[]>()
  for (const l of activeLegs(svc.db, drivers.map((d) => d.id))) {
    const legs = byDriver.get(l.driver_id)
    if (legs) legs.push(l)
    else byDriver.set(l.driver_id, [l])
  }
  return byDriver
}

export interface BatchExclusion { driver_id: number; reason: Exclusion; detour_s?: number; limit_s?: number }

/**
 * Batching's part of a decision: of the ranked-to-be candidates, those already carrying deliveries
 * stay only when every one is of this store and the new order adds at most the limit to their
 * route; they then reach the store at their route's pickup time (`travel_s`) and carry their
 * figures (`batch`). The others are excluded with the reason (and the figures when over the limit).
 */
export async function batchCandidates(
  svc: Services, storeId: number, order: { id: number; dest_lat: number | null; dest_lng: number | null },
  drivers: ReadonlyArray<{ id: number; lat: number; lng: number }>, cands: Candidate[],
): Promise<{ cands: Candidate[]; excluded: BatchExclusion[]; fallback: string | null }> {
  const byDriver = legsByDriver(svc, drivers)
  // Every carrying candidate's route is timed at once: a router that is down costs one time limit per decision.
  type Verdict = { keep: Candidate; out?: never; fallback: string | null } | { keep?: never; out: BatchExclusion; fallback: string | null }
  const verdicts = await Promise.all(cands.map(async (c): Promise<Verdict> => {
    const legs = byDriver.get(c.driver_id)
    if (!legs) return { keep: c, fallback: null }
    const leave = (reason: Exclusion, more: Partial<BatchExclusion> = {}, fallback: string | null = null): Verdict => ({ out: { driver_id: c.driver_id, reason, ...more }, fallback })
    if (legs.some((l) => l.store_id !== storeId)) return leave('other_store')
    const d = drivers.find((x) => x.id === c.driver_id)!
    const extra = { id: order.id, store_id: storeId, delivery_status: 'assigned' as const, dest_lat: order.dest_lat, dest_lng: order.dest_lng }
    const { points, orders, storePoint } = routePoints(svc, d, [...legs, extra])
    const carried = orders.slice(0, -1)
    const added = orders[orders.length - 1]
    if (!added || carried.some((o) => o === null)) return leave('route_unknown')
    const m = await travelMatrix(svc.router, points)
    const plan = batchPlan(carried as RouteOrder[], added, m.secs)
    if (plan.detour_s > BATCH_RULES.maxDetourS) return leave('detour_over_limit', { detour_s: plan.detour_s, limit_s: BATCH_RULES.maxDetourS }, m.router.fallback)
    const batch = {
      orders: legs.map((l) => l.id), route_before_s: plan.before_s, route_after_s: plan.after_s,
      detour_s: plan.detour_s, limit_s: BATCH_RULES.maxDetourS, direct_s: m.secs[storePoint(storeId)!]![added.dropoff]!,
    }
    return { keep: { ...c, travel_s: plan.pickup_s, batch }, fallback: m.router.fallback }
  }))
  const out = verdicts.flatMap((v) => (v.keep ? [v.keep] : []))
  const excluded = verdicts.flatMap((v) => (v.out ? [v.out] : []))
  const fallback = verdicts.find((v) => v.fallback)?.fallback ?? null
  return { cands: out, excluded, fallback }
}

/** When a driver carrying deliveries would be free, and at a store after that (seconds from now). */
export interface AfterRoute { driver_id: number; free_s: number; arrive_s: number }

/**
 * Drivers finishing nearby (docs/dispatch.md "Waiting for a driver finishing nearby"): for each of
 * these carrying drivers, when its current route ends (its last stop, planned as for its stops) and
 * when it would reach `storeId` from there. A driver with a stop without a position is left out.
 * A pickup is counted as the ride to the store, not the wait for the food: the estimate errs early.
 */
export async function arrivalsAfterRoute(svc: Services, storeId: number, drivers: ReadonlyArray<{ id: number; lat: number; lng: number }>): Promise<{ arrivals: AfterRoute[]; fallback: string | null }> {
  const byDriver = legsByDriver(svc, drivers)
  const got = await Promise.all(drivers.map(async (d) => {
    const legs = byDriver.get(d.id)
    if (!legs) return null
    const { points, orders, storePoint } = routePoints(svc, d, legs)
    const target = storePoint(storeId)
    if (target === null || orders.some((o) => o === null)) return null
    const m = await travelMatrix(svc.router, points)
    const route = planRoute(orders as RouteOrder[], m.secs)
    const last = route.stops.at(-1)?.point ?? 0
    return { arrival: { driver_id: d.id, free_s: route.total_s, arrive_s: route.total_s + m.secs[last]![target]! }, fallback: m.router.fallback }
  }))
  const found = got.filter((g): g is NonNullable<typeof g> => g !== null)
  return { arrivals: found.map((g) => g.arrival), fallback: found.find((g) => g.fallback)?.fallback ?? null }
}

/** A stop of the driver's route as the driver app lists it. */
export interface StopView {
  type: 'pickup' | 'dropoff'
  order_id: number
  restaurant_id: number
  address: string | null
  lat: number | null
  lng: number | null
  /** Seconds from the driver's last position to this stop along the route; null when a position is missing. */
  travel_s: number | null
}

/**
 * The stops of a driver's active deliveries in visiting order (docs/dispatch.md "Batching"): the
 * route planned from the driver's last position, as a batching decision plans it; stops without a
 * position (an order placed without `lat`/`lng`, a store without a location) come last, oldest order first.
 */
export async function driverStops(svc: Services, driverId: number): Promise<StopView[]> {
  const legs = activeLegs(svc.db, [driverId])
  if (legs.length === 0) return []
  const { points, orders } = routePoints(svc, lastPosition(svc.db, driverId), legs)
  const byId = new Map(legs.map((l) => [l.id, l]))
  const storeOf = (id: number) => svc.stores.byId(id)
  const view = (type: 'pickup' | 'dropoff', l: ActiveLeg, at: LatLng | null, travel: number | null): StopView => {
    const settings = type === 'pickup' ? parseSettings(storeOf(l.store_id)?.settings ?? '{}') : null
    const where = at ?? (settings ? storePosition(settings) : null)
    return {
      type, order_id: l.id, restaurant_id: l.store_id,
      address: settings ? (typeof settings.address === 'string' ? settings.address : null) : l.address,
      lat: where?.lat ?? null, lng: where?.lng ?? null, travel_s: travel,
    }
  }
  const planned = orders.filter((o): o is RouteOrder => o !== null)
  const m = planned.length ? await travelMatrix(svc.router, points) : null
  const out = m ? planRoute(planned, m.secs).stops.map((s) => view(s.type, byId.get(s.order_id)!, points[s.point]!, s.at_s)) : []
  legs.forEach((l, i) => {
    if (orders[i] !== null) return
    if (l.delivery_status === 'assigned') out.push(view('pickup', l, null, null))
    out.push(view('dropoff', l, l.dest_lat !== null && l.dest_lng !== null ? { lat: l.dest_lat, lng: l.dest_lng } : null, null))
  })
  return out
}
