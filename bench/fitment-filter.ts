/**
 * The vehicle filter on a 100k-item car-parts catalogue (issue 18 item 3; docs/verticals.md
 * "Fitments"): `GET /restaurants/{id}/menu?make=&model=&year=` through HTTP against the real
 * server (src/main.ts in a child process), sequential requests over varied vehicles, median/p90/p99.
 * For scale, the same menu without a filter (every item: what the filter saves a client from).
 *
 * The catalogue is built once and cached under bench/results/.cache/ (git-ignored): 100k items in
 * 40 categories, 30 makes × 20 models × 4 generations = 2,400 fitments (a third engine-specific),
 * each item linked to 3 random fitments (300k links), 40 universal items. Each run copies the cached
 * file to a temp dir, so the server never writes into the cache.
 *
 * Environment: BENCH_FITMENT_ITEMS (default 100000), BENCH_FITMENT_QUERIES (default 500),
 * BENCH_DB_DIR (where the run's copy goes). `npm run bench -- fitment`.
 */
import Database from 'better-sqlite3'
import { copyFileSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { ScenarioOptions, ScenarioResult } from './lib/scenario.ts'
import { quantile } from './lib/load.ts'
import { sequentialRow } from './lib/latency-row.ts'
import { envInt } from './lib/env.ts'
import { benchOwner, cachedDb } from './lib/bench-db.ts'
import { rng } from './lib/rng.ts'
import { startApp, withBenchDir } from './lib/proc.ts'
import { progress } from './lib/progress.ts'
import { migrate } from '../src/storage/db.ts'
import { insertFitment, linkMany, markUniversal } from '../src/storage/fitments.ts'

const CACHE_VERSION = 2
const P50_TARGET_MS = 20
const MAKES = ['Volkswagen', 'Toyota', 'Ford', 'BMW', 'Audi', 'Mercedes-Benz', 'Honda', 'Nissan', 'Hyundai', 'Kia', 'Peugeot', 'Renault', 'Opel', 'Skoda',
  'Seat', 'Fiat', 'Volvo', 'Mazda', 'Subaru', 'Chevrolet', 'Dodge', 'Jeep', 'Tesla', 'Citroën', 'Dacia', 'Mini', 'Suzuki', 'Mitsubishi', 'Lexus', 'Porsche']
const ENGINES = ['1.0 TSI', '1.4 TSI', '1.6 TDI', '2.0 TDI', '1.5 Hybrid', '2.0 Petrol', '3.0 V6', 'Electric']
const PARTS = ['Brake pads', 'Brake disc', 'Oil filter', 'Air filter', 'Cabin filter', 'Spark plug', 'Wiper blade', 'Headlight bulb', 'Battery', 'Alternator',
  'Starter motor', 'Water pump', 'Timing belt kit', 'Clutch kit', 'Shock absorber', 'Control arm', 'Tie rod end', 'Wheel bearing', 'Exhaust gasket', 'Radiator']
const SIDES = ['Front', 'Rear', 'Left', 'Right', 'Upper', 'Lower', 'Premium', 'Economy', 'OE', 'Performance']
const BRANDS = ['Bosch', 'Brembo', 'Mann', 'NGK', 'Valeo', 'Febi', 'Sachs', 'Gates', 'Continental', 'Denso']

interface Cached { storeId: number; token: string; items: number; fitments: number; links: number; vehicles: { make: string; model: string; year: number }[] }

/** Build the catalogue into `path` (a fresh file): migrations, an owner with a token, the store and its parts. */
function build(path: string, itemCount: number, log: (s: string) => void): Cached {
  const db = new Database(path)
  db.pragma('journal_mode = WAL')
  db.pragma('synchronous = OFF')
  db.pragma('foreign_keys = ON')
  migrate(db)
  const r = rng(18)
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!
  const now = '2026-01-01T00:00:00.000+00:00'
  const t0 = performance.now()
  const out = db.transaction((): Cached => {
    const { ownerId, token } = benchOwner(db, 'Bench parts', 'parts@bench.local', now)
    const storeId = Number(db.prepare(`INSERT INTO stores (owner_id, title, slug, template, store_type, currency, city, settings, created_at)
      VALUES (?, 'Bench Auto Parts', 'bench-auto-parts', 'classic', 'carparts', 'EUR', 'Berlin', '{}', ?)`).run(ownerId, now).lastInsertRowid)
    const fitments: number[] = []
    const vehicles: Cached['vehicles'] = []
    for (const make of MAKES) {
      for (let m = 1; m <= 20; m++) {
        const model = `Model ${m}`
        for (let g = 0; g < 4; g++) {
          const from = 2000 + g * 6
          fitments.push(insertFitment(db, storeId, { make, model, year_from: from, year_to: from + 5, engine: r() < 0.33 ? pick(ENGINES) : null }, now))
          vehicles.push({ make, model, year: from + Math.floor(r() * 6) })
        }
      }
    }
    const cats = Array.from({ length: 40 }, (_, i) => Number(db.prepare('INSERT INTO menu_categories (store_id, name, position, created_at) VALUES (?, ?, ?, ?)')
      .run(storeId, `${PARTS[i % PARTS.length]}s ${Math.floor(i / PARTS.length) + 1}`, i, now).lastInsertRowid))
    const item = db.prepare(`INSERT INTO menu_items (store_id, category_id, name, description, price, position, brand, stock, sku, created_at, updated_at)
      VALUES (?, ?, ?, '', ?, ?, ?, ?, ?, ?, ?)`)
    const links: [number, number][] = []
    const universal: number[] = []
    const bar = progress('building the catalogue', itemCount, 'items')
    for (let i = 0; i < itemCount; i++) {
      const id = Number(item.run(storeId, cats[i % cats.length], `${pick(SIDES)} ${pick(PARTS)} ${i}`, 500 + Math.floor(r() * 30000), i, pick(BRANDS),
        Math.floor(r() * 50), `P-${i}`, now, now).lastInsertRowid)
      if (i % 2500 === 0) universal.push(id)
      else for (let k = 0; k < 3; k++) links.push([fitments[Math.floor(r() * fitments.length)]!, id])
      bar.tick()
    }
    bar.done()
    linkMany(db, links)
    markUniversal(db, storeId, universal)
    return { storeId, token, items: itemCount, fitments: fitments.length, links: links.length, vehicles }
  })()
  db.pragma('wal_checkpoint(TRUNCATE)')
  db.close()
  log(`  built in ${((performance.now() - t0) / 1000).toFixed(1)} s`)
  return out
}

async function run(opts: ScenarioOptions): Promise<ScenarioResult> {
  const itemCount = envInt('BENCH_FITMENT_ITEMS', 100_000)
  const n = envInt('BENCH_FITMENT_QUERIES', 500)
  const { db: cacheDb, meta } = cachedDb(`fitment-${itemCount}-v${CACHE_VERSION}`, `the ${itemCount}-item car-parts catalogue`, (path) => build(path, itemCount, opts.log), opts.log)
  return withBenchDir(process.env.BENCH_DB_DIR ?? tmpdir(), 'fitment-bench-', async (dir, track) => {
    const dbPath = join(dir, 'bench.db')
    copyFileSync(cacheDb, dbPath)
    const plan = (() => {
      const db = new Database(dbPath, { readonly: true })
      const rows = db.prepare(`EXPLAIN QUERY PLAN SELECT fi.item_id FROM fitments f JOIN fitment_items fi ON fi.fitment_id = f.id
        WHERE f.store_id = ? AND f.make = ? AND f.model = ? AND f.year_from <= ? AND f.year_to >= ?`).all(meta.storeId, 'BMW', 'Model 3', 2010, 2010) as { detail: string }[]
      db.close()
      return rows.map((x) => x.detail).join('; ')
    })()
    const server = track(await startApp(dbPath, process.cwd()))
    const headers = { authorization: `Bearer ${meta.token}` }
    const base = `${server.url}/api/v1/restaurants/${meta.storeId}/menu`
    const r = rng(7)
    const get = async (url: string): Promise<{ ms: number; items: number }> => {
      const t = performance.now()
      const res = await fetch(url, { headers })
      const body = (await res.json()) as { items: unknown[] }[]
      const ms = performance.now() - t
      if (res.status !== 200) throw new Error(`${url} answered ${res.status}: ${JSON.stringify(body).slice(0, 300)}`)
      return { ms, items: body.reduce((k, c) => k + c.items.length, 0) }
    }
    const vehicleUrl = () => {
      const v = meta.vehicles[Math.floor(r() * meta.vehicles.length)]!
      const make = r() < 0.5 ? v.make.toLowerCase() : v.make // the filter is case-insensitive
      return `${base}?make=${encodeURIComponent(make)}&model=${encodeURIComponent(v.model)}&year=${v.year}`
    }
    opts.log(`fitment filter: ${n} sequential requests over varied vehicles…`)
    for (let i = 0; i < 30; i++) await get(vehicleUrl()) // warm-up
    const lat = new Float64Array(n)
    let matched = 0
    for (let i = 0; i < n; i++) {
      const x = await get(vehicleUrl())
      lat[i] = x.ms
      matched += x.items
    }
    lat.sort()
    const whole = new Float64Array(5)
    let wholeItems = 0
    opts.log('the whole menu without a filter, for scale…')
    await get(base)
    for (let i = 0; i < whole.length; i++) {
      const x = await get(base)
      whole[i] = x.ms
      wholeItems = x.items
    }
    whole.sort()
    const p50 = quantile(lat, 0.5)
    return {
      name: 'fitment-filter',
      rows: [
        sequentialRow('menu ?make&model&year (100k catalogue)', `sequential, ${lat.length} requests`, lat, { avgItemsReturned: matched / n }),
        sequentialRow('menu, no filter (every item)', `sequential, ${whole.length} requests`, whole, { items: wholeItems }),
      ],
      notes: [
        `catalogue: ${meta.items} items, ${meta.fitments} fitments, ${meta.links} links, universal items every 2,500th; database ${(statSync(dbPath).size / 1e6).toFixed(0)} MB`,
        `a filtered answer holds ${(matched / n).toFixed(0)} items on average (linked + universal); the unfiltered menu ${wholeItems}`,
        `query plan of the vehicle match: ${plan}`,
        'latency is the client-side time of one HTTP request (request, SQLite, JSON, response) on the same machine, one at a time',
      ],
      targets: [{ target: `median filtered request under ${P50_TARGET_MS} ms on 100k items`, measured: `${p50.toFixed(2)} ms`, met: p50 < P50_TARGET_MS }],
      loadGenerator: 'sequential fetch from the bench process; the server is src/main.ts in a child process on the same machine',
    }
  })
}

export const scenario = { name: 'fitment-filter', description: 'vehicle filter on a 100k-item car-parts menu over HTTP', run }
