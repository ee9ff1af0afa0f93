/**
 * Driver positions on disk (docs/realtime.md "Durability"): the driver actor publishes a position
 * at once and hands the write to this writer, which coalesces and commits positions on its own.
 */
import type { Statement } from 'better-sqlite3'
import type { Db } from './db.ts'
import type { Outgoing, Replication } from '../cluster/replicator.ts'

/**
 * Writes driver positions: one UPDATE per driver per commit, keeping only each driver's latest
 * position, so a flood of positions costs one row write per driver per commit, not one per frame
 * (ARCHITECTURE "Numbers": coalesce per driver per tick).
 *
 * Positions are ephemeral (each is superseded within seconds), so they get their own commits,
 * outside the group committer, at `synchronous=NORMAL`: in WAL mode such a commit is in the
 * operating system's hands once it returns, so an acknowledged position survives a crash or
 * `kill -9` of the process (test/drivers-crash.test.ts); only a power cut may lose the last
 * positions, never an order or status change (those stay FULL). That keeps fsync off the event
 * loop's hot path: committing a stream of positions at FULL stalled the relay (bench/tracking.ts).
 *
 * Commits are also spaced: after a commit that took `d` ms the next waits LOCATION_COMMIT_DUTY × d,
 * at least LOCATION_COMMIT_MIN_GAP_MS and at most LOCATION_COMMIT_MAX_GAP_MS, so position writes
 * hold the loop about 1/DUTY of the time at most, and a steady stream (a fleet at 1 Hz sends one
 * position every few hundred microseconds) shares a commit among many drivers instead of paying a
 * transaction and two pragmas for each position (bench/tracking.ts: that was the largest cost per
 * position at 1 Hz). A lone driver is still acknowledged at once: the gap only applies after a
 * recent commit. Watchers are never delayed by this (the actor publishes first); acknowledgements
 * wait for it.
 */
/**
 * Where a driver socket's positions are answered once committed (one per driver actor, not one per
 * position): `ticket` is the socket's acknowledgement ticket; `lat`, `lng`, `at` the position
 * committed for the driver, the newest, which supersedes any the commit coalesced away.
 */
export interface TicketSink { stored(ticket: number, lat: number, lng: number, at: string, err: unknown): void }

/**
 * One driver's position waiting for the next commit, and who waits for it: promises' callbacks
 * (`persist`) and acknowledgement tickets (`persistTicket`, the socket's stream: no promise, closure
 * or microtask per position).
 */
interface Pending { lat: number; lng: number; at: string; waiters: Array<(err: unknown) => void> | null; tickets: number[] | null; sink: TicketSink | null }
type PendingPositions = Map<number, Pending>

export const LOCATION_COMMIT_DUTY = 25
export const LOCATION_COMMIT_MAX_GAP_MS = 100
export const LOCATION_COMMIT_MIN_GAP_MS = 5

export class LocationWriter {
  private pending: PendingPositions = new Map()
  private queued = false
  /** When the next location commit may start (performance.now() ms). */
  private notBefore = 0
  private timer: NodeJS.Timeout | null = null
  private readonly write: (batch: PendingPositions) => void
  /** What the transaction in progress captured for the stream (cluster mode). */
  private captured: Outgoing | null = null
  private readonly relaxed: Statement
  private readonly restore: Statement

  /** Told when answering a committed position threw (logged by the app; the rest are still answered). */
  onAnswerError: ((err: unknown) => void) | null = null

  /** `replication`: cluster mode, where a position is acknowledged once the stream holds it too (docs/cluster.md). */
  constructor(private readonly db: Db, private readonly replication: Replication | null = null) {
    // The narrow table of positions (migration 026), not the driver's profile row. A driver's first
    // position inserts its row; one deleted meanwhile is skipped (no row, as the UPDATE it replaced).
    const update = db.prepare<[number, number, string, number]>('UPDATE driver_positions SET lat = ?, lng = ?, location_updated_at = ? WHERE driver_id = ?')
    const insert = db.prepare<[number, number, number, string, number]>(
      'INSERT INTO driver_positions (driver_id, lat, lng, location_updated_at) SELECT ?, ?, ?, ? WHERE EXISTS (SELECT 1 FROM drivers WHERE id = ?)')
    this.write = db.transaction((batch: PendingPositions) => {
      for (const [id, b] of batch) if (update.run(b.lat, b.lng, b.at, id).changes === 0) insert.run(id, b.lat, b.lng, b.at, id)
      this.captured = this.replication?.capture(db) ?? null
    })
    const level = db.pragma('synchronous', { simple: true }) as number
    this.relaxed = db.prepare(`PRAGMA synchronous = ${Math.min(level, 1)}`)
    this.restore = db.prepare(`PRAGMA synchronous = ${level}`)
  }

  /** Resolves once the position (or a newer one of the same driver) is committed. */
  persist(driverId: number, lat: number, lng: number, at: string): Promise<void> {
    return new Promise((resolve, reject) => {
      const p = this.add(driverId, lat, lng, at)
      ;(p.waiters ??= []).push((err: unknown) => (err ? reject(err) : resolve()))
    })
  }

  /** The same for a socket's position: `sink.stored(ticket, …)` once it (or a newer one) is committed. */
  persistTicket(driverId: number, lat: number, lng: number, at: string, ticket: number, sink: TicketSink): void {
    const p = this.add(driverId, lat, lng, at)
    ;(p.tickets ??= []).push(ticket)
    p.sink = sink
  }

  private add(driverId: number, lat: number, lng: number, at: string): Pending {
    let p = this.pending.get(driverId)
    if (p) { p.lat = lat; p.lng = lng; p.at = at }
    else this.pending.set(driverId, (p = { lat, lng, at, waiters: null, tickets: null, sink: null }))
    if (!this.queued) {
      this.queued = true
      // At the end of this turn at the earliest: positions of the same turn share the commit.
      this.timer = setTimeout(this.commitNow, Math.max(0, this.notBefore - performance.now()))
    }
    return p
  }

  private readonly commitNow = () => this.commit()

  /** Commit waiting positions now (shutdown, before the database closes). */
  flush(): void {
    if (this.queued) this.commit()
  }

  private commit(): void {
    if (this.timer) { clearTimeout(this.timer); this.timer = null }
    if (this.db.inTransaction) {
      // Never nest in someone else's transaction (cannot happen from a timer; cheap to guard).
      this.timer = setTimeout(this.commitNow, 1)
      return
    }
    const batch = this.pending
    this.pending = new Map()
    this.queued = false
    const started = performance.now()
    let error: unknown = null
    this.captured = null
    try {
      this.relaxed.run()
      try { this.write(batch) } finally { this.restore.run() }
    } catch (err) {
      error = err
      // Captured, then the COMMIT failed: the message was never sent.
      if (this.captured) this.replication!.abandon(this.captured)
      this.captured = null
    }
    const outgoing = this.captured
    const now = performance.now()
    this.notBefore = now + Math.min(LOCATION_COMMIT_MAX_GAP_MS, Math.max(LOCATION_COMMIT_MIN_GAP_MS, LOCATION_COMMIT_DUTY * (now - started)))
    if (outgoing) this.replication!.ship(outgoing).then(() => this.answer(batch, null), (err: unknown) => this.answer(batch, err))
    else this.answer(batch, error)
  }

  private answer(batch: PendingPositions, error: unknown): void {
    for (const b of batch.values()) {
      // One answer that throws must not leave the other drivers of the batch unanswered.
      try {
        if (b.tickets) for (const ticket of b.tickets) b.sink!.stored(ticket, b.lat, b.lng, b.at, error)
        if (b.waiters) for (const w of b.waiters) w(error)
      } catch (err) {
        this.onAnswerError?.(err)
      }
    }
  }
}
