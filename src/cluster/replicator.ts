/**
 * The primary's side of replication (docs/cluster.md "Durable means replicated"). Every transaction
 * that commits on the primary — a group-commit batch (src/storage/commit.ts) or a batch of driver
 * positions (src/storage/driver-locations.ts) — calls `capture` before its COMMIT: the rows its
 * triggers recorded become the next stream message(s), numbered with the sequences they will get, and
 * the last of them is written in the same transaction. After the COMMIT, `ship` queues them; they are
 * published one at a time, each with its predecessor's sequence as the expected last sequence, in
 * parallel with the WAL's fsync; the writes are acknowledged only when both are done.
 *
 * - **One message in flight.** JetStream checks an expected last sequence by number only: with
 *   several in flight, a deposed primary's second message could follow its successor's epoch and be
 *   stored. With one, the first refusal stops it. (Group commit makes the batches grow instead.)
 * - **Fencing**: a publish refused for its expected sequence means another node appended: nothing
 *   more is acknowledged and `onFenced` ends the node (it restarts as a replica). The same when the
 *   lease was not renewed in time (checked before a capture and after every acknowledgement), when the
 *   schema changed under the running server (another process migrated the file), or when the stream
 *   has taken nothing for MAX_STALL_LEASES leases (another node should take over).
 * - **Stalls**: a publish that fails for a while (its NATS server went away, the stream is electing
 *   a leader) is retried in order under the same message id (JetStream drops a repeat); a blip is
 *   invisible to clients. Writers get 503 after SHIP_TIMEOUT_MS (their write may still land: a retry
 *   with an Idempotency-Key finds it), and once the oldest unconfirmed message has waited STALL_MS,
 *   `admit` refuses new writes with 503, so the primary does not pile up commits nobody else has.
 */
import { randomBytes } from 'node:crypto'
import { JetStreamApiError } from '@nats-io/jetstream'
import { ApiError } from '../errors.ts'
import type { Logger } from '../log.ts'
import type { Db } from '../storage/db.ts'
import { ChangeDrain, type CapturedTable } from '../storage/changes.ts'
import { FORMAT, messagesOf } from './batch.ts'
import { recordApplied } from './state.ts'

/** A captured transaction on its way to the stream: the messages at sequences `seq`..`seq + parts.length - 1`. */
export interface Outgoing { seq: number; id: string; parts: Uint8Array[] }

/** What a committing transaction needs of cluster mode (null in the single process). */
export interface Replication {
  /** Inside the transaction, before COMMIT: its changes as the next message(s), or null when it changed nothing. Throws when this node may not write. */
  capture(db: Db): Outgoing | null
  /** The COMMIT failed: the messages were never sent, their sequences are free again. */
  abandon(o: Outgoing): void
  /** After the COMMIT: resolves once the stream holds it; rejects (503, or fenced) otherwise. */
  ship(o: Outgoing): Promise<void>
  /** Resolves once everything captured so far is in the stream: for answers that rest on earlier writes. */
  barrier(): Promise<void>
  /** Before a write is queued: 503 while the stream takes nothing (a stall) or this node is fenced. */
  admit(): void
  /**
   * A message is on its way and the stream is answering: a batch committed now would only wait in
   * the queue behind it, so the group committer keeps it open and commits it on `onIdle` (one
   * message, and one stream round trip, for everything that arrived meanwhile).
   */
  readonly busy?: boolean
  /** Called when `busy` turns false (the queue emptied, publishing started failing, or the node was fenced). */
  onIdle?: (() => void) | null
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
  /**
   * A renewal that may yet prove a lease that ran out (Lease.renewal: the one on its way, or one sent
   * now), settling true when it did; null when none can (the lease was lost).
   */
  leaseRenewal: () => Promise<boolean> | null
  /** The lease's length: a stream unreachable for MAX_STALL_LEASES of them ends the node. */
  leaseMs: number
  /** The largest message NATS takes (`max_payload`); larger batches go as parts. */
  maxPayload: number
  onFenced: (why: string) => void
  log: Logger
  shipTimeoutMs?: number
}

export const SHIP_TIMEOUT_MS = 10_000
/** How long the oldest unconfirmed message may wait before new writes are refused. */
export const STALL_MS = 2000
/** Leases of a stream that takes nothing before the primary gives way. */
export const MAX_STALL_LEASES = 3
const RETRY_MS = [50, 100, 250, 500, 1000]
/** Room left in a NATS message for the part's own fields and headers. */
const HEADROOM = 8 * 1024

const wrongSequence = (err: unknown): boolean => err instanceof JetStreamApiError && /wrong last sequence/i.test(err.message)
const unavailable = (why: string) => new ApiError('unavailable', why, undefined, { 'Retry-After': '1' })
const notPrimary = () => unavailable('This node is no longer the primary; retry shortly.')

interface Item extends Outgoing {
  /** Parts already in the stream. */
  sent: number
  /** When it became the head of the queue (performance.now()). */
  headSince: number
  waiters: Array<(err: unknown) => void>
}

export class Replicator implements Replication {
  private nextSeq: number
  private count = 0
  private readonly boot = randomBytes(4).toString('hex')
  private readonly drain: ChangeDrain
  private readonly schemaVersion: () => number
  private readonly installedSchema: number
  /** Captured and not yet all in the stream, in sequence order; the head is being published. */
  private readonly queue: Item[] = []
  private inFlight = false
  private fencedWhy: string | null = null
  /** Since when publishing has been failing (performance.now()), or null. */
  private failingSince: number | null = null
  private attempt = 0
  /** The last sequence the stream confirmed. */
  private confirmedSeq: number
  onIdle: (() => void) | null = null

  constructor(private readonly o: ReplicatorOptions) {
    this.nextSeq = o.lastSeq + 1
    this.confirmedSeq = o.lastSeq
    this.drain = new ChangeDrain(o.db, o.tables)
    const read = o.db.prepare('PRAGMA schema_version').pluck()
    this.schemaVersion = () => read.get() as number
    this.installedSchema = this.schemaVersion()
  }

  get fenced(): boolean { return this.fencedWhy !== null }
  /**
   * Something is queued and the stream is taking it. False while publishing fails: then batches go
   * into the queue at once, where each waits with its own SHIP_TIMEOUT_MS and gets its 503.
   */
  get busy(): boolean { return this.queue.length > 0 && this.failingSince === null && !this.fenced }
  /** The oldest unconfirmed message has waited longer than STALL_MS: new writes are refused. */
  get stalled(): boolean { return !this.fenced && this.queue.length > 0 && performance.now() - this.queue[0]!.headSince > STALL_MS }
  /** The sequence of the last message this node captured. */
  get lastCaptured(): number { return this.nextSeq - 1 }
  /** The sequence of the last message the stream confirmed (everything up to it is in the stream). */
  get lastConfirmed(): number { return this.confirmedSeq }

  capture(db: Db): Outgoing | null {
    if (this.fenced) throw notPrimary()
    if (!this.o.leaseValid()) {
      // A renewal may yet prove the lease (one on a slow round trip while NATS elects a leader, or one
      // sent now after the event loop was held past the renewal timer): this write is refused, and
      // the renewal's answer decides (Lease.keep fences the node if it fails). A stall is then a 503,
      // not a failover. The acknowledged writes' safety does not rest on this check: a successor's
      // epoch makes every later publish of this node fail.
      if (this.o.leaseRenewal()) throw unavailable('The lease is being renewed; retry shortly.')
      this.fence('the lease lapsed')
      throw notPrimary()
    }
    // Another process migrated the file under this server: its triggers may no longer capture everything.
    if (this.schemaVersion() !== this.installedSchema) { this.fence('the schema changed under the running primary'); throw notPrimary() }
    const set = this.drain.drain()
    if (!set) return null
    const id = `${this.o.nodeId}:${this.boot}:${this.count + 1}`
    const at = Date.now()
    const parts = messagesOf({ k: 'batch', f: FORMAT, node: this.o.nodeId, id, schema: this.o.schema, at, set }, this.o.maxPayload - HEADROOM)
    const seq = this.nextSeq
    recordApplied(db, { seq: seq + parts.length - 1, id, at })
    this.count++
    this.nextSeq += parts.length
    return { seq, id, parts }
  }

  abandon(o: Outgoing): void {
    if (o.seq + o.parts.length === this.nextSeq) this.nextSeq = o.seq
  }

  admit(): void {
    if (this.fenced) throw notPrimary()
    if (this.stalled) throw unavailable('The cluster cannot make writes durable right now; retry shortly.')
  }

  ship(o: Outgoing): Promise<void> {
    if (this.fenced) return Promise.reject(notPrimary())
    return new Promise<void>((resolve, reject) => {
      let settled = false
      const timer = setTimeout(() => {
        if (settled) return
        settled = true
        reject(unavailable('The cluster did not confirm this write in time; retry shortly (with an Idempotency-Key, a retry finds it if it landed).'))
      }, this.o.shipTimeoutMs ?? SHIP_TIMEOUT_MS)
      timer.unref()
      const done = (err: unknown) => { clearTimeout(timer); if (settled) return; settled = true; if (err) reject(err); else resolve() }
      this.queue.push({ ...o, sent: 0, headSince: performance.now(), waiters: [done] })
      this.kick()
    })
  }

  barrier(): Promise<void> {
    if (this.fenced) return Promise.reject(notPrimary())
    const last = this.queue[this.queue.length - 1]
    if (!last) return Promise.resolve()
    return new Promise((resolve, reject) => last.waiters.push((err) => (err ? reject(err) : resolve())))
  }

  /** Resolves once nothing is waiting for the stream (or `timeoutMs` passed): before a graceful stop releases the lease. */
  idle(timeoutMs: number): Promise<void> {
    return Promise.race([this.barrier().catch(() => {}), new Promise<void>((r) => setTimeout(r, timeoutMs).unref())])
  }

  /** Publish the head's next part, unless one is in flight. */
  private kick(): void {
    const head = this.queue[0]
    if (this.inFlight || this.fenced || !head) return
    this.inFlight = true
    const expected = head.seq + head.sent - 1
    const msgId = head.parts.length === 1 ? head.id : `${head.id}#${head.sent}`
    this.o.publish(head.parts[head.sent]!, { expectedLastSeq: expected, msgId }).then(
      (ack) => this.acked(head, ack.seq, expected),
      (err: unknown) => this.failed(err),
    )
  }

  private acked(head: Item, seq: number, expected: number, waitedForRenewal = false): void {
    // Confirmed after the lease ran out: acknowledged once a renewal proves the lease; if none does,
    // the check below (or Lease.keep) fences this node and its writers get their 503. Waited for once
    // only, so a renewal that keeps failing cannot hold the write. inFlight stays set meanwhile, so
    // nothing else is published.
    const renewal = !waitedForRenewal && !this.fenced && seq === expected + 1 && !this.o.leaseValid() ? this.o.leaseRenewal() : null
    if (renewal) {
      const again = () => this.acked(head, seq, expected, true)
      void renewal.then(again, again)
      return
    }
    this.inFlight = false
    if (this.fenced) return
    if (seq !== expected + 1) return this.fence(`the stream numbered ${head.id} ${seq}, expected ${expected + 1}`)
    if (!this.o.leaseValid()) return this.fence('the lease lapsed before the stream confirmed a write')
    if (this.failingSince !== null) this.o.log.info('the replication stream takes writes again')
    this.failingSince = null
    this.attempt = 0
    this.confirmedSeq = seq
    if (++head.sent === head.parts.length) {
      this.queue.shift()
      if (this.queue[0]) this.queue[0].headSince = performance.now()
      for (const w of head.waiters) w(null)
    }
    this.kick()
    if (this.queue.length === 0) this.onIdle?.()
  }

  private failed(err: unknown): void {
    this.inFlight = false
    if (this.fenced) return
    if (wrongSequence(err)) return this.fence(`another node appended to the stream (${(err as Error).message})`)
    const now = performance.now()
    if (this.failingSince === null) {
      this.failingSince = now
      this.o.log.warn({ err }, 'the replication stream did not take a write; retrying in order')
      this.onIdle?.()
    }
    if (now - this.failingSince > MAX_STALL_LEASES * this.o.leaseMs) return this.fence('the replication stream took nothing for too long')
    setTimeout(() => this.kick(), RETRY_MS[Math.min(this.attempt++, RETRY_MS.length - 1)]).unref()
  }

  /** This node must acknowledge nothing more: every waiting writer is refused, and the node ends. */
  fence(why: string): void {
    if (this.fenced) return
    this.fencedWhy = why
    this.o.log.error({ why }, 'fenced: no longer the primary; acknowledging nothing more')
    for (const item of this.queue.splice(0)) for (const w of item.waiters) w(notPrimary())
    this.onIdle?.()
    this.o.onFenced(why)
  }
}
