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
import { DECISIONS_KEPT, dispatchJobs, driverLoads, onShiftPositions, type JobRow } from '../storage/dispatch.ts'
import { FleetGrid, type FleetEntry } from '../domain/fleet-grid.ts'
import { CANDIDATES_TIMED, POSITION_FRESH_MS, dispatchSettingsOf, dueAt, rankCandidates, type Candidate, type Exclusion, type Ranked } from '../domain/dispatch.ts'
import { driverFeeCents } from '../domain/delivery.ts'
import { storePosition } from './store-delivery.ts'
import { batchCandidates, type BatchExclusion } from './dispatch-batch.ts'

/** What the driver actors and the driver app tell the dispatcher (a no-op one when dispatch is off). */
export interface DispatchSink {
  /** An on-shift driver's new position (the hot path: a few hundred nanoseconds). */
  moved(d: { id: number; ownerId: number; restaurantId: number | null; onShift: boolean }, lat: number, lng: number, atMs: number): void
  /** A driver's shift, binding or existence changed: re-index it (or drop it). */
  presence(d: { id: number; ownerId: number; restaurantId: number | null; onShift: boolean; lat: number | null; lng: number | null; locationAt: string | null; deleted?: true }): void
  /** A driver rejected an offer of `orderId`: the next candidate, now. */
  answered(orderId: number): void
}

export const noDispatch: DispatchSink = { moved: () => {}, presence: () => {}, answered: () => {} }

/** One decision as the explain view shows it. */
export interface DecisionRecord {
  at: string
  action: 'wait_until_due' | 'nobody_available' | 'offered' | 'assigned' | 'assign_failed' | 'closed'
  driver_id?: number
  due_at?: string
  candidates: Ranked[]
  excluded: BatchExclusion[]
  router: { source: 'straight' | 'osrm'; fallback: string | null } | null
}

/** The safety net's period: open jobs whose time came (due, offer expired) are looked at again. */
export const DISPATCH_TICK_MS = 1000

export class Dispatcher implements DispatchSink {
  readonly fleet = new FleetGrid()
  private chain: Promise<void> = Promise.resolve()
  private readonly queued = new Set<number>()
  private readonly timers = new Map<number, NodeJS.Timeout>()
  private tick: NodeJS.Timeout | null = null
  private closed = false
  /** CPU time (µs) of the latest decisions' candidate search and ranking, newest last (at most 1,000), for the bench. */
  readonly decisionCpuUs: number[] = []

  constructor(private readonly svc: Services) {}

  /** Fill the index from the stored positions and resume every open job (again: the index is refilled). */
  start(): void {
    if (this.tick) clearInterval(this.tick)
    for (const r of onShiftPositions(this.svc.db)) this.fleet.upsert(r.id, r.owner_id, r.restaurant_id, r.lat, r.lng, Date.parse(r.location_updated_at))
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
    if (d.onShift) this.fleet.upsert(d.id, d.ownerId, d.restaurantId, lat, lng, atMs)
  }

  presence(d: Parameters<DispatchSink['presence']>[0]): void {
    if (d.deleted || !d.onShift || d.lat === null || d.lng === null || d.locationAt === null) return this.fleet.remove(d.id)
    const known = this.fleet.get(d.id)
    this.fleet.upsert(d.id, d.ownerId, d.restaurantId, d.lat, d.lng, known?.atMs ?? Date.parse(d.locationAt))
    // Someone became available: waiting orders are looked at again.
    this.sweep()
  }

  answered(orderId: number): void {
    this.kick(orderId)
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
      if (e.event === 'order.delivered' || e.event === 'order.delivery_failed') this.sweep() // a driver is free again
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
    if (job.due_at !== null && Date.parse(job.due_at) > now) return this.at(orderId, Date.parse(job.due_at))
    const store = svc.stores.byId(order.store_id)
    if (!store) return void (await save({ state: 'closed' }))
    const settings = parseSettings(store.settings)
    const ds = dispatchSettingsOf(settings)
    const readyMs = order.eta ? Date.parse((JSON.parse(order.eta) as { ready_at: string }).ready_at) : now
    const cpu = process.cpuUsage()
    const { ranked, excluded, router } = await this.candidates(store, settings, ds.max_active_per_driver, tried, now, readyMs, ds.batch ? order : null)
    const c = process.cpuUsage(cpu)
    this.decisionCpuUs.push(c.user + c.system)
    if (this.decisionCpuUs.length > 1000) this.decisionCpuUs.shift()
    const record = (action: DecisionRecord['action'], more: Partial<DecisionRecord> = {}): DecisionRecord =>
      Object.assign({ at: iso, action, candidates: ranked.slice(0, 10), excluded: excluded.slice(0, 20), router }, more)
    if (job.due_at === null) {
      const due = dueAt(readyMs, ranked[0]?.travel_s ?? null, now)
      if (due > now + 1000) {
        const dueIso = nowIso(due)
        await save({ state: 'waiting', due_at: dueIso }, record('wait_until_due', { due_at: dueIso }))
        return this.at(orderId, due)
      }
    }
    const best = ranked[0]
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
    // Without the store's location there is no distance: no candidate can be ranked.
    // The nearest drivers may all be full (a busy evening): look twice as far each round, up to 64×.
    const free: Array<{ e: FleetEntry; m: number }> = []
    const loads = new Map<number, { load: number; last: string | null }>()
    for (let k = CANDIDATES_TIMED * 2; origin && free.length < CANDIDATES_TIMED && k <= CANDIDATES_TIMED * 128; k *= 2) {
      excluded.length = 0
      const near = this.fleet.nearest(origin.lat, origin.lng, k, accept)
      const fresh = near.filter((n) => !loads.has(n.e.id))
      for (const [id, l] of driverLoads(this.svc.db, fresh.map((n) => n.e.id), nowIso(now))) loads.set(id, l)
      free.length = 0
      for (const n of near) {
        if (loads.get(n.e.id)!.load < maxActive) free.push(n)
        else excluded.push({ driver_id: n.e.id, reason: 'full' })
      }
      if (near.length < k) break // nobody farther
    }
    free.length = Math.min(free.length, CANDIDATES_TIMED)
    if (!origin || free.length === 0) return { ranked: [] as Ranked[], excluded, router: null }
    const travel = await this.svc.router.toOne(free.map((n) => n.e), origin)
    let cands: Candidate[] = free.map((n, i) => {
      const l = loads.get(n.e.id)!
      return { driver_id: n.e.id, travel_s: travel.seconds[i]!, load: l.load, idle_s: l.last ? Math.round((now - Date.parse(l.last)) / 1000) : 1e9 }
    })
    let fallback = travel.fallback
    // Batching (docs/dispatch.md "Batching"): carrying drivers only for this store's orders, within the detour limit.
    if (batchOrder) {
      const b = await batchCandidates(this.svc, store.id, batchOrder, free.map((n) => n.e), cands)
      cands = b.cands
      excluded.push(...b.excluded)
      fallback ??= b.fallback
    }
    return { ranked: rankCandidates(cands, now, readyMs), excluded, router: { source: travel.source, fallback } }
  }
}
