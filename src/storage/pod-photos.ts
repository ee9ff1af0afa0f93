/**
 * Proof-of-delivery photos (docs/drivers.md "Proof of delivery"): their bytes live in the
 * `pod_photos` table (migration 049), so they are durable with the write that stores them and
 * replicated like any other row in cluster mode. The `deliveries` row names its photo by a relative
 * path, `pod/<order>-<random>.<ext>`, the table's key. Photos uploaded before migration 049 are
 * files under the data directory at that path: a path without a row is read from its file.
 */
import { randomBytes } from 'node:crypto'
import { tmpdir } from 'node:os'
import { readFile, unlink } from 'node:fs/promises'
import { dirname, join, resolve } from 'node:path'
import { stmt, type Db } from './db.ts'

/** Where older uploads live: next to the database (`:memory:` databases used the temp directory). */
export function dataDir(dbPath: string): string {
  return dbPath === ':memory:' ? join(tmpdir(), 'dispatch-data') : dirname(resolve(dbPath))
}

export const photoPath = (dbPath: string, rel: string): string => join(dataDir(dbPath), rel)

/** A new photo's key: unguessable, and the same shape as the files' paths of older uploads. */
export const newPodPhotoPath = (orderId: number, type: string): string =>
  `pod/${orderId}-${randomBytes(12).toString('hex')}.${type.slice('image/'.length)}`

export interface PodPhotoRow { path: string; orderId: number; type: string; bytes: Buffer; at: string }

/** Keep a photo's bytes (in the committer's transaction, before the order names it). */
export function putPodPhoto(db: Db, p: PodPhotoRow): void {
  stmt(db, 'INSERT INTO pod_photos (path, order_id, type, bytes, created_at) VALUES (?, ?, ?, ?, ?)').run(p.path, p.orderId, p.type, p.bytes, p.at)
}

/**
 * Remove a stored photo unless its order names it: an upload whose order step failed. Checked in
 * the deleting transaction, so an order step that committed after all keeps its photo.
 */
export function dropUnnamedPodPhoto(db: Db, orderId: number, path: string): void {
  stmt(db, 'DELETE FROM pod_photos WHERE path = ? AND NOT EXISTS (SELECT 1 FROM deliveries WHERE order_id = ? AND photo_path = ?)').run(path, orderId, path)
}

/** The photo's bytes: its row, else the file of an older upload; null when neither exists. */
export async function readPodPhoto(db: Db, dbPath: string, path: string): Promise<Buffer | null> {
  const row = stmt<[string], Buffer>(db, 'SELECT bytes FROM pod_photos WHERE path = ?').pluck().get(path)
  if (row) return row
  return readFile(photoPath(dbPath, path)).catch(() => null)
}

/** Remove an older upload's file once no order names it; a file already gone (or never there) is fine. */
export async function removePodPhotoFile(dbPath: string, path: string): Promise<void> {
  await unlink(photoPath(dbPath, path)).catch(() => {})
}
