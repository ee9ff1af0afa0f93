/**
 * The dispatcher (issue 37 items 3 and 5; docs/dispatch.md "Policy"): for stores whose `dispatch`
 * mode is `offer` or `auto`, it picks drivers for delivery orders from the live positions of the
 * on-shift drivers, held in a spatial index fed by the driver actors (`moved`, `presence`).
 *
 * One decision at a time (a promise chain), so two orders decided together never both count the
 * same free driver: an offer or assignment is committed, through the order's actor, before the next
 * decision reads loads. The state of every order it works on is a row of `dispatch_jobs` (migration
 * 037): the open offer, the drivers already asked and the decisions with their candidates. A restart
 * in the middle of a cascade resumes from the rows: an offer still open is waited for (a pending
 * offer made just before a crash is adopted), an expired or rejected one moves on to the next
 * candidate; the order actor assigns an order at most once whatever happens.
 */
import type { Services } from '../services.ts'
import type { OutboxEvent } from '../storage/outbox.ts'
import type { OrderView } from '../storage/orders.ts'
import { ApiError } from '../errors.ts'
import { nowIso } from '../storage/db.ts'
import { parseSettings, type StoreRow } from '../storage/stores.ts'
import { DECISIONS_KEPT, dispatchJobs, driverLoadNow, driverLoadSeed, onShiftPositions, type JobRow } from '../storage/dispatch.ts'
import type { OfferChanges } from '../storage/drivers.ts'
import { FleetGrid } from '../domain/fleet-grid.ts'
import { FleetLoads } from '../domain/fleet-loads.ts'
import type { DeliveryStatus } from '../domain/order-state.ts'
import { CANDIDATES_TIMED, POSITION_FRESH_MS, answerLeadS, dispatchSettingsOf, dueAt, dueTravelS, recheckAt, rankCandidates, type Candidate, type Exclusion, type Ranked } from '../domain/dispatch.ts'
import { driverFeeCents, isActiveDelivery } from '../domain/delivery.ts'
import { storePosition } from './store-delivery.ts'
import { arrivalsAfterRoute, batchCandidates, type AfterRoute, type BatchExclusion } from './dispatch-batch.ts'

/** What the driver actors and the driver app tell the dispatcher (a no-op one when dispatch is off). */
export interface DispatchSink {
  /** An on-shift driver's new position (the hot path: a few hundred nanoseconds). */
  moved(d: { id: number; ownerId: number; restaurantId: number | null; onShift: boolean }, lat: number, lng: number, atMs: number): void
  /** A driver's shift, binding or existence changed: re-index it (or drop it). */
  presence(d: { id: number; ownerId: number; restaurantId: number | null; onShift: boolean; lat: number | null; lng: number | null; locationAt: string | null; deleted?: true }): void
  /** A driver rejected an offer of `orderId`: the next candidate, now. */
  answered(orderId: number): void
  /** An order's delivery or offers changed, committed (the order actor, after every write): drivers' loads follow. */
  orderChanged(prev: OrderDelivery, next: OrderDelivery, offers: OfferChanges): void
}

/** The delivery side of an order, as `orderChanged` reads it. */
export interface OrderDelivery { id: number; driverId: number | null; deliveryStatus: DeliveryStatus | null }

export const noDispatch: DispatchSink = { moved: () => {}, presence: () => {}, answered: () => {}, orderChanged: () => {} }

/** One decision as the explain view shows it. */
export interface DecisionRecord {
  at: string
  action: 'wait_until_due' | 'wait_for_driver' | 'nobody_available' | 'offered' | 'assigned' | 'assign_failed' | 'closed'
  driver_id?: number
  due_at?: string
  /** `wait_for_driver`: when the driver waited for is expected at the store, and when the best free one would be. */
  arrival_at?: string
  best_free_arrival_at?: string
  candidates: Ranked[]
  excluded: BatchExclusion[]
  router: { source: 'straight' | 'osrm'; fallback: string | null } | null
}

/** Carrying drivers timed per decision when the best free one would be late (`wait_for_driver`). */
export const FINISHING_TIMED = 4
/**
 * An order waits for drivers finishing nearby until this many times the first such driver's
 * expected time to be free (plus the time to answer) has passed; then the best free driver is asked.
 */
export const HOLD_BOUND_FACTOR = 1.5

/** The safety net's period: open jobs whose time came (due, offer expired) are looked at again. */
export const DISPATCH_TICK_MS = 1000

/**
 * Starts measuring a synchronous stretch of this thread; the returned function gives its CPU cost so
 * far in µs, as the smaller of two upper bounds (Node 20 has no per-thread CPU clock): the process's
 * CPU time, which also counts what other threads (the garbage collector's helpers) do meanwhile, and
 * the wall time, which also counts being descheduled by a busy machine. Neither leaves out any of the
 * stretch's own work. Each reading costs ~2 µs.
 */
function cpuMeter(): () => number {
  const wall = process.hrtime.bigint()
  const cpu = process.cpuUsage()
  return () => {
    const c = process.cpuUsage(cpu)
    return Math.min(Number(process.hrtime.bigint() - wall) / 1000, c.user + c.system)
  }
}

export class Dispatcher implements DispatchSink {
  readonly fleet = new FleetGrid()
  /**
   * Drivers' active deliveries, open offers and last delivery's end, kept from order changes; seeded
   * from SQLite when a driver enters the index. Every change moves the driver to its load level in
   * the index, so a search skips the drivers that are full.
   */
  readonly loads = new FleetLoads((id, load) => this.fleet.setLevel(id, load))
  private chain: Promise<void> = Promise.resolve()
  private readonly queued = new Set<number>()
  private readonly timers = new Map<number, NodeJS.Timeout>()
  private tick: NodeJS.Timeout | null = null
  private closed = false
  /**
   * Orders waiting for a driver finishing nearby (`wait_for_driver`) → that driver: looked at again
   * whenever a driver becomes free; a driver one order waits for is not waited for by another.
   */
  private readonly holding = new Map<number, number>()
  /** Orders waiting for their due time, by owner (they compete for the same drivers: `dueTravelS`). */
  private readonly waitingDue = new Map<number, Set<number>>()
  /** CPU time (µs, an upper bound: `cpuMeter`) of the latest decisions' candidate search and ranking, newest last (at most 1,000), for the bench. */
  readonly decisionCpuUs: number[] = []

  constructor(private readonly svc: Services) {}

  /** Fill the index from the stored positions and resume every open job (again: the index is refilled). */
  start(): void {
    if (this.tick) clearInterval(this.tick)
    for (const r of onShiftPositions(this.svc.db)) this.index(r.id, r.owner_id, r.restaurant_id, r.lat, r.lng, Date.parse(r.location_updated_at), true)
    for (const j of dispatchJobs.open(this.svc.db)) this.kick(j.order_id)
    this.tick = setInterval(() => this.sweep(), DISPATCH_TICK_MS)
    this.tick.unref()
  }

  async close(): Promise<void> {
    this.closed = true
    if (this.tick) clearInterval(this.tick)
    for (const t of this.timers.values()) clearTimeout(t)
    this.timers.clear()
    await this.chain.catch(() => {})
  }

  // ---- the index ------------------------------------------------------------------------------------

  moved(d: { id: number; ownerId: number; restaurantId: number | null; onShift: boolean }, lat: number, lng: number, atMs: number): void {
    if (!d.onShift) return
    // A driver's first position of a shift makes it available: waiting orders are looked at again.
    if (this.index(d.id, d.ownerId, d.restaurantId, lat, lng, atMs, false)) this.becameAvailable()
  }

  /**
   * Put a driver in the index or move it there. A driver entering it has its load read from SQLite
   * first (once per shift, or afresh with `reseed`), so it enters at its load level; a driver already
   * there only moves (the position path: a few hundred nanoseconds).
   */
  private index(id: number, ownerId: number, restaurantId: number | null, lat: number, lng: number, atMs: number, reseed: boolean): boolean {
    const entering = this.fleet.get(id) === undefined
    // The position path: a driver already indexed only moves (its level follows its load by itself).
    if (!entering && !reseed) {
      this.fleet.upsert(id, ownerId, restaurantId, lat, lng, atMs)
      return false
    }
    if (reseed || !this.loads.has(id)) this.loads.seed(id, driverLoadSeed(this.svc.db, id, nowIso(atMs > Date.now() ? atMs : Date.now())))
    this.fleet.upsert(id, ownerId, restaurantId, lat, lng, atMs, this.loads.load(id, Date.now()) ?? 0)
    return entering
  }

  /** Someone became available (a shift, a binding, a first position, a delivery ended, an offer refused): waiting orders are looked at again. */
  private becameAvailable(): void {
    for (const held of this.holding.keys()) this.kick(held)
    this.sweep()
  }

  presence(d: Parameters<DispatchSink['presence']>[0]): void {
    // Off shift, its offers were withdrawn: read afresh from SQLite when it is looked at again.
    if (d.deleted || !d.onShift) this.loads.forget(d.id)
    if (d.deleted || !d.onShift || d.lat === null || d.lng === null || d.locationAt === null) return this.fleet.remove(d.id)
    const known = this.fleet.get(d.id)
    this.index(d.id, d.ownerId, d.restaurantId, d.lat, d.lng, known?.atMs ?? Date.parse(d.locationAt), false)
    this.becameAvailable()
  }

  answered(orderId: number): void {
    this.kick(orderId)
    // The driver who said no is free again.
    for (const held of this.holding.keys()) this.kick(held)
  }

  orderChanged(prev: OrderDelivery, next: OrderDelivery, offers: OfferChanges): void {
    const { loads } = this
    if (prev.driverId !== next.driverId || prev.deliveryStatus !== next.deliveryStatus) {
      const ended = (next.deliveryStatus === 'delivered' || next.deliveryStatus === 'failed') && prev.deliveryStatus !== next.deliveryStatus
      loads.delivery(next.id, next.driverId, isActiveDelivery(next.deliveryStatus), ended, Date.now())
    }
    for (const o of offers.created) loads.offerOpened(o.id, o.driver_id, Date.parse(o.expires_at))
    for (const o of offers.withdrawn) loads.offerClosed(o.id)
    for (const id of offers.closed) loads.offerClosed(id)
  }

  // ---- events -------------------------------------------------------------------------------------

  /** Committed events (src/app.ts reactions): new delivery orders of dispatching stores, and what closes a job. */
  readonly react = (e: OutboxEvent): void => {
    const orderId = Number(e.data.order_id)
    if (!Number.isInteger(orderId)) return
    if (e.event === 'order.created' && e.data.type === 'delivery' && e.store_id !== null) {
      const store = this.svc.stores.byId(e.store_id)
      const mode = store ? dispatchSettingsOf(parseSettings(store.settings)).mode : 'manual'
      if (mode === 'manual') return
      const storeId = e.store_id
      this.svc.committer.write((db) => dispatchJobs.create(db, orderId, storeId, mode, nowIso())).then(() => this.kick(orderId), (err: unknown) => this.svc.log.error({ err, orderId }, 'dispatch job not created'))
      return
    }
    if (e.event === 'order.driver_assigned' || e.event === 'order.status_changed' || e.event === 'order.delivered' || e.event === 'order.delivery_failed') {
      if (e.event === 'order.delivered' || e.event === 'order.delivery_failed') {
        this.becameAvailable()
      }
      if (this.timers.has(orderId) || dispatchJobs.get(this.svc.db, orderId)) this.kick(orderId)
    }
  }

  // ---- scheduling ---------------------------------------------------------------------------------

  /** Look at an order's job again, after the decisions already queued. */
  kick(orderId: number): void {
    if (this.closed || this.queued.has(orderId)) return
    this.queued.add(orderId)
    this.chain = this.chain.then(async () => {
      this.queued.delete(orderId)
      if (this.closed) return
      try {
        await this.step(orderId)
      } catch (err) {
        this.svc.log.error({ err, orderId }, 'dispatch decision failed')
      }
    })
  }

  private at(orderId: number, ms: number): void {
    const old = this.timers.get(orderId)
    if (old) clearTimeout(old)
    const t = setTimeout(() => { this.timers.delete(orderId); this.kick(orderId) }, Math.max(0, ms - Date.now()) + 5)
    t.unref()
    this.timers.set(orderId, t)
  }

  private sweep(): void {
    if (this.closed) return
    // Offers past their expiry no longer count: their drivers are searched again.
    this.loads.expire(Date.now())
    const now = nowIso()
    for (const j of dispatchJobs.open(this.svc.db)) {
      if (j.state === 'waiting' && (j.due_at === null || j.due_at <= now)) this.kick(j.order_id)
      else if (j.state === 'offered' && !this.timers.has(j.order_id)) this.kick(j.order_id)
    }
  }

  // ---- one decision -------------------------------------------------------------------------------

  private async step(orderId: number): Promise<void> {
    const { svc } = this
    const job = dispatchJobs.get(svc.db, orderId)
    // Counted among the orders waiting for their due time (or for a driver) again only if it still is (below).
    for (const set of this.waitingDue.values()) set.delete(orderId)
    this.holding.delete(orderId)
    if (!job || job.state === 'assigned' || job.state === 'closed') return
    const decisions = JSON.parse(job.decisions) as DecisionRecord[]
    const tried = new Set(JSON.parse(job.tried) as number[])
    const now = Date.now()
    const iso = nowIso(now)
    const save = (patch: Partial<JobRow>, d?: DecisionRecord) => {
      if (d) { decisions.push(d); if (decisions.length > DECISIONS_KEPT) decisions.splice(0, decisions.length - DECISIONS_KEPT) }
      const row = Object.assign({}, job, { tried: JSON.stringify([...tried]), decisions: JSON.stringify(decisions) }, patch)
      return svc.committer.write((db) => dispatchJobs.save(db, row, nowIso()))
    }
    const order = svc.orders.row(orderId)
    if (!order || order.driver_id !== null || order.delivery_status !== 'pending' || order.status === 'cancelled') {
      const assigned = order?.driver_id != null
      await save({ state: assigned ? 'assigned' : 'closed', offer_id: null })
      return
    }
    // An open offer is waited for: until it is answered or expires.
    if (job.offer_id !== null) {
      const offer = svc.drivers.offer(job.offer_id)
      if (offer && offer.status === 'pending' && offer.expires_at > iso) return this.at(orderId, Date.parse(offer.expires_at))
      if (offer && offer.status === 'pending') await svc.committer.write((db) => dispatchJobs.expire(db, offer.id, iso))
    }
    // A pending offer the job does not know (made just before a restart): adopt it, do not offer again.
    const open = svc.drivers.openOffers(orderId, iso)[0]
    if (open) {
      tried.add(open.driver_id)
      await save({ state: 'offered', offer_id: open.id })
      return this.at(orderId, Date.parse(open.expires_at))
    }
    // Waiting for its due time: looked at again before it (halfway there each time), so that a due
    // time counting on a driver taken meanwhile by another order moves earlier.
    // (After a wait for a driver finishing nearby too: the driver may now be free but the order not yet due.)
    const lastAction = decisions[decisions.length - 1]?.action
    const waitingForDue = job.state === 'waiting' && job.due_at !== null && (lastAction === 'wait_until_due' || lastAction === 'wait_for_driver')
    const store = svc.stores.byId(order.store_id)
    if (!store) return void (await save({ state: 'closed' }))
    const settings = parseSettings(store.settings)
    const ds = dispatchSettingsOf(settings)
    const readyMs = order.eta ? Date.parse((JSON.parse(order.eta) as { ready_at: string }).ready_at) : now
    const { ranked, excluded, fullNear, router, cpuUs } = await this.candidates(store, settings, ds.max_active_per_driver, tried, now, readyMs, ds.batch ? order : null)
    const cpu = cpuMeter()
    this.confirmFree(ranked, excluded, ds.max_active_per_driver, now)
    this.decisionCpuUs.push(cpuUs + cpu())
    if (this.decisionCpuUs.length > 1000) this.decisionCpuUs.shift()
    const record = (action: DecisionRecord['action'], more: Partial<DecisionRecord> = {}): DecisionRecord =>
      Object.assign({ at: iso, action, candidates: ranked.slice(0, 10), excluded: excluded.slice(0, 20), router }, more)
    if (job.due_at === null || waitingForDue) {
      const competing = this.waitingDue.get(store.owner_id)
      const due = dueAt(readyMs, dueTravelS(ranked, competing?.size ?? 0), now, answerLeadS(job.mode, ds.offer_seconds))
      if (due > now + 1000) {
        if (competing) competing.add(orderId)
        else this.waitingDue.set(store.owner_id, new Set([orderId]))
        const dueIso = nowIso(due)
        // Said (and written) again only when it moved by a second or more.
        if (job.due_at === null || Math.abs(due - Date.parse(job.due_at)) >= 1000) await save({ state: 'waiting', due_at: dueIso }, record('wait_until_due', { due_at: dueIso }))
        return this.at(orderId, recheckAt(now, due))
      }
    }
    const best = ranked[0]
    // A driver finishing a delivery near the store may get there sooner than the best free one: the
    // order waits for it (looked at again when a driver becomes free, and when that one should be),
    // within a bound set at its first such wait.
    const holdUntil = job.hold_until === null ? null : Date.parse(job.hold_until)
    if (best && best.late_s > 0 && !best.batch && (holdUntil === null || now <= holdUntil)) {
      const cpuHold = cpuMeter()
      const marginS = answerLeadS(job.mode, ds.offer_seconds)
      const heldByOthers = new Set([...this.holding].filter(([o]) => o !== orderId).map(([, d]) => d))
      const { sooner, fallback } = await this.finishingSooner(store.id, fullNear.filter((d) => !heldByOthers.has(d.id)), best, now, marginS)
      // The decision's cost includes this part (an upper bound: what ran meanwhile while the router was awaited counts too).
      this.decisionCpuUs[this.decisionCpuUs.length - 1]! += cpuHold()
      if (router && fallback && !router.fallback) router.fallback = fallback
      if (sooner) {
        this.holding.set(orderId, sooner.driver_id)
        const freeIso = nowIso(now + sooner.free_s * 1000)
        const last = decisions[decisions.length - 1]
        // Said (and written) again only for another driver.
        if (!(job.state === 'waiting' && last?.action === 'wait_for_driver' && last.driver_id === sooner.driver_id)) {
          const bound = job.hold_until ?? nowIso(now + (HOLD_BOUND_FACTOR * sooner.free_s + marginS + 1) * 1000)
          await save({ state: 'waiting', due_at: freeIso, offer_id: null, hold_until: bound }, record('wait_for_driver', {
            driver_id: sooner.driver_id, due_at: freeIso, arrival_at: nowIso(now + sooner.arrive_s * 1000), best_free_arrival_at: best.arrival_at,
          }))
        }
        return this.at(orderId, now + sooner.free_s * 1000 + 1000)
      }
    }
    if (!best) {
      // Said (and written) once per spell of waiting, not at every sweep.
      if (job.state === 'waiting' && decisions[decisions.length - 1]?.action === 'nobody_available') return
      await save({ state: 'waiting', due_at: job.due_at ?? iso, offer_id: null }, record('nobody_available'))
      return
    }
    const fee = driverFeeCents(settings)
    try {
      if (job.mode === 'auto') {
        await svc.actors.orders.ask<OrderView>(orderId, (replyTo) => ({ type: 'assign_driver', driverId: best.driver_id, fee, replyTo }))
        await save({ state: 'assigned', due_at: job.due_at ?? iso, offer_id: null }, record('assigned', { driver_id: best.driver_id }))
        return
      }
      const expiresAt = nowIso(now + ds.offer_seconds * 1000)
      await svc.actors.orders.ask<OrderView>(orderId, (replyTo) => ({ type: 'make_offers', offers: [{ driverId: best.driver_id, fee }], expiresAt, replyTo }))
      const made = svc.drivers.openOffers(orderId, iso).find((o) => o.driver_id === best.driver_id)
      tried.add(best.driver_id)
      await save({ state: 'offered', due_at: job.due_at ?? iso, offer_id: made?.id ?? null }, record('offered', { driver_id: best.driver_id }))
      this.at(orderId, Date.parse(expiresAt))
    } catch (err) {
      if (!(err instanceof ApiError)) throw err
      // Claimed or closed meanwhile: the order no longer needs a driver.
      await save({ state: 'closed', offer_id: null }, record('assign_failed', { driver_id: best.driver_id }))
    }
  }

  /** The candidates for a store now: the nearest on-shift drivers that may serve it, timed by the router and ranked. */
  private async candidates(store: StoreRow, settings: Record<string, unknown>, maxActive: number, tried: ReadonlySet<number>, now: number, readyMs: number,
    batchOrder: { id: number; dest_lat: number | null; dest_lng: number | null } | null) {
    // CPU of the synchronous parts only: what runs while the router's answer is awaited is not this decision's.
    let cpu = cpuMeter()
    const excluded: DecisionRecord['excluded'] = []
    const freshSince = now - POSITION_FRESH_MS
    const origin = storePosition(settings)
    const accept = (e: { id: number; ownerId: number; restaurantId: number | null; atMs: number }) => {
      if (e.ownerId !== store.owner_id) return false
      const reason: Exclusion | null = e.restaurantId !== null && e.restaurantId !== store.id ? 'bound_elsewhere'
        : e.atMs < freshSince ? 'stale_position' : tried.has(e.id) ? 'already_offered' : null
      if (reason) { excluded.push({ driver_id: e.id, reason }); return false }
      return true
    }
    // Full drivers (by the loads in memory) are passed over by the index walk itself: the nearest
    // free ones are found however many nearer drivers are busy.
    const loadOf = (id: number): number => {
      const l = this.loads.load(id, now)
      if (l !== undefined) return l
      this.loads.seed(id, driverLoadSeed(this.svc.db, id, nowIso(now)))
      return this.loads.load(id, now)!
    }
    // The walk looks only at drivers whose load level is under the limit (their load is read again:
    // levels follow the loads in memory). Full drivers nearer than the candidates are named in the
    // record, or their other reason; the first few eligible ones may be waited for (`wait_for_driver`).
    const fullNear: Array<{ id: number; lat: number; lng: number }> = []
    const full = (e: { id: number }) => { if (excluded.length < 20) excluded.push({ driver_id: e.id, reason: 'full' }) }
    const free = origin ? this.fleet.nearest(origin.lat, origin.lng, CANDIDATES_TIMED, (e) => {
      if (!accept(e)) return false
      if (loadOf(e.id) < maxActive) return true
      full(e)
      return false
    }, maxActive, (e) => {
      if (e.ownerId !== store.owner_id) return true
      if (accept(e)) {
        full(e)
        if (fullNear.length < FINISHING_TIMED) fullNear.push({ id: e.id, lat: e.lat, lng: e.lng })
      }
      return excluded.length < 20 || fullNear.length < FINISHING_TIMED
    }) : []
    if (!origin || free.length === 0) return { ranked: [] as Ranked[], excluded, fullNear, router: null, cpuUs: cpu() }
    const waiting = this.svc.router.toOne(free.map((n) => n.e), origin)
    let cpuUs = cpu()
    const travel = await waiting
    cpu = cpuMeter()
    let cands: Candidate[] = free.map((n, i) => {
      const last = this.loads.lastEndMs(n.e.id)
      return { driver_id: n.e.id, travel_s: travel.seconds[i]!, load: loadOf(n.e.id), idle_s: last !== null ? Math.round((now - last) / 1000) : 1e9 }
    })
    let fallback = travel.fallback
    // Batching (docs/dispatch.md "Batching"): carrying drivers only for this store's orders, within the detour limit.
    if (batchOrder) {
      cpuUs += cpu()
      const b = await batchCandidates(this.svc, store.id, batchOrder, free.map((n) => n.e), cands)
      cpu = cpuMeter()
      cands = b.cands
      excluded.push(...b.excluded)
      fallback ??= b.fallback
    }
    const ranked = rankCandidates(cands, now, readyMs)
    cpuUs += cpu()
    return { ranked, excluded, fullNear, router: { source: travel.source, fallback }, cpuUs }
  }

  /**
   * Of `drivers` (carrying, eligible but full, nearest the store first), the one that would reach the
   * store soonest after finishing its route, if that is sooner than the best free candidate by more
   * than `marginS` (the time an offer takes to answer); or null.
   */
  private async finishingSooner(storeId: number, drivers: ReadonlyArray<{ id: number; lat: number; lng: number }>, best: Ranked, now: number, marginS: number): Promise<{ sooner: AfterRoute | null; fallback: string | null }> {
    if (drivers.length === 0) return { sooner: null, fallback: null }
    const { arrivals, fallback } = await arrivalsAfterRoute(this.svc, storeId, drivers)
    const bestArrivalS = (Date.parse(best.arrival_at) - now) / 1000
    const sooner = arrivals.filter((a) => a.arrive_s + marginS < bestArrivalS).sort((a, b) => a.arrive_s - b.arrive_s)
    return { sooner: sooner[0] ?? null, fallback }
  }

  /**
   * SQLite stays the truth against double booking: the best candidate's load is read again from it
   * before anything is committed; one found full is dropped from `ranked` (excluded `full`, its
   * memory re-seeded) and the next is checked.
   */
  private confirmFree(ranked: Ranked[], excluded: DecisionRecord['excluded'], maxActive: number, now: number): void {
    while (ranked.length > 0) {
      const id = ranked[0]!.driver_id
      const iso = nowIso(now)
      const load = driverLoadNow(this.svc.db, id, iso)
      if (load === this.loads.load(id, now) && load < maxActive) return
      this.loads.seed(id, driverLoadSeed(this.svc.db, id, iso))
      if (this.loads.load(id, now)! < maxActive) return
      ranked.shift()
      excluded.push({ driver_id: id, reason: 'full' })
      ranked.forEach((c, i) => { c.rank = i + 1 })
    }
  }
}
