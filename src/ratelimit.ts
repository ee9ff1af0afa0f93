/**
 * Per-minute rate limits (api-v1 §8: 120 requests per minute per token, login/register 10, OTP
 * request 6) as a sliding window of one-second slots, so that "N per minute" holds over **any**
 * 60 seconds: a client never gets more than N answers in a minute, its first minute included (a
 * token bucket or GCRA lets N through at once and then refills, ~2N in the first minute).
 *
 * Each key keeps a ring of SLOTS + 1 counters, one per slot of `periodMs / SLOTS` (1 s for a
 * minute), and their sum. A request at time t, in slot k, is admitted when what slots k−SLOTS … k
 * hold, plus its cost, stays within the limit. Those slots cover every moment of (t − period, t],
 * and a little more (up to one slot older), so the count is never under the truth: the limit is a
 * hard guarantee, not an estimate. (A weighted two-window counter is an estimate that can let more
 * through; an exact log of times costs memory per request, O(limit) per key.) The price of the
 * whole-slot rounding: a request counts for between one period and one period plus a slot (60 to
 * 61 s). Memory is O(1) per key: 61 counters, whatever the limit.
 *
 * `remaining` is exactly how many more single requests fit now, and `retryAfterSec` exactly when
 * the refused ones would: slots end on whole seconds of the clock, so the whole seconds of
 * `Retry-After` are exact — asking again that many seconds later fits, a second earlier does not.
 */

export interface RateDecision { allowed: boolean; limit: number; remaining: number; retryAfterSec: number }

/** Slots per period: the window slides in steps of a sixtieth of it (1 s for a minute). */
export const SLOTS = 60

/** One key's window: counts of the slots `newest − SLOTS … newest`, at index `slot % (SLOTS + 1)`. */
interface Window { newest: number; total: number; counts: Counts }
type Counts = Uint16Array | Uint32Array | Float64Array

export class RateLimiter {
  private readonly windows = new Map<string, Window>()
  private readonly slotMs: number
  /** A slot never holds more than the limit: the narrowest array that holds it (120/min: 2 bytes a slot). */
  private readonly newCounts: () => Counts
  private lastSweep = 0

  constructor(readonly limit: number, readonly periodMs = 60_000, private readonly now: () => number = Date.now) {
    this.slotMs = periodMs / SLOTS
    const Counts = limit <= 0xffff ? Uint16Array : limit <= 0xffff_ffff ? Uint32Array : Float64Array
    this.newCounts = () => new Counts(SLOTS + 1)
  }

  /** Spend `cost` requests of `key`'s budget at once, or none of them when they do not all fit. */
  take(key: string, cost = 1): RateDecision {
    const now = this.now()
    this.sweep(now)
    const slot = Math.floor(now / this.slotMs)
    let w = this.windows.get(key)
    if (w) slide(w, slot)
    const used = w?.total ?? 0
    if (used + cost > this.limit) {
      return { allowed: false, limit: this.limit, remaining: Math.max(0, this.limit - used), retryAfterSec: this.waitSec(w, used + cost - this.limit, now) }
    }
    if (!w) this.windows.set(key, (w = { newest: slot, total: 0, counts: this.newCounts() }))
    w.counts[w.newest % (SLOTS + 1)]! += cost
    w.total += cost
    return { allowed: true, limit: this.limit, remaining: this.limit - w.total, retryAfterSec: 0 }
  }

  /** The budget of `key` without spending any (for answers that are not themselves limited, e.g. CORS preflight). */
  peek(key: string): RateDecision {
    const w = this.windows.get(key)
    if (w) slide(w, Math.floor(this.now() / this.slotMs))
    return { allowed: true, limit: this.limit, remaining: Math.max(0, this.limit - (w?.total ?? 0)), retryAfterSec: 0 }
  }

  /**
   * Whole seconds until `excess` more fit: the oldest slots leave the window first, slot s at the
   * start of slot s + SLOTS + 1. A cost above the whole limit never fits: the period is the answer.
   */
  private waitSec(w: Window | undefined, excess: number, now: number): number {
    let freed = 0
    if (w) {
      // Slots before 0 (a clock near the epoch, in tests) never held anything.
      for (let s = Math.max(0, w.newest - SLOTS); s <= w.newest; s++) {
        freed += w.counts[s % (SLOTS + 1)]!
        if (freed >= excess) return Math.max(1, Math.ceil(((s + SLOTS + 1) * this.slotMs - now) / 1000))
      }
    }
    return Math.ceil(this.periodMs / 1000)
  }

  /** Forget keys whose every slot has left the window, so memory is bounded by recent clients. */
  private sweep(now: number): void {
    if (now - this.lastSweep < this.periodMs) return
    this.lastSweep = now
    const slot = Math.floor(now / this.slotMs)
    for (const [k, w] of this.windows) if (w.newest < slot - SLOTS) this.windows.delete(k)
  }
}

/** Move `w` to `slot`: the slots that left the window give their counts back. */
function slide(w: Window, slot: number): void {
  // A clock that went back keeps counting into the newest slot.
  if (slot <= w.newest) return
  if (slot - w.newest > SLOTS) {
    w.counts.fill(0)
    w.total = 0
  } else {
    for (let s = w.newest + 1; s <= slot; s++) {
      const i = s % (SLOTS + 1)
      w.total -= w.counts[i]!
      w.counts[i] = 0
    }
  }
  w.newest = slot
}
