/**
 * Per-phone-number limits for SMS sign-in (customer OTP, driver login; docs/customers.md "Limits
 * per phone", docs/drivers.md). The limits of api-v1 §8 count per client address and store, so
 * many addresses or many stores could still text one number without end (cost, SMS pumping,
 * harassment) and guess its codes in parallel; these count per number across all of them.
 *
 * Exact sliding windows: "3 per 10 minutes" must mean at most 3 texts in any 10 minutes, where a
 * token bucket would let a burst and its refill both through. A log of times per key (O(limit),
 * fine for these limits of 3 to 30, and exact to the millisecond); the per-minute limits of the HTTP
 * door count in one-second slots instead (src/ratelimit.ts), O(1) per key.
 * Kept in memory per server, like the other rate limits. Lives under src/auth so sign-in operations
 * (src/ops) of every front door share one count per phone.
 */
import { ApiError } from '../errors.ts'
import type { Services } from '../services.ts'

/** At most `limit` events in any `periodMs`. */
export interface Window { limit: number; periodMs: number }

export class SlidingWindowLimiter {
  /** Per key, the times of the last allowed events, oldest first (at most the largest limit). */
  private readonly log = new Map<string, number[]>()
  private readonly keep: number
  private readonly horizon: number
  private lastSweep = 0

  constructor(readonly windows: readonly Window[], private readonly now: () => number = Date.now) {
    this.keep = Math.max(...windows.map((w) => w.limit))
    this.horizon = Math.max(...windows.map((w) => w.periodMs))
  }

  /** Count one event for `key` in every window, or in none: 0 when allowed, else the seconds until it would be. */
  take(key: string): number {
    const now = this.now()
    this.sweep(now)
    const times = this.log.get(key) ?? []
    let waitMs = 0
    for (const w of this.windows) {
      // The limit-th newest event leaving its window is what frees a slot in it.
      const edge = times.length >= w.limit ? times[times.length - w.limit]! : null
      if (edge !== null && edge > now - w.periodMs) waitMs = Math.max(waitMs, edge + w.periodMs - now)
    }
    if (waitMs > 0) return Math.max(1, Math.ceil(waitMs / 1000))
    times.push(now)
    if (times.length > this.keep) times.shift()
    this.log.set(key, times)
    return 0
  }

  /** Forget keys with nothing inside the longest window, so memory follows recent traffic. */
  private sweep(now: number): void {
    if (now - this.lastSweep < 60_000) return
    this.lastSweep = now
    for (const [k, times] of this.log) if (times[times.length - 1]! <= now - this.horizon) this.log.delete(k)
  }
}

/**
 * A per-phone limit: call it with the normalised number before texting or checking a code. Over
 * the limit it throws 429 `rate_limited` with `Retry-After` (RFC 9110 §10.2.3); the answer is the
 * same whether or not the number has an account.
 */
export function phoneLimit(windows: readonly Window[]): (svc: Services, phone: string) => void {
  // One limiter per server (tests run several servers in one process), made on first use.
  const limiters = new WeakMap<Services, SlidingWindowLimiter>()
  return (svc, phone) => {
    let limiter = limiters.get(svc)
    if (!limiter) limiters.set(svc, (limiter = new SlidingWindowLimiter(windows)))
    const wait = limiter.take(phone)
    if (wait > 0) throw new ApiError('rate_limited', `Too many attempts for this phone; retry in ${wait} s.`, undefined, { 'Retry-After': String(wait) })
  }
}
