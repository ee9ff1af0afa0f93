/** Menu writes (categories, items, variants, extras), run inside a store actor's durable write. */
import { stmt, type Db } from './db.ts'
import { ApiError, notFound } from '../errors.ts'
import type { CategoryRow, ExtraRow, ItemRow, VariantRow } from './stores.ts'
import { requireQuota } from './entitlements.ts'
import { resolveBrand } from './brands.ts'
import { deleteBatch, insertBatch } from './stock.ts'
import { batchesRefused, fieldsOutsideVertical } from '../domain/item-fields.ts'
import { STORE_TYPES, verticalOf } from '../domain/verticals.ts'
import { dropUnusedPhoto, putPhoto, type PhotoRenditions } from './menu-photos.ts'

export interface CategoryData { name?: string; position?: number; station?: string | null }
export interface ExtraData { id?: number; name: string; price: number; group?: string | null }
export interface VariantData { name?: string; price?: number | null; sku?: string | null; stock?: number | null; position?: number }
export interface ItemData {
  category_id?: number
  name?: string
  description?: string
  price?: number
  position?: number
  is_sold_out?: boolean
  is_popular?: boolean
  is_vegan?: boolean
  is_halal?: boolean
  calories?: number | null
  brand?: string | null
  /** One of the store's brands (migration 020); `brand` alone names one, found or created. */
  brand_id?: number | null
  stock?: number | null
  sku?: string | null
  images?: string[]
  /** Minimum buyer age, age_gate verticals only (migration 021); null clears it. */
  min_age?: number | null
  /** Replaces the item's extras when present. */
  extras?: ExtraData[]
  /** Replaces the item's variations when present (on create only; afterwards use the variants routes). */
  variations?: VariantData[]
}

/** One typed menu operation; every one of them emits `menu.updated`. */
export type MenuOp =
  | { op: 'category.create'; data: CategoryData & { name: string } }
  | { op: 'category.update'; id: number; data: CategoryData }
  | { op: 'category.delete'; id: number }
  | { op: 'item.create'; data: ItemData & { name: string; price: number } }
  | { op: 'item.update'; id: number; data: ItemData }
  | { op: 'item.delete'; id: number }
  | { op: 'item.sold_out'; id: number; value: boolean | null }
  | { op: 'variant.create'; itemId: number; data: VariantData & { name: string } }
  | { op: 'variant.update'; itemId: number; id: number; data: VariantData }
  | { op: 'variant.delete'; itemId: number; id: number }
  /** The item's uploaded photo (docs/menu-photos.md): set (replacing any) or, with null, removed. */
  | { op: 'item.photo'; id: number; photo: PhotoRenditions | null }
  /** Display order: `ids` must name every category of the store (or every item of the category) once. */
  | { op: 'category.reorder'; ids: number[] }
  | { op: 'item.reorder'; categoryId: number; ids: number[] }
  /** Expiry batches (`expiry` verticals, docs/verticals.md "Expiry"). */
  | { op: 'batch.create'; itemId: number; data: { batch_code?: string | null; expires_on: string; quantity: number } }
  | { op: 'batch.delete'; itemId: number; id: number }

export interface MenuChange {
  /** `menu`: the categories' order changed (`id` is the store's). */
  entity: 'menu' | 'category' | 'item' | 'variant' | 'batch'
  change: 'created' | 'updated' | 'deleted'
  id: number
}

const bool = (b: boolean | undefined) => (b === undefined ? undefined : b ? 1 : 0)

/** Apply `op` to store `storeId`; throws ApiError (404 for anything outside the store). */
export function applyMenuOp(db: Db, storeId: number, op: MenuOp, now: string): MenuChange {
  const category = (id: number) => {
    const c = stmt<[number, number], CategoryRow>(db, 'SELECT * FROM menu_categories WHERE id = ? AND store_id = ?').get(id, storeId)
    if (!c) throw notFound('category')
    return c
  }
  const item = (id: number) => {
    const i = stmt<[number, number], ItemRow>(db, 'SELECT * FROM menu_items WHERE id = ? AND store_id = ?').get(id, storeId)
    if (!i) throw notFound('item')
    return i
  }
  const variant = (itemId: number, id: number) => {
    item(itemId)
    const vr = stmt<[number, number], VariantRow>(db, 'SELECT * FROM item_variants WHERE id = ? AND item_id = ?').get(id, itemId)
    if (!vr) throw notFound('variant')
    return vr
  }
  /** A category id given in a body that is not this store's is a validation failure, not a 404. */
  const bodyCategory = (id: number) => {
    if (!stmt(db, 'SELECT 1 FROM menu_categories WHERE id = ? AND store_id = ?').get(id, storeId)) {
      throw new ApiError('validation_failed', undefined, { category_id: ['The category does not exist in this store.'] })
    }
  }
  /**
   * Where an item created without `category_id` goes (an agent's `add_menu_item` with just a name
   * and a price, api-v1 §4.11): the store's first category, or a new "Menu" category when it has none.
   */
  const defaultCategory = (): number =>
    stmt<[number], number>(db, 'SELECT id FROM menu_categories WHERE store_id = ? ORDER BY position, id LIMIT 1').pluck().get(storeId) ??
    Number(stmt(db, 'INSERT INTO menu_categories (store_id, name, position, station, created_at) VALUES (?, ?, 0, NULL, ?)').run(storeId, 'Menu', now).lastInsertRowid)
  const replaceExtras = (itemId: number, extras: ExtraData[]) => {
    stmt(db, 'DELETE FROM item_extras WHERE item_id = ?').run(itemId)
    const ins = stmt(db, 'INSERT INTO item_extras (item_id, name, price, group_name, position) VALUES (?, ?, ?, ?, ?)')
    extras.forEach((e, pos) => ins.run(itemId, e.name, e.price, e.group ?? null, pos))
  }
  const insertVariant = (itemId: number, d: VariantData & { name: string }, pos: number) =>
    Number(stmt(db, 'INSERT INTO item_variants (item_id, name, price, sku, stock, position, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)')
      .run(itemId, d.name, d.price ?? null, d.sku ?? null, d.stock ?? null, d.position ?? pos, now, now).lastInsertRowid)
  /** `min_age` is for stores whose vertical has `age_gate` (issue 18 item 4); elsewhere 422 `not_for_store_type`, like the other fields. */
  const minAge = (itemId: number, value: number | null | undefined) => {
    if (value === undefined) return
    const type = stmt<[number], string>(db, 'SELECT store_type FROM stores WHERE id = ?').pluck().get(storeId) ?? 'restaurant'
    if (value !== null && !verticalOf(type).capabilities.age_gate) {
      const gated = STORE_TYPES.filter((t) => verticalOf(t).capabilities.age_gate).join(', ')
      throw new ApiError('not_for_store_type', undefined, { min_age: [`Only ${gated} stores sell age-restricted items.`] })
    }
    stmt(db, 'UPDATE menu_items SET min_age = ? WHERE id = ?').run(value, itemId)
  }
  /** The store's vertical decides which fields and resources apply (issue 18 item 1; src/domain/item-fields.ts). */
  const vertical = () => verticalOf(stmt<[number], string>(db, 'SELECT store_type FROM stores WHERE id = ?').pluck().get(storeId) ?? 'restaurant')
  const checkFields = (d: ItemData | VariantData) => {
    const errors = fieldsOutsideVertical(vertical(), d as Record<string, unknown>)
    ;('variations' in d ? d.variations ?? [] : []).forEach((vr, i) => {
      for (const [k, m] of Object.entries(fieldsOutsideVertical(vertical(), vr as Record<string, unknown>))) errors[`variations.${i}.${k}`] = m
    })
    if (Object.keys(errors).length > 0) throw new ApiError('not_for_store_type', undefined, errors)
  }
  const brandOf = (d: ItemData) => resolveBrand(db, storeId, d, now)
  /** Positions 0…n-1 in the order given; `ids` must be exactly the rows listed by `sql` (422 otherwise, nothing written). */
  const reorder = (table: string, sql: string, param: number, ids: number[]) => {
    const current = stmt<[number], number>(db, sql).pluck().all(param)
    const given = new Set(ids)
    if (given.size !== ids.length || given.size !== current.length || !current.every((id) => given.has(id))) {
      throw new ApiError('validation_failed', undefined, { ids: [`List each of the ${current.length} ${table === 'menu_categories' ? 'categories of the store' : 'items of the category'} exactly once.`] })
    }
    const set = stmt(db, `UPDATE ${table} SET position = ? WHERE id = ?`)
    ids.forEach((id, pos) => set.run(pos, id))
  }
  const update = (table: string, id: number, cols: Record<string, unknown>) => {
    const entries = Object.entries(cols).filter(([, v]) => v !== undefined)
    if (entries.length === 0) return
    stmt(db, `UPDATE ${table} SET ${entries.map(([k]) => `${k} = ?`).join(', ')} WHERE id = ?`).run(...entries.map(([, v]) => v), id)
  }

  switch (op.op) {
    case 'category.create': {
      const position = op.data.position ?? (stmt(db, 'SELECT COALESCE(MAX(position) + 1, 0) FROM menu_categories WHERE store_id = ?').pluck().get(storeId) as number)
      const id = Number(stmt(db, 'INSERT INTO menu_categories (store_id, name, position, station, created_at) VALUES (?, ?, ?, ?, ?)')
        .run(storeId, op.data.name, position, op.data.station ?? null, now).lastInsertRowid)
      return { entity: 'category', change: 'created', id }
    }
    case 'category.update':
      category(op.id)
      update('menu_categories', op.id, { name: op.data.name, position: op.data.position, station: op.data.station })
      return { entity: 'category', change: 'updated', id: op.id }
    case 'category.delete': {
      category(op.id)
      const n = stmt(db, 'SELECT COUNT(*) FROM menu_items WHERE category_id = ?').pluck().get(op.id) as number
      if (n > 0) throw new ApiError('category_not_empty', `The category still has ${n} item(s); move or delete them first.`)
      stmt(db, 'DELETE FROM menu_categories WHERE id = ?').run(op.id)
      return { entity: 'category', change: 'deleted', id: op.id }
    }
    case 'item.create': {
      checkFields(op.data)
      const brand = brandOf(op.data)
      const d = { ...op.data, ...brand, category_id: op.data.category_id ?? defaultCategory() }
      bodyCategory(d.category_id)
      // The plan's menu_items quota, inside the transaction that inserts (docs/billing.md): every front
      // door (owner, staff, MCP) writes items through here, so concurrent creates cannot pass it together.
      requireQuota(db, stmt<[number], number>(db, 'SELECT owner_id FROM stores WHERE id = ?').pluck().get(storeId)!, 'menu_items')
      const position = d.position ?? (stmt(db, 'SELECT COALESCE(MAX(position) + 1, 0) FROM menu_items WHERE category_id = ?').pluck().get(d.category_id) as number)
      const id = Number(stmt(db, `INSERT INTO menu_items (store_id, category_id, name, description, price, position, is_sold_out, is_popular,
        is_vegan, is_halal, calories, brand, stock, sku, images, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`)
        .run(storeId, d.category_id, d.name, d.description ?? '', d.price, position, bool(d.is_sold_out) ?? 0, bool(d.is_popular) ?? 0,
          bool(d.is_vegan) ?? 0, bool(d.is_halal) ?? 0, d.calories ?? null, d.brand ?? null, d.stock ?? null, d.sku ?? null,
          JSON.stringify(d.images ?? []), now, now).lastInsertRowid)
      if (brand) stmt(db, 'UPDATE menu_items SET brand_id = ? WHERE id = ?').run(brand.brand_id, id)
      if (d.extras) replaceExtras(id, d.extras)
      minAge(id, d.min_age)
      d.variations?.forEach((vr, pos) => insertVariant(id, { ...vr, name: vr.name ?? `Option ${pos + 1}` }, pos))
      return { entity: 'item', change: 'created', id }
    }
    case 'item.update': {
      item(op.id)
      checkFields(op.data)
      const brand = brandOf(op.data)
      const d = { ...op.data, ...brand }
      if (d.category_id !== undefined) bodyCategory(d.category_id)
      update('menu_items', op.id, {
        category_id: d.category_id, name: d.name, description: d.description, price: d.price, position: d.position,
        is_sold_out: bool(d.is_sold_out), is_popular: bool(d.is_popular), is_vegan: bool(d.is_vegan), is_halal: bool(d.is_halal),
        calories: d.calories, brand: d.brand, brand_id: brand?.brand_id, stock: d.stock, sku: d.sku, images: d.images && JSON.stringify(d.images), updated_at: now,
      })
      if (d.extras) replaceExtras(op.id, d.extras)
      minAge(op.id, d.min_age)
      return { entity: 'item', change: 'updated', id: op.id }
    }
    case 'item.delete': {
      const i = item(op.id)
      stmt(db, 'DELETE FROM menu_items WHERE id = ?').run(op.id)
      dropUnusedPhoto(db, i.photo_key)
      return { entity: 'item', change: 'deleted', id: op.id }
    }
    case 'item.photo': {
      const i = item(op.id)
      if (op.photo) putPhoto(db, op.photo, now)
      update('menu_items', op.id, { photo_key: op.photo?.key ?? null, updated_at: now })
      if (i.photo_key !== (op.photo?.key ?? null)) dropUnusedPhoto(db, i.photo_key)
      return { entity: 'item', change: 'updated', id: op.id }
    }
    case 'category.reorder':
      reorder('menu_categories', 'SELECT id FROM menu_categories WHERE store_id = ?', storeId, op.ids)
      return { entity: 'menu', change: 'updated', id: storeId }
    case 'item.reorder':
      category(op.categoryId)
      reorder('menu_items', 'SELECT id FROM menu_items WHERE category_id = ?', op.categoryId, op.ids)
      return { entity: 'category', change: 'updated', id: op.categoryId }
    case 'item.sold_out': {
      const i = item(op.id)
      const value = op.value ?? i.is_sold_out === 0 // no explicit value: toggle
      update('menu_items', op.id, { is_sold_out: value ? 1 : 0, updated_at: now })
      return { entity: 'item', change: 'updated', id: op.id }
    }
    case 'variant.create': {
      item(op.itemId)
      checkFields(op.data)
      const pos = stmt(db, 'SELECT COALESCE(MAX(position) + 1, 0) FROM item_variants WHERE item_id = ?').pluck().get(op.itemId) as number
      return { entity: 'variant', change: 'created', id: insertVariant(op.itemId, op.data, pos) }
    }
    case 'variant.update':
      variant(op.itemId, op.id)
      checkFields(op.data)
      update('item_variants', op.id, { name: op.data.name, price: op.data.price, sku: op.data.sku, stock: op.data.stock, position: op.data.position, updated_at: now })
      return { entity: 'variant', change: 'updated', id: op.id }
    case 'variant.delete':
      variant(op.itemId, op.id)
      stmt(db, 'DELETE FROM item_variants WHERE id = ?').run(op.id)
      return { entity: 'variant', change: 'deleted', id: op.id }
    case 'batch.create': {
      item(op.itemId)
      const refused = batchesRefused(vertical())
      if (refused) throw new ApiError('not_for_store_type', refused)
      return { entity: 'batch', change: 'created', id: insertBatch(db, op.itemId, op.data, now) }
    }
    case 'batch.delete':
      item(op.itemId)
      if (!deleteBatch(db, op.itemId, op.id)) throw notFound('batch')
      return { entity: 'batch', change: 'deleted', id: op.id }
    default: {
      const never: never = op
      throw new Error(`unknown menu op ${JSON.stringify(never)}`)
    }
  }
}

export type { ExtraRow }
