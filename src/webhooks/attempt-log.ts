/**
 * Attempt records, written in batches. Nobody waits for an attempt's record (the receiver already
 * has its answer), so records gather until the next transaction (a committer hook) or for at most
 * `FLUSH_MS`, then go to SQLite together: no fsync of their own while other writes are flowing. A crash loses at most the records of that
 * window; those deliveries are still pending in SQLite and are sent again with the same id
 * (at-least-once). `drain()` writes what is buffered inside the caller's transaction, so a read of
 * pending deliveries never sees a delivery as pending after its success was decided.
 *
 * `onDurable` hears each record's outcome once the transaction that wrote it is committed and
 * synced (the metrics' attempt counter): a scrape never counts an attempt, e.g. a retry, whose row a
 * crash could still lose.
 *
 * Endpoint health (the circuit breaker's counters, 008_webhook_health.sql) rides along the same way,
 * the latest snapshot per endpoint only: a storm of failures costs one row update per endpoint per
 * batch, not one per attempt.
 */
import type { Committer } from '../storage/commit.ts'
import type { AttemptRecord, DeliveryStatus, EndpointHealth, WebhookStore } from '../storage/webhooks.ts'
import type { Logger } from '../log.ts'

const FLUSH_MS = 10
const MAX_BUFFERED = 2000

export class AttemptLog {
  private buffer: AttemptRecord[] = []
  /** Batches handed to the committer and not written yet (`drain` may write them first). */
  private queued = new Set<AttemptRecord[]>()
  private timer: NodeJS.Timeout | null = null
  /** Latest health snapshot per endpoint, not written yet. */
  private healthBuf = new Map<number, EndpointHealth>()

  /** Outcomes written in the open transaction (by `drain`, a flush job or the hook). */
  private written: DeliveryStatus[] = []

  constructor(
    private readonly store: WebhookStore,
    private readonly committer: Committer,
    private readonly log: Logger,
    private readonly onDurable: (status: DeliveryStatus) => void = () => {},
  ) {
    // Records also ride along in any transaction that happens sooner (orders, fan-out, …). The hook
    // runs after every job of the batch, so it also takes what jobs wrote in the same transaction.
    committer.addHook({
      inTx: () => {
        this.drain()
        const taken = this.written
        this.written = []
        return taken
      },
      committed: (statuses) => { for (const st of statuses) this.onDurable(st) },
    })
  }

  record(r: AttemptRecord): void {
    this.buffer.push(r)
    if (this.buffer.length >= MAX_BUFFERED) this.flush()
    else this.timer ??= setTimeout(() => this.flush(), FLUSH_MS)
  }

  /** The endpoint's health now; replaces a snapshot of it that was not written yet. */
  health(endpointId: number, h: EndpointHealth): void {
    this.healthBuf.set(endpointId, h)
    this.timer ??= setTimeout(() => this.flush(), FLUSH_MS)
  }

  /** Write every record not written yet, now; call only inside a committer transaction. */
  drain(): void {
    for (const batch of this.queued) this.write(batch)
    this.queued.clear()
    const rows = this.buffer
    this.buffer = []
    this.write(rows)
    this.writeHealth()
  }

  /** Queue the buffered records as one committer job. */
  flush(): void {
    if (this.timer) clearTimeout(this.timer)
    this.timer = null
    if (this.buffer.length === 0 && this.healthBuf.size === 0) return
    const rows = this.buffer
    this.buffer = []
    this.queued.add(rows)
    this.committer.write(() => {
      // Already written by a `drain` that ran earlier in the queue?
      if (this.queued.delete(rows)) this.write(rows)
      this.writeHealth()
    }).catch((err: unknown) => this.log.error({ err, records: rows.length }, 'webhook attempts not recorded'))
  }

  private writeHealth(): void {
    if (this.healthBuf.size === 0) return
    const all = this.healthBuf
    this.healthBuf = new Map()
    for (const [id, h] of all) {
      try { this.store.setHealth(id, h) } catch (err) { this.log.error({ err, endpoint: id }, 'webhook endpoint health not recorded') }
    }
  }

  private write(rows: AttemptRecord[]): void {
    for (const r of rows) {
      // One failing record (its endpoint was deleted meanwhile) must not take the batch with it.
      try {
        this.store.recordAttempt(r)
        this.written.push(r.status)
      } catch (err) { this.log.debug({ err, delivery: r.deliveryId }, 'webhook attempt not recorded') }
    }
  }
}
