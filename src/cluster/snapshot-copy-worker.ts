/**
 * The snapshot copy's thread (src/cluster/snapshots.ts `copyForSnapshot`). Copying the primary's
 * database on its own connection (SQLite's online backup) and getting the copy ready (capture
 * triggers removed, rollback journal) writes and syncs a file as large as the database: on the
 * server's event loop that held every write of its moment (p99 0.3–0.6 s in the cluster bench's
 * snapshot rounds, docs/cluster.md "Numbers"); here it holds this thread only, at a lower priority.
 *
 * The copy is consistent: the backup's first step copies 100 pages, every later step the rest at
 * once, and a step reads inside one read transaction. A backup from another connection starts over
 * when the source changes between steps, so it ends with one step that took it all, at one moment
 * of the primary's WAL. A page copy, not `VACUUM INTO`: that may renumber rowids, which the stream
 * addresses rows by.
 */
import Database from 'better-sqlite3'
import { parentPort, workerData } from 'node:worker_threads'
import { removeCapture } from '../storage/changes.ts'
import { lowerThreadPriority } from '../threads/spawn.ts'
import { readApplied, schemaVersion } from './state.ts'

export interface CopyRequest { source: string; target: string }
export type CopyReply =
  | { ok: true; seq: number; id: string; schema: number; unsent: number }
  | { ok: false; error: string }

const port = parentPort
if (!port) throw new Error('src/cluster/snapshot-copy-worker.ts runs as a worker thread (src/cluster/snapshots.ts starts it)')
lowerThreadPriority()

async function copy({ source, target }: CopyRequest): Promise<CopyReply> {
  const db = new Database(source, { readonly: true, fileMustExist: true })
  try {
    db.pragma('busy_timeout = 5000')
    await db.backup(target, { progress: () => 1_000_000_000 })
  } finally {
    db.close()
  }
  const c = new Database(target)
  try {
    const { seq, id } = readApplied(c)
    const schema = schemaVersion(c)
    const unsent = c.prepare('SELECT COUNT(*) FROM _changes').pluck().get() as number
    if (unsent === 0) {
      // A replica restoring it applies, it does not capture.
      removeCapture(c)
      c.pragma('journal_mode = DELETE')
    }
    return { ok: true, seq, id, schema, unsent }
  } finally {
    c.close()
  }
}

copy(workerData as CopyRequest).then(
  (reply) => port.postMessage(reply),
  (err: unknown) => port.postMessage({ ok: false, error: err instanceof Error ? err.message : String(err) } satisfies CopyReply),
)
