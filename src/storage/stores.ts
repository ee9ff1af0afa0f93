/** Store and menu reads, plus the menu snapshot a store actor prices with. */
import type { Db } from './db.ts'
import { groupBy, nowIso, stmt } from './db.ts'
import { ApiError } from '../errors.ts'
import { fromCents } from '../domain/money.ts'
import { verticalOf, type Vertical } from '../domain/verticals.ts'
import type { PricedItem } from '../domain/pricing.ts'
import { sellableStock } from '../domain/stock.ts'
import { localDay, timeZoneOf } from '../domain/business-hours.ts'
import { itemBatches, storeBatches, toStockBatch, type BatchRow } from './stock.ts'

export interface StoreRow {
  id: number
  owner_id: number
  title: string
  slug: string
  template: string
  store_type: string
  currency: string
  city: string | null
  settings: string
  created_at: string
  /** Set when the owner removed the store (docs/stores.md "Removing a store"): no query below returns it. */
  deleted_at?: string | null
}

export interface ItemRow {
  id: number
  store_id: number
  category_id: number
  name: string
  description: string
  price: number
  position: number
  is_sold_out: number
  is_popular: number
  is_vegan: number
  is_halal: number
  calories: number | null
  brand: string | null
  stock: number | null
  sku: string | null
  images: string
  /** Migration 020: the brand (`brand` holds its name, kept in step by src/storage/brands.ts). */
  brand_id?: number | null
  /** Migration 021: minimum buyer age (age_gate verticals); null: not restricted. */
  min_age?: number | null
  /** Migration 045: the uploaded photo (`menu_photos.key`, its content hash); null: none. */
  photo_key?: string | null
  created_at: string
  updated_at: string
}
export interface VariantRow { id: number; item_id: number; name: string; price: number | null; sku: string | null; stock: number | null; position: number; created_at: string; updated_at: string }
export interface ExtraRow { id: number; item_id: number; name: string; price: number; group_name: string | null; position: number }
export interface CategoryRow { id: number; store_id: number; name: string; position: number; station: string | null; created_at: string }

export const storeUrl = (siteUrl: string, slug: string): string => `${siteUrl}/s/${encodeURIComponent(slug)}`

/** Store as listed (api-v1 §4.2 list items, plus type and vertical as §2.2 asks). */
export function storeSummary(s: StoreRow, siteUrl: string) {
  return {
    id: s.id,
    title: s.title,
    slug: s.slug,
    url: storeUrl(siteUrl, s.slug),
    template: s.template,
    created_at: s.created_at,
    store_type: s.store_type,
    vertical: verticalOf(s.store_type),
  }
}

export function createStoreQueries(db: Db) {
  const q = {
    // A removed store (deleted_at set) is gone from every lookup: its routes answer 404.
    byId: db.prepare<[number], StoreRow>('SELECT * FROM stores WHERE id = ? AND deleted_at IS NULL'),
    bySlug: db.prepare<[string], StoreRow>('SELECT * FROM stores WHERE slug = ? AND deleted_at IS NULL'),
    ownedBy: db.prepare<[number, number], StoreRow>('SELECT * FROM stores WHERE id = ? AND owner_id = ? AND deleted_at IS NULL'),
    countForOwner: db.prepare<[number], number>('SELECT COUNT(*) FROM stores WHERE owner_id = ? AND deleted_at IS NULL').pluck(),
    pageForOwner: db.prepare<[number, number, number], StoreRow>('SELECT * FROM stores WHERE owner_id = ? AND deleted_at IS NULL ORDER BY id LIMIT ? OFFSET ?'),
    categories: db.prepare<[number], CategoryRow>('SELECT * FROM menu_categories WHERE store_id = ? ORDER BY position, id'),
    items: db.prepare<[number], ItemRow>('SELECT * FROM menu_items WHERE store_id = ? ORDER BY position, id'),
    variants: db.prepare<[number], VariantRow>('SELECT v.* FROM item_variants v JOIN menu_items i ON i.id = v.item_id WHERE i.store_id = ? ORDER BY v.position, v.id'),
    extras: db.prepare<[number], ExtraRow>('SELECT e.* FROM item_extras e JOIN menu_items i ON i.id = e.item_id WHERE i.store_id = ? ORDER BY e.position, e.id'),
    item: db.prepare<[number, number], ItemRow>('SELECT * FROM menu_items WHERE id = ? AND store_id = ?'),
    itemVariants: db.prepare<[number], VariantRow>('SELECT * FROM item_variants WHERE item_id = ? ORDER BY position, id'),
    itemExtras: db.prepare<[number], ExtraRow>('SELECT * FROM item_extras WHERE item_id = ? ORDER BY position, id'),
    category: db.prepare<[number, number], CategoryRow>('SELECT * FROM menu_categories WHERE id = ? AND store_id = ?'),
    variant: db.prepare<[number, number], VariantRow>('SELECT * FROM item_variants WHERE id = ? AND item_id = ?'),
    categoryCounts: db.prepare<[number], { id: number; name: string; item_count: number }>(
      'SELECT c.id, c.name, COUNT(i.id) AS item_count FROM menu_categories c LEFT JOIN menu_items i ON i.category_id = c.id WHERE c.store_id = ? GROUP BY c.id ORDER BY c.position, c.id',
    ),
  }
  return {
    byId: (id: number) => q.byId.get(id),
    /** The store at a public address (`/s/{slug}`). */
    bySlug: (slug: string) => q.bySlug.get(slug),
    /** Tenancy at lookup (ARCHITECTURE 7): another owner's store is simply not found. */
    ownedBy: (id: number, ownerId: number) => q.ownedBy.get(id, ownerId),
    page(ownerId: number, page: number, perPage: number) {
      return { total: q.countForOwner.get(ownerId) as number, rows: q.pageForOwner.all(ownerId, perPage, (page - 1) * perPage) }
    },
    categoryCounts: (storeId: number) => q.categoryCounts.all(storeId),
    category: (storeId: number, id: number) => q.category.get(id, storeId),
    /** One item of a store with its variants and extras, or undefined. */
    item(storeId: number, itemId: number) {
      const item = q.item.get(itemId, storeId)
      if (!item) return undefined
      const batches = itemBatches(db, itemId)
      return { item: withBatchStock(item, batches, storeToday(q.byId.get(storeId))), variants: q.itemVariants.all(itemId), extras: q.itemExtras.all(itemId), batches }
    },
    variant: (itemId: number, id: number) => q.variant.get(id, itemId),
    /** The whole menu of a store, with each item's variants and extras, in display order. */
    menu(storeId: number): StoreMenu {
      const variants = groupBy(q.variants.all(storeId), (v) => v.item_id)
      const extras = groupBy(q.extras.all(storeId), (e) => e.item_id)
      const batches = storeBatches(db, storeId)
      const today = storeToday(q.byId.get(storeId))
      const items = q.items.all(storeId).map((i) => withBatchStock(i, batches.get(i.id), today))
      return { categories: q.categories.all(storeId), items, variants, extras, batches }
    },
  }
}
export type StoreQueries = ReturnType<typeof createStoreQueries>

/**
 * Inside a write: merge `patch` into the store's `settings` JSON (a null value removes the key; keys
 * not named stay, e.g. `driver_fee`) and set `city` when given. Read and written in one transaction,
 * so two concurrent updates of different keys never drop each other's. Returns the row as written.
 */
export function writeStoreSettings(db: Db, storeId: number, patch: Record<string, unknown>, city?: string | null, fields?: StoreFields): StoreRow | undefined {
  const row = stmt<[number], StoreRow>(db, 'SELECT * FROM stores WHERE id = ? AND deleted_at IS NULL').get(storeId)
  if (!row) return undefined
  if (fields) writeStoreFields(db, row, fields)
  const settings = parseSettings(row.settings)
  for (const [k, v] of Object.entries(patch)) {
    if (v === undefined) continue
    if (v === null) delete settings[k]
    else settings[k] = v
  }
  stmt(db, 'UPDATE stores SET settings = ?, city = ? WHERE id = ?').run(JSON.stringify(settings), city === undefined ? row.city : city, storeId)
  return stmt<[number], StoreRow>(db, 'SELECT * FROM stores WHERE id = ?').get(storeId)
}

/** The store's own columns `PUT /restaurants/{id}` changes, and its removal (`DELETE`; docs/stores.md). */
export interface StoreFields { title?: string; store_type?: string; currency?: string; remove?: true }

/** Orders of the store still in progress (not delivered, completed or cancelled). */
export const liveOrderCount = (db: Db, storeId: number): number =>
  stmt<[number], number>(db, "SELECT COUNT(*) FROM orders WHERE store_id = ? AND status NOT IN ('delivered', 'completed', 'cancelled')").pluck().get(storeId)!

/**
 * Inside the settings write: the columns, with the rules that need the store's orders, checked in
 * the same transaction. The currency cannot change once the store has orders (their totals and the
 * analytics are in it: 409); a store with orders in progress cannot be removed (409). Removal keeps
 * the row and every order; it hides the store from the public catalog too (public_listing off).
 */
function writeStoreFields(db: Db, row: StoreRow, f: StoreFields): void {
  if (f.currency !== undefined && f.currency !== row.currency && stmt<[number], 1>(db, 'SELECT 1 FROM orders WHERE store_id = ? LIMIT 1').pluck().get(row.id)) {
    throw new ApiError('conflict', 'The currency cannot change once the store has orders.')
  }
  if (f.remove) {
    const live = liveOrderCount(db, row.id)
    if (live > 0) throw new ApiError('conflict', `The store has ${live} order(s) in progress; complete or cancel them first.`, undefined, undefined, { orders_in_progress: live })
  }
  stmt(db, 'UPDATE stores SET title = ?, store_type = ?, currency = ?, deleted_at = ? WHERE id = ?')
    .run(f.title ?? row.title, f.store_type ?? row.store_type, f.currency ?? row.currency, f.remove ? nowIso() : null, row.id)
}

/** A store's `settings` JSON as an object (garbage or a non-object reads as empty). */
export function parseSettings(json: string | null | undefined): Record<string, unknown> {
  try {
    const o = JSON.parse(json ?? '{}') as unknown
    return o && typeof o === 'object' && !Array.isArray(o) ? { ...(o as Record<string, unknown>) } : {}
  } catch {
    return {}
  }
}

export interface StoreMenu {
  categories: CategoryRow[]
  items: ItemRow[]
  variants: Map<number, VariantRow[]>
  extras: Map<number, ExtraRow[]>
  /** Expiry batches by item (migration 020); absent: none. */
  batches?: Map<number, BatchRow[]>
}

/** The store's local date (YYYY-MM-DD) now: what an expiry batch is compared with (docs/verticals.md "Expiry"). */
export const storeToday = (store: Pick<StoreRow, 'settings'> | undefined, at = new Date()): string =>
  localDay(timeZoneOf(parseSettings(store?.settings)), at).date

/** An item with expiry batches shows as its `stock` what is sellable today (sum of unexpired batches). */
function withBatchStock(i: ItemRow, batches: readonly BatchRow[] | undefined, today: string): ItemRow {
  return batches && batches.length > 0 ? { ...i, stock: sellableStock({ batches }, today) } : i
}

/** Sold out as clients see it (api-v1 §2.3): the owner's flag, no stock left, or every variant at zero. */
export function soldOut(i: Pick<ItemRow, 'is_sold_out' | 'stock'>, variants: readonly Pick<VariantRow, 'stock'>[] = []): boolean {
  return i.is_sold_out === 1 || i.stock === 0 || (variants.length > 0 && variants.every((v) => v.stock === 0))
}

/** The priceable view of a menu, keyed by item id (input to domain/pricing). */
export function pricingIndex(menu: StoreMenu): Map<number, PricedItem> {
  const stations = new Map(menu.categories.map((c) => [c.id, c.station]))
  const index = new Map<number, PricedItem>()
  for (const i of menu.items) index.set(i.id, pricedItem(i, stations.get(i.category_id) ?? null, menu.variants.get(i.id), menu.extras.get(i.id), menu.batches?.get(i.id)))
  return index
}

function pricedItem(i: ItemRow, station: string | null, variants: VariantRow[] = [], extras: ExtraRow[] = [], batches: BatchRow[] = []): PricedItem {
  return {
    id: i.id,
    name: i.name,
    price: i.price,
    is_sold_out: i.is_sold_out === 1,
    station,
    variants: variants.map((v) => ({ id: v.id, name: v.name, price: v.price, stock: v.stock })),
    extras: extras.map((e) => ({ id: e.id, name: e.name, price: e.price })),
    stock: i.stock,
    batches: batches.map(toStockBatch),
    min_age: i.min_age ?? null,
  }
}

/** A menu held in memory with its pricing index (the store actor's). */
export interface HeldMenu { menu: StoreMenu; index: Map<number, PricedItem> }

/**
 * The held menu after one item changed, re-reading only that item (its row, variants and extras;
 * `found` undefined: it was deleted), so a menu write costs O(1) reads instead of re-reading the
 * whole menu (measured ~2 ms per write at a few hundred items, growing with the menu). The result
 * equals `menu()` + `pricingIndex()` read afresh (test/unit/menu-patch.test.ts): items stay in
 * (position, id) order. Returns null when the change reaches beyond the item (its category is not
 * held: a category was created on the way), and the caller re-reads everything.
 */
export function withItemChanged(held: HeldMenu, itemId: number, found: { item: ItemRow; variants: VariantRow[]; extras: ExtraRow[]; batches?: BatchRow[] } | undefined): HeldMenu | null {
  const { menu } = held
  const category = found && menu.categories.find((c) => c.id === found.item.category_id)
  if (found && !category) return null
  const items = menu.items.filter((i) => i.id !== itemId)
  const variants = new Map(menu.variants)
  const extras = new Map(menu.extras)
  const batches = new Map(menu.batches)
  const index = new Map(held.index)
  variants.delete(itemId)
  extras.delete(itemId)
  batches.delete(itemId)
  index.delete(itemId)
  if (found) {
    const { item } = found
    const at = items.findIndex((i) => i.position > item.position || (i.position === item.position && i.id > item.id))
    items.splice(at === -1 ? items.length : at, 0, item)
    if (found.variants.length > 0) variants.set(itemId, found.variants)
    if (found.extras.length > 0) extras.set(itemId, found.extras)
    if (found.batches && found.batches.length > 0) batches.set(itemId, found.batches)
    index.set(itemId, pricedItem(item, category!.station, found.variants, found.extras, found.batches))
  }
  return { menu: { categories: menu.categories, items, variants, extras, batches }, index }
}

export const variantView = (v: VariantRow) => ({
  id: v.id, item_id: v.item_id, name: v.name, price: v.price == null ? null : fromCents(v.price), sku: v.sku, stock: v.stock, is_sold_out: v.stock === 0, position: v.position,
  created_at: v.created_at, updated_at: v.updated_at,
})
export const extraView = (e: ExtraRow) => ({ id: e.id, name: e.name, price: fromCents(e.price), group: e.group_name })

/** Where an uploaded photo is served (docs/menu-photos.md): its content hash names it, so a new photo is a new address. */
export const PHOTO_PATH = '/media/items/'
export const photoUrls = (siteUrl: string, key: string) => ({ url: `${siteUrl}${PHOTO_PATH}${key}.jpg`, thumb_url: `${siteUrl}${PHOTO_PATH}${key}-thumb.jpg` })
/** The item's photo as the API shows it, or null. */
export const photoView = (siteUrl: string, i: Pick<ItemRow, 'photo_key'>) => (i.photo_key ? photoUrls(siteUrl, i.photo_key) : null)
/** The item's images: the uploaded photo first (so every reader of `images[0]` shows it), then the external addresses. */
export function itemImages(siteUrl: string, i: Pick<ItemRow, 'photo_key' | 'images'>): string[] {
  const external = JSON.parse(i.images) as string[]
  return i.photo_key ? [photoUrls(siteUrl, i.photo_key).url, ...external] : external
}

/**
 * `images` as a write gives them, less this server's own photo addresses: a client that read an item
 * and sends its `images` back (the photo first) does not turn the photo into an address of its own.
 */
export const externalImages = (siteUrl: string, images: string[] | undefined): string[] | undefined =>
  images?.filter((u) => !u.startsWith(`${siteUrl}${PHOTO_PATH}`))

/** An item as the API shows it (api-v1 §2.3): food flags for food stores, goods fields otherwise; `siteUrl` makes the photo's address. */
export function itemView(i: ItemRow, vertical: Vertical, siteUrl: string, variants: VariantRow[] = [], extras: ExtraRow[] = []) {
  const base = {
    id: i.id,
    category_id: i.category_id,
    name: i.name,
    description: i.description,
    price: fromCents(i.price),
    position: i.position,
    is_sold_out: soldOut(i, variants),
    is_popular: i.is_popular === 1,
  }
  const fields = vertical.capabilities.food_fields
    ? { is_vegan: i.is_vegan === 1, is_halal: i.is_halal === 1, calories: i.calories }
    : { brand: i.brand, brand_id: i.brand_id ?? null, stock: i.stock, sku: i.sku, variant_count: variants.length }
  // Age-restricted items (issue 18 item 4): clients see `min_age` to ask for the confirmation an order needs.
  const age = vertical.capabilities.age_gate || i.min_age != null ? { min_age: i.min_age ?? null } : {}
  return {
    ...base, ...fields, ...age, images: itemImages(siteUrl, i), photo: photoView(siteUrl, i),
    variations: variants.map(variantView), extras: extras.map(extraView),
  }
}

/** Categories with their items; `includeSoldOut: false` for the public menu (api-v1 §4.4). */
export function menuView(menu: StoreMenu, vertical: Vertical, includeSoldOut: boolean, siteUrl: string) {
  const byCat = new Map<number, ReturnType<typeof itemView>[]>()
  for (const i of menu.items) {
    if (!includeSoldOut && soldOut(i, menu.variants.get(i.id))) continue
    const list = byCat.get(i.category_id) ?? []
    list.push(itemView(i, vertical, siteUrl, menu.variants.get(i.id), menu.extras.get(i.id)))
    byCat.set(i.category_id, list)
  }
  return menu.categories.map((c) => ({ id: c.id, name: c.name, position: c.position, station: c.station, items: byCat.get(c.id) ?? [] }))
}
