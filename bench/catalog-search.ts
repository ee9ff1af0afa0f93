/**
 * Catalog search at platform scale (issue 12 item 6): builds a database of 10k stores and 1M menu
 * items directly with SQL in a temp file (migrations up to 010, bulk rows, then migration 011, whose
 * backfill builds the FTS5 indexes: its time is reported), then times each kind of catalog query
 * through the operations themselves (input validation, FTS5 query, grouping, output shaping; no
 * HTTP/MCP transport): p50/p90/p99 per query type over varied terms. Also the cost the FTS triggers
 * add to a menu-item insert (single-row write transactions, as the store actor commits them,
 * with and without the index triggers).
 *
 * Environment: BENCH_CATALOG_STORES (default 10000), BENCH_CATALOG_ITEMS_PER_STORE (default 100),
 * BENCH_CATALOG_QUERIES (timed runs per query type, default 300), BENCH_DB_DIR (where the file goes).
 * `npm run bench -- catalog-search`.
 */
import Database from 'better-sqlite3'
import * as v from 'valibot'
import { mkdtempSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { BenchRow, Scenario, ScenarioOptions, ScenarioResult } from './lib/scenario.ts'
import { quantile } from './lib/load.ts'
import { rng } from './lib/rng.ts'
import { migrate, readMigrations, type Db } from '../src/storage/db.ts'
import { createStoreQueries } from '../src/storage/stores.ts'
import { getCatalogStore, searchCatalogItems, searchCatalogStores } from '../src/ops/web/catalog.ts'
import type { Op, OpCtx } from '../src/ops/op.ts'

const CATALOG_MIGRATION = 11
const P50_TARGET_MS = 10

const envInt = (name: string, fallback: number): number => {
  const raw = process.env[name]
  const n = raw === undefined ? fallback : Number(raw)
  if (!Number.isInteger(n) || n <= 0) throw new Error(`${name} must be a positive integer, got "${raw}"`)
  return n
}

const CITIES = ['Berlin', 'Hamburg', 'München', 'Köln', 'Frankfurt', 'Stuttgart', 'Düsseldorf', 'Leipzig', 'Dresden', 'Hannover',
  'Nürnberg', 'Bremen', 'Wien', 'Graz', 'Zürich', 'Basel', 'Paris', 'Lyon', 'Marseille', 'Toulouse', 'Madrid', 'Barcelona',
  'Valencia', 'Lisboa', 'Porto', 'Roma', 'Milano', 'Napoli', 'Torino', 'Amsterdam', 'Rotterdam', 'Utrecht', 'Bruxelles',
  'Antwerpen', 'London', 'Manchester', 'Bristol', 'Dublin', 'New York', 'San Francisco', 'Los Angeles', 'Chicago', 'Boston',
  'Seattle', 'Austin', 'Toronto', 'Montréal', 'Vancouver', 'Sydney', 'Melbourne', 'São Paulo', 'Rio de Janeiro', 'Ciudad de México',
  'Tokyo', 'Osaka', 'Seoul', 'Singapore', 'Bangkok', 'Istanbul', 'Kraków']

/** Store kinds with their categories and dish words (item names combine a modifier and a dish). */
const KINDS: Record<string, { categories: string[]; dishes: string[] }> = {
  Pizzeria: { categories: ['Pizza', 'Pasta', 'Antipasti', 'Salads', 'Desserts', 'Drinks'], dishes: ['Margherita', 'Marinara', 'Diavola', 'Quattro Formaggi', 'Capricciosa', 'Calzone', 'Carbonara', 'Lasagne', 'Bruschetta', 'Tiramisu', 'Panna Cotta', 'Focaccia'] },
  Sushi: { categories: ['Nigiri', 'Maki', 'Sashimi', 'Bowls', 'Soups', 'Drinks'], dishes: ['Salmon Nigiri', 'Tuna Maki', 'California Roll', 'Edamame', 'Miso Soup', 'Gyoza', 'Poke Bowl', 'Tempura', 'Unagi', 'Ramen', 'Mochi', 'Matcha'] },
  Burger: { categories: ['Burgers', 'Sides', 'Shakes', 'Salads', 'Desserts', 'Drinks'], dishes: ['Cheeseburger', 'Bacon Burger', 'Chicken Burger', 'Veggie Burger', 'Fries', 'Onion Rings', 'Milkshake', 'Hot Dog', 'Nuggets', 'Coleslaw', 'Brownie', 'Lemonade'] },
  Café: { categories: ['Coffee', 'Tea', 'Pastries', 'Breakfast', 'Sandwiches', 'Cakes'], dishes: ['Cappuccino', 'Latte', 'Espresso', 'Flat White', 'Croissant', 'Bagel', 'Pancakes', 'Granola', 'Cheesecake', 'Muffin', 'Chai', 'Scone'] },
  Indian: { categories: ['Curries', 'Tandoor', 'Rice', 'Breads', 'Starters', 'Drinks'], dishes: ['Butter Chicken', 'Tikka Masala', 'Chana Masala', 'Dal Makhani', 'Biryani', 'Naan', 'Samosa', 'Pakora', 'Korma', 'Vindaloo', 'Lassi', 'Paneer'] },
  Thai: { categories: ['Curries', 'Noodles', 'Soups', 'Salads', 'Starters', 'Drinks'], dishes: ['Pad Thai', 'Green Curry', 'Red Curry', 'Tom Yum', 'Tom Kha', 'Som Tam', 'Spring Rolls', 'Massaman', 'Satay', 'Larb', 'Mango Sticky Rice', 'Thai Iced Tea'] },
  Mexican: { categories: ['Tacos', 'Burritos', 'Bowls', 'Sides', 'Desserts', 'Drinks'], dishes: ['Taco al Pastor', 'Carnitas', 'Burrito', 'Quesadilla', 'Nachos', 'Guacamole', 'Enchiladas', 'Churros', 'Elote', 'Tamales', 'Horchata', 'Fajitas'] },
  Grocery: { categories: ['Dairy', 'Bakery', 'Produce', 'Snacks', 'Drinks', 'Household'], dishes: ['Whole Milk', 'Greek Yogurt', 'Sourdough', 'Baguette', 'Bananas', 'Avocados', 'Crisps', 'Chocolate', 'Orange Juice', 'Sparkling Water', 'Dish Soap', 'Paper Towels'] },
}
const MODIFIERS = ['Classic', 'Spicy', 'Smoky', 'Homemade', 'Crispy', 'Large', 'Small', 'Special', 'Fresh', 'Organic', 'Double', 'Mini', 'Deluxe', 'Family', 'House', 'Vegan', 'Grilled', 'Roasted', 'Sweet', 'Garlic']
const WORDS = ['tomato', 'basil', 'mozzarella', 'garlic', 'chili', 'onion', 'pepper', 'cheese', 'cream', 'lemon', 'lime', 'ginger', 'sesame', 'soy', 'rice', 'beans', 'corn',
  'avocado', 'mushroom', 'spinach', 'potato', 'chicken', 'beef', 'pork', 'tofu', 'salmon', 'tuna', 'shrimp', 'coconut', 'curry', 'coriander', 'mint', 'honey', 'vanilla',
  'chocolate', 'caramel', 'almond', 'walnut', 'pistachio', 'oat', 'butter', 'olive', 'oregano', 'parmesan', 'ricotta', 'truffle', 'pesto', 'smoked', 'fresh', 'crispy',
  'served', 'with', 'and', 'our', 'house', 'sauce', 'slow', 'cooked', 'baked', 'grilled', 'topped', 'side', 'salad', 'bread', 'toasted', 'local', 'seasonal']

interface BuildInfo { stores: number; items: number; buildSec: number; backfillSec: number; fileMb: number; indexMb: number }

/** Bulk rows with migrations up to 010, then migration 011 (the backfill builds the indexes). */
export function build(path: string, storeCount: number, perStore: number, log: (s: string) => void): { db: Db; info: BuildInfo } {
  const db = new Database(path)
  db.pragma('journal_mode = WAL')
  db.pragma('synchronous = NORMAL')
  db.pragma('foreign_keys = ON')
  const all = readMigrations()
  migrate(db, all.filter((m) => m.version < CATALOG_MIGRATION))
  const r = rng(12)
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!
  // Cities skewed like real ones: a few big ones hold most stores.
  const city = () => CITIES[Math.floor(CITIES.length * r() ** 2)]!
  const kinds = Object.keys(KINDS)
  const now = '2026-01-01T00:00:00.000+00:00'
  const t0 = performance.now()
  const owner = db.prepare("INSERT INTO owners (name, email, created_at, suspended_at) VALUES (?, ?, ?, ?)")
  const store = db.prepare(`INSERT INTO stores (owner_id, title, slug, store_type, currency, city, settings, created_at) VALUES (?, ?, ?, ?, 'EUR', ?, ?, ?)`)
  const category = db.prepare('INSERT INTO menu_categories (store_id, name, position, created_at) VALUES (?, ?, ?, ?)')
  const item = db.prepare(`INSERT INTO menu_items (store_id, category_id, name, description, price, position, is_sold_out, is_vegan, is_halal, created_at, updated_at)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`)
  const words = (n: number) => Array.from({ length: n }, () => pick(WORDS)).join(' ')
  db.transaction(() => {
    let ownerId = 0
    for (let s = 0; s < storeCount; s++) {
      // Two stores per account; 1% of accounts suspended, 1% of stores opted out of the listing.
      if (s % 2 === 0) ownerId = Number(owner.run(`Owner ${s}`, `owner${s}@bench.local`, now, r() < 0.01 ? now : null).lastInsertRowid)
      const kind = pick(kinds)
      const spec = KINDS[kind]!
      const storeId = Number(store.run(ownerId, `${pick(MODIFIERS)} ${kind} ${s}`, `store-${s}`, kind === 'Grocery' ? 'retail' : 'restaurant', city(),
        r() < 0.01 ? '{"public_listing":false}' : '{}', now).lastInsertRowid)
      const cats = spec.categories.map((name, i) => Number(category.run(storeId, name, i, now).lastInsertRowid))
      for (let i = 0; i < perStore; i++) {
        const dish = pick(spec.dishes)
        item.run(storeId, cats[i % cats.length], `${pick(MODIFIERS)} ${dish}`, words(6 + Math.floor(r() * 8)), 200 + Math.floor(r() * 2800), i,
          r() < 0.05 ? 1 : 0, r() < 0.3 ? 1 : 0, r() < 0.1 ? 1 : 0, now, now)
      }
      if (s % 1000 === 999) log(`  built ${s + 1} stores`)
    }
  })()
  const buildSec = (performance.now() - t0) / 1000
  log(`  rows in ${buildSec.toFixed(1)} s; applying migration 011 (FTS5 backfill)…`)
  const t1 = performance.now()
  migrate(db, all)
  const backfillSec = (performance.now() - t1) / 1000
  db.pragma('wal_checkpoint(TRUNCATE)')
  const fileMb = statSync(path).size / 1e6
  const indexMb = (db.prepare("SELECT SUM(pgsize) FROM dbstat WHERE name LIKE 'catalog_%'").pluck().get() as number) / 1e6
  return { db, info: { stores: storeCount, items: storeCount * perStore, buildSec, backfillSec, fileMb, indexMb } }
}

/** Time `run` over each input after a warm-up over `warm`; milliseconds, sorted. */
function time(inputs: unknown[], warm: unknown[], run: (x: unknown) => unknown): Float64Array {
  for (const x of warm) run(x)
  const out = new Float64Array(inputs.length)
  for (let i = 0; i < inputs.length; i++) {
    const t = performance.now()
    run(inputs[i])
    out[i] = performance.now() - t
  }
  return out.sort()
}

const WARM = 30

function row(name: string, lat: Float64Array, extra: Record<string, unknown> = {}): BenchRow {
  const mean = lat.reduce((a, b) => a + b, 0) / lat.length
  return {
    scenario: name, load: `sequential, ${lat.length} calls`, durationSec: (mean * lat.length) / 1000, requests: lat.length, throughput: 1000 / mean,
    p50Ms: quantile(lat, 0.5), p90Ms: quantile(lat, 0.9), p99Ms: quantile(lat, 0.99), maxMs: lat[lat.length - 1]!, non2xx: 0, errors: 0, ratio: null,
    serverCpuUsPerReq: mean * 1000, serverCpuPct: null, extra,
  }
}

async function run(opts: ScenarioOptions): Promise<ScenarioResult> {
  const storeCount = envInt('BENCH_CATALOG_STORES', 10_000)
  const perStore = envInt('BENCH_CATALOG_ITEMS_PER_STORE', 100)
  const n = envInt('BENCH_CATALOG_QUERIES', 300)
  const dir = mkdtempSync(join(process.env.BENCH_DB_DIR ?? tmpdir(), 'catalog-bench-'))
  try {
    opts.log(`catalog-search: building ${storeCount} stores × ${perStore} items in ${dir}`)
    const { db, info } = build(join(dir, 'catalog.db'), storeCount, perStore, opts.log)
    const svc = { db, stores: createStoreQueries(db), config: { siteUrl: 'http://bench.local', baseUrl: 'http://bench.local/api/v1' } }
    const ctx = { svc, principal: null, scope: {}, requestId: 'bench', ip: '127.0.0.1' } as unknown as OpCtx
    const call = (op: Op) => (raw: unknown) => op.run(ctx, v.parse(op.input!, raw))
    const r = rng(7)
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!
    const dishes = Object.values(KINDS).flatMap((k) => k.dishes)
    const dishWord = () => pick(dishes).split(' ')[0]!
    const kinds = Object.keys(KINDS)
    const bigCity = () => CITIES[Math.floor(r() * 5)]!

    const rows: BenchRow[] = []
    const measure = (name: string, op: Op, input: () => unknown) => {
      const lat = time(Array.from({ length: n }, input), Array.from({ length: WARM }, input), call(op))
      rows.push(row(name, lat))
      opts.log(`  ${name}: p50 ${quantile(lat, 0.5).toFixed(2)} ms, p99 ${quantile(lat, 0.99).toFixed(2)} ms`)
    }
    measure('stores: keyword', searchCatalogStores, () => ({ keyword: pick(kinds) }))
    measure('stores: keyword + city', searchCatalogStores, () => ({ keyword: pick(kinds), city: pick(CITIES) }))
    measure('stores: city', searchCatalogStores, () => ({ city: pick(CITIES) }))
    const listed = db.prepare('SELECT slug FROM catalog_listed_stores').pluck().all() as string[]
    measure('stores: get by slug (with menu)', getCatalogStore, () => ({ store: pick(listed) }))
    measure('items: common word', searchCatalogItems, () => ({ query: pick(['pizza', 'burger', 'curry', 'tomato', 'cheese', 'chicken']) }))
    measure('items: dish word', searchCatalogItems, () => ({ query: dishWord() }))
    measure('items: two words', searchCatalogItems, () => ({ query: `${pick(MODIFIERS)} ${dishWord()}` }))
    measure('items: prefix (3-5 letters)', searchCatalogItems, () => ({ query: dishWord().slice(0, 3 + Math.floor(r() * 3)) }))
    measure('items: word + big city', searchCatalogItems, () => ({ query: dishWord(), city: bigCity() }))
    measure('items: word + vegan', searchCatalogItems, () => ({ query: dishWord(), dietary: ['vegan'] }))
    measure('items: word + max_price', searchCatalogItems, () => ({ query: dishWord(), max_price: 5 + Math.floor(r() * 10) }))
    measure('items: common + city + vegan + price', searchCatalogItems, () => ({ query: pick(['pizza', 'burger', 'curry', 'cheese']), city: bigCity(), dietary: ['vegan'], max_price: 12 }))

    // Trigger cost: single-row insert transactions (as the store actor commits), with the triggers
    // and with them dropped (the bench database is thrown away). synchronous=NORMAL: no fsync in
    // either, so the difference is the index work.
    const ins = db.prepare(`INSERT INTO menu_items (store_id, category_id, name, description, price, created_at, updated_at)
      SELECT store_id, id, ?, ?, 990, '2026-01-01', '2026-01-01' FROM menu_categories WHERE id = ?`)
    const maxCat = db.prepare('SELECT MAX(id) FROM menu_categories').pluck().get() as number
    const insertOnce = (i: number) => db.transaction(() => ins.run(`Bench ${pick(MODIFIERS)} ${dishWord()} ${i}`, 'slow cooked with tomato basil and garlic', 1 + Math.floor(r() * maxCat)))()
    const seq = (from: number, k: number) => Array.from({ length: k }, (_, i) => from + i)
    const withIdx = time(seq(WARM, n * 3), seq(0, WARM), (i) => insertOnce(i as number))
    rows.push(row('insert item (1 row/txn), FTS triggers', withIdx))
    const schema = db.prepare("SELECT name, sql FROM sqlite_master WHERE type = 'trigger' AND name LIKE 'catalog_items_%'").all() as Array<{ name: string; sql: string }>
    for (const tr of schema) db.exec(`DROP TRIGGER ${tr.name}`)
    const without = time(seq(n * 4, n * 3), seq(n * 3 + WARM, WARM), (i) => insertOnce(i as number))
    for (const tr of schema) db.exec(tr.sql)
    rows.push(row('insert item (1 row/txn), no triggers', without))
    db.close()

    const p50Missed = rows.filter((x) => !x.scenario.startsWith('insert') && x.p50Ms >= P50_TARGET_MS)
    return {
      name: 'catalog-search',
      rows,
      labels: { throughput: 'calls/s', perReq: 'mean µs/call' },
      loadGenerator: 'sequential op calls in the bench process (validation + SQL + shaping; no transport)',
      targets: [
        { target: `every search p50 < ${P50_TARGET_MS} ms at ${info.stores} stores / ${info.items} items`, measured: p50Missed.length ? p50Missed.map((x) => `${x.scenario} ${x.p50Ms.toFixed(2)} ms`).join('; ') : 'all under', met: p50Missed.length === 0 },
      ],
      notes: [
        `${info.stores} stores, ${info.items} items; rows built in ${info.buildSec.toFixed(1)} s, migration 011 backfill (both FTS5 indexes) ${info.backfillSec.toFixed(1)} s; database ${info.fileMb.toFixed(0)} MB after, of which the FTS5 indexes ${info.indexMb.toFixed(0)} MB.`,
        `FTS trigger cost per item insert: p50 +${(quantile(withIdx, 0.5) - quantile(without, 0.5)).toFixed(3)} ms (${quantile(withIdx, 0.5).toFixed(3)} vs ${quantile(without, 0.5).toFixed(3)} ms per single-row transaction, synchronous=NORMAL).`,
        'Times are the operation as HTTP and MCP run it after the transport: valibot input, FTS5 queries (items: three tiers of the newest 500 matches; stores: bm25), grouping and output shaping.',
      ],
    }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

export const scenario: Scenario = {
  name: 'catalog-search',
  description: 'Catalog FTS5 search at 10k stores / 1M items: p50/p99 per query type, FTS trigger cost per item insert',
  run,
}
