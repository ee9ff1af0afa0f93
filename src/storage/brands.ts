/**
 * Brands of a store (issue 18 item 2, docs/verticals.md "Brands"). Items reference a brand by
 * `brand_id`; `menu_items.brand` keeps the brand's name (the menu shows `brand`, api-v1 §2.3) and
 * is kept in step here: on rename, on delete, and when an item write names a brand.
 */
import { stmt, type Db } from './db.ts'
import { ApiError, notFound } from '../errors.ts'

export interface BrandRow { id: number; store_id: number; name: string; slug: string; description: string | null; logo_url: string | null; created_at: string; updated_at: string }
export interface BrandData { name?: string; slug?: string; description?: string | null; logo_url?: string | null }

export const brandView = (b: BrandRow) => ({
  id: b.id, name: b.name, slug: b.slug, description: b.description, logo_url: b.logo_url, created_at: b.created_at, updated_at: b.updated_at,
})

/** `Acme Labs!` → `acme-labs`. */
export const slugify = (name: string): string =>
  name.normalize('NFKD').replace(/[\u0300-\u036f]/g, '').toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, '').slice(0, 80)

const byId = (db: Db, storeId: number, id: number) => stmt<[number, number], BrandRow>(db, 'SELECT * FROM brands WHERE id = ? AND store_id = ?').get(id, storeId)
const slugTaken = (db: Db, storeId: number, slug: string, except: number) =>
  stmt<[number, string, number], 1>(db, 'SELECT 1 FROM brands WHERE store_id = ? AND slug = ? AND id <> ?').pluck().get(storeId, slug, except) !== undefined

/** A slug free in the store: the one asked for (422 when taken), else the name's with -2, -3… as needed. */
function freeSlug(db: Db, storeId: number, name: string, asked: string | undefined, except = 0): string {
  if (asked !== undefined) {
    if (slugTaken(db, storeId, asked, except)) throw new ApiError('validation_failed', undefined, { slug: ['Another brand of this store has this slug.'] })
    return asked
  }
  const base = slugify(name) || 'brand'
  let slug = base
  for (let n = 2; slugTaken(db, storeId, slug, except); n++) slug = `${base}-${n}`
  return slug
}

/** One page of the store's brands by name, each with how many items it has. */
export function brandPage(db: Db, storeId: number, page: number, perPage: number) {
  const total = stmt<[number], number>(db, 'SELECT COUNT(*) FROM brands WHERE store_id = ?').pluck().get(storeId)!
  const rows = stmt<[number, number, number], BrandRow & { item_count: number }>(db, `SELECT b.*, (SELECT COUNT(*) FROM menu_items i WHERE i.brand_id = b.id) AS item_count
    FROM brands b WHERE b.store_id = ? ORDER BY b.name COLLATE NOCASE, b.id LIMIT ? OFFSET ?`).all(storeId, perPage, (page - 1) * perPage)
  return { total, rows }
}

/** A brand of the store with the ids of its items (in menu order), or undefined. */
export function brandWithItems(db: Db, storeId: number, id: number) {
  const b = byId(db, storeId, id)
  if (!b) return undefined
  const itemIds = stmt<[number], number>(db, 'SELECT id FROM menu_items WHERE brand_id = ? ORDER BY position, id').pluck().all(id)
  return { brand: b, itemIds }
}

export function createBrand(db: Db, storeId: number, d: BrandData & { name: string }, now: string): number {
  return Number(stmt(db, 'INSERT INTO brands (store_id, name, slug, description, logo_url, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)')
    .run(storeId, d.name, freeSlug(db, storeId, d.name, d.slug), d.description ?? null, d.logo_url ?? null, now, now).lastInsertRowid)
}

/** Update brand `id`; a new name is copied to its items' `brand` in the same transaction. Returns the items it changed. */
export function updateBrand(db: Db, storeId: number, id: number, d: BrandData, now: string): number[] {
  const b = byId(db, storeId, id)
  if (!b) throw notFound('brand')
  const name = d.name ?? b.name
  const slug = d.slug !== undefined ? freeSlug(db, storeId, name, d.slug, id) : b.slug
  stmt(db, 'UPDATE brands SET name = ?, slug = ?, description = ?, logo_url = ?, updated_at = ? WHERE id = ?')
    .run(name, slug, d.description === undefined ? b.description : d.description, d.logo_url === undefined ? b.logo_url : d.logo_url, now, id)
  if (name === b.name) return []
  return stmt<[string, string, number], number>(db, 'UPDATE menu_items SET brand = ?, updated_at = ? WHERE brand_id = ? RETURNING id').pluck().all(name, now, id)
}

/** Delete brand `id`; its items keep existing without a brand. Returns their ids (the store actor re-reads them). */
export function deleteBrand(db: Db, storeId: number, id: number, now: string): number[] {
  if (!byId(db, storeId, id)) throw notFound('brand')
  const itemIds = stmt<[number], number>(db, 'SELECT id FROM menu_items WHERE brand_id = ?').pluck().all(id)
  stmt(db, 'UPDATE menu_items SET brand_id = NULL, brand = NULL, updated_at = ? WHERE brand_id = ?').run(now, id)
  stmt(db, 'DELETE FROM brands WHERE id = ?').run(id)
  return itemIds
}

/**
 * An item write's brand (docs/verticals.md "Brands"): `brand_id` must be one of the store's brands
 * (422 otherwise); `brand` alone is a name, matched case-insensitively or created, so clients that
 * send the name as before keep working; null clears both. Undefined when the write names neither.
 */
export function resolveBrand(db: Db, storeId: number, d: { brand?: string | null; brand_id?: number | null }, now: string): { brand: string | null; brand_id: number | null } | undefined {
  if (d.brand_id !== undefined && d.brand_id !== null) {
    const b = byId(db, storeId, d.brand_id)
    if (!b) throw new ApiError('validation_failed', undefined, { brand_id: ['The brand does not exist in this store.'] })
    return { brand: b.name, brand_id: b.id }
  }
  if (d.brand_id === null || d.brand === null) return { brand: null, brand_id: null }
  if (d.brand === undefined) return undefined
  const name = d.brand.trim()
  if (name === '') return { brand: null, brand_id: null }
  const found = stmt<[number, string], BrandRow>(db, 'SELECT * FROM brands WHERE store_id = ? AND name = ? COLLATE NOCASE ORDER BY id LIMIT 1').get(storeId, name)
  const id = found ? found.id : createBrand(db, storeId, { name }, now)
  return { brand: found ? found.name : name, brand_id: id }
}
