/**
 * The public catalog's queries (issue 12 item 6, docs/mcp-catalog.md) over the FTS5 indexes of
 * migration 010. Only listed stores of active accounts are indexed, and every query joins
 * `catalog_listed_stores` again, so a hidden store or a suspended account never appears. Rows carry
 * no owner contact data: the columns are chosen here, never `SELECT *` of stores or owners.
 */
import { perDb, type Db } from './db.ts'

/** A store as the catalog may show it: public fields only (no owner, no settings). */
export interface CatalogStoreRow {
  id: number
  title: string
  slug: string
  store_type: string
  currency: string
  city: string | null
}

/** A matching item with its category, ready to group by store. */
export interface CatalogItemRow {
  id: number
  store_id: number
  name: string
  description: string
  price: number
  /** The lowest price it sells at: the base price or a variation's, minor units. */
  from_price: number
  category: string
  is_vegan: number
  is_halal: number
  calories: number | null
  images: string
  photo_key: string | null
}

/** Dietary filters: the menu_items flags that exist (migration 001), indexed as tags. */
export const DIETARY = ['vegan', 'halal'] as const
export type Dietary = (typeof DIETARY)[number]

/**
 * Store search ranks (bm25: title, kind, categories) at most this many matches, the most recently
 * added ones when there are more: ranking cost grows with the matches, and 10k stores stay well
 * inside a millisecond this way (bench/catalog-search.ts).
 */
export const RANK_WINDOW = 500

/**
 * Item candidates read per tier: the most recently added matches, straight off the index in rowid
 * order. Not bm25: bm25 needs each phrase's document frequency, which FTS5 counts by reading the
 * phrase's whole doclist on every query, so on 1M items a common word or a filter (a big city, the
 * vegan tag) cost 10-35 ms before ranking a single row (measured, bench/catalog-search.ts). Tiers by
 * field, then the shortest names, rank what an agent needs in bounded time.
 */
export const TIER_WINDOW = 500

const MAX_WORDS = 8
const MAX_WORD = 40
const WORD = /[\p{L}\p{N}]+/gu

/** Words of free text, as the unicode61 tokenizer would split them (letters and digits). */
export const words = (text: string): string[] =>
  (text.normalize('NFKC').match(WORD) ?? []).slice(0, MAX_WORDS).map((w) => w.slice(0, MAX_WORD))

/**
 * Free text as an FTS5 expression on `columns`: every word must match; with `prefix`, the last
 * word (3+ characters) also as a prefix. Words hold only letters and digits, so quoting them cannot
 * inject FTS5 syntax. Null when the text has no words.
 */
export function textMatch(text: string, columns: string[], prefix = false): string | null {
  const ws = words(text)
  if (ws.length === 0) return null
  const terms = ws.map((w, i) => `"${w}"${prefix && i === ws.length - 1 && w.length >= 3 ? '*' : ''}`)
  return `{${columns.join(' ')}} : (${terms.join(' ')})`
}

/** Does the text end in a word a prefix search could extend (type-ahead: "marg" → Margherita)? */
const extendable = (text: string): boolean => (words(text).at(-1)?.length ?? 0) >= 3

/** A city as a phrase at the start of the city column: "york" does not find New York. */
export function cityMatch(city: string): string | null {
  const ws = words(city)
  return ws.length ? `city : ^"${ws.join(' ')}"` : null
}

const and = (parts: Array<string | null>): string | null => {
  const kept = parts.filter((p): p is string => p !== null)
  return kept.length ? kept.join(' AND ') : null
}

/**
 * The item search both the catalog (every listed store, `catalog_items_fts`) and a store's own
 * menu search (src/storage/menu-search.ts, the storefront's `search_menu`) run, so they agree
 * (issue 36 item 6): the same words, FTS5 expressions and tokenizer, tiers, prefix fallback and
 * ranking; only the index differs. `newest(match, limit)` reads an index's newest matches.
 */
export const ITEM_COLUMNS = 'name, description, category, tags, city'
export const ITEM_TOKENIZER = `tokenize = 'porter unicode61 remove_diacritics 2', prefix = '3'`
/** Tiers by field: every word in the name, then in the category, then anywhere (description too). */
const ITEM_TIERS = [['name'], ['category'], ['name', 'description', 'category']]
/** The FTS5 `tags` of an item: its dietary flags. */
export const itemTags = (i: { is_vegan: number; is_halal: number }): string => `${i.is_vegan ? 'vegan ' : ''}${i.is_halal ? 'halal' : ''}`.trim()

export interface ItemQuery { query: string; dietary: readonly Dietary[]; city?: string | null | undefined }

/**
 * Candidate ids per tier (best tier first), each without the ids of a better tier. Once the
 * better tiers hold a window's worth, the worse ones are not read: they would only add matches
 * ranked below those, and on common words they are the costly intersections. Whole words first;
 * when they find nothing, the last word (3+ letters) as a prefix. Empty when the text has no words.
 */
export function itemCandidates(newest: (match: string, limit: number) => number[], s: ItemQuery): number[][] {
  const city = s.city ? cityMatch(s.city) : null
  if (!words(s.query).length || (s.city && !city)) return []
  const filters = [city, ...s.dietary.map((d) => `tags : ${d}`)]
  const tiers = (prefix: boolean) => ITEM_TIERS.map((cols) => and([textMatch(s.query, cols, prefix), ...filters])!)
  const read = (matches: string[]) => {
    const seen = new Set<number>()
    const out: number[][] = []
    for (const match of matches) {
      if (seen.size >= TIER_WINDOW) break
      out.push(newest(match, TIER_WINDOW).filter((id) => !seen.has(id) && seen.add(id)))
    }
    return out
  }
  const found = read(tiers(false))
  return found.every((t) => t.length === 0) && extendable(s.query) ? read(tiers(true)) : found
}

/** Rank candidates: tier by tier, the shortest names first (the closest matches), then the newest; ids without a row (filtered out) drop. */
export function rankCandidates<R extends { id: number; name_len: number }>(found: number[][], rows: Map<number, R>): R[] {
  return found.flatMap((tier) => tier.flatMap((id) => rows.get(id) ?? []).sort((a, b) => a.name_len - b.name_len || b.id - a.id))
}

export interface StoreSearch { keyword?: string | undefined; city?: string | undefined; limit: number; offset: number }
export interface ItemSearch { query: string; dietary: Dietary[]; maxPrice: number | null; city?: string | undefined }
/** A ranked item match: what grouping needs; the rest is read for the items shown only. */
export interface ItemHit { id: number; store_id: number }

/** An item's lowest price: a variation's own price, or the item's (a NULL variation price is the item's). */
const FROM_PRICE = 'min(i.price, coalesce((SELECT MIN(v.price) FROM item_variants v WHERE v.item_id = i.id), i.price))'
const STORE_COLS = 's.id, s.title, s.slug, s.store_type, s.currency, s.city'
/** The newest RANK_WINDOW matches: rowids above the (window+1)-th newest match (0 when there are fewer). */
const windowFloor = (table: string) =>
  `coalesce((SELECT rowid FROM ${table} WHERE ${table} MATCH @match ORDER BY rowid DESC LIMIT 1 OFFSET @window), 0)`

export function createCatalogQueries(db: Db) {
  const q = {
    // Ranked on rowid + rank only, so the join reads just the page's rows.
    storesRanked: db.prepare<{ match: string; window: number; limit: number; offset: number }, CatalogStoreRow>(
      `SELECT ${STORE_COLS} FROM (
         SELECT rowid AS id, rank FROM catalog_stores_fts
         WHERE catalog_stores_fts MATCH @match AND rowid > ${windowFloor('catalog_stores_fts')}
         ORDER BY rank LIMIT @limit OFFSET @offset
       ) h JOIN catalog_listed_stores s ON s.id = h.id ORDER BY h.rank, s.id`,
    ),
    // Filters only (a city): nothing to rank, pages in id order straight off the index.
    storesFiltered: db.prepare<{ match: string; limit: number; offset: number }, CatalogStoreRow>(
      `SELECT ${STORE_COLS} FROM (
         SELECT rowid AS id FROM catalog_stores_fts WHERE catalog_stores_fts MATCH @match ORDER BY rowid LIMIT @limit OFFSET @offset
       ) h JOIN catalog_listed_stores s ON s.id = h.id ORDER BY s.id`,
    ),
    storesAll: db.prepare<[number, number], CatalogStoreRow>(
      `SELECT ${STORE_COLS} FROM catalog_listed_stores s ORDER BY s.id LIMIT ? OFFSET ?`,
    ),
    storeById: db.prepare<[number], CatalogStoreRow>(`SELECT ${STORE_COLS} FROM catalog_listed_stores s WHERE s.id = ?`),
    storeBySlug: db.prepare<[string], CatalogStoreRow>(`SELECT ${STORE_COLS} FROM catalog_listed_stores s WHERE s.slug = ?`),
    storesByIds: db.prepare<[string], CatalogStoreRow>(
      `SELECT ${STORE_COLS} FROM catalog_listed_stores s WHERE s.id IN (SELECT value FROM json_each(?))`,
    ),
    categoryNames: db.prepare<[string], { store_id: number; name: string }>(
      'SELECT store_id, name FROM menu_categories WHERE store_id IN (SELECT value FROM json_each(?)) ORDER BY store_id, position, id',
    ),
    itemsNewest: db.prepare<[string, number], number>(
      'SELECT rowid FROM catalog_items_fts WHERE catalog_items_fts MATCH ? ORDER BY rowid DESC LIMIT ?',
    ).pluck(),
    itemStores: db.prepare<[string], { id: number; store_id: number; name_len: number }>(
      'SELECT i.id, i.store_id, length(i.name) AS name_len FROM menu_items i WHERE i.id IN (SELECT value FROM json_each(?)) AND i.is_sold_out = 0',
    ),
    itemStoresUnder: db.prepare<[string, number], { id: number; store_id: number; name_len: number }>(
      `SELECT i.id, i.store_id, length(i.name) AS name_len FROM menu_items i WHERE i.id IN (SELECT value FROM json_each(?)) AND i.is_sold_out = 0 AND ${FROM_PRICE} <= ?`,
    ),
    itemsByIds: db.prepare<[string], CatalogItemRow>(
      `SELECT i.id, i.store_id, i.name, i.description, i.price, ${FROM_PRICE} AS from_price, c.name AS category, i.is_vegan, i.is_halal, i.calories, i.images, i.photo_key
       FROM menu_items i JOIN menu_categories c ON c.id = i.category_id
       WHERE i.id IN (SELECT value FROM json_each(?))`,
    ),
  }

  function storesFor(s: StoreSearch, prefix: boolean): CatalogStoreRow[] {
    const text = s.keyword ? textMatch(s.keyword, ['title', 'kind', 'categories'], prefix) : null
    const city = s.city ? cityMatch(s.city) : null
    // Text without a single word matches nothing, rather than everything.
    if ((s.keyword && !text) || (s.city && !city)) return []
    if (text) return q.storesRanked.all({ match: and([text, city])!, window: RANK_WINDOW, limit: s.limit, offset: s.offset })
    if (city) return q.storesFiltered.all({ match: city, limit: s.limit, offset: s.offset })
    return q.storesAll.all(s.limit, s.offset)
  }

  return {
    /**
     * Listed stores matching a keyword (title, kind, category names; bm25) and/or a city. Whole
     * words first; when they find nothing, the last word as a prefix (type-ahead).
     */
    searchStores(s: StoreSearch): CatalogStoreRow[] {
      const exact = storesFor(s, false)
      if (exact.length || !s.keyword || !extendable(s.keyword)) return exact
      // Every page of one search decides alike: prefixes only when whole words match nothing at all.
      const anyExact = s.offset > 0 && storesFor({ ...s, limit: 1, offset: 0 }, false).length > 0
      return anyExact ? exact : storesFor(s, true)
    },

    /** A listed store by id or slug; undefined when it does not exist or is not public. */
    store(idOrSlug: string): CatalogStoreRow | undefined {
      return /^[1-9]\d{0,15}$/.test(idOrSlug) ? q.storeById.get(Number(idOrSlug)) ?? q.storeBySlug.get(idOrSlug) : q.storeBySlug.get(idOrSlug)
    },

    /** Listed stores by id (for grouping item hits). */
    storesByIds(ids: number[]): Map<number, CatalogStoreRow> {
      return new Map(q.storesByIds.all(JSON.stringify(ids)).map((r) => [r.id, r]))
    },

    /** Category names per store, in menu order. */
    categoryNames(storeIds: number[]): Map<number, string[]> {
      const out = new Map<number, string[]>(storeIds.map((id) => [id, []]))
      for (const r of q.categoryNames.all(JSON.stringify(storeIds))) out.get(r.store_id)?.push(r.name)
      return out
    },

    /**
     * Orderable items for a search, best first. Tiers: items whose name has every word, then
     * whose category has them, then with the words anywhere (name, category, description); within
     * a tier the shortest names first (the closest matches), then the newest. Each tier reads its
     * TIER_WINDOW newest matches; worse tiers only while the better ones hold fewer than that. Filters (city, dietary tags) are part of the FTS5 expression; the
     * price ceiling (minor units, each store's own currency) applies to the lowest price (base or a
     * variation). Whole words first; when they find nothing, the last word as a prefix.
     */
    searchItems(s: ItemSearch): ItemHit[] {
      const found = itemCandidates((match, limit) => q.itemsNewest.all(match, limit), s)
      const all = found.flat()
      if (all.length === 0) return []
      const ids = JSON.stringify(all)
      const rows = new Map((s.maxPrice === null ? q.itemStores.all(ids) : q.itemStoresUnder.all(ids, s.maxPrice)).map((r) => [r.id, r]))
      return rankCandidates(found, rows).map((r) => ({ id: r.id, store_id: r.store_id }))
    },

    /** The items to show, by id. */
    items(ids: number[]): Map<number, CatalogItemRow> {
      return new Map(q.itemsByIds.all(JSON.stringify(ids)).map((r) => [r.id, r]))
    },
  }
}

export type CatalogQueries = ReturnType<typeof createCatalogQueries>

/** The catalog queries of a database, prepared once per connection. */
export const catalogQueries: (db: Db) => CatalogQueries = perDb(createCatalogQueries)
