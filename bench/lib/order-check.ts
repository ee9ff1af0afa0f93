/**
 * Checking durable order benches against the database (bench/orders.ts, bench/stock-contention.ts):
 * a 200 is sent only after its commit, so every order id a 200 named must have a row.
 */
import { statfsSync } from 'node:fs'
import Database from 'better-sqlite3'

/** The order id of a 200 body (it starts `{"id":N,`), -1 when there is none (it names no row). */
export function orderIdOf(body: string): number {
  const m = /^\{"id":(\d+)/.exec(body)
  return m ? Number(m[1]) : -1
}

export function countOrders(dbPath: string): number {
  const db = new Database(dbPath, { readonly: true })
  try {
    return db.prepare('SELECT COUNT(*) FROM orders').pluck().get() as number
  } finally {
    db.close()
  }
}

/** How many of `ids` have no row in `orders` (must be 0). One range read, not a query per id. */
export function missingRows(dbPath: string, ids: number[]): number {
  if (ids.length === 0) return 0
  // A loop, not Math.min(...ids): a long run answers more ids than a call may take arguments.
  let min = Infinity
  let max = -Infinity
  for (const id of ids) {
    if (id > 0 && id < min) min = id
    if (id > max) max = id
  }
  if (min === Infinity) return ids.length
  const db = new Database(dbPath, { readonly: true })
  try {
    const present = new Set(db.prepare('SELECT id FROM orders WHERE id BETWEEN ? AND ?').pluck().all(min, max) as number[])
    return ids.filter((id) => !present.has(id)).length
  } finally {
    db.close()
  }
}

const TMPFS_MAGIC = 0x01021994

/** The note a result carries when its database sat on tmpfs (where fsync costs nothing), else null. */
export function tmpfsWarning(dbDir: string): string | null {
  return statfsSync(dbDir).type === TMPFS_MAGIC ? `WARNING: ${dbDir} is tmpfs, fsync costs nothing there; set BENCH_DB_DIR to a disk` : null
}
