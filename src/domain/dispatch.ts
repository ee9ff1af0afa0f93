/**
 * The dispatch policy (issue 37 item 3; docs/dispatch.md "Policy"): pure. A store's `dispatch`
 * settings, which drivers are candidates for a delivery, and how they are ranked.
 */

export const DISPATCH_MODES = ['manual', 'offer', 'auto'] as const
export type DispatchMode = (typeof DISPATCH_MODES)[number]

export interface DispatchSettings { mode: DispatchMode; offer_seconds: number; max_active_per_driver: number; batch: boolean }

/** Today's behaviour is the default: nobody is offered or assigned anything automatically. */
export const DISPATCH_DEFAULTS: DispatchSettings = { mode: 'manual', offer_seconds: 30, max_active_per_driver: 1, batch: false }
export const DISPATCH_LIMITS = { offerSeconds: { min: 5, max: 600 }, maxActive: { min: 1, max: 10 } } as const

/** A position older than this is not trusted: the driver is not a candidate (2 minutes). */
export const POSITION_FRESH_MS = 120_000
/** Drivers timed by the router per decision: the nearest by straight line that pass the cheap filters. */
export const CANDIDATES_TIMED = 12

/** The store's dispatch settings, defaults for what is missing. */
export function dispatchSettingsOf(settings: Record<string, unknown>): DispatchSettings {
  const d = (settings.dispatch ?? {}) as Partial<DispatchSettings>
  return {
    mode: (DISPATCH_MODES as readonly string[]).includes(d.mode as string) ? d.mode! : DISPATCH_DEFAULTS.mode,
    offer_seconds: typeof d.offer_seconds === 'number' ? d.offer_seconds : DISPATCH_DEFAULTS.offer_seconds,
    max_active_per_driver: typeof d.max_active_per_driver === 'number' ? d.max_active_per_driver : DISPATCH_DEFAULTS.max_active_per_driver,
    batch: d.batch === true,
  }
}

/** Why a driver of the store's owner was not a candidate. */
export type Exclusion = 'bound_elsewhere' | 'stale_position' | 'full' | 'already_offered'
  // Batching (docs/dispatch.md "Batching"): carrying another store's order, a detour over the limit, a stop without a position.
  | 'other_store' | 'detour_over_limit' | 'route_unknown'

/** A carrying driver's batching figures (seconds; docs/dispatch.md "Batching"). */
export interface BatchFigures {
  /** The active deliveries the driver already carries. */
  orders: number[]
  /** Travel time of the driver's planned route without, and with, the new order. */
  route_before_s: number
  route_after_s: number
  /** What the new order adds (after − before), against the limit. */
  detour_s: number
  limit_s: number
  /** The new order's direct ride, store to customer. */
  direct_s: number
}

/** A candidate with what the ranking reads. */
export interface Candidate {
  driver_id: number
  /** Router seconds from the driver to the store. */
  travel_s: number
  /** Active deliveries plus open offers. */
  load: number
  /** Seconds since the driver's last delivery ended (or shift start, or forever: a large number). */
  idle_s: number
  /** With `batch: true`, a driver already carrying orders of the store: the detour (travel_s is then the time to the store along the route). */
  batch?: BatchFigures
}

export interface Ranked extends Candidate {
  /** When the driver would reach the store (ISO). */
  arrival_at: string
  /** Seconds the order would wait for the driver after it is ready (0: on time). */
  late_s: number
  rank: number
}

/**
 * Rank candidates (best first): by how late they would reach the store after the order is ready
 * (every on-time driver is equal), then by load, then by who has waited longest since their last
 * delivery, then by travel time, then by id (a stable order for equal drivers).
 */
export function rankCandidates(cands: readonly Candidate[], nowMs: number, readyMs: number): Ranked[] {
  const withLate = cands.map((c) => {
    const arrival = nowMs + c.travel_s * 1000
    return { ...c, arrival_at: new Date(arrival).toISOString(), late_s: Math.max(0, Math.round((arrival - readyMs) / 1000)), rank: 0 }
  })
  withLate.sort((a, b) => a.late_s - b.late_s || a.load - b.load || b.idle_s - a.idle_s || a.travel_s - b.travel_s || a.driver_id - b.driver_id)
  withLate.forEach((c, i) => { c.rank = i + 1 })
  return withLate
}

/**
 * When a delivery is due for a driver: its ready time minus the best driver's travel time to the
 * store and minus `leadS`, the time the driver is given to answer (so that driver arrives as it is
 * ready); at once when that is already past.
 */
export const dueAt = (readyMs: number, bestTravelS: number | null, nowMs: number, leadS = 0): number =>
  bestTravelS === null ? nowMs : Math.max(nowMs, readyMs - (bestTravelS + leadS) * 1000)

/**
 * The travel time a due time counts on (issue 37 item 6, found by the simulation): not the nearest
 * candidate's when `competing` other orders of the same fleet (owner) are waiting for their due time too —
 * they may take the nearest drivers first — but the (competing + 1)-th fastest candidate's (or the
 * slowest one timed). With nobody competing it is the nearest's.
 */
export function dueTravelS(cands: ReadonlyArray<{ travel_s: number }>, competing: number): number | null {
  if (cands.length === 0) return null
  const t = cands.map((c) => c.travel_s).sort((a, b) => a - b)
  return t[Math.min(t.length - 1, Math.max(0, competing))]!
}

/**
 * The time an offer is expected to take to be answered, given before the driver's ride in the due
 * time: a third of `offer_seconds` in `offer` mode (10 s by default), none in `auto` mode (assigned at once).
 */
export const answerLeadS = (mode: DispatchMode, offerSeconds: number): number => (mode === 'offer' ? offerSeconds / 3 : 0)

/**
 * When an order waiting for its due time is looked at again: halfway to it, at least a second
 * ahead (and at the due time itself when that is nearer), so a due time whose best driver was taken
 * meanwhile moves earlier in time; a few looks per order whatever the time scale.
 */
export const recheckAt = (nowMs: number, dueMs: number): number => Math.min(dueMs, nowMs + Math.max(1000, (dueMs - nowMs) / 2))
