/**
 * The billing clock (docs/billing.md "Time travel"): the real time, unless BILLING_CLOCK names a fixed
 * ISO time (`2027-01-01T00:00:00Z`) or an offset from the real time (`+30d`, `-2h`, `+90m`, `+15s`).
 * The configuration refuses BILLING_CLOCK unless NODE_ENV=test, so only tests travel; the CLI's
 * `dispatch billing run --at <ISO time>` is the explicit operator form.
 */
import type { Config } from '../config.ts'

const OFFSET = /^([+-])(\d+)([smhd])$/
const UNIT_MS = { s: 1e3, m: 60e3, h: 3600e3, d: 86_400e3 } as const
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/

/** Is `s` an ISO 8601 time with a zone (`Z` or an offset) that Date understands? */
export const isIsoTime = (s: string): boolean => ISO.test(s) && !Number.isNaN(Date.parse(s))

export const isClockSpec = (s: string): boolean => OFFSET.test(s) || isIsoTime(s)

/** The current billing time for a clock spec (null: the real clock). */
export function clockNow(spec: string | null, realNow: number = Date.now()): Date {
  if (spec === null) return new Date(realNow)
  const m = OFFSET.exec(spec)
  if (!m) return new Date(Date.parse(spec))
  const delta = Number(m[2]) * UNIT_MS[m[3] as keyof typeof UNIT_MS]
  return new Date(realNow + (m[1] === '-' ? -delta : delta))
}

/** "Now" for the billing run and subscription actions of a server. */
export const billingNow = (config: Pick<Config, 'billingClock'>): Date => clockNow(config.billingClock)
