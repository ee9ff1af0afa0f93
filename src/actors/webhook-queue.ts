/**
 * An endpoint actor's in-memory queue: deliveries due now (FIFO) and deliveries waiting for a retry
 * (a min-heap on due time). O(1) enqueue of new work and O(log n) retries, so a long queue does not
 * make every message of a busy endpoint slower. No I/O.
 */
import type { Pending } from '../storage/webhooks.ts'

export type { Pending }

export class DeliveryQueue {
  private ready: Pending[] = []
  private head = 0
  private readonly waiting: Pending[] = []

  get size(): number {
    return this.ready.length - this.head + this.waiting.length
  }

  /** Earliest due time among waiting deliveries, or null. */
  get nextDueAt(): number | null {
    return this.waiting.length ? this.waiting[0]!.dueAt : null
  }

  get readyCount(): number {
    return this.ready.length - this.head
  }

  get waitingCount(): number {
    return this.waiting.length
  }

  push(p: Pending, now: number): void {
    if (p.dueAt <= now) this.ready.push(p)
    else this.heapPush(p)
  }

  /** Move every waiting delivery that is due by `now` to the ready list. */
  promote(now: number): void {
    while (this.waiting.length && this.waiting[0]!.dueAt <= now) this.ready.push(this.heapPop())
  }

  /** Remove and return the ready deliveries after the oldest `keep` (they go back to storage). */
  takeReady(keep: number): Pending[] {
    const start = this.head + keep
    if (start >= this.ready.length) return []
    const out = this.ready.slice(start)
    this.ready.length = start
    return out
  }

  /** The oldest ready delivery, or undefined. */
  shift(): Pending | undefined {
    if (this.head >= this.ready.length) return undefined
    const p = this.ready[this.head]!
    this.head++
    // Compact now and then instead of Array#shift on every call.
    if (this.head > 1024 && this.head * 2 > this.ready.length) {
      this.ready = this.ready.slice(this.head)
      this.head = 0
    }
    return p
  }

  private heapPush(p: Pending): void {
    const h = this.waiting
    h.push(p)
    let i = h.length - 1
    while (i > 0) {
      const parent = (i - 1) >> 1
      if (h[parent]!.dueAt <= h[i]!.dueAt) break
      ;[h[parent], h[i]] = [h[i]!, h[parent]!]
      i = parent
    }
  }

  private heapPop(): Pending {
    const h = this.waiting
    const top = h[0]!
    const last = h.pop()!
    if (h.length > 0) {
      h[0] = last
      let i = 0
      for (;;) {
        const l = 2 * i + 1
        const r = l + 1
        let m = i
        if (l < h.length && h[l]!.dueAt < h[m]!.dueAt) m = l
        if (r < h.length && h[r]!.dueAt < h[m]!.dueAt) m = r
        if (m === i) break
        ;[h[m], h[i]] = [h[i]!, h[m]!]
        i = m
      }
    }
    return top
  }
}
