/**
 * Guest segments (issue 17 item 5; docs/operations.md "Guests and segments"): pure definitions,
 * computed from a guest's figures at a moment, never stored as flags. The SQL aggregation
 * (src/storage/guests.ts) filters with the thresholds exported here, and the operation labels each
 * guest with `segmentsOf`, so a definition changes in one place.
 */

const DAY_MS = 86_400_000

/** The thresholds of the segments; the docs' segment table is written from these. */
export const SEGMENT_RULES = {
  /** `new`: the first visit is at most this many days old. */
  newDays: 30,
  /** `regular`: at least `regularVisits` visits within the last `regularDays` days. */
  regularVisits: 3,
  regularDays: 90,
  /** `vip`: spend > 0 and within the top `vipTopPercent` % of the store's guests with spend (ties included, at least one guest). */
  vipTopPercent: 10,
  /** `lapsed`: at least `lapsedMinVisits` visits, the latest one more than `lapsedDays` days ago. */
  lapsedDays: 90,
  lapsedMinVisits: 2,
  /** `no_show`: at least this many reservations marked no-show. */
  noShows: 2,
} as const

export const SEGMENT_KEYS = ['new', 'regular', 'vip', 'lapsed', 'no_show'] as const
export type SegmentKey = (typeof SEGMENT_KEYS)[number]

/** What the segments of a guest depend on; times are ISO 8601 strings, spend in cents. */
export interface GuestFigures {
  visits: number
  /** Visits within the last `regularDays` days. */
  recent_visits: number
  spend: number
  /** 1 for the highest spend (ties share a rank), among all of the store's guests. */
  spend_rank: number
  first_visit: string | null
  last_visit: string | null
  no_shows: number
}

/** How many top spenders are VIPs when `spenders` guests spent anything: ceil(10 %), at least one. */
export const vipCutoff = (spenders: number): number =>
  spenders <= 0 ? 0 : Math.max(1, Math.ceil((spenders * SEGMENT_RULES.vipTopPercent) / 100))

/** The moments the time-based segments compare against, as ISO strings like the stored ones. */
export function segmentClock(nowMs: number, iso: (ms: number) => string): { newSince: string; recentSince: string; lapsedBefore: string } {
  return {
    newSince: iso(nowMs - SEGMENT_RULES.newDays * DAY_MS),
    recentSince: iso(nowMs - SEGMENT_RULES.regularDays * DAY_MS),
    lapsedBefore: iso(nowMs - SEGMENT_RULES.lapsedDays * DAY_MS),
  }
}

const at = (s: string | null): number => (s === null ? NaN : Date.parse(s))

/** Membership of one segment. `spenders` is the number of the store's guests with spend > 0. */
export function inSegment(key: SegmentKey, g: GuestFigures, nowMs: number, spenders: number): boolean {
  switch (key) {
    case 'new': return g.visits > 0 && at(g.first_visit) >= nowMs - SEGMENT_RULES.newDays * DAY_MS
    case 'regular': return g.recent_visits >= SEGMENT_RULES.regularVisits
    case 'vip': return g.spend > 0 && g.spend_rank <= vipCutoff(spenders)
    case 'lapsed': return g.visits >= SEGMENT_RULES.lapsedMinVisits && at(g.last_visit) < nowMs - SEGMENT_RULES.lapsedDays * DAY_MS
    case 'no_show': return g.no_shows >= SEGMENT_RULES.noShows
    default: {
      const never: never = key
      return never
    }
  }
}

/** Every segment the guest is in, in SEGMENT_KEYS order. */
export const segmentsOf = (g: GuestFigures, nowMs: number, spenders: number): SegmentKey[] =>
  SEGMENT_KEYS.filter((k) => inSegment(k, g, nowMs, spenders))

/** The human definitions, served by `GET …/guests/segments` next to the counts. */
export const SEGMENT_DEFINITIONS: Record<SegmentKey, string> = {
  new: `First visit within the last ${SEGMENT_RULES.newDays} days.`,
  regular: `At least ${SEGMENT_RULES.regularVisits} visits within the last ${SEGMENT_RULES.regularDays} days.`,
  vip: `Top ${SEGMENT_RULES.vipTopPercent} % of the guests who spent anything, by spend (ties included; at least one guest).`,
  lapsed: `At least ${SEGMENT_RULES.lapsedMinVisits} visits, none within the last ${SEGMENT_RULES.lapsedDays} days.`,
  no_show: `At least ${SEGMENT_RULES.noShows} reservations marked no-show.`,
}
