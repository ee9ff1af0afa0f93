/**
 * Delivery rules (api-v1 §3 delivery rows, §4.6): pure, no I/O. The order actor applies them; the
 * HTTP and WebSocket front doors only parse and map replies.
 */
import type { DeliveryStatus } from './order-state.ts'

/** Orders a driver is working on: they count as the driver's active deliveries (api-v1 §4.6 `active=1`). */
export const ACTIVE_DELIVERY: ReadonlySet<DeliveryStatus> = new Set(['assigned', 'picked_up', 'out_for_delivery'])
export const TERMINAL_DELIVERY: ReadonlySet<DeliveryStatus> = new Set(['delivered', 'failed'])

export const isActiveDelivery = (s: DeliveryStatus | null): boolean => s !== null && ACTIVE_DELIVERY.has(s)

/** The statuses a driver may send (api-v1 §3: picked_up, out_for_delivery, delivered, failed). */
export const DRIVER_TARGETS = ['picked_up', 'out_for_delivery', 'delivered', 'failed'] as const
export type DriverTarget = (typeof DRIVER_TARGETS)[number]

const RANK: Record<DeliveryStatus, number> = { pending: 0, assigned: 1, picked_up: 2, out_for_delivery: 3, delivered: 4, failed: 4 }

export type MoveCheck = { ok: true; noop: boolean } | { ok: false; reason: string }

/**
 * May a driver move its own order from `from` to `to`? Only forward through
 * assigned → picked_up → out_for_delivery → delivered | failed (skipping a step is allowed, as the
 * spec's "assigned / picked_up → any of the four" row says); a terminal status is final. Repeating
 * the current status is a no-op, so a driver app may safely retry.
 */
export function driverMove(from: DeliveryStatus | null, to: DriverTarget): MoveCheck {
  if (from === null) return { ok: false, reason: 'The order is not a delivery.' }
  if (from === to) return { ok: true, noop: true }
  if (TERMINAL_DELIVERY.has(from)) return { ok: false, reason: `The delivery is already ${from}.` }
  if (from === 'pending') return { ok: false, reason: 'The delivery is not assigned yet.' }
  if (RANK[to] <= RANK[from]) return { ok: false, reason: `A driver cannot move a delivery back from ${from} to ${to}.` }
  return { ok: true, noop: false }
}

/** Which drivers may serve a store: the owner's drivers that are unbound or bound to that store. */
export const mayServe = (driver: { ownerId: number; restaurantId: number | null }, store: { id: number; ownerId: number }): boolean =>
  driver.ownerId === store.ownerId && (driver.restaurantId === null || driver.restaurantId === store.id)

/** A delivery order a driver may self-dispatch (claim): still unassigned and not finished in the kitchen. */
export const claimable = (o: { deliveryStatus: DeliveryStatus | null; driverId: number | null; status: string }): boolean =>
  o.deliveryStatus === 'pending' && o.driverId === null && o.status !== 'cancelled' && o.status !== 'completed'

// ---- Offers ---------------------------------------------------------------------------------

export const OFFER_STATUSES = ['pending', 'accepted', 'rejected', 'expired', 'withdrawn'] as const
export type OfferStatus = (typeof OFFER_STATUSES)[number]

export interface Offer { id: number; orderId: number; driverId: number; status: OfferStatus; expiresAt: string }

/** Offers expire by time alone: a pending offer past `expires_at` reads as expired (no timer needed). */
export const offerStatusAt = (o: Offer, now: string): OfferStatus => (o.status === 'pending' && o.expiresAt <= now ? 'expired' : o.status)

export const OFFER_TTL = { min: 10, default: 60, max: 900 } as const

// ---- Proof of delivery ------------------------------------------------------------------------

/** Wrong delivery-code attempts allowed per order before the code locks (4 digits: 5/10 000 odds). */
export const POD_MAX_ATTEMPTS = 5
export const POD_CODE_DIGITS = 4

/** Image types accepted as delivery photos, recognised by their first bytes, not the declared type. */
export const POD_PHOTO_TYPES = ['image/jpeg', 'image/png', 'image/webp'] as const
export type PodPhotoType = (typeof POD_PHOTO_TYPES)[number]
/** Largest decoded photo: a phone photo resized for proof (fits the JSON body limit as base64). */
export const POD_PHOTO_MAX_BYTES = 512 * 1024

export function sniffImageType(b: Uint8Array): PodPhotoType | null {
  if (b.length >= 3 && b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff) return 'image/jpeg'
  if (b.length >= 8 && [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a].every((x, i) => b[i] === x)) return 'image/png'
  const ascii = (from: number, to: number) => String.fromCharCode(...b.subarray(from, to))
  if (b.length >= 12 && ascii(0, 4) === 'RIFF' && ascii(8, 12) === 'WEBP') return 'image/webp'
  return null
}

// ---- Location ---------------------------------------------------------------------------------

/** A WGS84 position (api-v1 §2.7 "Driver location"); (0, 0) is accepted, it is a real place. */
export const validLatLng = (lat: unknown, lng: unknown): boolean =>
  typeof lat === 'number' && typeof lng === 'number' && Number.isFinite(lat) && Number.isFinite(lng) &&
  lat >= -90 && lat <= 90 && lng >= -180 && lng <= 180

// ---- Phones and login codes --------------------------------------------------------------------

/** `+1 (555) 010-0200` → `+15550100200`: one spelling per number, so SMS login finds the driver. */
export function normalizePhone(raw: string): string | null {
  const trimmed = raw.trim()
  const plus = trimmed.startsWith('+')
  if (!/^\+?[\d\s().-]+$/.test(trimmed)) return null
  const digits = trimmed.replace(/\D/g, '')
  if (digits.length < 6 || digits.length > 15) return null
  return (plus ? '+' : '') + digits
}

export const LOGIN_CODE = { digits: 6, ttlSeconds: 300, maxAttempts: 5, requestsPerMinute: 6, verifiesPerMinute: 10 } as const

// ---- Earnings ---------------------------------------------------------------------------------

export interface EarningRow { day: string; fee: number; tip: number }
export interface EarningsDay { date: string; deliveries: number; fees: number; tips: number; total: number }

/** Completed deliveries grouped by day (cents in, cents out); days without deliveries are left out. */
export function earningsByDay(rows: readonly EarningRow[]): { days: EarningsDay[]; deliveries: number; fees: number; tips: number; total: number } {
  const byDay = new Map<string, EarningsDay>()
  for (const r of rows) {
    const d = byDay.get(r.day) ?? { date: r.day, deliveries: 0, fees: 0, tips: 0, total: 0 }
    d.deliveries++
    d.fees += r.fee
    d.tips += r.tip
    d.total += r.fee + r.tip
    byDay.set(r.day, d)
  }
  const days = [...byDay.values()].sort((a, b) => a.date.localeCompare(b.date))
  const sum = (k: 'deliveries' | 'fees' | 'tips' | 'total') => days.reduce((n, d) => n + d[k], 0)
  return { days, deliveries: sum('deliveries'), fees: sum('fees'), tips: sum('tips'), total: sum('total') }
}

export const EARNING_PERIODS = ['day', 'week', 'month'] as const
export type EarningPeriod = (typeof EARNING_PERIODS)[number]
export interface EarningsPeriod { start: string; deliveries: number; fees: number; tips: number; total: number }

/** The first day of the period holding `day` (YYYY-MM-DD, UTC): itself, its ISO week's Monday, or the 1st. */
export function periodStart(day: string, period: EarningPeriod): string {
  if (period === 'day') return day
  if (period === 'month') return `${day.slice(0, 7)}-01`
  const t = Date.parse(`${day}T00:00:00Z`)
  const sinceMonday = (new Date(t).getUTCDay() + 6) % 7
  return new Date(t - sinceMonday * 86_400_000).toISOString().slice(0, 10)
}

/** Days (from earningsByDay) summed into periods, oldest first; periods without deliveries are left out. */
export function earningsByPeriod(days: readonly EarningsDay[], period: EarningPeriod): EarningsPeriod[] {
  const by = new Map<string, EarningsPeriod>()
  for (const d of days) {
    const start = periodStart(d.date, period)
    const p = by.get(start) ?? { start, deliveries: 0, fees: 0, tips: 0, total: 0 }
    p.deliveries += d.deliveries
    p.fees += d.fees
    p.tips += d.tips
    p.total += d.total
    by.set(start, p)
  }
  return [...by.values()].sort((a, b) => a.start.localeCompare(b.start))
}

// ---- Fees -------------------------------------------------------------------------------------

/** What a driver earns per delivery when the store sets no `driver_fee` (in its settings, a decimal). */
export const DEFAULT_DRIVER_FEE_CENTS = 300

export function driverFeeCents(settings: Record<string, unknown>): number {
  const f = settings.driver_fee
  return typeof f === 'number' && Number.isFinite(f) && f >= 0 && f <= 10_000 ? Math.round(f * 100) : DEFAULT_DRIVER_FEE_CENTS
}
