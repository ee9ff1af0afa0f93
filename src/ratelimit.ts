/**
 * GCRA rate limiting (api-v1 §8): one "theoretical arrival time" per key gives an exact
 * `remaining` and `Retry-After` with O(1) memory per client.
 */

export interface RateDecision { allowed: boolean; limit: number; remaining: number; retryAfterSec: number }

export class RateLimiter {
  private readonly tat = new Map<string, number>()
  private readonly interval: number
  private readonly tolerance: number
  private lastSweep = 0

  constructor(readonly limit: number, readonly periodMs = 60_000, private readonly now: () => number = Date.now) {
    this.interval = periodMs / limit
    this.tolerance = this.interval * (limit - 1)
  }

  /** Spend `cost` requests of `key`'s budget at once, or none of them when they do not all fit. */
  take(key: string, cost = 1): RateDecision {
    const now = this.now()
    this.sweep(now)
    const tat = Math.max(this.tat.get(key) ?? now, now)
    const newTat = tat + this.interval * cost
    const allowAt = newTat - this.tolerance - this.interval
    if (now < allowAt) {
      return { allowed: false, limit: this.limit, remaining: 0, retryAfterSec: Math.max(1, Math.ceil((allowAt - now) / 1000)) }
    }
    this.tat.set(key, newTat)
    const remaining = Math.floor((this.tolerance - (newTat - this.interval - now)) / this.interval)
    return { allowed: true, limit: this.limit, remaining: Math.max(0, remaining), retryAfterSec: 0 }
  }

  /** The budget of `key` without spending any (for answers that are not themselves limited, e.g. CORS preflight). */
  peek(key: string): RateDecision {
    const now = this.now()
    const tat = Math.max(this.tat.get(key) ?? now, now)
    const remaining = Math.floor((this.tolerance + this.interval - (tat - now)) / this.interval)
    return { allowed: true, limit: this.limit, remaining: Math.max(0, Math.min(this.limit, remaining)), retryAfterSec: 0 }
  }

  /** Forget keys whose bucket has fully drained, so memory is bounded by recent clients. */
  private sweep(now: number): void {
    if (now - this.lastSweep < this.periodMs) return
    this.lastSweep = now
    for (const [k, t] of this.tat) if (t <= now) this.tat.delete(k)
  }
}
