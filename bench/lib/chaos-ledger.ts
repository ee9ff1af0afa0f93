/**
 * What the chaos clients were told (issue 21 item 3): every acknowledged write (a 2xx the client
 * read in full, or a driver `ack` frame), and the writes that were in flight when the server died,
 * whose outcome is unknown. The checks compare the database and the restarted server with this.
 */

/** An order create the client sent; `id` once it was acknowledged. */
export interface SentOrder {
  note: string
  /** Set for orders sent with an Idempotency-Key. */
  key: string | null
  body: string
  id: number | null
  cycle: number
}

/** A sequence of steps on one thing (an order's kitchen status, a KDS line's state). */
export interface Stepped {
  id: number
  orderId: number
  /** The last state a 2xx confirmed. */
  acked: string
  /** A step sent and not answered when the server died: the state may be this one too. */
  inFlight: string | null
}

export interface DriverTrack {
  id: number
  token: string
  /** Next `seq` to send; positions encode it in the latitude (LAT0 + seq / LAT_SCALE). */
  nextSeq: number
  /** Highest `seq` the server acknowledged as stored (acks are cumulative, docs/realtime.md). */
  ackedSeq: number
}

export const LAT0 = 40
export const LAT_SCALE = 100_000
export const latOf = (seq: number): number => LAT0 + seq / LAT_SCALE

export class Ledger {
  readonly orders: SentOrder[] = []
  readonly statuses: Stepped[] = []
  readonly lines: Stepped[] = []
  readonly drivers: DriverTrack[] = []
  /** `order_id:status` of every acknowledged owner status change (each must have its event). */
  readonly statusEvents = new Set<string>()
  private n = 0

  constructor(readonly prefix: string) {}

  /** A note unique in the whole run: the database is searched by it (an order must never exist twice). */
  nextNote(): string { return `${this.prefix}-${++this.n}` }

  acknowledged(): SentOrder[] { return this.orders.filter((o) => o.id !== null) }

  /** Acknowledged writes so far: orders, status changes, bumps, driver positions (one per driver with an ack). */
  ackCount(): number {
    return this.acknowledged().length + this.statusEvents.size + this.lines.reduce((a, l) => a + stepIndex(l.acked), 0) + this.drivers.filter((d) => d.ackedSeq >= 0).length
  }
}

const KDS_STEPS = ['queued', 'preparing', 'ready', 'served']
const stepIndex = (s: string): number => Math.max(0, KDS_STEPS.indexOf(s))
export const nextKdsState = (s: string): string | null => KDS_STEPS[KDS_STEPS.indexOf(s) + 1] ?? null
/** The owner status walk of an order (api-v1 §3 kitchen statuses; each step emits order.status_changed). */
export const STATUS_WALK = ['preparing', 'ready', 'completed']
