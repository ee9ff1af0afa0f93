/**
 * Rows a primary's database gets outside a replicated transaction — the operator CLI writing to the
 * primary's file, start-up upkeep — are captured into `_changes` like any other (the triggers fire
 * for every connection); this sends them to the stream within a quarter of a second by committing
 * an empty batch, whose drain takes them along (docs/cluster.md "Change capture").
 */
import type { Committer } from '../storage/commit.ts'
import { stmt, type Db } from '../storage/db.ts'

export const PUMP_MS = 250

export function pumpStrayChanges(db: Db, committer: Committer): () => void {
  const timer = setInterval(() => {
    if (db.inTransaction || !stmt(db, 'SELECT EXISTS (SELECT 1 FROM _changes)').pluck().get()) return
    committer.write(() => undefined).catch(() => { /* refused while stalled: the next tick tries again */ })
  }, PUMP_MS)
  timer.unref()
  return () => clearInterval(timer)
}
