/**
 * Drivers' loads in memory (issue 37 item 5; docs/dispatch.md "Fast enough for a city"): what a
 * dispatch decision reads of each candidate besides its position — its active deliveries, its open
 * offers and when its last delivery ended — kept from the order changes that alter them instead of
 * read from SQLite per decision. Pure data structure, no I/O.
 *
 * A driver is known once seeded from SQLite (`seed`, lazily on the first look; `forget` drops it
 * again, e.g. when its shift ends, so the next look reads SQLite afresh). Changes of drivers not
 * known are ignored: their seed reads them. Every change is idempotent (sets keyed by order and
 * offer), so a seed read between a commit and the change it reports does not count it twice.
 *
 * `onLoad` hears every change of a known driver's load (the dispatcher keeps the spatial index's
 * load levels with it, src/domain/fleet-grid.ts); offers that expire are dropped when a load is read
 * and by `expire`, which the dispatcher calls every second.
 */

export interface LoadSeed {
  /** Orders the driver delivers now (assigned, picked up, out for delivery). */
  active: readonly number[]
  /** Open offers: id and expiry (ms since the epoch). */
  offers: ReadonlyArray<{ id: number; expiresAtMs: number }>
  /** When the driver's last delivery ended (ms), or null. */
  lastEndMs: number | null
}

interface DriverLoad { active: Set<number>; offers: Map<number, number>; lastEndMs: number | null }

export class FleetLoads {
  private readonly drivers = new Map<number, DriverLoad>()
  /** Active order → its driver, for known drivers. */
  private readonly orderDriver = new Map<number, number>()
  /** Open offer → its driver, for known drivers. */
  private readonly offerDriver = new Map<number, number>()

  constructor(private readonly onLoad: (driverId: number, load: number) => void = () => {}) {}

  get size(): number { return this.drivers.size }
  has(driverId: number): boolean { return this.drivers.has(driverId) }

  seed(driverId: number, s: LoadSeed): void {
    this.forget(driverId)
    const d: DriverLoad = { active: new Set(s.active), offers: new Map(s.offers.map((o) => [o.id, o.expiresAtMs])), lastEndMs: s.lastEndMs }
    this.drivers.set(driverId, d)
    for (const o of d.active) this.orderDriver.set(o, driverId)
    for (const o of d.offers.keys()) this.offerDriver.set(o, driverId)
    this.onLoad(driverId, d.active.size + d.offers.size)
  }

  forget(driverId: number): void {
    const d = this.drivers.get(driverId)
    if (!d) return
    for (const o of d.active) this.orderDriver.delete(o)
    for (const o of d.offers.keys()) this.offerDriver.delete(o)
    this.drivers.delete(driverId)
  }

  /**
   * An order's delivery now: its driver (or null) and whether that driver is delivering it
   * (`active`). `ended`: the delivery just ended (delivered or failed), at `nowMs`.
   */
  delivery(orderId: number, driverId: number | null, active: boolean, ended: boolean, nowMs: number): void {
    const was = this.orderDriver.get(orderId)
    if (was !== undefined && (was !== driverId || !active)) {
      this.orderDriver.delete(orderId)
      if (this.drivers.get(was)?.active.delete(orderId)) this.changed(was)
    }
    const d = driverId === null ? undefined : this.drivers.get(driverId)
    if (!d) return
    if (active) {
      this.orderDriver.set(orderId, driverId!)
      if (!d.active.has(orderId)) { d.active.add(orderId); this.changed(driverId!) }
    } else if (ended) d.lastEndMs = Math.max(d.lastEndMs ?? 0, nowMs)
  }

  offerOpened(offerId: number, driverId: number, expiresAtMs: number): void {
    const d = this.drivers.get(driverId)
    if (!d) return
    const known = d.offers.has(offerId)
    d.offers.set(offerId, expiresAtMs)
    this.offerDriver.set(offerId, driverId)
    if (!known) this.changed(driverId)
  }

  /** Accepted, rejected, expired or withdrawn. */
  offerClosed(offerId: number): void {
    const driverId = this.offerDriver.get(offerId)
    if (driverId === undefined) return
    this.offerDriver.delete(offerId)
    if (this.drivers.get(driverId)?.offers.delete(offerId)) this.changed(driverId)
  }

  /** Drop the offers past their expiry at `nowMs` (their drivers' loads fall). */
  expire(nowMs: number): void {
    for (const [offerId, driverId] of this.offerDriver) {
      const d = this.drivers.get(driverId)
      const exp = d?.offers.get(offerId)
      if (exp !== undefined && exp <= nowMs) this.offerClosed(offerId)
    }
  }

  /** Active deliveries plus offers open at `nowMs` (offers past their expiry are dropped); undefined when not known. */
  load(driverId: number, nowMs: number): number | undefined {
    const d = this.drivers.get(driverId)
    if (!d) return undefined
    if (d.offers.size > 0) for (const [id, exp] of d.offers) if (exp <= nowMs) this.offerClosed(id)
    return d.active.size + d.offers.size
  }

  private changed(driverId: number): void {
    const d = this.drivers.get(driverId)
    if (d) this.onLoad(driverId, d.active.size + d.offers.size)
  }

  lastEndMs(driverId: number): number | null {
    return this.drivers.get(driverId)?.lastEndMs ?? null
  }
}
