/**
 * Permits for webhook attempts (docs/webhooks.md "Fairness"): at most `perAccount` requests in
 * flight per account, across its endpoints, and at most `global` for the server, on top of each
 * endpoint's own WEBHOOK_CONCURRENCY. One account's failing or slow endpoints then hold at most its
 * own share of sockets and CPU, whatever their number.
 *
 * An endpoint actor asks how many attempts it may start (`available`), starts that many and `take`s
 * them; with work left over it `wait`s. A permit that is released goes straight to a waiting
 * endpoint (reserved for it, and the endpoint is woken), accounts taking turns round-robin and the
 * endpoints of one account too, so a busy endpoint that completes and resends at once cannot keep
 * the permits away from one that is waiting. No I/O; the wake-up is a callback.
 */

export class DeliveryBudget {
  private globalUsed = 0
  /** Permits held (in flight or reserved) per account. */
  private readonly used = new Map<number, number>()
  /** Permits reserved for a woken endpoint that has not taken them yet. */
  private readonly reserved = new Map<number, { owner: number; n: number }>()
  /** Waiting endpoints per account, oldest first; and the accounts with waiters, in turn order. */
  private readonly waiting = new Map<number, Set<number>>()
  private readonly turns = new Set<number>()

  constructor(
    private readonly perAccount: number,
    private readonly global: number,
    private readonly wake: (endpointId: number) => void,
  ) {}

  /** Requests in flight or reserved (for tests and metrics). */
  get inUse(): number {
    return this.globalUsed
  }

  usedBy(owner: number): number {
    return this.used.get(owner) ?? 0
  }

  /** How many attempts endpoint `ep` of account `owner` may start now. */
  available(ep: number, owner: number): number {
    const mine = this.reserved.get(ep)?.n ?? 0
    const free = Math.max(0, Math.min(this.perAccount - this.usedBy(owner), this.global - this.globalUsed))
    return mine + free
  }

  /** `n` attempts started (n ≤ available): reservations first, then free permits; unused reservations go back. */
  take(ep: number, owner: number, n: number): void {
    const r = this.reserved.get(ep)
    let fromPool = n
    if (r) {
      this.reserved.delete(ep)
      const use = Math.min(r.n, n)
      fromPool = n - use
      // Reserved permits are already counted as used; give back what was not needed.
      for (let i = use; i < r.n; i++) this.unuse(r.owner)
    }
    for (let i = 0; i < fromPool; i++) {
      this.used.set(owner, this.usedBy(owner) + 1)
      this.globalUsed++
    }
    // It got its turn: if it still has work left over, it waits again at the back (`wait`).
    if (n > 0) this.leaveLine(ep, owner)
    if (r && r.n > n) this.dispatch()
  }

  private leaveLine(ep: number, owner: number): void {
    const q = this.waiting.get(owner)
    if (q?.delete(ep) && q.size === 0) {
      this.waiting.delete(owner)
      this.turns.delete(owner)
    }
  }

  /** Endpoint `ep` has work it could not start: wake it when a permit frees. */
  wait(ep: number, owner: number): void {
    let q = this.waiting.get(owner)
    if (!q) this.waiting.set(owner, (q = new Set()))
    q.add(ep)
    this.turns.add(owner)
    // Permits may be free for it already (another account's limit was the obstacle).
    this.dispatch()
  }

  /** An attempt of account `owner` finished. */
  release(owner: number): void {
    this.unuse(owner)
    this.dispatch()
  }

  /** Endpoint `ep` is gone (deleted, or its actor stopped): drop its reservation and its place in line. */
  forget(ep: number): void {
    const r = this.reserved.get(ep)
    if (r) {
      this.reserved.delete(ep)
      for (let i = 0; i < r.n; i++) this.unuse(r.owner)
    }
    for (const owner of [...this.waiting.keys()]) this.leaveLine(ep, owner)
    if (r) this.dispatch()
  }

  private unuse(owner: number): void {
    const n = this.usedBy(owner) - 1
    if (n > 0) this.used.set(owner, n)
    else this.used.delete(owner)
    this.globalUsed--
  }

  /** Hand free permits to waiting endpoints: one per turn, accounts in rotation. */
  private dispatch(): void {
    while (this.globalUsed < this.global && this.turns.size > 0) {
      let owner: number | null = null
      for (const o of this.turns) {
        if (this.usedBy(o) < this.perAccount) { owner = o; break }
      }
      if (owner === null) return
      const q = this.waiting.get(owner)!
      const ep = q.values().next().value as number
      q.delete(ep)
      // The account goes to the back of the line (if it still waits).
      this.turns.delete(owner)
      if (q.size > 0) this.turns.add(owner)
      else this.waiting.delete(owner)
      const r = this.reserved.get(ep)
      if (r) r.n++
      else this.reserved.set(ep, { owner, n: 1 })
      this.used.set(owner, this.usedBy(owner) + 1)
      this.globalUsed++
      this.wake(ep)
    }
  }
}
