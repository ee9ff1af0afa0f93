/**
 * What a node's own database says about its place in the stream (`_cluster_state`, created by
 * ensureChangeTables): the sequence and id of the last message applied (replica) or captured
 * (primary), and when it was written. Written in the same transaction as the rows it covers, so a
 * crash never leaves the rows without their sequence or the sequence without its rows.
 */
import { existsSync } from 'node:fs'
import Database from 'better-sqlite3'
import { stmt, type Db } from '../storage/db.ts'

export interface Applied { seq: number; id: string; at: number }

export function recordApplied(db: Db, a: Applied): void {
  stmt(db, "INSERT INTO _cluster_state (k, v) VALUES ('applied', ?) ON CONFLICT (k) DO UPDATE SET v = excluded.v").run(JSON.stringify(a))
}

export function readApplied(db: Db): Applied {
  const v = stmt(db, "SELECT v FROM _cluster_state WHERE k = 'applied'").pluck().get() as string | undefined
  return v ? JSON.parse(v) as Applied : { seq: 0, id: '', at: 0 }
}

/** The schema version of this build's database: the newest migration applied. */
export const schemaVersion = (db: Db): number => (stmt(db, 'SELECT MAX(version) FROM schema_migrations').pluck().get() as number | null) ?? 0

/**
 * The node that wrote the last message a database file holds (message ids start with the writer's
 * NODE_ID): on a replica's file, the primary as far as it knows — what the operator CLI names when
 * it refuses to write there. Null for a file outside a cluster.
 */
export function lastWriterOfFile(path: string): string | null {
  if (!existsSync(path)) return null
  const db = new Database(path, { readonly: true })
  try {
    if (!db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = '_cluster_state'").get()) return null
    return readApplied(db).id.split(':')[0] || null
  } finally {
    db.close()
  }
}
