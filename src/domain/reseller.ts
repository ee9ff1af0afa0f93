/**
 * The reseller model as pure rules (docs/billing.md "Resellers", api-v1 §4.8): volume tiers by
 * active customers, the invoice arithmetic in integer minor units, invoice periods, MRR and churn.
 * No I/O: src/storage/reseller.ts feeds it rows, src/ops/accounts/reseller.ts shapes the answers.
 */

export interface Tier {
  key: string
  name: string
  /** Active customers from (inclusive). */
  min: number
  /** Active customers up to (inclusive); null for the top tier. */
  max: number | null
  /** Whole percent off the wholesale subtotal of the platform's invoice. */
  discount_percent: number
}

/** Volume tiers, by active customers in the period (docs/billing.md "Resellers"). */
export const TIERS: readonly Tier[] = [
  { key: 'starter', name: 'Starter', min: 0, max: 9, discount_percent: 0 },
  { key: 'silver', name: 'Silver', min: 10, max: 49, discount_percent: 10 },
  { key: 'gold', name: 'Gold', min: 50, max: 199, discount_percent: 20 },
  { key: 'platinum', name: 'Platinum', min: 200, max: null, discount_percent: 30 },
]

/** The tier a reseller with `active` active customers is in. */
export function tierFor(active: number): Tier {
  let found = TIERS[0]!
  for (const t of TIERS) if (active >= t.min) found = t
  return found
}

export interface TierStatus {
  active_customers: number
  tier: Tier
  /** The next tier and how many more active customers reach it; null at the top. */
  next: { tier: Tier; customers_needed: number } | null
  tiers: readonly Tier[]
}

export function tierStatus(active: number): TierStatus {
  const tier = tierFor(active)
  const next = TIERS.find((t) => t.min > active)
  return { active_customers: active, tier, next: next ? { tier: next, customers_needed: next.min - active } : null, tiers: TIERS }
}

/**
 * The discount of an invoice: `percent` of the subtotal, rounded half up to the minor unit, computed
 * in integers only (no binary floats): floor((subtotal × percent + 50) / 100). Taken once on the
 * subtotal, never per line, so the total is exact and reproducible: total = subtotal − discount.
 */
export function discountOf(subtotal: number, percent: number): number {
  if (!Number.isInteger(subtotal) || subtotal < 0) throw new RangeError(`subtotal must be a non-negative integer, got ${subtotal}`)
  if (!Number.isInteger(percent) || percent < 0 || percent > 100) throw new RangeError(`percent must be an integer 0-100, got ${percent}`)
  return Math.floor((subtotal * percent + 50) / 100)
}

export interface InvoiceLine { customer_id: number; plan_id: number; base_plan_key: string; wholesale: number }
export interface InvoiceTotals { active_customers: number; tier: string; discount_percent: number; subtotal: number; discount: number; total: number }

/** Totals of the platform's invoice to a reseller: one line per active customer; the tier follows the line count. */
export function invoiceTotals(lines: readonly InvoiceLine[]): InvoiceTotals {
  const tier = tierFor(lines.length)
  const subtotal = lines.reduce((n, l) => n + l.wholesale, 0)
  const discount = discountOf(subtotal, tier.discount_percent)
  return { active_customers: lines.length, tier: tier.key, discount_percent: tier.discount_percent, subtotal, discount, total: subtotal - discount }
}

/** Invoice periods are 30 days (api-v1 §8), anchored at the moment the account became a reseller. */
export const RESELLER_PERIOD_DAYS = 30
const DAY_MS = 86_400_000

export interface Period { start: number; end: number }

/**
 * Every complete period that ended at or before `at` (epoch ms), oldest first, at most `limit` of
 * them (catch-up after downtime issues each missed period once; the limit bounds one run).
 */
export function completePeriods(anchor: number, at: number, limit = 120): Period[] {
  const len = RESELLER_PERIOD_DAYS * DAY_MS
  const out: Period[] = []
  for (let start = anchor; start + len <= at && out.length < limit; start += len) out.push({ start, end: start + len })
  return out
}

/** The number of an invoice: a series prefix and the gap-free sequence, zero-padded (`P-000042`). */
export const invoiceNumber = (prefix: string, seq: number): string => `${prefix}-${String(seq).padStart(6, '0')}`

/**
 * Monthly recurring revenue in minor units: each live subscription's retail price normalised to a
 * 30-day month (price × 30 / period_days), summed exactly and rounded half up once at the end.
 */
export function mrr(subs: ReadonlyArray<{ price: number; period_days: number }>): number {
  // Sum of fractions over a common denominator would overflow nothing at these sizes; a float sum of
  // values with at most a few decimals each is exact enough before the single rounding.
  const exact = subs.reduce((n, s) => n + (s.price * RESELLER_PERIOD_DAYS) / s.period_days, 0)
  return Math.floor(exact + 0.5)
}

/**
 * Churn over a window: the share of the customers active at its start that are no longer active at
 * its end, as a fraction rounded to 4 decimals (0 when nobody was active at the start).
 */
export function churnRate(activeAtStart: number, lost: number): number {
  if (activeAtStart <= 0) return 0
  return Math.round((lost / activeAtStart) * 10_000) / 10_000
}
