/**
 * The primary's side of replication (docs/cluster.md "Durable means replicated"). Every transaction
 * that commits on the primary — a group-commit batch (src/storage/commit.ts) or a batch of driver
 * positions (src/storage/driver-locations.ts) — calls `capture` before its COMMIT: the rows its
 * triggers recorded become the next stream message, numbered with the sequence it will get, and that
 * number is written in the same transaction. After the COMMIT, `ship` publishes it with that
 * sequence's predecessor as the expected last sequence, in parallel with the WAL's fsync; the writes
 * are acknowledged only when both are done.
 *
 * - **Fencing**: a publish refused for its expected sequence means another node appended: this one
 *   is no longer primary. Nothing more is acknowledged; `onFenced` ends the node (it restarts as a
 *   replica). The same when the lease was not renewed in time (`leaseValid`).
 * - **Stalls**: a publish that fails (its NATS server went away, the stream is electing a leader) is
 *   retried in order, under the same message id (JetStream drops a repeat), until it lands; a blip
 *   of a second or two is invisible to clients. Writers get 503 after SHIP_TIMEOUT_MS (their write
 *   may still land: like any timeout, a retry with an Idempotency-Key finds it), and once the oldest
 *   unconfirmed message is older than STALL_MS, `admit` refuses new writes with 503 until the stream
 *   takes messages again, so the primary does not pile up commits nobody else has.
 */
import { randomBytes } from 'node:crypto'
import { JetStreamApiError } from '@nats-io/jetstream'
import { ApiError } from '../errors.ts'
import type { Logger } from '../log.ts'
import type { Db } from '../storage/db.ts'
import { ChangeDrain, type CapturedTable } from '../storage/changes.ts'
import { encodeMessage, FORMAT } from './batch.ts'
import { recordApplied } from './state.ts'

/** A captured transaction on its way to the stream. */
export interface Outgoing { seq: number; id: string; data: Uint8Array }

/** What a committing transaction needs of cluster mode (null in the single process). */
export interface Replication {
  /** Inside the transaction, before COMMIT: its changes as the next message, or null when it changed nothing. */
  capture(db: Db): Outgoing | null
  /** The COMMIT failed: the message was never sent, its sequence is free again. */
  abandon(o: Outgoing): void
  /** After the COMMIT: resolves once the stream holds the message; rejects (503, or fenced) otherwise. */
  ship(o: Outgoing): Promise<void>
  /** Before a write is queued: 503 while the stream takes nothing (a stall) or this node is fenced. */
  admit(): void
}

/** Where messages go: the stream's publish, with the expected last sequence and a message id. */
export type Publish = (data: Uint8Array, opts: { expectedLastSeq: number; msgId: string }) => Promise<{ seq: number; duplicate: boolean }>

export interface ReplicatorOptions {
  db: Db
  tables: readonly CapturedTable[]
  publish: Publish
  nodeId: string
  schema: number
  /** The stream's last sequence when this node became primary (its epoch message). */
  lastSeq: number
  leaseValid: () => boolean
  onFenced: (why: string) => void
  log: Logger
  shipTimeoutMs?: number
}

export const SHIP_TIMEOUT_MS = 10_000
/** How long the oldest unconfirmed message may wait before new writes are refused. */
export const STALL_MS = 2000
const RETRY_MS = [50, 100, 250, 500, 1000]

const wrongSequence = (err: unknown): boolean => err instanceof JetStreamApiError && /wrong last sequence/i.test(err.message)

const unavailable = (why: string) => new ApiError('unavailable', why, undefined, { 'Retry-After': '1' })

interface Pending extends Outgoing { done: (err: unknown) => void; sentAt: number }

export class Replicator implements Replication {
  private nextSeq: number
  private count = 0
  private readonly boot = randomBytes(4).toString('hex')
  private readonly drain: ChangeDrain
  /** Sent and not yet acknowledged, in sequence order. */
  private readonly queue: Pending[] = []
  /** `retrying`: a publish failed; what is unconfirmed is resent in order (no new send meanwhile). */
  private state: 'ok' | 'retrying' | 'fenced' = 'ok'
  private retrying = false

  constructor(private readonly o: ReplicatorOptions) {
    this.nextSeq = o.lastSeq + 1
    this.drain = new ChangeDrain(o.db, o.tables)
  }

  get fenced(): boolean { return this.state === 'fenced' }
  /** The oldest unconfirmed message has waited longer than STALL_MS: new writes are refused. */
  get stalled(): boolean { return this.state !== 'fenced' && this.queue.length > 0 && performance.now() - this.queue[0]!.sentAt > STALL_MS }
  /** The sequence of the last message this node captured. */
  get lastCaptured(): number { return this.nextSeq - 1 }

  capture(db: Db): Outgoing | null {
    const set = this.drain.drain()
    if (!set) return null
    const seq = this.nextSeq++
    const id = `${this.o.nodeId}:${this.boot}:${++this.count}`
    const at = Date.now()
    recordApplied(db, { seq, id, at })
    return { seq, id, data: encodeMessage({ k: 'batch', f: FORMAT, node: this.o.nodeId, id, schema: this.o.schema, at, set }) }
  }

  abandon(o: Outgoing): void {
    if (o.seq === this.nextSeq - 1) this.nextSeq--
  }

  admit(): void {
    if (this.state === 'fenced') throw unavailable('This node is no longer the primary; retry shortly.')
    if (this.stalled) throw unavailable('The cluster cannot make writes durable right now; retry shortly.')
  }

  ship(o: Outgoing): Promise<void> {
    if (this.state === 'fenced') return Promise.reject(unavailable('This node is no longer the primary; retry shortly.'))
    return new Promise<void>((resolve, reject) => {
      let settled = false
      const timer = setTimeout(() => {
        if (settled) return
        settled = true
        reject(unavailable('The cluster did not confirm this write in time; retry shortly (with an Idempotency-Key, a retry finds it if it landed).'))
      }, this.o.shipTimeoutMs ?? SHIP_TIMEOUT_MS)
      timer.unref()
      const p: Pending = { ...o, sentAt: performance.now(), done: (err) => { clearTimeout(timer); if (settled) return; settled = true; if (err) reject(err); else resolve() } }
      this.queue.push(p)
      if (this.state === 'ok') this.send(p)
    })
  }

  private send(p: Pending): void {
    this.o.publish(p.data, { expectedLastSeq: p.seq - 1, msgId: p.id }).then(
      (ack) => this.acked(p, ack.seq),
      (err: unknown) => this.failed(p, err),
    )
  }

  private acked(p: Pending, seq: number): void {
    if (this.state === 'fenced') return
    if (seq !== p.seq) return this.fence(`the stream numbered message ${p.id} ${seq}, expected ${p.seq}`)
    if (!this.o.leaseValid()) return this.fence('the lease lapsed before the stream confirmed a write')
    const i = this.queue.indexOf(p)
    if (i >= 0) this.queue.splice(i, 1)
    p.done(null)
    if (this.state === 'retrying' && this.queue.length === 0) {
      this.state = 'ok'
      this.o.log.info('the replication stream takes writes again')
    }
  }

  private failed(p: Pending, err: unknown): void {
    if (this.state === 'fenced') return
    // Refused for its expected sequence while every message before it landed: another node appended.
    // (Behind a message that did not land, the refusal is only that message's absence: a stall.)
    if (wrongSequence(err) && this.queue[0] === p) return this.fence(`another node appended to the stream (${(err as Error).message})`)
    if (this.state === 'ok') this.o.log.warn({ err, seq: p.seq }, 'the replication stream did not take a write; retrying in order')
    this.state = 'retrying'
    void this.retry()
  }

  /** Resend what is unacknowledged, in order, until all of it landed (or this node is fenced). */
  private async retry(): Promise<void> {
    if (this.retrying) return
    this.retrying = true
    let attempt = 0
    try {
      while (this.queue.length > 0 && this.state === 'retrying') {
        await new Promise((r) => setTimeout(r, RETRY_MS[Math.min(attempt++, RETRY_MS.length - 1)]))
        const p = this.queue[0]!
        try {
          const ack = await this.o.publish(p.data, { expectedLastSeq: p.seq - 1, msgId: p.id })
          attempt = 0
          this.acked(p, ack.seq)
        } catch (err) {
          if (wrongSequence(err)) this.fence(`another node appended to the stream (${(err as Error).message})`)
        }
      }
      if (this.state === 'retrying') {
        this.state = 'ok'
        this.o.log.info('the replication stream takes writes again')
      }
    } finally {
      this.retrying = false
    }
  }

  /** This node must acknowledge nothing more: every waiting writer is refused, and the node ends. */
  fence(why: string): void {
    if (this.state === 'fenced') return
    this.state = 'fenced'
    this.o.log.error({ why }, 'fenced: no longer the primary; acknowledging nothing more')
    for (const p of this.queue.splice(0)) p.done(unavailable('This node is no longer the primary; retry shortly.'))
    this.o.onFenced(why)
  }
}
