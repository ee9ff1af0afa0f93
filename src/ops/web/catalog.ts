/**
 * The public catalog (issue 12 item 6, docs/mcp-catalog.md): search listed stores and their items,
 * read one store, list the starter menus; plus the owner operation that applies a starter menu.
 * Public operations show only listed stores of active accounts (src/storage/catalog.ts) and only
 * public fields: never the owner's name or email, nor the contact data in store settings.
 */
import * as v from 'valibot'
import { defineOp, type JsonSchema } from '../op.ts'
import { storeOf } from '../scope.ts'
import { Money } from '../schemas/common.ts'
import { MenuSchema } from '../schemas/named.ts'
import { CategoryCreate, ItemCreate, menuOps, runMenuOp } from '../menu/menu-payloads.ts'
import { ApiError, notFound } from '../../errors.ts'
import { catalogQueries, DIETARY, RANK_WINDOW, TIER_WINDOW, type CatalogItemRow, type CatalogStoreRow } from '../../storage/catalog.ts'
import { itemImages, menuView, storeUrl } from '../../storage/stores.ts'
import { requireQuota } from '../../storage/entitlements.ts'
import { fromCents, toCents } from '../../domain/money.ts'
import { verticalOf } from '../../domain/verticals.ts'
import { STARTER_KEYS, STARTER_MENUS, starterItemCount, starterMenu, type StarterMenu } from '../../domain/starter-menus.ts'
import type { Services } from '../../services.ts'

const tag = 'Catalog'
const open = { public: true } as const

export const STORES_MAX = 50
export const GROUPS_MAX = 20
export const ITEMS_PER_STORE_MAX = 10

// HTTP query strings carry text; MCP arguments carry JSON numbers and arrays. Both are accepted.
const fromText = (s: v.GenericSchema<number, number>): v.GenericSchema<number | string, number> =>
  v.union([s, v.pipe(v.string(), v.regex(/^\d{1,7}(\.\d{1,2})?$/, 'Send a number.'), v.transform(Number), s)])
const Count = (min: number, max: number) => fromText(v.pipe(v.number(), v.integer(), v.minValue(min), v.maxValue(max)))
/** The dietary needs an item search can ask for. */
export { DIETARY }
const Dietary = v.picklist(DIETARY)
const DietaryList = v.union([
  v.pipe(v.array(Dietary), v.maxLength(DIETARY.length)),
  v.pipe(v.string(), v.transform((s) => s.split(',').map((x) => x.trim()).filter(Boolean)), v.array(Dietary)),
])
const Text = (max: number) => v.pipe(v.string(), v.trim(), v.maxLength(max))

const str = { type: 'string' }
const int = { type: 'integer' }
const nullableStr = { anyOf: [str, { type: 'null' }] }

/** A store as the catalog shows it (public fields only). */
export const CatalogStoreSchema: JsonSchema = {
  type: 'object', required: ['id', 'title', 'slug', 'url', 'menu_url', 'city', 'store_type', 'vertical', 'currency'],
  properties: {
    id: int, title: str, slug: str, url: str, menu_url: str, city: nullableStr, store_type: str, vertical: str, currency: str,
    categories: { type: 'array', items: str },
  },
}
const CatalogItemSchema: JsonSchema = {
  type: 'object', required: ['id', 'name', 'description', 'category', 'price', 'from_price', 'is_vegan', 'is_halal'],
  properties: {
    id: int, name: str, description: str, category: str, price: { type: 'number' }, from_price: { type: 'number' },
    is_vegan: { type: 'boolean' }, is_halal: { type: 'boolean' }, calories: { anyOf: [int, { type: 'null' }] }, image: nullableStr,
  },
}

function storeCard(svc: Services, s: CatalogStoreRow, categories?: string[]) {
  return {
    id: s.id,
    title: s.title,
    slug: s.slug,
    url: storeUrl(svc.config.siteUrl, s.slug),
    menu_url: `${svc.config.baseUrl}/menu/${s.id}`,
    city: s.city,
    store_type: s.store_type,
    vertical: verticalOf(s.store_type).label,
    currency: s.currency,
    ...(categories ? { categories } : {}),
  }
}

const itemCard = (siteUrl: string) => (i: CatalogItemRow) => ({
  id: i.id,
  name: i.name,
  description: i.description,
  category: i.category,
  price: fromCents(i.price),
  from_price: fromCents(i.from_price),
  is_vegan: i.is_vegan === 1,
  is_halal: i.is_halal === 1,
  calories: i.calories,
  image: itemImages(siteUrl, i)[0] ?? null,
})

export const searchCatalogStores = defineOp({
  id: 'catalog.stores.search', tag, access: open, scope: [],
  summary: 'Search publicly listed stores by keyword and city',
  description: '`keyword` matches words of the store\'s title, its kind and its menu category names (every word must match, case and accents ignored; when whole words find nothing, the last word, 3+ letters, also as a prefix), best matches first (bm25 over the ' + RANK_WINDOW + ' most recently added matching stores). `city` keeps stores whose city starts with those words. City alone, or neither: listed stores by id. '
    + `At most ${STORES_MAX} per page (\`limit\`, default 20); \`offset\` pages on; \`has_more\` says whether another page exists. Stores that opted out of public listing, and stores of suspended accounts, never appear.`,
  input: v.object({
    keyword: v.optional(Text(200)),
    city: v.optional(Text(100)),
    limit: v.optional(Count(1, STORES_MAX), 20),
    offset: v.optional(Count(0, 10_000), 0),
  }),
  output: { type: 'object', required: ['data', 'has_more'], properties: { data: { type: 'array', items: CatalogStoreSchema }, has_more: { type: 'boolean' } } },
  run: (ctx, q) => {
    const catalog = catalogQueries(ctx.svc.db)
    const rows = catalog.searchStores({ keyword: q.keyword, city: q.city, limit: q.limit + 1, offset: q.offset })
    const page = rows.slice(0, q.limit)
    const categories = catalog.categoryNames(page.map((s) => s.id))
    return { data: page.map((s) => storeCard(ctx.svc, s, categories.get(s.id))), has_more: rows.length > q.limit }
  },
})

export const searchCatalogItems = defineOp({
  id: 'catalog.items.search', tag, access: open, scope: [],
  summary: 'Search the items of publicly listed stores, grouped by store',
  description: '`query` matches words of an item\'s name, category and description (every word must match, case and accents ignored; when whole words find nothing, the last word, 3+ letters, also as a prefix). '
    + `\`dietary\` lists needs every item meets (${DIETARY.join(', ')}; over HTTP comma-separated); \`max_price\` keeps items whose lowest price (base or a variation) is at most that, in each store's own currency; \`city\` as for store search. Sold-out items are left out. `
    + `Ranking: items whose name has every word, then whose category has them, then with the words anywhere (description too); within each, the shortest names first (the closest matches), then the newest; each reads its ${TIER_WINDOW} most recently added matches, a worse one only while the better ones hold fewer, so a search stays fast on a million items. Stores are ordered by their best item and carry up to \`items_per_store\` items (default 3, at most ${ITEMS_PER_STORE_MAX}) and \`match_count\` (matches among those ranked). \`limit\` stores per page (default 10, at most ${GROUPS_MAX}), \`offset\` pages on.`,
  input: v.object({
    query: v.pipe(Text(200), v.minLength(1, 'Say what to look for.')),
    dietary: v.optional(DietaryList, []),
    max_price: v.optional(fromText(Money)),
    city: v.optional(Text(100)),
    limit: v.optional(Count(1, GROUPS_MAX), 10),
    offset: v.optional(Count(0, 1000), 0),
    items_per_store: v.optional(Count(1, ITEMS_PER_STORE_MAX), 3),
  }),
  output: {
    type: 'object', required: ['data', 'has_more'],
    properties: {
      data: { type: 'array', items: { type: 'object', required: ['store', 'items', 'match_count'], properties: { store: CatalogStoreSchema, items: { type: 'array', items: CatalogItemSchema }, match_count: int } } },
      has_more: { type: 'boolean' },
    },
  },
  run: (ctx, q) => {
    const catalog = catalogQueries(ctx.svc.db)
    const hits = catalog.searchItems({ query: q.query, dietary: [...new Set(q.dietary)], maxPrice: q.max_price === undefined ? null : toCents(q.max_price), city: q.city })
    // Groups in the order of each store's best hit (the hits come best first).
    const groups = new Map<number, { ids: number[]; count: number }>()
    for (const h of hits) {
      const g = groups.get(h.store_id) ?? { ids: [], count: 0 }
      if (g.ids.length < q.items_per_store) g.ids.push(h.id)
      g.count++
      groups.set(h.store_id, g)
    }
    const page = [...groups.entries()].slice(q.offset, q.offset + q.limit)
    const stores = catalog.storesByIds(page.map(([id]) => id))
    const items = catalog.items(page.flatMap(([, g]) => g.ids))
    const data = page.flatMap(([id, g]) => {
      const s = stores.get(id)
      const shown = g.ids.flatMap((i) => items.get(i) ?? [])
      return s ? [{ store: storeCard(ctx.svc, s), items: shown.map(itemCard(ctx.svc.config.siteUrl)), match_count: g.count }] : []
    })
    return { data, has_more: groups.size > q.offset + q.limit }
  },
})

export const getCatalogStore = defineOp({
  id: 'catalog.stores.get', tag, access: open, scope: [],
  summary: 'A publicly listed store by id or slug, with its public menu',
  description: 'The menu is the public one (sold-out items left out, api-v1 §4.4). A store that does not exist, opted out of public listing or belongs to a suspended account is 404 `not_found` alike.',
  input: v.object({ store: v.union([v.pipe(v.number(), v.integer(), v.minValue(1)), v.pipe(v.string(), v.trim(), v.minLength(1), v.maxLength(120))]) }),
  output: { ...CatalogStoreSchema, required: [...(CatalogStoreSchema.required as string[]), 'categories', 'menu'], properties: { ...(CatalogStoreSchema.properties as object), menu: MenuSchema } },
  run: (ctx, { store }) => {
    const catalog = catalogQueries(ctx.svc.db)
    const s = catalog.store(String(store))
    if (!s) throw notFound('store')
    const menu = menuView(ctx.svc.stores.menu(s.id), verticalOf(s.store_type), false, ctx.svc.config.siteUrl)
    return { ...storeCard(ctx.svc, s, menu.map((c) => c.name)), menu }
  },
})

const starterView = (m: StarterMenu) => ({
  key: m.key,
  title: m.title,
  description: m.description,
  store_types: m.store_types,
  item_count: starterItemCount(m),
  categories: m.categories.map((c) => ({
    name: c.name,
    station: c.station ?? null,
    items: c.items.map((i) => ({ ...i, description: i.description ?? '', variations: i.variations ?? [], extras: i.extras ?? [] })),
  })),
})

export const listStarterMenus = defineOp({
  id: 'catalog.starter_menus.list', tag, access: open, scope: [],
  summary: 'Starter menus a new store can start from',
  description: 'Categories and items with prices (major units of the store\'s currency). An owner applies one to an empty store with `POST /restaurants/{id}/menu/starter` (`menu.starter.apply`).',
  output: {
    type: 'array',
    items: { type: 'object', required: ['key', 'title', 'description', 'store_types', 'item_count', 'categories'], properties: { key: str, title: str, description: str, store_types: { type: 'array', items: str }, item_count: int, categories: { type: 'array', items: { type: 'object' } } } },
  },
  run: () => STARTER_MENUS.map(starterView),
})

/** Stores with an application in progress: a second concurrent one would pass the empty-menu check too. */
const applying = new Set<number>()

export const applyStarterMenu = defineOp({
  id: 'menu.starter.apply', tag: 'Menu', access: { owner: 'menu:write' }, scope: ['store'],
  summary: 'Start an empty menu from a starter menu',
  description: 'Creates the starter\'s categories and items through the ordinary menu writes (the same validation, one `menu.updated` event per category and item, the plan\'s `menu_items` quota). '
    + 'Only for a store without categories or items: otherwise 409 `conflict`, so a retry never duplicates a menu. A plan that cannot hold every item is refused with 403 `plan_limit_reached` before anything is written.',
  input: v.object({ starter: v.picklist(STARTER_KEYS, `Pick one of: ${STARTER_KEYS.join(', ')}.`) }),
  output: { type: 'object', required: ['starter', 'category_count', 'item_count', 'menu'], properties: { starter: str, category_count: int, item_count: int, menu: MenuSchema } },
  run: async (ctx, { starter }) => {
    const store = storeOf(ctx)
    const m = starterMenu(starter)!
    const current = ctx.svc.stores.menu(store.id)
    if (applying.has(store.id) || current.categories.length > 0 || current.items.length > 0) {
      throw new ApiError('conflict', 'The store already has a menu: a starter menu only starts an empty one.')
    }
    // A read-only check up front so a plan too small writes nothing; each insert checks again (storage/menu.ts).
    requireQuota(ctx.svc.db, store.owner_id, 'menu_items', starterItemCount(m))
    applying.add(store.id)
    try {
      for (const c of m.categories) {
        const category = await runMenuOp(ctx.svc, store.id, menuOps.createCategory(v.parse(CategoryCreate, { name: c.name, station: c.station ?? null })))
        for (const i of c.items) {
          await runMenuOp(ctx.svc, store.id, menuOps.createItem(v.parse(ItemCreate, { ...i, category_id: category.id })))
        }
      }
    } finally {
      applying.delete(store.id)
    }
    return {
      starter,
      category_count: m.categories.length,
      item_count: starterItemCount(m),
      menu: menuView(ctx.svc.stores.menu(store.id), verticalOf(store.store_type), true, ctx.svc.config.siteUrl),
    }
  },
})

export const catalogOps = [searchCatalogStores, searchCatalogItems, getCatalogStore, listStarterMenus, applyStarterMenu]
