/**
 * Menu item photos in the database (migration 045; docs/menu-photos.md): the renditions the server
 * made of an upload, keyed by the content hash of the full one. Written and removed only inside a
 * store actor's menu write (src/storage/menu.ts), read by the media route.
 */
import { stmt, type Db } from './db.ts'

/** What the server made of one upload (src/ops/menu/menu-photos.ts `preparePhoto`). */
export interface PhotoRenditions {
  key: string
  type: string
  width: number
  height: number
  full: Buffer
  thumbWidth: number
  thumbHeight: number
  thumb: Buffer
}

/** Keep the renditions (the same photo uploaded twice is one row: its key is its content). */
export function putPhoto(db: Db, p: PhotoRenditions, now: string): void {
  stmt(db, `INSERT OR IGNORE INTO menu_photos (key, type, width, height, full, thumb_width, thumb_height, thumb, created_at)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`).run(p.key, p.type, p.width, p.height, p.full, p.thumbWidth, p.thumbHeight, p.thumb, now)
}

/** Remove a photo no item names any more (after the write that let go of it). */
export function dropUnusedPhoto(db: Db, key: string | null | undefined): void {
  if (!key) return
  if (stmt<[string], 1>(db, 'SELECT 1 FROM menu_items WHERE photo_key = ? LIMIT 1').pluck().get(key)) return
  stmt(db, 'DELETE FROM menu_photos WHERE key = ?').run(key)
}

/** One rendition's bytes and type, or undefined when no item's photo has this key. */
export function photoBytes(db: Db, key: string, size: 'full' | 'thumb'): { type: string; bytes: Buffer } | undefined {
  const col = size === 'thumb' ? 'thumb' : 'full'
  return stmt<[string], { type: string; bytes: Buffer }>(db, `SELECT type, ${col} AS bytes FROM menu_photos WHERE key = ?`).get(key)
}
