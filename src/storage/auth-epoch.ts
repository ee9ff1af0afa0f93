/**
 * Caches for the lookups every authenticated request makes (owner token, account suspension, the
 * owner's store), that still see a revocation, suspension or deletion at once, made on this
 * connection or another one (the CLI). Migration 025 keeps a counter row, `auth_epoch`, that
 * triggers bump on every update or delete of `owner_tokens`, `owners` and `stores`, in the writer's
 * own transaction. A cached answer is used only while the counter is the one it was read under:
 * one primary-key read per check instead of the lookup, its row object and its parsing.
 *
 * The counter is read *before* the row it guards: a change committed between the two leaves the
 * entry under the older count, which the next check sees moved.
 */
import type { Statement } from 'better-sqlite3'
import type { Db } from './db.ts'

interface Reader { stmt: Statement<[], number>; memo: number | null }
const readers = new WeakMap<Db, Reader>()

/**
 * The current count. A read of SQLite costs ~4 µs here even for one row of a one-row table (WAL
 * read locks are system calls), so one request's checks (token, suspension, store: all in the
 * same synchronous run of the front door) share one read: the count is kept until the microtask
 * queue next runs (uWS runs it after every request callback), and this process's own transactions
 * forget it (`forgetAuthEpoch`, called by the committer after each commit). A commit by another
 * connection during that synchronous run is concurrent with the request, as if it came just after.
 */
export function authEpoch(db: Db): number {
  let r = readers.get(db)
  if (!r) readers.set(db, (r = { stmt: db.prepare<[], number>('SELECT n FROM auth_epoch WHERE id = 1').pluck(), memo: null }))
  if (r.memo !== null) return r.memo
  const n = r.stmt.get()!
  r.memo = n
  const reader = r
  queueMicrotask(() => { reader.memo = null })
  return n
}

/** This connection committed: the next check reads the count again. */
export function forgetAuthEpoch(db: Db): void {
  const r = readers.get(db)
  if (r) r.memo = null
}

/**
 * A bounded map of found rows valid for one epoch: emptied when the counter moved, and when it is
 * full (a flood of distinct keys cannot grow it without bound). Only found values go in: a miss is
 * asked again, so an insert (a new token, a new store) needs no invalidation.
 */
export class EpochCache<K, V> {
  private readonly map = new Map<K, V>()
  private epoch = -1

  constructor(private readonly db: Db, private readonly max = 10_000) {}

  /** The value for `key` (from `load` on a miss, cached when found). */
  get(key: K, load: () => V | undefined): V | undefined {
    // Inside a transaction the counter may be uncommitted (and rolled back to a count a later
    // commit reuses): read through, cache nothing.
    if (this.db.inTransaction) return load()
    const now = authEpoch(this.db)
    if (now !== this.epoch) {
      this.map.clear()
      this.epoch = now
    } else {
      const hit = this.map.get(key)
      if (hit !== undefined) return hit
    }
    const v = load()
    if (v !== undefined) {
      if (this.map.size >= this.max) this.map.clear()
      this.map.set(key, v)
    }
    return v
  }
}
