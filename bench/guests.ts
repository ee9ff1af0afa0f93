/**
 * Guest reports on a 100k-order store (issue 17 item 5; docs/operations.md "Guests and segments",
 * "Off the event loop"): `GET /restaurants/{id}/guests` and `/guests/segments` against the real
 * server (src/main.ts in a child process), and — the point — the round trip of `/healthz` while two
 * clients keep guest reports running: with GUESTS_WORKER=0 (the aggregate on the event loop, as
 * before) every other request waits for the running report; with the worker it does not.
 *
 * The store is built once and cached under bench/results/.cache/ (git-ignored): 100k orders over
 * 400 days, 20k customer accounts, 15k further phones, a fifth of the orders walk-ins, payments on
 * paid orders, 5k reservations. Each run copies the cached file to a temp dir.
 *
 * Environment: BENCH_GUESTS_ORDERS (default 100000), BENCH_GUESTS_QUERIES (sequential requests per
 * report, default 6), BENCH_GUESTS_PROBE_S (seconds of /healthz probing under load, default 8),
 * BENCH_DB_DIR. `npm run bench -- guests`.
 */
import Database from 'better-sqlite3'
import { copyFileSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { BenchRow, ScenarioOptions, ScenarioResult } from './lib/scenario.ts'
import { sequentialRow as row } from './lib/latency-row.ts'
import { envInt } from './lib/env.ts'
import { benchOwner, cachedDb } from './lib/bench-db.ts'
import { rng } from './lib/rng.ts'
import { startApp, withBenchDir, type Server } from './lib/proc.ts'
import { progress } from './lib/progress.ts'
import { migrate, nowIso } from '../src/storage/db.ts'

const CACHE_VERSION = 1
const DAY = 86_400_000

interface Cached { storeId: number; token: string; orders: number; customers: number; reservations: number }

function build(path: string, orders: number, log: (s: string) => void): Cached {
  const db = new Database(path)
  db.pragma('journal_mode = WAL')
  db.pragma('synchronous = OFF')
  db.pragma('foreign_keys = ON')
  migrate(db)
  const r = rng(17)
  const now = Date.now()
  const t0 = performance.now()
  const customers = Math.round(orders / 5)
  const loosePhones = Math.round(orders * 0.15)
  const phone = (n: number) => `+1 (555) ${String(n).padStart(7, '0').replace(/^(\d{3})/, '$1-')}` // typed, not normalised
  const out = db.transaction((): Cached => {
    const created = nowIso(now - 400 * DAY)
    const { ownerId, token } = benchOwner(db, 'Bench guests', 'guests@bench.local', created)
    const storeId = Number(db.prepare(`INSERT INTO stores (owner_id, title, slug, template, store_type, currency, city, settings, created_at)
      VALUES (?, 'Bench Bistro', 'bench-bistro', 'classic', 'restaurant', 'EUR', 'Berlin', '{}', ?)`).run(ownerId, created).lastInsertRowid)
    const cust = db.prepare("INSERT INTO customers (store_id, name, email, phone, consents, created_at, updated_at) VALUES (?, ?, ?, ?, '{}', ?, ?)")
    const ids: number[] = []
    for (let i = 0; i < customers; i++) {
      const at = nowIso(now - Math.floor(r() * 400) * DAY)
      ids.push(Number(cust.run(storeId, `Customer ${i}`, `c${i}@bench.local`, `+1555${String(i).padStart(7, '0')}`, at, at).lastInsertRowid))
    }
    const order = db.prepare(`INSERT INTO orders (store_id, type, status, is_paid, customer_id, customer_name, phone, subtotal, total, track_token, timeline, created_at, updated_at)
      VALUES (?, 'takeaway', ?, ?, ?, ?, ?, ?, ?, ?, '{}', ?, ?)`)
    const pay = db.prepare("INSERT INTO payments (order_id, store_id, method, amount, status, created_at) VALUES (?, ?, 'card', ?, 'succeeded', ?)")
    const bar = progress('building the order history', orders, 'orders')
    for (let i = 0; i < orders; i++) {
      const at = nowIso(now - Math.floor(r() * 400 * DAY))
      const kind = r()
      const total = 500 + Math.floor(r() * 6000)
      const paid = r() < 0.7
      let cid: number | null = null
      let name: string | null = null
      let ph: string | null = null
      if (kind < 0.4) cid = ids[Math.floor(r() * ids.length)]!
      else if (kind < 0.55) { const n = Math.floor(r() * customers); ph = phone(n); name = `Customer ${n}` } // an account's phone, typed differently
      else if (kind < 0.8) { const n = customers + Math.floor(r() * loosePhones); ph = phone(n); name = `Walk ${n}` }
      const status = r() < 0.05 ? 'cancelled' : 'completed'
      const id = Number(order.run(storeId, status, paid ? 1 : 0, cid, name, ph, total, total, `bench-guests-${i}`, at, at).lastInsertRowid)
      if (paid && r() < 0.5) pay.run(id, storeId, total, at)
      bar.tick()
    }
    bar.done()
    const reservations = Math.round(orders / 20)
    const res = db.prepare(`INSERT INTO reservations (store_id, customer_id, name, phone, email, party_size, starts_at, ends_at, status, order_id, created_at, updated_at)
      VALUES (?, ?, ?, ?, ?, 2, ?, ?, ?, NULL, ?, ?)`)
    const statuses = ['completed', 'seated', 'no_show', 'cancelled', 'booked']
    for (let i = 0; i < reservations; i++) {
      const starts = now - Math.floor(r() * 400 - 14) * DAY
      const n = Math.floor(r() * (customers + loosePhones))
      res.run(storeId, r() < 0.3 ? ids[Math.floor(r() * ids.length)]! : null, `Booker ${n}`, phone(n), r() < 0.3 ? `b${n}@bench.local` : null,
        nowIso(starts), nowIso(starts + 7_200_000), statuses[Math.floor(r() * statuses.length)]!, nowIso(starts - DAY), nowIso(starts - DAY))
    }
    return { storeId, token, orders, customers, reservations }
  })()
  db.pragma('wal_checkpoint(TRUNCATE)')
  db.close()
  log(`  built in ${((performance.now() - t0) / 1000).toFixed(1)} s`)
  return out
}

async function timed(url: string, headers: Record<string, string> = {}): Promise<number> {
  const t = performance.now()
  const res = await fetch(url, { headers })
  const text = await res.text()
  const ms = performance.now() - t
  if (res.status !== 200) throw new Error(`${url} answered ${res.status}: ${text.slice(0, 300)}`)
  return ms
}

/** One server mode: report latencies one at a time, then /healthz round trips while two clients loop reports. */
async function measure(server: Server, meta: Cached, mode: string, n: number, probeS: number, log: (s: string) => void): Promise<BenchRow[]> {
  const headers = { authorization: `Bearer ${meta.token}` }
  const base = `${server.url}/api/v1/restaurants/${meta.storeId}/guests`
  const reports = { list: base, segments: `${base}/segments` }
  await timed(reports.list, headers) // warm-up (and the worker's start)
  const rows: BenchRow[] = []
  for (const [name, url] of Object.entries(reports)) {
    log(`${mode}: ${n} sequential ${name} requests…`)
    const lat = new Float64Array(n)
    for (let i = 0; i < n; i++) lat[i] = await timed(url, headers)
    lat.sort()
    rows.push(row(`${mode}: guests ${name} (${meta.orders} orders)`, `sequential, ${n} requests`, lat))
  }
  log(`${mode}: /healthz for ${probeS} s while 2 clients loop guest reports…`)
  let stop = false
  let reportsDone = 0
  const loop = async (i: number) => {
    while (!stop) {
      await timed(i % 2 ? reports.segments : reports.list, headers)
      reportsDone++
    }
  }
  const loaders = [loop(0), loop(1)]
  const probes: number[] = []
  const end = performance.now() + probeS * 1000
  while (performance.now() < end) probes.push(await timed(`${server.url}/healthz`))
  stop = true
  await Promise.all(loaders)
  const lat = Float64Array.from(probes).sort()
  rows.push(row(`${mode}: /healthz while reports run`, `sequential probe, 2 report clients, ${probeS} s`, lat, { reportsDuringProbe: reportsDone }))
  return rows
}

async function run(opts: ScenarioOptions): Promise<ScenarioResult> {
  const orders = envInt('BENCH_GUESTS_ORDERS', 100_000)
  const n = envInt('BENCH_GUESTS_QUERIES', 6)
  const probeS = envInt('BENCH_GUESTS_PROBE_S', 8)
  const { db: cacheDb, meta } = cachedDb(`guests-${orders}-v${CACHE_VERSION}`, `the ${orders}-order store`, (path) => build(path, orders, opts.log), opts.log)
  return withBenchDir(process.env.BENCH_DB_DIR ?? tmpdir(), 'guests-bench-', async (dir, track) => {
    const dbPath = join(dir, 'bench.db')
    copyFileSync(cacheDb, dbPath)
    const rows: BenchRow[] = []
    for (const [mode, env] of [['inline (GUESTS_WORKER=0)', { GUESTS_WORKER: '0' }], ['worker', { GUESTS_WORKER: '1' }]] as const) {
      if (opts.only.length && !opts.only.some((k) => mode.includes(k))) continue
      const server = track(await startApp(dbPath, process.cwd(), env))
      rows.push(...await measure(server, meta, mode, n, probeS, opts.log))
      await server.stop()
    }
    const probe = (m: string) => rows.find((r) => r.scenario.startsWith(m) && r.scenario.includes('/healthz'))
    const [inline, worker] = [probe('inline'), probe('worker')]
    return {
      name: 'guests',
      rows,
      notes: [
        `store: ${meta.orders} orders, ${meta.customers} customer accounts, ${meta.reservations} reservations; database ${(statSync(dbPath).size / 1e6).toFixed(0)} MB`,
        'report latency is the client-side time of one HTTP request, one at a time; /healthz is probed one request at a time while two clients keep requesting guest reports',
        'inline: the aggregate runs on the server\'s event loop (GUESTS_WORKER=0, the behaviour before the worker); worker: in the guest read worker thread',
      ],
      // The machine is shared (load averages of 8 on 2 cores here), so the target compares the two modes on it.
      targets: inline && worker
        ? [{ target: '/healthz p99 while reports run: worker at least 10x below inline', measured: `${worker.p99Ms.toFixed(1)} ms vs ${inline.p99Ms.toFixed(1)} ms`, met: worker.p99Ms * 10 < inline.p99Ms }]
        : [],
      loadGenerator: 'fetch from the bench process; the server is src/main.ts in a child process on the same machine',
    }
  })
}

export const scenario = { name: 'guests', description: 'guest reports on a 100k-order store, and /healthz while they run (inline vs worker)', run }
