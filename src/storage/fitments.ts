/**
 * Fitments repository (migration 021; docs/verticals.md "Fitments"): vehicles a store's parts fit,
 * the item ↔ vehicle links, and the menu filtered by vehicle. Every function takes the store id
 * and only ever touches that store's rows: another store's fitment or item is simply not found.
 */
import { groupBy, stmt, type Db } from './db.ts'
import { ApiError, notFound } from '../errors.ts'
import type { VehicleQuery } from '../domain/fitments.ts'
import type { CategoryRow, ExtraRow, ItemRow, StoreMenu, VariantRow } from './stores.ts'

export interface FitmentRow {
  id: number
  store_id: number
  make: string
  model: string
  year_from: number
  year_to: number
  engine: string | null
  created_at: string
  updated_at: string
}
export interface FitmentData { make: string; model: string; year_from: number; year_to: number; engine?: string | null | undefined }

/** The WHERE of a vehicle query over `fitments f`, with only the parts it names (so the index is used). */
function vehicleWhere(q: VehicleQuery): { sql: string; args: unknown[] } {
  const parts = ['f.store_id = ?']
  const args: unknown[] = []
  if (q.make !== undefined) { parts.push('f.make = ?'); args.push(q.make.trim()) }
  if (q.model !== undefined) { parts.push('f.model = ?'); args.push(q.model.trim()) }
  if (q.year !== undefined) { parts.push('f.year_from <= ? AND f.year_to >= ?'); args.push(q.year, q.year) }
  if (q.engine !== undefined) { parts.push('(f.engine IS NULL OR f.engine = ?)'); args.push(q.engine.trim()) }
  return { sql: parts.join(' AND '), args }
}

/** One page of a store's fitments matching `q`, by make, model, first year, id. */
export function fitmentPage(db: Db, storeId: number, q: VehicleQuery, page: number, perPage: number): { data: FitmentRow[]; total: number } {
  const w = vehicleWhere(q)
  const total = stmt(db, `SELECT COUNT(*) FROM fitments f WHERE ${w.sql}`).pluck().get(storeId, ...w.args) as number
  const data = stmt<unknown[], FitmentRow>(db, `SELECT f.* FROM fitments f WHERE ${w.sql} ORDER BY f.make, f.model, f.year_from, f.id LIMIT ? OFFSET ?`)
    .all(storeId, ...w.args, perPage, (page - 1) * perPage)
  return { data, total }
}

export const fitmentById = (db: Db, storeId: number, id: number): FitmentRow | undefined =>
  stmt<[number, number], FitmentRow>(db, 'SELECT * FROM fitments WHERE id = ? AND store_id = ?').get(id, storeId)

/** The items linked to a fitment, in menu order. */
export const fitmentItems = (db: Db, fitmentId: number): { id: number; name: string }[] =>
  stmt<[number], { id: number; name: string }>(db, `SELECT i.id, i.name FROM fitment_items fi JOIN menu_items i ON i.id = fi.item_id
    WHERE fi.fitment_id = ? ORDER BY i.position, i.id`).all(fitmentId)

export function insertFitment(db: Db, storeId: number, d: FitmentData, now: string): number {
  return Number(stmt(db, 'INSERT INTO fitments (store_id, make, model, year_from, year_to, engine, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)')
    .run(storeId, d.make, d.model, d.year_from, d.year_to, d.engine ?? null, now, now).lastInsertRowid)
}

/** Update a fitment (merged over the row: the year range is checked as a whole by the caller). */
export function updateFitment(db: Db, storeId: number, id: number, d: FitmentData, now: string): void {
  const r = stmt(db, 'UPDATE fitments SET make = ?, model = ?, year_from = ?, year_to = ?, engine = ?, updated_at = ? WHERE id = ? AND store_id = ?')
    .run(d.make, d.model, d.year_from, d.year_to, d.engine ?? null, now, id, storeId)
  if (r.changes === 0) throw notFound('fitment')
}

/** Delete a fitment; its links go with it (ON DELETE CASCADE). */
export function deleteFitment(db: Db, storeId: number, id: number): void {
  if (stmt(db, 'DELETE FROM fitments WHERE id = ? AND store_id = ?').run(id, storeId).changes === 0) throw notFound('fitment')
}

export interface ItemFitments { item_id: number; universal: boolean; fitments: FitmentRow[] }

/** 404 unless the item is the store's: another store's item is not found, whatever the store's type. */
export function requireStoreItem(db: Db, storeId: number, itemId: number): void {
  if (!stmt(db, 'SELECT 1 FROM menu_items WHERE id = ? AND store_id = ?').get(itemId, storeId)) throw notFound('item')
}

/** An item's fitments and universal flag (the caller checked the item is the store's: `requireStoreItem`). */
export function itemFitments(db: Db, itemId: number): ItemFitments {
  const fitments = stmt<[number], FitmentRow>(db, `SELECT f.* FROM fitment_items fi JOIN fitments f ON f.id = fi.fitment_id
    WHERE fi.item_id = ? ORDER BY f.make, f.model, f.year_from, f.id`).all(itemId)
  const universal = stmt(db, 'SELECT 1 FROM fitment_universal WHERE item_id = ?').get(itemId) !== undefined
  return { item_id: itemId, universal, fitments }
}

/**
 * Replace an item's fitments (and, when given, its universal flag). A fitment id that is not this
 * store's is a 422 keyed `fitment_ids.N` (a body's reference, like a foreign `category_id`), the
 * item itself a 404.
 */
export function setItemFitments(db: Db, storeId: number, itemId: number, fitmentIds: readonly number[], universal: boolean | undefined): void {
  requireStoreItem(db, storeId, itemId)
  const errors: Record<string, string[]> = {}
  const ids = [...new Set(fitmentIds)]
  fitmentIds.forEach((id, i) => {
    if (!stmt(db, 'SELECT 1 FROM fitments WHERE id = ? AND store_id = ?').get(id, storeId)) errors[`fitment_ids.${i}`] = [`Fitment ${id} does not exist in this store.`]
  })
  if (Object.keys(errors).length > 0) throw new ApiError('validation_failed', undefined, errors)
  stmt(db, 'DELETE FROM fitment_items WHERE item_id = ?').run(itemId)
  const link = stmt(db, 'INSERT INTO fitment_items (fitment_id, item_id) VALUES (?, ?)')
  for (const id of ids) link.run(id, itemId)
  if (universal === true) stmt(db, 'INSERT OR IGNORE INTO fitment_universal (item_id, store_id) VALUES (?, ?)').run(itemId, storeId)
  if (universal === false) stmt(db, 'DELETE FROM fitment_universal WHERE item_id = ?').run(itemId)
}

/** Bulk links for seeding and benches: `links` as [fitmentId, itemId] pairs of one store, already checked. */
export function linkMany(db: Db, links: Iterable<readonly [number, number]>): void {
  const link = stmt(db, 'INSERT OR IGNORE INTO fitment_items (fitment_id, item_id) VALUES (?, ?)')
  for (const [f, i] of links) link.run(f, i)
}

/** Mark items of `storeId` as fitting every vehicle (seeding, benches). */
export function markUniversal(db: Db, storeId: number, itemIds: Iterable<number>): void {
  const ins = stmt(db, 'INSERT OR IGNORE INTO fitment_universal (item_id, store_id) VALUES (?, ?)')
  for (const id of itemIds) ins.run(id, storeId)
}

/**
 * The store's menu holding only the items that fit the vehicle, plus its universal items (the
 * categories all stay, like the whole menu). Only the matching items' rows, variants and extras are
 * read: the vehicle filter is an index range scan on `fitments_vehicle`, then point lookups, so it
 * does not grow with the catalogue (bench/fitment-filter.ts).
 */
export function fittingMenu(db: Db, storeId: number, q: VehicleQuery): StoreMenu {
  const w = vehicleWhere(q)
  const items = stmt<unknown[], ItemRow>(db, `SELECT i.* FROM menu_items i WHERE i.id IN (
      SELECT fi.item_id FROM fitments f JOIN fitment_items fi ON fi.fitment_id = f.id WHERE ${w.sql}
      UNION SELECT u.item_id FROM fitment_universal u WHERE u.store_id = ?
    ) ORDER BY i.position, i.id`).all(storeId, ...w.args, storeId)
  const ids = JSON.stringify(items.map((i) => i.id))
  const variants = groupBy(stmt<[string], VariantRow>(db, 'SELECT * FROM item_variants WHERE item_id IN (SELECT value FROM json_each(?)) ORDER BY position, id').all(ids), (r) => r.item_id)
  const extras = groupBy(stmt<[string], ExtraRow>(db, 'SELECT * FROM item_extras WHERE item_id IN (SELECT value FROM json_each(?)) ORDER BY position, id').all(ids), (r) => r.item_id)
  const categories = stmt<[number], CategoryRow>(db, 'SELECT * FROM menu_categories WHERE store_id = ? ORDER BY position, id').all(storeId)
  return { categories, items, variants, extras }
}
