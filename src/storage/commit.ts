/**
 * Durable writes. `write(fn)` runs `fn` inside a SQLite transaction and resolves only after that
 * transaction is on stable storage, so a reply sent after it is never lost to a crash or power cut.
 *
 * Group commit (the default) queues every write of one event-loop turn and runs them all in one
 * transaction, one fsync for the batch; each write gets its own savepoint so a failing write rolls
 * back alone and rejects only its own caller. Without group commit every write is its own
 * transaction. `bench/orders.ts` measures both.
 *
 * Why `pending`: nact runs one actor message per event-loop turn, so a batch closed at the end of
 * every turn would hold one write. Given a gauge of messages still waiting in actor mailboxes, the
 * flush waits (turn by turn, at most `maxWaitMs`, at most `maxBatch` writes) while actors still
 * have queued work, so everything that has already arrived shares one fsync; an idle server
 * flushes at once, so a lone write pays no added latency.
 *
 * Where the fsync happens: one transaction per write commits at synchronous=FULL (SQLite fsyncs
 * the WAL inside COMMIT, on the event loop). Group commit commits at NORMAL and has the WAL
 * fdatasync'ed on the thread pool (wal-sync.ts) before it answers anyone or runs a hook's
 * `committed`: the same guarantee, without stopping the event loop for the disk. While a sync is
 * in flight the next batch stays open (it could not be answered before the next sync anyway) and
 * commits the moment the sync returns, so each sync covers one transaction with everything that
 * arrived meanwhile, not one per event-loop turn (each writes the same index and outbox pages).
 */
import type { Db } from './db.ts'
import { createWalSync } from './wal-sync.ts'
import { forgetAuthEpoch } from './auth-epoch.ts'
import type { Replication } from '../cluster/replicator.ts'

type Job = { fn: (db: Db) => unknown; resolve: (v: any) => void; reject: (e: unknown) => void }

export interface Committer {
  write<T>(fn: (db: Db) => T): Promise<T>
  /** Commit whatever is queued now and make it durable before returning (used at shutdown). */
  flush(): void
  /** flush(), then release what the committer holds (the WAL descriptor); no writes after this. */
  close(): void
  /** Run `hook` at the end of every transaction (see BatchHook). */
  addHook<T>(hook: BatchHook<T>): void
  /**
   * Resolves once every write committed so far is as durable as an answer promises: at once in the
   * single process (an answer already waited for its fsync); in cluster mode once the stream holds
   * it. For answers that rest on an earlier write rather than a write of their own (an idempotent replay).
   */
  durable(): Promise<void>
  readonly stats: { batches: number; writes: number }
}

/**
 * Work that rides along in every transaction, after its writes, and so costs no fsync of its own:
 * the webhook fan-out turns the batch's outbox rows into delivery rows in the same transaction
 * (docs/webhooks.md). `inTx` runs in its own savepoint; if it throws, its changes are rolled back,
 * the batch still commits, and `committed` is not called. `committed` runs after the commit.
 */
export interface BatchHook<T> {
  inTx(db: Db): T
  committed(result: T): void
}

/** Run the hooks inside the open transaction; returns what to hand them after the commit. */
function runHooks(db: Db, hooks: Array<BatchHook<unknown>>): Array<() => void> {
  const after: Array<() => void> = []
  for (const h of hooks) {
    try {
      // Inside an open transaction better-sqlite3 makes this a savepoint.
      const r = db.transaction(() => h.inTx(db))()
      after.push(() => h.committed(r))
    } catch {
      // Rolled back alone; the hook sees its unfinished work again in the next transaction.
    }
  }
  return after
}

export interface GroupCommitOptions {
  /** Messages still queued in actor mailboxes; while > 0 the batch stays open. */
  pending?: () => number
  maxBatch?: number
  maxWaitMs?: number
  /** Metrics (src/metrics/registry.ts): each committed transaction's size and time, each WAL fsync's time. */
  observe?: { batch(writes: number, seconds: number): void; fsync(seconds: number): void }
  /**
   * Cluster mode (docs/cluster.md "Durable means replicated"): each batch's captured rows go to the
   * stream, and its writes are answered only once both the WAL fsync and the stream confirmed it.
   */
  replication?: Replication
}

export function createCommitter(db: Db, groupCommit: boolean, opts: GroupCommitOptions = {}): Committer {
  const pending = opts.pending ?? (() => 0)
  const maxBatch = opts.maxBatch ?? 512
  const maxWaitMs = opts.maxWaitMs ?? 2
  const observe = opts.observe
  const replication = opts.replication
  const stats = { batches: 0, writes: 0 }
  const hooks: Array<BatchHook<unknown>> = []
  const addHook = <T>(h: BatchHook<T>) => { hooks.push(h as BatchHook<unknown>) }
  if (!groupCommit) {
    if (replication) throw new Error('cluster mode replicates group-commit batches: GROUP_COMMIT=0 cannot be used with it')
    return {
      stats,
      durable: () => Promise.resolve(),
      flush() {},
      close() {},
      addHook,
      write<T>(fn: (db: Db) => T): Promise<T> {
        try {
          let after: Array<() => void> = []
          const t0 = observe ? performance.now() : 0
          const out = db.transaction(() => {
            const v = fn(db)
            after = runHooks(db, hooks)
            return v
          }).immediate()
          // It may have revoked a token or removed a store: later checks in this turn read again.
          forgetAuthEpoch(db)
          stats.batches++
          stats.writes++
          observe?.batch(1, (performance.now() - t0) / 1000)
          for (const a of after) a()
          return Promise.resolve(out)
        } catch (err) {
          return Promise.reject(err)
        }
      },
    }
  }

  let queue: Job[] = []
  let scheduled = false
  let openedAt = 0
  // What the batch and the mailboxes looked like at the previous check (see maybeFlush).
  let seenQueue = 0
  let seenPending = 0
  const begin = db.prepare('BEGIN IMMEDIATE')
  const commit = db.prepare('COMMIT')
  const rollback = db.prepare('ROLLBACK')
  const savepoint = db.prepare('SAVEPOINT w')
  const release = db.prepare('RELEASE w')
  const rollbackTo = db.prepare('ROLLBACK TO w')
  const walSync = createWalSync(db, observe?.fsync)
  /** The batch is complete but held until the WAL sync (and, in cluster mode, the stream message) in flight returns (see maybeFlush). */
  let heldForSync = false
  const outputBusy = (): boolean => (walSync?.busy ?? false) || (replication?.busy ?? false)
  const releaseHeld = () => { if (heldForSync && !outputBusy()) commitBatch() }
  if (walSync) walSync.onIdle = releaseHeld
  if (replication) replication.onIdle = releaseHeld
  const level = db.pragma('synchronous', { simple: true }) as number
  // NORMAL for our own commits only (the fsync is ours, below); restored after each commit.
  const relaxed = walSync ? db.prepare(`PRAGMA synchronous = ${Math.min(level, 1)}`) : null
  const restore = walSync ? db.prepare(`PRAGMA synchronous = ${level}`) : null

  /**
   * End of a turn: keep the batch open while actors still hold queued messages *and are getting
   * through them* (the mailboxes shrank or the batch grew since the last check). Messages that do
   * not move are usually queued behind an actor that is itself awaiting this very commit (a
   * second bump of the same order): waiting for them would only add latency, so the batch closes.
   */
  function maybeFlush(): void {
    const p = pending()
    const progressing = p < seenPending || queue.length > seenQueue
    if (queue.length < maxBatch && p > 0 && progressing && performance.now() - openedAt < maxWaitMs) {
      seenPending = p
      seenQueue = queue.length
      setImmediate(maybeFlush)
      return
    }
    // A WAL sync is in flight: whatever commits now waits for the next sync anyway, which starts
    // only when this one returns. So the batch stays open until then (walSync.onIdle) and takes in
    // everything that arrives meanwhile: one transaction instead of one per turn, whose pages (the
    // same index leaves, outbox, sequence rows) are written to the WAL once instead of each time.
    // No reply waits longer for it; the replies of the sync in flight are not held. In cluster mode
    // the same holds for the stream: one message is in flight at a time (src/cluster/replicator.ts),
    // so a batch committed while one is on its way would only queue behind it, then take a round
    // trip of its own; held, it goes out as one message the moment the stream confirms.
    if (outputBusy() && queue.length < maxBatch) {
      heldForSync = true
      return
    }
    commitBatch()
  }

  function commitBatch(): void {
    scheduled = false
    heldForSync = false
    const jobs = queue
    queue = []
    if (jobs.length === 0) return
    const results: Array<{ ok: boolean; value: unknown }> = new Array(jobs.length)
    let after: Array<() => void> = []
    let outgoing: ReturnType<Replication['capture']> = null
    const t0 = observe ? performance.now() : 0
    try {
      relaxed?.run()
      begin.run()
      for (let i = 0; i < jobs.length; i++) {
        savepoint.run()
        try {
          results[i] = { ok: true, value: jobs[i]!.fn(db) }
          release.run()
        } catch (err) {
          rollbackTo.run()
          release.run()
          results[i] = { ok: false, value: err }
        }
      }
      after = runHooks(db, hooks)
      outgoing = replication?.capture(db) ?? null
      commit.run()
    } catch (err) {
      // The commit itself failed (disk full, I/O error): nothing of the batch is durable.
      if (db.inTransaction) rollback.run()
      if (outgoing) replication!.abandon(outgoing)
      for (const j of jobs) j.reject(err)
      return
    } finally {
      restore?.run()
      forgetAuthEpoch(db)
    }
    stats.batches++
    stats.writes += jobs.length
    observe?.batch(jobs.length, (performance.now() - t0) / 1000)
    const answer = (err: Error | null) => {
      if (err) {
        // Committed but not known to be on disk: nobody may be told "done". Loud, because the
        // storage under the database is failing.
        for (const j of jobs) j.reject(err)
        return
      }
      for (let i = 0; i < jobs.length; i++) {
        const r = results[i]!
        if (r.ok) jobs[i]!.resolve(r.value)
        else jobs[i]!.reject(r.value)
      }
      for (const a of after) a()
    }
    // In cluster mode the stream's confirmation runs in parallel with the fsync; both must succeed.
    // Its outcome is taken at once (a refusal may come before the fsync returns), read after it. A
    // batch that changed nothing still waits for what was captured before it: its answers may rest on it.
    const shipped = replication ? (outgoing ? replication.ship(outgoing) : replication.barrier()).then(() => null, (e: Error) => e) : null
    const settle = shipped ? (err: Error | null) => { void shipped.then((e) => answer(err ?? e)) } : answer
    if (walSync) walSync.afterCommit(settle)
    else settle(null)
  }

  return {
    stats,
    durable: () => replication?.barrier() ?? Promise.resolve(),
    flush() {
      commitBatch()
      walSync?.syncNow()
    },
    close() {
      this.flush()
      walSync?.close()
    },
    addHook,
    write<T>(fn: (db: Db) => T): Promise<T> {
      return new Promise<T>((resolve, reject) => {
        // A stalled or fenced cluster node takes no new writes (503) rather than queueing them.
        try { replication?.admit() } catch (err) { return reject(err) }
        queue.push({ fn, resolve, reject })
        // A held batch that is full commits without waiting for the sync (on its own turn, not in the caller's).
        if (heldForSync && queue.length === maxBatch) setImmediate(() => { if (heldForSync) commitBatch() })
        if (!scheduled) {
          scheduled = true
          openedAt = performance.now()
          seenQueue = 0
          seenPending = Number.POSITIVE_INFINITY
          // setImmediate runs after the I/O callbacks of this turn: every request parsed in the
          // same turn joins the batch.
          setImmediate(maybeFlush)
        }
      })
    },
  }
}
