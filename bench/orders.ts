/**
 * Order creation over HTTP (issue 2 item 11): POST /api/v1/restaurants/{id}/orders against the
 * real server in its own process (`node dist/src/main.js`, as `npm start`), group commit on and off, and a
 * conventional baseline (bench/baseline/fastify-orders.ts) in the same run.
 *
 * Each variant gets a fresh SQLite file, a demo account seeded through the CLI, a warm-up, a
 * closed-loop max-throughput run and a fixed-rate latency run. After every run the orders table is
 * checked: every 200 the load generator saw must name a row that exists.
 *
 * The load generator is bench/lib/raw-load.ts (plain node:net, keep-alive, closed loop without
 * pipelining; 15–25 µs of CPU per request at 7–10k/s, autocannon 32–51 µs), in this process, for every variant:
 * it shares the two cores with the server, so a costly generator would cap the server it measures.
 * BENCH_LOADGEN=autocannon runs autocannon instead, as a cross-check.
 *
 * BENCH_ORDERS_COMPARE=<dir> adds the group-commit server of another checkout (e.g. the code before a
 * change) as the `compare` variant. bench/orders-ab.ts alternates short rounds of two checkouts
 * instead, for a before/after of server CPU per order (user and system) on a busy machine.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import Database from 'better-sqlite3'
import type { Request } from 'autocannon'
import type { BenchRow, Scenario, ScenarioOptions, ScenarioResult } from './lib/scenario.ts'
import { appArgs, cpuSeconds, freePort, runNode, startServer, type Server, LOAD_TEST_LIMITS } from './lib/proc.ts'
import type { LoadResult } from './lib/load.ts'
import { loadGenerator, runBenchLoad, type RawRequest } from './lib/raw-load.ts'
import { rng } from './lib/rng.ts'
import { countOrders, missingRows, orderIdOf, tmpfsWarning } from './lib/order-check.ts'

const ROOT = fileURLToPath(new URL('..', import.meta.url))

export interface Variant {
  key: string
  label: string
  /** 'app': the server as npm start runs it (appArgs); otherwise node arguments. */
  args: 'app' | string[]
  env: Record<string, string>
  /** The tree the server (and its seed) runs from; ROOT unless this is the compare variant. */
  cwd?: string
  /** What the server needs running beside it (bench/cluster.ts: NATS), and more environment for it. */
  around?: () => Promise<{ env: Record<string, string>; stop(): Promise<void> }>
  /** The address that answers 200 once the server serves (default /healthz). */
  readyPath?: string
  /** The server creates the demo account itself on its first start (a cluster starts from an empty database). */
  seedByServer?: boolean
}

/**
 * BENCH_ORDERS_COMPARE=<dir>: also run the group-commit server from another checkout (e.g. an
 * untouched copy of the starting commit), seeded by its own CLI, for a same-run before/after.
 */
const COMPARE = process.env.BENCH_ORDERS_COMPARE

const VARIANTS: Variant[] = [
  { key: 'gc-on', label: 'uws+actors, group commit', args: 'app', env: { GROUP_COMMIT: '1' } },
  { key: 'gc-off', label: 'uws+actors, 1 tx/write', args: 'app', env: { GROUP_COMMIT: '0' } },
  { key: 'baseline', label: 'fastify baseline, 1 tx/req', args: ['--import', 'tsx', 'bench/baseline/fastify-orders.ts'], env: {} },
  ...(COMPARE ? [{ key: 'compare' as const, label: `compare (${COMPARE}), group commit`, args: 'app' as const, env: { GROUP_COMMIT: '1' }, cwd: COMPARE }] : []),
]

interface Demo { owner: { id: number; token: string }; store: { id: number } }

interface MenuItem { id: number; variants: number[]; extras: number[] }

/** The store's orderable items with their variation and extra ids, straight from the seeded file. */
export function readMenu(dbPath: string, storeId: number): MenuItem[] {
  const db = new Database(dbPath, { readonly: true })
  try {
    const items = db.prepare('SELECT id FROM menu_items WHERE store_id = ? AND is_sold_out = 0 ORDER BY id').pluck().all(storeId) as number[]
    const variants = db.prepare('SELECT id FROM item_variants WHERE item_id = ? ORDER BY position, id').pluck()
    const extras = db.prepare('SELECT id FROM item_extras WHERE item_id = ? ORDER BY position, id').pluck()
    return items.map((id) => ({ id, variants: variants.all(id) as number[], extras: extras.all(id) as number[] }))
  } finally {
    db.close()
  }
}

/**
 * Realistic create-order bodies: 2–3 lines, at least one with a variation and extras, a mix of
 * takeaway, on-table and delivery, names, notes and tips.
 */
export function orderBodies(menu: MenuItem[], count = 64): string[] {
  const rand = rng(42)
  const pick = <T>(xs: T[]): T => xs[Math.floor(rand() * xs.length)]!
  const rich = menu.filter((i) => i.variants.length > 0 && i.extras.length > 0)
  if (rich.length === 0) throw new Error('the seeded menu has no item with both variations and extras')
  const line = (item: MenuItem, forceRich = false) => {
    const l: Record<string, unknown> = { item_id: item.id, quantity: 1 + Math.floor(rand() * 3) }
    if (item.variants.length && (forceRich || rand() < 0.7)) l.variation = pick(item.variants)
    if (item.extras.length && (forceRich || rand() < 0.5)) {
      const n = forceRich ? 1 + Math.floor(rand() * Math.min(2, item.extras.length)) : 1
      l.extras = [...item.extras].sort(() => rand() - 0.5).slice(0, n)
    }
    if (rand() < 0.2) l.note = pick(['no onions', 'well done', 'extra napkins', 'cut in slices'])
    return l
  }
  const bodies: string[] = []
  for (let i = 0; i < count; i++) {
    const type = pick(['takeaway', 'takeaway', 'on-table', 'delivery'])
    const items = [line(pick(rich), true)]
    const more = 1 + Math.floor(rand() * 2)
    for (let j = 0; j < more; j++) items.push(line(pick(menu)))
    const body: Record<string, unknown> = {
      type,
      customer_name: pick(['Ada Lovelace', 'Grace Hopper', 'Alan Turing', 'Edsger Dijkstra', 'Barbara Liskov']),
      phone: `+1555${String(1_000_000 + Math.floor(rand() * 8_999_999))}`,
      source: pick(['pos', 'web', 'phone']),
      items,
    }
    if (type === 'on-table') body.table_number = String(1 + Math.floor(rand() * 30))
    if (type === 'delivery') body.address = `${1 + Math.floor(rand() * 200)} Evergreen Terrace, Springfield`
    if (rand() < 0.5) body.tip_amount = pick([0.5, 1, 1.5, 2, 3.25])
    if (rand() < 0.3) body.note = 'Please ring the bell'
    bodies.push(JSON.stringify(body))
  }
  return bodies
}

/** Order ids seen in 200 bodies (they start `{"id":N,`), kept to check them against the database. */
export class SeenIds {
  ids: number[] = []
  record = (status: number, body: string) => {
    if (status === 200) this.ids.push(orderIdOf(body))
  }
  /** The same for bench/lib/raw-load.ts, which reads the id straight from the response bytes. */
  recordId = (status: number, id: number) => {
    if (status === 200) this.ids.push(id)
  }
}

export interface Measured { load: LoadResult; cpuSec: number | null; check: { rowsAdded: number; answered: number; missing: number; inFlightAtStop: number } }

/** The demo account a server printed on its first start (its JSON follows this line). */
export async function demoPrintedBy(server: Server): Promise<Demo> {
  // The first primary of a cluster prints it once the stream holds it: give a busy machine time.
  for (let i = 0; i < 600; i++) {
    const m = /Demo account created \(shown once, keep it\):\n(\{[\s\S]*?\n\})\n/.exec(server.output())
    if (m) return JSON.parse(m[1]!) as Demo
    await new Promise((r) => setTimeout(r, 100))
  }
  throw new Error('the server printed no demo account')
}

/** Requests cut off when a run stops may still commit: let them land before counting rows. */
const settle = () => new Promise((r) => setTimeout(r, 300))

async function measured(server: Server, dbPath: string, run: (ids: SeenIds) => Promise<LoadResult>, connections: number): Promise<Measured> {
  await settle()
  const before = countOrders(dbPath)
  const cpu0 = cpuSeconds(server.proc.pid)
  const seen = new SeenIds()
  const load = await run(seen)
  const cpu1 = cpuSeconds(server.proc.pid)
  await settle()
  const rowsAdded = countOrders(dbPath) - before
  const missing = missingRows(dbPath, seen.ids)
  const answered = seen.ids.length
  if (missing > 0) throw new Error(`${missing} of ${answered} orders answered 200 have no row in the database`)
  if (rowsAdded < answered || rowsAdded - answered > connections) {
    throw new Error(`row count mismatch: ${rowsAdded} rows added for ${answered} responses 200 (${connections} connections may be cut off in flight)`)
  }
  return { load, cpuSec: cpu0 === null || cpu1 === null ? null : cpu1 - cpu0, check: { rowsAdded, answered, missing, inFlightAtStop: rowsAdded - answered } }
}

export function row(scenario: string, loadDesc: string, m: Measured): BenchRow {
  const l = m.load
  const throughput = l.ok2xx / l.durationSec
  return {
    scenario,
    load: loadDesc,
    durationSec: Math.round(l.durationSec * 100) / 100,
    requests: l.ok2xx + l.non2xx,
    throughput,
    p50Ms: l.p50,
    p90Ms: l.p90,
    p99Ms: l.p99,
    maxMs: l.max,
    non2xx: l.non2xx,
    errors: l.errors + l.timeouts,
    ratio: null,
    serverCpuPct: m.cpuSec === null ? null : (m.cpuSec / l.durationSec) * 100,
    serverCpuUsPerReq: m.cpuSec === null || l.ok2xx === 0 ? null : (m.cpuSec / l.ok2xx) * 1e6,
    extra: {
      statuses: l.statuses, meanMs: l.mean, rowCheck: m.check, loadGenerator: loadGenerator(),
      generatorCpuUsPerReq: l.generatorCpuSec === undefined || l.ok2xx + l.non2xx === 0 ? null : (l.generatorCpuSec / (l.ok2xx + l.non2xx)) * 1e6,
    },
  }
}

/** A variant's server, started on a fresh seeded file and ready for load (see `openVariant`). */
export interface OpenVariant {
  v: Variant
  server: Server
  dbPath: string
  requests: (seen?: SeenIds) => (Request & RawRequest)[]
  close(): Promise<void>
}

/** Start a variant's server on a fresh database with the demo account, as `runVariant` measures it. */
export async function openVariant(v: Variant, dbDir: string): Promise<OpenVariant> {
  const dir = mkdtempSync(join(dbDir, `dispatch-bench-${v.key}-`))
  const dbPath = join(dir, 'bench.db')
  let server: Server | null = null
  const cwd = v.cwd ?? ROOT
  const beside = v.around ? await v.around() : null
  const close = async () => {
    await server?.stop()
    await beside?.stop()
    rmSync(dir, { recursive: true, force: true })
  }
  try {
    const seeded = v.seedByServer ? null : JSON.parse((await runNode(['bin/dispatch.js', 'seed', '--demo', '--json'], { DB_PATH: dbPath, LOG_LEVEL: 'warn' }, cwd)).trim().split('\n').pop()!) as Demo
    const port = await freePort()
    server = await startServer(v.args === 'app' ? appArgs(cwd) : v.args, {
      DB_PATH: dbPath, PORT: String(port), HOST: '127.0.0.1', SITE_URL: `http://127.0.0.1:${port}`, LOG_LEVEL: 'warn',
      ...LOAD_TEST_LIMITS, DEMO_SEED: v.seedByServer ? '1' : '0', ...v.env, ...beside?.env,
    }, port, v.readyPath ?? '/healthz', cwd)
    const demo = seeded ?? await demoPrintedBy(server)
    const bodies = orderBodies(readMenu(dbPath, demo.store.id))
    const requests = (seen?: SeenIds): (Request & RawRequest)[] => bodies.map((body) => ({
      method: 'POST',
      path: `/api/v1/restaurants/${demo.store.id}/orders`,
      headers: { authorization: `Bearer ${demo.owner.token}`, 'content-type': 'application/json' },
      body,
      ...(seen ? { onResponse: seen.record, onId: seen.recordId } : {}),
    }))
    return { v, server, dbPath, requests, close }
  } catch (err) {
    if (server) (err as Error).message += `\n--- server output ---\n${(server as Server).output()}`
    await close()
    throw err
  }
}

/** A closed-loop max-throughput run of `seconds`, its answers checked against the file. */
export function measureMax(o: OpenVariant, connections: number, seconds: number): Promise<Measured> {
  return measured(o.server, o.dbPath, (seen) => runBenchLoad({ url: o.server.url, requests: o.requests(seen), connections, durationSec: seconds }), connections)
}

/** An open-loop run at `rate` requests/s for `seconds`, its answers checked against the file. */
export function measureRate(o: OpenVariant, connections: number, rate: number, seconds: number): Promise<Measured> {
  const conns = Math.min(connections, rate)
  return measured(o.server, o.dbPath, (seen) => runBenchLoad({ url: o.server.url, requests: o.requests(seen), connections: conns, durationSec: seconds, rate }), conns)
}

export async function runVariant(v: Variant, opts: ScenarioOptions, dbDir: string): Promise<BenchRow[]> {
  const o = await openVariant(v, dbDir)
  try {
    const url = o.server.url
    opts.log(`[orders] ${v.label}: warm-up ${opts.warmup} s`)
    await runBenchLoad({ url, requests: o.requests(), connections: opts.connections, durationSec: opts.warmup })

    opts.log(`[orders] ${v.label}: max throughput, ${opts.connections} connections, ${opts.duration} s`)
    const max = await measureMax(o, opts.connections, opts.duration)

    const perReq = (sec: number | undefined, l: LoadResult) => (sec === undefined ? '?' : ((sec / Math.max(1, l.ok2xx + l.non2xx)) * 1e6).toFixed(1))
    const gen = (l: LoadResult) => `${loadGenerator()} generator ${perReq(l.generatorCpuSec, l)} µs CPU/request (system ${perReq(l.generatorSysSec, l)})`
    opts.log(`[orders] ${v.label}: ${Math.round(max.load.ok2xx / max.load.durationSec)}/s, ${gen(max.load)}`)

    const rateConns = Math.min(opts.connections, opts.rate)
    opts.log(`[orders] ${v.label}: ${opts.rate} req/s offered, ${rateConns} connections, ${opts.rateDuration} s`)
    const fixed = await measureRate(o, opts.connections, opts.rate, opts.rateDuration)

    opts.log(`[orders] ${v.label} @${opts.rate}/s: ${Math.round(fixed.load.ok2xx / fixed.load.durationSec)}/s, p99 ${fixed.load.p99.toFixed(2)} ms, ${gen(fixed.load)}`)
    return [
      row(`${v.label} max`, `closed loop, ${opts.connections} conns`, max),
      row(`${v.label} @${opts.rate}/s`, `${opts.rate}/s offered, ${rateConns} conns`, fixed),
    ]
  } catch (err) {
    (err as Error).message += `\n--- server output ---\n${o.server.output()}`
    throw err
  } finally {
    await o.close()
  }
}

export const scenario: Scenario = {
  name: 'orders',
  description: 'POST /restaurants/{id}/orders: group commit on/off vs a Fastify one-transaction-per-request baseline',
  async run(opts: ScenarioOptions): Promise<ScenarioResult> {
    const dbDir = process.env.BENCH_DB_DIR ?? tmpdir()
    const raw = loadGenerator() === 'raw'
    const notes: string[] = [
      `the load generator (${raw ? 'bench/lib/raw-load.ts: plain node:net, keep-alive, no pipelining' : 'autocannon, pipelining 1'}) runs in the bench process on the same machine ` +
        'and shares its CPU cores with the server (its CPU per request is in each row\'s extra.generatorCpuUsPerReq); ' +
        'srv CPU % is the server process alone (100 = one core)',
      'every 200 follows an fsync of its write (1 tx/write and the baseline: synchronous=FULL inside COMMIT; group commit: an fdatasync of the WAL on the thread pool after each batch); fresh database file per variant; each 200 was checked to name a committed row',
      raw
        ? 'the @rate rows are open loop: evenly spaced arrivals, each latency counted from when its request was due (a request waiting for a free connection counts that wait)'
        : `autocannon's fixed rate (overallRate) is a per-second budget per connection, sent back to back at the start of each second: ` +
          'the @rate rows measure bursts, not evenly spaced arrivals',
    ]
    const tmpfs = tmpfsWarning(dbDir)
    if (tmpfs) notes.push(tmpfs)
    const rows: BenchRow[] = []
    const chosen = VARIANTS.filter((v) => opts.only.length === 0 || opts.only.some((o) => v.key.includes(o) || v.label.includes(o)))
    for (const v of chosen) rows.push(...(await runVariant(v, opts, dbDir)))

    const base = rows.find((r) => r.scenario.startsWith('fastify') && r.scenario.endsWith(' max'))
    const baseRate = rows.find((r) => r.scenario.startsWith('fastify') && !r.scenario.endsWith(' max'))
    for (const r of rows) {
      const b = r.scenario.endsWith(' max') ? base : baseRate
      r.ratio = b && b.throughput > 0 ? r.throughput / b.throughput : null
    }
    const gcMax = rows.find((r) => r.scenario === `${VARIANTS[0]!.label} max`)
    const gcRate = rows.find((r) => r.scenario === `${VARIANTS[0]!.label} @${opts.rate}/s`)
    const targets: NonNullable<ScenarioResult['targets']> = []
    if (gcMax) targets.push({ target: '15k durable orders/s (group commit, max)', measured: `${Math.round(gcMax.throughput)}/s`, met: gcMax.throughput >= 15_000 })
    if (gcRate) {
      targets.push({
        target: `p99 < 10 ms at ${opts.rate} orders/s (group commit)`,
        measured: `p99 ${gcRate.p99Ms.toFixed(2)} ms at ${Math.round(gcRate.throughput)}/s served`,
        met: gcRate.p99Ms < 10 && gcRate.throughput >= opts.rate * 0.95,
      })
    }
    if (gcMax && base) targets.push({ target: '>= 4x the baseline (max throughput)', measured: `${(gcMax.throughput / base.throughput).toFixed(2)}x`, met: gcMax.throughput >= 4 * base.throughput })
    return { name: 'orders', rows, notes, targets }
  },
}

export default scenario
