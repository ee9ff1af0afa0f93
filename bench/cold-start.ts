/**
 * Cold start with a big history (issue 19 item 4): from spawning the server (`node dist/src/main.js`,
 * what `npm start` runs after its build) to
 * the "dispatch server ready" log line and to the first 200 of `GET /readyz`, the server's RSS and
 * CPU time at that moment, and again once the start has settled (after the prune catch-up, 5 s in).
 * The same measurements on an empty (freshly migrated) database are the baseline, in the same run.
 * Target: ready in < 1 s with the big history — nothing at start may scale with it.
 *
 * The big database is built once and cached under bench/results/.cache/ (git-ignored), in SQL
 * (`INSERT … SELECT` from recursive CTEs, one transaction, synchronous=OFF): 2,000 owners on a plan,
 * 10k stores (5 per owner), 100k customers, 20k drivers, 1M historical orders over two years (a
 * thousand of them still active) with 2 lines each, a delivery row for every third order, 2 outbox
 * events per order, 1,000 webhook endpoints, 100k finished deliveries inside the retention window
 * with one attempt each, and 2,000 pending deliveries on 200 endpoints (the queue a restart resumes).
 * Each run copies the cached file to a temp dir, so the server never writes into the cache; one untimed start
 * of each entry first brings that copy to the entry's own schema (newer migrations than the cache's are an
 * upgrade's one-time cost), and the timed starts open copies of it. The empty database is made the same way.
 *
 * Environment: BENCH_COLD_ORDERS (default 1000000), BENCH_COLD_RUNS (default 5), BENCH_COLD_ENTRY (default
 * dist/src/main.js, built first when stale; a .ts entry runs through tsx; several, comma-separated, are measured
 * alternately in the same run, e.g. `dist/src/main.js,src/main.ts,/elsewhere/src/main.ts` to compare the build
 * with the sources or with another checkout), BENCH_DB_DIR
 * (where the run's copies go), BENCH_CPU_PROF=<dir> (every start writes a V8 CPU profile, --cpu-prof, into
 * <dir>/big or <dir>/empty). `npm run bench -- cold-start`.
 */
import Database from 'better-sqlite3'
import { spawn } from 'node:child_process'
import { copyFileSync, existsSync, readFileSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { BenchRow, ScenarioOptions, ScenarioResult } from './lib/scenario.ts'
import { envInt } from './lib/env.ts'
import { cachedDb } from './lib/bench-db.ts'
import { quantile } from './lib/load.ts'
import { cpuSeconds, freePort, LOAD_TEST_LIMITS, withBenchDir } from './lib/proc.ts'
import { buildDist } from '../tools/build.mjs'
import { migrate } from '../src/storage/db.ts'
import { setAccountPlan, syncPlatformPlans } from '../src/storage/plans.ts'

const CACHE_VERSION = 2
const READY_TARGET_MS = 1000
const OWNERS = 2_000
const STORES = 10_000
const CUSTOMERS = 100_000
const DRIVERS = 20_000
const ENDPOINTS = 1_000
const FINISHED_DELIVERIES = 100_000
const PENDING_DELIVERIES = 2_000
/** How long after ready the start is "settled": past the prune catch-up (5 s after start). */
const SETTLE_MS = 6_000

interface Cached { orders: number; lines: number; outbox: number; bytes: number; buildSec: number }

/** `WITH RECURSIVE n(i) AS (…1..count)`: the row generator of every bulk insert below. */
const seq = (count: number) => `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ${count})`
/** An ISO time (nowIso's format) `expr` seconds after `base` (unix seconds). */
const iso = (base: number, expr: string) => `strftime('%Y-%m-%dT%H:%M:%S.000+00:00', ${base} + (${expr}), 'unixepoch')`

/** Build the history into `path` (a fresh file). Ids are dense from 1, so references are arithmetic. */
function build(path: string, orders: number, log: (s: string) => void): Cached {
  const t0 = performance.now()
  const db = new Database(path)
  db.pragma('journal_mode = WAL')
  db.pragma('foreign_keys = ON')
  migrate(db)
  syncPlatformPlans(db)
  // Bulk load: consistent by construction (ids are dense), no fsync, no per-row FK checks.
  db.pragma('synchronous = OFF')
  db.pragma('foreign_keys = OFF')
  db.pragma('cache_size = -262144') // 256 MB: index pages stay in memory while a million rows go in
  const now = Math.floor(Date.now() / 1000)
  const from = now - 730 * 86400 // two years of history
  const step = Math.floor((730 * 86400) / orders) // seconds between two orders
  const nowMs = Date.now()
  const timed = (what: string, sql: string) => {
    const t = performance.now()
    const changes = db.prepare(sql).run().changes
    log(`  ${what}: ${changes} rows in ${((performance.now() - t) / 1000).toFixed(1)} s`)
  }
  db.transaction(() => {
    timed('owners', `${seq(OWNERS)} INSERT INTO owners (id, name, email, created_at) SELECT i, 'Owner ' || i, 'owner' || i || '@bench.local', ${iso(from, 'i')} FROM n`)
    timed('stores', `${seq(STORES)} INSERT INTO stores (id, owner_id, title, slug, store_type, currency, city, settings, created_at)
      SELECT i, (i - 1) / 5 + 1, 'Store ' || i, 'bench-store-' || i, 'restaurant', 'EUR', 'City ' || (i % 50), '{}', ${iso(from, 'i')} FROM n`)
    timed('customers', `${seq(CUSTOMERS)} INSERT INTO customers (id, store_id, name, email, phone, created_at, updated_at)
      SELECT i, (i - 1) % ${STORES} + 1, 'Customer ' || i, 'c' || i || '@bench.local', '+4915' || (10000000 + i), ${iso(from, 'i * 60')}, ${iso(from, 'i * 60')} FROM n`)
    timed('drivers', `${seq(DRIVERS)} INSERT INTO drivers (id, owner_id, restaurant_id, name, phone, created_at)
      SELECT i, ((i - 1) % ${STORES}) / 5 + 1, (i - 1) % ${STORES} + 1, 'Driver ' || i, '+4916' || (10000000 + i), ${iso(from, 'i')} FROM n`)
    // The newest thousand orders are still under way; the rest are history.
    timed('orders', `${seq(orders)} INSERT INTO orders (id, store_id, type, status, delivery_status, is_paid, customer_id, customer_name, phone, address,
        source, subtotal, total, driver_id, track_token, timeline, created_at, updated_at)
      SELECT i, (i - 1) % ${STORES} + 1, CASE WHEN i % 3 = 0 THEN 'delivery' ELSE 'pickup' END,
        CASE WHEN i > ${orders - 1000} THEN 'preparing' WHEN i % 50 = 0 THEN 'cancelled' ELSE 'completed' END,
        CASE WHEN i % 3 <> 0 THEN NULL WHEN i > ${orders - 1000} THEN 'assigned' ELSE 'delivered' END,
        1, (i - 1) % ${CUSTOMERS} + 1, 'Customer', '+491500000000', CASE WHEN i % 3 = 0 THEN 'Main St ' || (i % 200) END,
        'api', 2400, 2400, CASE WHEN i % 3 = 0 THEN (i - 1) % ${DRIVERS} + 1 END,
        printf('%08x%024x', i * 2654435761 % 4294967296, i), '{}', ${iso(from, `i * ${step}`)}, ${iso(from, `i * ${step} + 1800`)} FROM n`)
    timed('order lines', `INSERT INTO order_lines (order_id, item_id, name, quantity, unit_price, line_total)
      SELECT o.id, k.v + o.store_id * 10, CASE k.v WHEN 1 THEN 'Pizza Margherita' ELSE 'Cola' END, 1, 1200, 1200
      FROM orders o CROSS JOIN (SELECT 1 AS v UNION ALL SELECT 2) k ORDER BY o.id, k.v`)
    timed('deliveries', `INSERT INTO deliveries (order_id, driver_fee, updated_at) SELECT id, 300, updated_at FROM orders WHERE type = 'delivery'`)
    timed('outbox', `INSERT INTO outbox (owner_id, store_id, event, data, created_at)
      SELECT (o.store_id - 1) / 5 + 1, o.store_id, CASE k.v WHEN 1 THEN 'order.created' ELSE 'order.status_changed' END,
        '{"order_id":' || o.id || ',"status":"' || o.status || '"}', o.created_at
      FROM orders o CROSS JOIN (SELECT 1 AS v UNION ALL SELECT 2) k ORDER BY o.id, k.v`)
    timed('webhook endpoints', `${seq(ENDPOINTS)} INSERT INTO webhook_endpoints (id, owner_id, url, events, secret, from_event_id, created_at)
      SELECT i, i, 'https://hooks.bench.invalid/' || i, '["*"]', 'whsec_benchbenchbenchbenchbenchbenchbench', 0, ${iso(from, 'i')} FROM n`)
    // Finished deliveries of the last days (younger than the 30-day retention), then the pending queue:
    // a tenth due now, the rest retries waiting an hour (the resume arms their timers).
    timed('finished deliveries', `${seq(FINISHED_DELIVERIES)} INSERT INTO webhook_deliveries (endpoint_id, msg_id, event_id, event, body, status, attempts,
        next_attempt_at, created_at, updated_at)
      SELECT (i - 1) % ${ENDPOINTS} + 1, printf('msg_%032x', i), ${2 * orders} - i, 'order.created', '{}', 'succeeded', 1, NULL,
        ${iso(now - 86400, '-i')}, ${iso(now - 86400, '-i')} FROM n`)
    timed('attempts', `INSERT INTO webhook_attempts (delivery_id, attempt, http_status, response_excerpt, duration_ms, created_at)
      SELECT id, 1, 200, '', 40, updated_at FROM webhook_deliveries`)
    timed('pending deliveries', `${seq(PENDING_DELIVERIES)} INSERT INTO webhook_deliveries (endpoint_id, msg_id, event_id, event, body, status, attempts,
        next_attempt_at, created_at, updated_at)
      SELECT (i - 1) % 200 + 1, printf('msg_p%031x', i), NULL, 'order.created', '{}', 'pending', 2,
        CASE WHEN i % 10 = 0 THEN ${nowMs} ELSE ${nowMs + 3600_000} END, ${iso(now, '-60')}, ${iso(now, '-60')} FROM n`)
  })()
  // Every owner on a plan (what billing looks at), through the same code as the product.
  db.transaction(() => {
    for (let id = 1; id <= OWNERS; id++) setAccountPlan(db, id, 'pro')
  })()
  log(`  plans: ${OWNERS} subscriptions`)
  // Everything so far was fanned out long ago (plan changes publish events too): the cursor is at the end.
  db.prepare('INSERT OR REPLACE INTO webhook_cursor (id, last_event_id) VALUES (1, (SELECT MAX(id) FROM outbox))').run()
  db.pragma('foreign_keys = ON')
  const bad = db.pragma('foreign_key_check') as unknown[]
  if (bad.length) throw new Error(`the bench history breaks ${bad.length} foreign keys`)
  db.exec('ANALYZE')
  db.pragma('wal_checkpoint(TRUNCATE)')
  const count = (t: string) => db.prepare(`SELECT COUNT(*) FROM ${t}`).pluck().get() as number
  const out = { orders: count('orders'), lines: count('order_lines'), outbox: count('outbox'), bytes: 0, buildSec: 0 }
  db.close()
  out.bytes = statSync(path).size
  out.buildSec = (performance.now() - t0) / 1000
  log(`  built in ${out.buildSec.toFixed(1)} s, ${(out.bytes / 1e6).toFixed(0)} MB`)
  return out
}

/** Copy a closed database with its WAL, if one was left. */
function copyDb(from: string, to: string): void {
  for (const f of [to, `${to}-wal`, `${to}-shm`]) rmSync(f, { force: true })
  copyFileSync(from, to)
  if (existsSync(`${from}-wal`)) copyFileSync(`${from}-wal`, `${to}-wal`)
}

function rssMb(pid: number): number | null {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))
    return m ? Number(m[1]) / 1024 : null
  } catch {
    return null
  }
}

interface Start { listeningMs: number; readyMs: number; cpuAtReadyMs: number | null; rssAtReadyMb: number | null; cpuSettledMs: number | null; rssSettledMb: number | null }

/**
 * One cold start on `dbPath`: spawn, watch stdout for the ready line, poll /readyz every 5 ms
 * (a poll costs the server a few µs; a coarser poll would add its period to the measurement).
 */
async function coldStart(entry: string, dbPath: string, prof: string | null, settle = true): Promise<Start> {
  const port = await freePort()
  const args = [...(prof ? ['--cpu-prof', `--cpu-prof-dir=${prof}`] : []), ...(entry.endsWith('.ts') ? ['--import', 'tsx'] : []), entry]
  const t0 = performance.now()
  const proc = spawn(process.execPath, args, {
    env: {
      ...process.env, ...LOAD_TEST_LIMITS, DB_PATH: dbPath, PORT: String(port), HOST: '127.0.0.1', SITE_URL: `http://127.0.0.1:${port}`,
      LOG_LEVEL: 'info', DEMO_SEED: '0',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let out = ''
  let listeningMs = -1
  proc.stdout.on('data', (c: Buffer) => {
    out += c.toString()
    if (listeningMs < 0 && out.includes('"dispatch server ready"')) listeningMs = performance.now() - t0
    if (out.length > 100_000) out = out.slice(-50_000)
  })
  proc.stderr.on('data', (c: Buffer) => { out += c.toString() })
  let exited: number | null = null
  const exit = new Promise<void>((resolve) => proc.once('exit', (code) => { exited = code ?? -1; resolve() }))
  try {
    let readyMs = -1
    while (readyMs < 0) {
      if (exited !== null) throw new Error(`server exited with ${exited} before it was ready:\n${out.slice(-3000)}`)
      if (performance.now() - t0 > 60_000) throw new Error(`server not ready after 60 s:\n${out.slice(-3000)}`)
      try {
        const r = await fetch(`http://127.0.0.1:${port}/readyz`)
        await r.arrayBuffer()
        if (r.status === 200) readyMs = performance.now() - t0
      } catch { /* not listening yet */ }
      if (readyMs < 0) await new Promise((r) => setTimeout(r, 5))
    }
    const cpuAtReady = cpuSeconds(proc.pid)
    const rssAtReady = rssMb(proc.pid!)
    if (settle) await new Promise((r) => setTimeout(r, SETTLE_MS))
    const cpuSettled = cpuSeconds(proc.pid)
    const rssSettled = rssMb(proc.pid!)
    // The ready line comes after listen(): it is in the pipe by now.
    return {
      listeningMs, readyMs,
      cpuAtReadyMs: cpuAtReady === null ? null : cpuAtReady * 1000, rssAtReadyMb: rssAtReady,
      cpuSettledMs: cpuSettled === null ? null : cpuSettled * 1000, rssSettledMb: rssSettled,
    }
  } finally {
    if (exited === null) {
      proc.kill('SIGTERM')
      const t = setTimeout(() => proc.kill('SIGKILL'), 15_000)
      await exit
      clearTimeout(t)
    }
  }
}

const med = (xs: number[]): number => quantile(Float64Array.from(xs).sort(), 0.5)
const medOrNull = (xs: Array<number | null>): number | null => (xs.some((x) => x === null) ? null : med(xs as number[]))

function row(name: string, starts: Start[]): BenchRow {
  const ready = Float64Array.from(starts.map((s) => s.readyMs)).sort()
  const cpu = medOrNull(starts.map((s) => s.cpuAtReadyMs))
  return {
    scenario: name, load: `${starts.length} cold starts`, durationSec: ready.reduce((a, b) => a + b, 0) / 1000, requests: starts.length,
    throughput: 60_000 / quantile(ready, 0.5), // starts per minute at the median, so the table's integer column says something
    p50Ms: quantile(ready, 0.5), p90Ms: quantile(ready, 0.9), p99Ms: quantile(ready, 0.99), maxMs: ready[ready.length - 1]!, non2xx: 0, errors: 0, ratio: null,
    serverCpuUsPerReq: cpu === null ? null : cpu * 1000, serverCpuPct: null,
    extra: {
      readyMs: starts.map((s) => Math.round(s.readyMs)),
      listeningMs: starts.map((s) => Math.round(s.listeningMs)),
      medianListeningMs: med(starts.map((s) => s.listeningMs)),
      medianRssAtReadyMb: medOrNull(starts.map((s) => s.rssAtReadyMb)),
      medianRssSettledMb: medOrNull(starts.map((s) => s.rssSettledMb)),
      medianCpuAtReadyMs: cpu,
      medianCpuSettledMs: medOrNull(starts.map((s) => s.cpuSettledMs)),
    },
  }
}

const DEFAULT_ENTRY = 'dist/src/main.js'

async function run(opts: ScenarioOptions): Promise<ScenarioResult> {
  const orders = envInt('BENCH_COLD_ORDERS', 1_000_000)
  const runs = envInt('BENCH_COLD_RUNS', 5)
  const entries = (process.env.BENCH_COLD_ENTRY ?? DEFAULT_ENTRY).split(',').map((e) => e.trim()).filter(Boolean)
  // What `npm start` does before it runs the server (the build is not part of the measured start).
  if (entries.includes(DEFAULT_ENTRY) && await buildDist({ ifStale: true, quiet: true })) opts.log('built dist/ (npm run build)')
  const { db: cacheDb, meta } = cachedDb(`cold-start-${orders}-v${CACHE_VERSION}`, `the ${orders}-order history`, (path) => build(path, orders, opts.log), opts.log)
  return withBenchDir(process.env.BENCH_DB_DIR ?? tmpdir(), 'cold-start-', async (dir) => {
    // Profiled, both rows are (the profiler slows a start down); big and empty profiles go to their own folders.
    const prof = process.env.BENCH_CPU_PROF ?? null
    const profOf = (which: string, e: number) => (prof ? join(prof, entries.length > 1 ? `${which}-${e}` : which) : null)
    const big: Start[][] = entries.map(() => [])
    const empty: Start[][] = entries.map(() => [])
    // Alternating (big, empty; entry after entry), so all see the same machine load; a fresh copy each time
    // (the page cache stays warm, as after a restart of a running machine; a reboot's cold disk is not measured).
    // Each entry's own schema first, in one untimed start per database: the cached history predates newer
    // migrations (an index rebuilt over a million orders takes seconds), and that is an upgrade's one-time
    // cost, not a restart's. Every timed start then opens a copy that is at its code's schema, as after a
    // restart of a running server. The empty database is created by the entry itself the same way.
    const bigMaster: string[] = []
    const emptyMaster: string[] = []
    for (const [e, entry] of entries.entries()) {
      bigMaster[e] = join(dir, `big-master-${e}.db`)
      copyDb(cacheDb, bigMaster[e]!)
      const up = await coldStart(entry, bigMaster[e]!, null, false)
      opts.log(`schema of ${entry} on the history (untimed upgrade start): ready in ${up.readyMs.toFixed(0)} ms`)
      emptyMaster[e] = join(dir, `empty-master-${e}.db`)
      await coldStart(entry, emptyMaster[e]!, null, false)
    }
    for (let i = 0; i < runs; i++) {
      for (const [e, entry] of entries.entries()) {
        const bigPath = join(dir, `big-${i}.db`)
        copyDb(bigMaster[e]!, bigPath)
        opts.log(`cold start ${i + 1}/${runs} (${entry}): ${orders} orders…`)
        const b = await coldStart(entry, bigPath, profOf('big', e))
        big[e]!.push(b)
        opts.log(`  ready in ${b.readyMs.toFixed(0)} ms (listening line ${b.listeningMs.toFixed(0)} ms)`)
        for (const f of [bigPath, `${bigPath}-wal`, `${bigPath}-shm`]) rmSync(f, { force: true })
        const emptyPath = join(dir, `empty-${i}-${e}.db`)
        copyDb(emptyMaster[e]!, emptyPath)
        opts.log(`cold start ${i + 1}/${runs} (${entry}): empty database…`)
        const m = await coldStart(entry, emptyPath, profOf('empty', e))
        empty[e]!.push(m)
        opts.log(`  ready in ${m.readyMs.toFixed(0)} ms`)
      }
    }
    const label = (e: number) => (entries.length > 1 ? `${entries[e]}: ` : '')
    const pairs = entries.map((_, e) => {
      const bigRow = row(`${label(e)}${(orders / 1e6).toFixed(orders % 1e6 ? 2 : 0)}M orders history`, big[e]!)
      const emptyRow = row(`${label(e)}empty database (baseline)`, empty[e]!)
      bigRow.ratio = bigRow.p50Ms / emptyRow.p50Ms
      return { bigRow, emptyRow }
    })
    // The target and the notes are of the build `npm start` runs when it was measured, else of the last entry
    // (a comparison lists the one before first).
    const judged = entries.includes(DEFAULT_ENTRY) ? entries.indexOf(DEFAULT_ENTRY) : entries.length - 1
    const { bigRow, emptyRow } = pairs[judged]!
    const p50 = bigRow.p50Ms
    const x = (r: BenchRow) => r.extra as { medianListeningMs: number; medianRssAtReadyMb: number | null; medianRssSettledMb: number | null; medianCpuSettledMs: number | null }
    return {
      name: 'cold-start',
      rows: pairs.flatMap((p) => [p.bigRow, p.emptyRow]),
      labels: { throughput: 'starts/min', perReq: 'srv CPU µs to ready' },
      notes: [
        `history: ${meta.orders} orders, ${meta.lines} order lines, ${meta.outbox} outbox events, ${STORES} stores, ${CUSTOMERS} customers, ${DRIVERS} drivers, `
          + `${ENDPOINTS} webhook endpoints, ${FINISHED_DELIVERIES} finished + ${PENDING_DELIVERIES} pending deliveries; ${(meta.bytes / 1e6).toFixed(0)} MB (built in ${meta.buildSec.toFixed(0)} s, cached)`,
        'latency columns: spawn → first 200 of GET /readyz (polled every 5 ms), over the runs; ratio = big / empty median',
        `listening log line ("dispatch server ready"), median: big ${x(bigRow).medianListeningMs.toFixed(0)} ms, empty ${x(emptyRow).medianListeningMs.toFixed(0)} ms`,
        `server RSS at ready / settled (${SETTLE_MS / 1000} s later): big ${x(bigRow).medianRssAtReadyMb?.toFixed(0)} / ${x(bigRow).medianRssSettledMb?.toFixed(0)} MB, `
          + `empty ${x(emptyRow).medianRssAtReadyMb?.toFixed(0)} / ${x(emptyRow).medianRssSettledMb?.toFixed(0)} MB`,
        `server CPU until settled: big ${x(bigRow).medianCpuSettledMs?.toFixed(0)} ms, empty ${x(emptyRow).medianCpuSettledMs?.toFixed(0)} ms (what start-up work after ready costs)`,
        `entr${entries.length > 1 ? 'ies' : 'y'}: ${entries.map((e) => (e.endsWith('.ts') ? `${e} (through tsx: TypeScript compiled at every start)` : `${e} (plain node)`)).join(', ')}; `
          + `the database file is a fresh copy each run, read through a warm page cache; notes above are of ${entries[judged]}`,
      ],
      targets: [{ target: `ready in < ${READY_TARGET_MS} ms with ${orders} orders`, measured: `${p50.toFixed(0)} ms (empty: ${emptyRow.p50Ms.toFixed(0)} ms)`, met: p50 < READY_TARGET_MS }],
      loadGenerator: 'the bench process spawns the server entry and polls /readyz; no load',
    }
  })
}

export const scenario = { name: 'cold-start', description: 'spawn to /readyz with 1M orders of history, against an empty database', run }
