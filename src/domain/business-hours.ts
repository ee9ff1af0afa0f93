/**
 * Business hours (issue 12 item 3; docs/stores.md "Business hours"), pure: weekly opening intervals
 * in the store's IANA time zone (Intl, no tz database of our own), holiday closures and the
 * accepting-orders switch. A store with no hours set is always open; `accepting_orders: false`
 * closes it whatever the hours say.
 *
 * Rules, all on the store's local wall clock (so a DST change never moves an opening):
 * - an interval `['22:00', '02:00']` (close at or before open) runs overnight into the next day;
 *   `'24:00'` closes at midnight;
 * - a holiday closes its whole local date(s), including the after-midnight part of the night before,
 *   and an interval that starts on a holiday does not open at all;
 * - a day missing from `business_hours` (or `[]`) is closed, once any hours are set.
 */

export const WEEKDAYS = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'] as const
export type Weekday = (typeof WEEKDAYS)[number]
/** `[open, close]`, `HH:MM` (close may be `24:00`). */
export type Interval = [string, string]
export type WeeklyHours = Partial<Record<Weekday, Interval[]>>
/** One closed date or an inclusive range of dates (`YYYY-MM-DD`, the store's local dates). */
export type Holiday = { date: string; note?: string | null } | { from: string; to: string; note?: string | null }

/** The settings keys these rules read (a store's `settings` JSON has more; they are ignored here). */
export interface HoursSettings {
  timezone?: unknown
  business_hours?: unknown
  holidays?: unknown
  accepting_orders?: unknown
}

/** Why a store is closed at a moment. */
export type ClosedReason = 'not_accepting' | 'holiday' | 'hours'
export interface OpenStatus { open: boolean; reason: ClosedReason | null }

export const DEFAULT_TIMEZONE = 'UTC'
const TIME = /^(?:([01]\d|2[0-3]):([0-5]\d)|24:00)$/
const DATE = /^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])$/
const DAY_MS = 86_400_000

/** Minutes after local midnight of `HH:MM`, or null. */
export function minutesOf(hhmm: string): number | null {
  const m = TIME.exec(hhmm)
  if (!m) return null
  return m[1] === undefined ? 1440 : Number(m[1]) * 60 + Number(m[2])
}

export const isDate = (s: unknown): s is string => typeof s === 'string' && DATE.test(s) && !Number.isNaN(Date.parse(`${s}T00:00:00Z`)) && new Date(`${s}T00:00:00Z`).toISOString().startsWith(s)

/** Is `tz` an IANA zone this runtime knows? */
export function isTimeZone(tz: unknown): tz is string {
  if (typeof tz !== 'string' || tz.length === 0 || tz.length > 64) return false
  try {
    formatter(tz)
    return true
  } catch {
    return false
  }
}

// ---- the legacy format -----------------------------------------------------------------------------

const LEGACY_KEY = /^(mon|tue|wed|thu|fri|sat|sun)(?:_(mon|tue|wed|thu|fri|sat|sun))?$/

/**
 * Weekly hours in the canonical form, from the canonical form or the legacy one the first seed
 * wrote (`{mon_sun: '11:00-22:00'}`: keys a day or a `from_to` day range, values `HH:MM-HH:MM`
 * lists joined by `,`, or `closed`). Anything else is null (the caller validates input first).
 */
export function canonicalHours(raw: unknown): WeeklyHours | null {
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) return null
  const out: WeeklyHours = {}
  for (const [key, value] of Object.entries(raw as Record<string, unknown>)) {
    const m = LEGACY_KEY.exec(key)
    if (!m) return null
    const from = WEEKDAYS.indexOf(m[1] as Weekday)
    const to = m[2] === undefined ? from : WEEKDAYS.indexOf(m[2] as Weekday)
    const intervals = intervalsOf(value)
    if (!intervals) return null
    // A range may wrap the week (`fri_mon`).
    for (let i = from, n = 0; n < 7; i = (i + 1) % 7, n++) {
      const day = WEEKDAYS[i]!
      out[day] = [...(out[day] ?? []), ...intervals]
      if (i === to) break
    }
  }
  return out
}

function intervalsOf(value: unknown): Interval[] | null {
  if (typeof value === 'string') {
    if (value.trim().toLowerCase() === 'closed' || value.trim() === '') return []
    const parts = value.split(',').map((p) => p.trim().split('-').map((x) => x.trim()))
    if (parts.some((p) => p.length !== 2)) return null
    value = parts
  }
  if (!Array.isArray(value)) return null
  const list: Interval[] = []
  for (const iv of value as unknown[]) {
    if (!Array.isArray(iv) || iv.length !== 2 || typeof iv[0] !== 'string' || typeof iv[1] !== 'string') return null
    const [o, c] = [minutesOf(iv[0]), minutesOf(iv[1])]
    if (o === null || c === null || o === 1440 || o === c) return null
    list.push([iv[0], iv[1]])
  }
  return list
}

// ---- the compiled form ---------------------------------------------------------------------------

interface Compiled {
  tz: string
  accepting: boolean
  /** null: no hours set, always open. Per weekday (0 = mon): [openMin, closeMin) with close > 1440 for overnight. */
  week: Array<Array<[number, number]>> | null
  holidays: Array<[string, string]>
}

const compiledCache = new WeakMap<object, Compiled>()

/** Settings compiled once per settings object (the store actor keeps the same object between orders). */
function compile(s: HoursSettings): Compiled {
  const hit = compiledCache.get(s)
  if (hit) return hit
  const tz = isTimeZone(s.timezone) ? s.timezone : DEFAULT_TIMEZONE
  const hours = s.business_hours == null ? null : canonicalHours(s.business_hours)
  const week = hours === null ? null : WEEKDAYS.map((d) => (hours[d] ?? []).map(([o, c]): [number, number] => {
    const open = minutesOf(o)!
    const close = minutesOf(c)!
    return [open, close <= open ? close + 1440 : close]
  }))
  const holidays: Array<[string, string]> = []
  for (const h of Array.isArray(s.holidays) ? (s.holidays as unknown[]) : []) {
    const r = h as Record<string, unknown> | null
    if (r && isDate(r.date)) holidays.push([r.date, r.date])
    else if (r && isDate(r.from) && isDate(r.to)) holidays.push([r.from, r.to])
  }
  const c: Compiled = { tz, accepting: s.accepting_orders !== false, week, holidays }
  compiledCache.set(s, c)
  return c
}

// ---- local time through Intl ---------------------------------------------------------------------

const formatters = new Map<string, Intl.DateTimeFormat>()
function formatter(tz: string): Intl.DateTimeFormat {
  let f = formatters.get(tz)
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', { timeZone: tz, hourCycle: 'h23', year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit' })
    formatters.set(tz, f)
  }
  return f
}

interface Local { date: string; weekday: number; minutes: number; wallMs: number }

/** The zone's offset from UTC at `ms`, in ms, read from Intl. */
function intlOffset(tz: string, ms: number): number {
  const p: Record<string, string> = {}
  for (const part of formatter(tz).formatToParts(new Date(ms))) p[part.type] = part.value
  const wall = Date.UTC(Number(p.year), Number(p.month) - 1, Number(p.day), Number(p.hour) % 24, Number(p.minute), Number(p.second))
  return wall - Math.floor(ms / 1000) * 1000
}

/**
 * Offsets change only on quarter-hour boundaries (every zone's offsets and transitions are whole
 * quarter hours), so the last quarter hour's offset per zone is remembered: an order check costs
 * arithmetic, not an Intl call (about 6 µs).
 */
const QUARTER_MS = 900_000
const lastOffset = new Map<string, { quarter: number; offset: number }>()
function offsetAt(tz: string, ms: number): number {
  const quarter = Math.floor(ms / QUARTER_MS)
  const hit = lastOffset.get(tz)
  if (hit?.quarter === quarter) return hit.offset
  const offset = intlOffset(tz, ms)
  lastOffset.set(tz, { quarter, offset })
  return offset
}

/** The wall clock in `tz` at `ms` (to the second). */
function local(tz: string, ms: number): Local {
  const wallMs = Math.floor(ms / 1000) * 1000 + offsetAt(tz, ms)
  const d = new Date(wallMs)
  return { date: d.toISOString().slice(0, 10), weekday: (d.getUTCDay() + 6) % 7, minutes: d.getUTCHours() * 60 + d.getUTCMinutes(), wallMs }
}

/**
 * The instant of a local wall time. In a DST gap (the time does not exist) it moves forward by the
 * gap; in a DST overlap (it exists twice) it is the earlier one (Temporal's "compatible").
 */
export function zonedInstant(tz: string, date: string, minutes: number): number {
  const wall = Date.parse(`${date}T00:00:00Z`) + minutes * 60_000
  const before = wall - offsetAt(tz, wall - DAY_MS)
  const after = wall - offsetAt(tz, wall + DAY_MS)
  const valid = [before, after].filter((t) => local(tz, t).wallMs === wall)
  return valid.length ? Math.min(...valid) : before
}

/** `ms` as ISO 8601 with the zone's offset (api ARCHITECTURE "Storage": timestamps with offset). */
export function isoInZone(ms: number, tz: string): string {
  const l = local(tz, ms)
  const off = Math.round(offsetAt(tz, ms) / 60_000)
  const sign = off < 0 ? '-' : '+'
  const abs = Math.abs(off)
  const pad = (n: number) => String(n).padStart(2, '0')
  return `${new Date(l.wallMs).toISOString().slice(0, 19)}${sign}${pad(Math.floor(abs / 60))}:${pad(abs % 60)}`
}

/** A store's time zone from its settings (docs/stores.md), `UTC` when unset or unknown. */
export const timeZoneOf = (settings: { timezone?: unknown }): string => (isTimeZone(settings.timezone) ? settings.timezone : DEFAULT_TIMEZONE)

/**
 * The local day of `at` in `tz` (as a store's staff see "today"): its date and the instants of its
 * start and of the next day's start (23 or 25 hours apart across a DST change).
 */
export function localDay(tz: string, at: Date): { date: string; start: number; end: number } {
  const date = isoInZone(at.getTime(), tz).slice(0, 10)
  return { date, start: zonedInstant(tz, date, 0), end: zonedInstant(tz, addDays(date, 1), 0) }
}

const addDays = (date: string, n: number): string => new Date(Date.parse(`${date}T00:00:00Z`) + n * DAY_MS).toISOString().slice(0, 10)

// ---- the rules -------------------------------------------------------------------------------------

const isHoliday = (c: Compiled, date: string): boolean => c.holidays.some(([from, to]) => from <= date && date <= to)

/** Open or closed at `at`, and why. */
export function openStatus(settings: HoursSettings, at: Date): OpenStatus {
  const c = compile(settings)
  if (!c.accepting) return { open: false, reason: 'not_accepting' }
  if (c.week === null && c.holidays.length === 0) return { open: true, reason: null }
  const now = local(c.tz, at.getTime())
  if (isHoliday(c, now.date)) return { open: false, reason: 'holiday' }
  if (c.week === null) return { open: true, reason: null }
  const today = c.week[now.weekday]!
  if (today.some(([o, cl]) => o <= now.minutes && now.minutes < cl)) return { open: true, reason: null }
  // Last night's overnight intervals, unless they started on a holiday.
  const yesterday = c.week[(now.weekday + 6) % 7]!
  if (!isHoliday(c, addDays(now.date, -1)) && yesterday.some(([, cl]) => cl > 1440 && now.minutes < cl - 1440)) return { open: true, reason: null }
  return { open: false, reason: 'hours' }
}

/** Does the store take orders at `at`? */
export const isOpenAt = (settings: HoursSettings, at: Date): boolean => openStatus(settings, at).open

/** How far ahead `nextOpening` looks (a holiday range longer than this reads as "not known"). */
const HORIZON_DAYS = 400

/**
 * The first moment at or after `at` when the store is open: `at` itself when it is open now; null
 * when no opening is known (not accepting orders, no intervals at all, or closed for the whole horizon).
 */
export function nextOpening(settings: HoursSettings, at: Date): Date | null {
  const c = compile(settings)
  if (!c.accepting) return null
  if (isOpenAt(settings, at)) return at
  const ms = at.getTime()
  const start = local(c.tz, ms).date
  if (c.week === null) {
    // Holidays only: open again at the first local midnight after the closure.
    for (let d = 1; d <= HORIZON_DAYS; d++) {
      const date = addDays(start, d)
      if (!isHoliday(c, date)) return new Date(zonedInstant(c.tz, date, 0))
    }
    return null
  }
  if (c.week.every((day) => day.length === 0)) return null
  for (let d = 0; d <= HORIZON_DAYS; d++) {
    const date = addDays(start, d)
    if (isHoliday(c, date)) continue
    const weekday = (new Date(`${date}T00:00:00Z`).getUTCDay() + 6) % 7
    const opens = c.week[weekday]!.map(([o]) => o).sort((x, y) => x - y)
    for (const o of opens) {
      const t = zonedInstant(c.tz, date, o)
      if (t > ms && isOpenAt(settings, new Date(t))) return new Date(t)
    }
  }
  return null
}

/** What an order refused for the hours says (422 `store_closed`, docs/stores.md): null when open. */
export function closedNotice(settings: HoursSettings, at: Date): { reason: ClosedReason; opens_at: string | null; message: string } | null {
  const status = openStatus(settings, at)
  if (status.open) return null
  const tz = compile(settings).tz
  const next = nextOpening(settings, at)
  const opens_at = next && isoInZone(next.getTime(), tz)
  const why = status.reason === 'not_accepting' ? 'is not taking orders right now' : status.reason === 'holiday' ? 'is closed today' : 'is closed now'
  const when = opens_at ? ` It opens next at ${opens_at} (${tz}).` : status.reason === 'not_accepting' ? ' Try again later.' : ''
  return { reason: status.reason!, opens_at, message: `The store ${why}.${when}` }
}

/** One day of the week as a page shows it (issue 34 item 3): every day, closed ones included. */
export interface WeekdayView {
  day: Weekday
  closed: boolean
  /** Open around the clock (`00:00`–`24:00`). */
  all_day: boolean
  /** "Closed", "Open 24 hours", or the intervals ("09:00–14:00, 17:00–22:00"). */
  text: string
  intervals: Interval[]
}

/** The week, Monday first, of a store's hours (null: no hours set, always open — no week to show). */
export function weekView(hours: WeeklyHours | null): WeekdayView[] | null {
  if (!hours) return null
  return WEEKDAYS.map((day) => {
    const intervals = hours[day] ?? []
    const allDay = intervals.some(([open, close]) => open === '00:00' && close === '24:00')
    const text = intervals.length === 0 ? 'Closed' : allDay ? 'Open 24 hours' : intervals.map(([o, c]) => `${o}–${c}`).join(', ')
    return { day, closed: intervals.length === 0, all_day: allDay, text, intervals }
  })
}
