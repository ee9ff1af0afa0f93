/**
 * One store's menu search (the storefront's `search_menu`, issue 36 item 6): the catalog's item
 * search (src/storage/catalog.ts `itemCandidates`, `rankCandidates`) run over an index of this
 * store's menu, so the storefront and the public catalog answer a question alike, whether or not
 * the store is publicly listed (the catalog index holds listed stores only) and sold-out items
 * included when asked.
 *
 * The index is an FTS5 table with the catalog's columns and tokenizer in a private in-memory
 * SQLite database (nothing is written to the server's database), rebuilt when the store's menu
 * text changed (a digest of what is indexed), for the MENU_INDEXES most recently searched stores.
 */
import { createHash } from 'node:crypto'
import Database from 'better-sqlite3'
import { ITEM_COLUMNS, ITEM_TOKENIZER, itemCandidates, itemTags, rankCandidates, type Dietary } from './catalog.ts'

/** Stores whose menu index is kept (least recently searched dropped first). */
export const MENU_INDEXES = 32

export interface SearchableItem { id: number; name: string; description: string; category_id: number; is_vegan: number; is_halal: number }
export interface SearchableMenu { categories: ReadonlyArray<{ id: number; name: string }>; items: readonly SearchableItem[] }

let memory: Database.Database | null = null
/** storeId → digest of its indexed text; insertion order is recency. */
const indexed = new Map<number, string>()

function db(): Database.Database {
  if (memory) return memory
  memory = new Database(':memory:')
  memory.exec(`CREATE VIRTUAL TABLE items USING fts5(${ITEM_COLUMNS}, store UNINDEXED, ${ITEM_TOKENIZER})`)
  return memory
}

function digest(menu: SearchableMenu): string {
  const h = createHash('sha1')
  for (const c of menu.categories) h.update(`c${c.id}\u0000${c.name}\u0000`)
  for (const i of menu.items) h.update(`i${i.id}\u0000${i.name}\u0000${i.description}\u0000${i.category_id}\u0000${i.is_vegan}${i.is_halal}\u0000`)
  return h.digest('hex')
}

/** Make sure the index holds this menu's current text. */
function ensure(storeId: number, menu: SearchableMenu): void {
  const d = digest(menu)
  const had = indexed.get(storeId)
  indexed.delete(storeId)
  indexed.set(storeId, d) // most recent last
  if (had === d) return
  const m = db()
  const categories = new Map(menu.categories.map((c) => [c.id, c.name]))
  const insert = m.prepare(`INSERT INTO items (rowid, ${ITEM_COLUMNS}, store) VALUES (?, ?, ?, ?, ?, '', ?)`)
  m.transaction(() => {
    m.prepare('DELETE FROM items WHERE store = ?').run(storeId)
    for (const i of menu.items) insert.run(i.id, i.name, i.description, categories.get(i.category_id) ?? '', itemTags(i), storeId)
    while (indexed.size > MENU_INDEXES) {
      const [oldest] = indexed.keys()
      indexed.delete(oldest!)
      m.prepare('DELETE FROM items WHERE store = ?').run(oldest)
    }
  })()
}

/**
 * The menu's items matching `query` and every `dietary` need, best first, as the catalog ranks
 * them; `keep` filters (availability, price, category) before ranking. Empty when the query has no words.
 */
export function searchMenu<I extends SearchableItem>(storeId: number, menu: { categories: SearchableMenu['categories']; items: readonly I[] }, query: string, dietary: readonly Dietary[], keep: (i: I) => boolean): I[] {
  ensure(storeId, menu)
  const newest = db().prepare<[string, number, number], number>('SELECT rowid FROM items WHERE items MATCH ? AND store = ? ORDER BY rowid DESC LIMIT ?').pluck()
  const found = itemCandidates((match, limit) => newest.all(match, storeId, limit), { query, dietary })
  const rows = new Map(menu.items.filter(keep).map((i) => [i.id, { id: i.id, name_len: i.name.length, item: i }]))
  return rankCandidates(found, rows).map((r) => r.item)
}
