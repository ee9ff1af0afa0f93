/**
 * A replica's side of replication (docs/cluster.md "Replicas"): reads the stream in order from the
 * message after the last one its database holds, and applies each in one transaction together with
 * its sequence, on a connection of its own (as the CLI writes: the server's caches and socket
 * checks already follow writes of another connection). Re-applying is impossible by construction:
 * a message at or below the recorded sequence is skipped.
 *
 * It stops, and says why in `problem` (shown by /readyz), instead of applying half: a message written
 * by a newer schema than this build's, or a row that cannot be replayed (the replica's data would no
 * longer be the primary's).
 */
import Database from 'better-sqlite3'
import { DeliverPolicy, type ConsumerMessages } from '@nats-io/jetstream'
import type { Logger } from '../log.ts'
import type { Db } from '../storage/db.ts'
import { ChangeApplier } from '../storage/changes.ts'
import { decodeMessage, type StreamMessage } from './batch.ts'
import { streamBounds, type ClusterLink } from './nats.ts'
import { readApplied, recordApplied, schemaVersion, type Applied } from './state.ts'

export interface ApplierStatus {
  applied: Applied
  /** Messages the stream holds after the last applied one, as of the last message received. */
  pending: number
  /** Why applying stopped (null while it runs). */
  problem: string | null
  /** Commit-to-apply delay of the last message applied, in ms. */
  delayMs: number
  /** The same over the messages applied in the last DELAY_WINDOW_MS (at most DELAY_SAMPLES), or null when none were. */
  delays: { p50: number; p99: number; max: number; samples: number } | null
}

/** How many of the latest commit-to-apply delays the applier keeps for its percentiles. */
export const DELAY_SAMPLES = 4096
/** The window of those percentiles: what the replica does now, not how it caught up at start. */
export const DELAY_WINDOW_MS = 10_000

export class Applier {
  private readonly conn: Db
  private readonly applier: ChangeApplier
  private readonly schema: number
  private applied: Applied
  private pending = 0
  private delayMs = 0
  private readonly recent = new Float64Array(DELAY_SAMPLES)
  private readonly recentAt = new Float64Array(DELAY_SAMPLES)
  private recorded = 0
  private problem: string | null = null
  private messages: ConsumerMessages | null = null
  private running: Promise<void> | null = null
  private stopped = false
  /** When the consumer last delivered a message (or was opened). */
  private progressAt = Date.now()
  /** Parts of a batch split across messages, until its last part arrives. */
  private parts: Uint8Array[] = []
  /** Called after each message applied (tests and the promotion wait for a sequence). */
  onApplied: ((seq: number) => void) | null = null
  /** The stream no longer holds the next message to apply (purged after a snapshot): this replica must restore one. */
  onFellBehind: ((why: string) => void) | null = null

  constructor(private readonly path: string, private readonly link: ClusterLink, private readonly log: Logger) {
    this.conn = new Database(path)
    // The stream is the source of truth: a replica's commits need not survive a power cut (it
    // replays what it lost); foreign keys off, the primary's cascades are rows of the change set.
    this.conn.pragma('journal_mode = WAL')
    this.conn.pragma('synchronous = NORMAL')
    this.conn.pragma('foreign_keys = OFF')
    this.conn.pragma('busy_timeout = 5000')
    this.applier = new ChangeApplier(this.conn)
    this.schema = schemaVersion(this.conn)
    this.applied = readApplied(this.conn)
  }

  status(): ApplierStatus {
    return { applied: this.applied, pending: this.pending, problem: this.problem, delayMs: this.delayMs, delays: this.delayStats() }
  }

  /** Percentiles of the delays of the window (sorted on demand: /readyz is read once a second or so, not per message). */
  private delayStats(): ApplierStatus['delays'] {
    const since = Date.now() - DELAY_WINDOW_MS
    const inWindow: number[] = []
    for (let i = 0; i < Math.min(this.recorded, DELAY_SAMPLES); i++) if (this.recentAt[i]! >= since) inWindow.push(this.recent[i]!)
    const n = inWindow.length
    if (n === 0) return null
    const sorted = Float64Array.from(inWindow).sort()
    const at = (q: number) => sorted[Math.min(n - 1, Math.ceil(q * n) - 1)]!
    return { p50: at(0.5), p99: at(0.99), max: sorted[n - 1]!, samples: n }
  }

  /**
   * Consume after the last applied message, for as long as the applier runs: a consumer that ends
   * (its NATS server went away, the stream's leader moved) is replaced by a new one from the
   * message after the last applied, so a replica never stays behind after NATS recovers.
   */
  async start(): Promise<void> {
    await this.open()
    this.running = (async () => {
      while (!this.stopped && !this.problem) {
        try {
          await this.drain()
        } catch (err) {
          if (!this.stopped) this.log.warn({ err }, 'replication consumer failed; starting another')
        }
        if (this.stopped || this.problem) break
        await new Promise((r) => setTimeout(r, 250))
        try { await this.open() } catch (err) { this.log.warn({ err }, 'replication consumer could not start; retrying') }
      }
    })()
  }

  /** A consumer of the stream from the message after the last applied one. */
  private async open(): Promise<void> {
    const consumer = await this.link.js.consumers.get(this.link.names.stream, this.applied.seq > 0
      ? { deliver_policy: DeliverPolicy.StartSequence, opt_start_seq: this.applied.seq + 1 }
      : { deliver_policy: DeliverPolicy.All })
    this.messages = await consumer.consume()
    this.progressAt = Date.now()
  }

  /** Apply what the current consumer delivers, until it ends. */
  private async drain(): Promise<void> {
    const messages = this.messages
    if (!messages) return
    this.parts = []
    let expected = this.applied.seq + 1
    for await (const m of messages) {
      if (this.problem || this.stopped) break
      this.progressAt = Date.now()
      if (m.seq < expected) continue
      // A gap: the stream was purged past this replica (it restores a snapshot), or a consumer that
      // skipped ahead (start again from the last message applied).
      if (m.seq > expected) {
        const first = await streamBounds(this.link).then((b) => b.first, () => 0)
        if (first > expected) {
          this.problem = `the stream no longer holds message ${expected} (purged after a snapshot): restarting from the newest snapshot`
          this.log.warn({ expected, first }, 'replica fell behind what the stream keeps')
          this.onFellBehind?.(this.problem)
          break
        }
        this.log.warn({ expected, got: m.seq }, 'replication consumer skipped messages; starting another')
        break
      }
      expected = m.seq + 1
      try {
        this.take(m.seq, m.data)
        this.pending = m.info.pending
      } catch (err) {
        // A database busy for a while (a backup, the CLI) is worth another try from the last message applied.
        if ((err as { code?: string }).code === 'SQLITE_BUSY') {
          this.log.warn({ err, seq: m.seq }, 'replica database busy; applying again shortly')
          break
        }
        this.problem = `cannot apply message ${m.seq}: ${(err as Error).message}`
        this.log.error({ err, seq: m.seq }, 'replica stopped applying the stream')
        this.onApplied?.(m.seq)
        break
      }
      this.onApplied?.(m.seq)
    }
  }

  /** Apply one message, or keep a part until the batch it belongs to is whole. */
  private take(seq: number, data: Uint8Array): void {
    const msg = decodeMessage(data)
    if (msg.schema > this.schema) throw new Error(`written by schema version ${msg.schema}, this build has ${this.schema}: upgrade this node`)
    if (msg.k === 'part') {
      if (msg.i !== this.parts.length) throw new Error(`part ${msg.i} of ${msg.id} after ${this.parts.length} parts`)
      this.parts.push(msg.bytes)
      if (msg.i < msg.n - 1) return
      const whole = decodeMessage(Buffer.concat(this.parts))
      this.parts = []
      if (whole.k !== 'batch') throw new Error(`the parts of ${msg.id} are not a batch`)
      return this.apply(seq, whole)
    }
    if (this.parts.length) throw new Error(`message ${seq} inside the parts of a batch`)
    this.apply(seq, msg)
  }

  private apply(seq: number, msg: StreamMessage): void {
    const applied = { seq, id: msg.id, at: msg.at }
    this.conn.transaction(() => {
      if (msg.k === 'batch') this.applier.apply(msg.set)
      recordApplied(this.conn, applied)
    }).immediate()
    this.applied = applied
    this.delayMs = Math.max(0, Date.now() - msg.at)
    this.recentAt[this.recorded % DELAY_SAMPLES] = Date.now()
    this.recent[this.recorded++ % DELAY_SAMPLES] = this.delayMs
  }

  /**
   * The stream holds messages this replica has not applied, and its consumer delivered nothing for
   * `idleMs`: replace the consumer (one that lost its server can wait a long time to notice).
   */
  nudge(streamLast: number, idleMs = 3000): void {
    if (this.stopped || this.problem || streamLast <= this.applied.seq || Date.now() - this.progressAt < idleMs) return
    this.log.warn({ applied: this.applied.seq, streamLast }, 'replication consumer stalled; starting another')
    this.progressAt = Date.now()
    void this.messages?.close()
  }

  /** Resolves once the message `seq` is applied (or rejects when applying stopped). */
  waitFor(seq: number, timeoutMs: number): Promise<void> {
    if (this.problem) return Promise.reject(new Error(this.problem))
    if (this.applied.seq >= seq) return Promise.resolve()
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => { this.onApplied = null; reject(new Error(`not applied up to ${seq} within ${timeoutMs} ms (at ${this.applied.seq})`)) }, timeoutMs)
      this.onApplied = (s) => {
        if (this.problem) { clearTimeout(timer); this.onApplied = null; reject(new Error(this.problem)) }
        else if (s >= seq) { clearTimeout(timer); this.onApplied = null; resolve() }
      }
    })
  }

  async stop(): Promise<void> {
    this.stopped = true
    await this.messages?.close()
    await this.running
    this.conn.close()
  }
}
