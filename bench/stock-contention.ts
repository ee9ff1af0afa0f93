/**
 * Stock contention (issue 18 item 2 and its closing note; docs/verticals.md "Stock and variants"):
 * durable owner orders (`POST /api/v1/restaurants/{id}/orders`) at saturation against the real
 * server in its own process (src/main.ts, group commit as configured by default), for ONE hot item
 * with a large tracked stock and, as the baseline in the same run and on the same server, an
 * untracked item (`stock` null). Every order of the hot item goes through the store actor's
 * allocation and a guarded decrement in the insert's transaction; the comparison shows what that
 * costs per order (orders/s, median, p99, server CPU µs per order).
 *
 * The measured phases send a fixed number of orders and wait for every answer (no request is cut
 * off in flight), so they reconcile exactly and the scenario FAILS when they do not:
 *  - hot item: stock before − stock after = orders answered 200 (nothing oversold, nothing lost),
 *    and every 200 names an order row that exists;
 *  - small stock (1,000 units, 3,000 orders offered at once): exactly 1,000 answered 200, every
 *    other one 422 `out_of_stock`, stock 0.
 *
 * The store, its owner token and the items are written into a fresh database before the server
 * starts (as bench/fitment-filter.ts does). Variants (`--only`): untracked, hot, small.
 *
 *   npm run bench -- stock [--duration S] [--warmup S] [--connections N] [--quick]
 *
 * The hot/untracked comparison runs in BENCH_STOCK_ROUNDS rounds (default 4) alternating which item
 * goes first, plus a sum over the rounds, since the machine's other load moves between phases.
 *
 * Environment: BENCH_DB_DIR (where the database goes; a disk, not tmpfs, for fsync to count),
 * BENCH_STOCK_ROUNDS.
 */
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import Database from 'better-sqlite3'
import type { Request } from 'autocannon'
import type { BenchRow, Scenario, ScenarioOptions, ScenarioResult } from './lib/scenario.ts'
import { cpuSeconds, startApp, withBenchDir, type Server } from './lib/proc.ts'
import { runLoad, type LoadResult } from './lib/load.ts'
import { envInt } from './lib/env.ts'
import { benchOwner } from './lib/bench-db.ts'
import { countOrders, missingRows, orderIdOf, tmpfsWarning } from './lib/order-check.ts'
import { migrate, nowIso } from '../src/storage/db.ts'

const ROOT = fileURLToPath(new URL('..', import.meta.url))
/** The hot item's stock: large enough that the measured phases never exhaust it. */
const HOT_STOCK = 50_000_000
/** The small-stock phase: this many units, hit by SMALL_OFFERED orders of one unit. */
const SMALL_STOCK = 1_000
const SMALL_OFFERED = 3_000

interface Fixture { storeId: number; token: string; untracked: number; hot: number; small: number }

/**
 * A fresh database with every migration, a pro owner with a token, a retail store and its three
 * items, plus `filler` more items (untracked, never ordered) for the size of a real catalogue.
 */
function prepare(dbPath: string, filler: number): Fixture {
  const db = new Database(dbPath)
  try {
    db.pragma('journal_mode = WAL')
    db.pragma('foreign_keys = ON')
    migrate(db)
    const now = nowIso()
    return db.transaction((): Fixture => {
      const { ownerId, token } = benchOwner(db, 'Bench shop', 'stock@bench.local', now)
      const storeId = Number(db.prepare(`INSERT INTO stores (owner_id, title, slug, template, store_type, currency, city, settings, created_at)
        VALUES (?, 'Bench Hardware', 'bench-hardware', 'classic', 'retail', 'EUR', 'Berlin', '{}', ?)`).run(ownerId, now).lastInsertRowid)
      const cat = Number(db.prepare("INSERT INTO menu_categories (store_id, name, position, created_at) VALUES (?, 'Bench', 0, ?)").run(storeId, now).lastInsertRowid)
      const item = db.prepare(`INSERT INTO menu_items (store_id, category_id, name, description, price, position, stock, sku, created_at, updated_at)
        VALUES (?, ?, ?, '', 500, ?, ?, ?, ?, ?)`)
      const add = (name: string, pos: number, stock: number | null) => Number(item.run(storeId, cat, name, pos, stock, `SKU-${pos}`, now, now).lastInsertRowid)
      for (let i = 0; i < filler; i++) add(`Catalogue item ${i}`, 3 + i, null)
      return { storeId, token, untracked: add('Untracked item', 0, null), hot: add('Hot item', 1, HOT_STOCK), small: add('Last units', 2, SMALL_STOCK) }
    })()
  } finally {
    db.close()
  }
}

/** What the database says about one item: its stock, units ordered and order rows. */
function itemState(dbPath: string, itemId: number): { stock: number | null; unitsOrdered: number; orders: number } {
  const db = new Database(dbPath, { readonly: true })
  try {
    return {
      stock: db.prepare('SELECT stock FROM menu_items WHERE id = ?').pluck().get(itemId) as number | null,
      unitsOrdered: db.prepare('SELECT COALESCE(SUM(quantity), 0) FROM order_lines WHERE item_id = ?').pluck().get(itemId) as number,
      orders: db.prepare('SELECT COUNT(*) FROM orders').pluck().get() as number,
    }
  } finally {
    db.close()
  }
}

/**
 * A run stopped by time cuts requests off in flight; the server still commits them. Wait until the
 * order count holds still (500 ms unchanged, 15 s at most) before the next phase takes its snapshot.
 */
async function settle(dbPath: string): Promise<void> {
  const deadline = Date.now() + 15_000
  let last = -1
  for (;;) {
    const now = countOrders(dbPath)
    if (now === last || Date.now() > deadline) return
    last = now
    await new Promise((r) => setTimeout(r, 500))
  }
}

/** Answers as the load generator saw them: order ids of the 200s, 422 `out_of_stock`s, anything else. */
export class Answers {
  ids: number[] = []
  outOfStock = 0
  other: Record<string, number> = {}
  record = (status: number, body: string) => {
    if (status === 200) this.ids.push(orderIdOf(body))
    else if (status === 422 && body.includes('"reason":"out_of_stock"')) this.outOfStock++
    else this.other[status] = (this.other[status] ?? 0) + 1
  }
}

export interface Phase { key: string; label: string; itemId: number; load: LoadResult; cpuSec: number | null; answers: Answers; before: ReturnType<typeof itemState>; after: ReturnType<typeof itemState> }

/** One item, one order body (one unit, delivery), `connections` closed-loop connections; `amount` orders or `seconds`. */
async function phase(server: Server, dbPath: string, fx: Fixture, key: string, label: string, itemId: number, connections: number, size: { amount: number } | { seconds: number }): Promise<Phase> {
  const answers = new Answers()
  const body = JSON.stringify({ type: 'delivery', customer_name: 'Bench', address: '1 Bench Street, Berlin', items: [{ item_id: itemId, quantity: 1 }] })
  const requests: Request[] = [{
    method: 'POST',
    path: `/api/v1/restaurants/${fx.storeId}/orders`,
    headers: { authorization: `Bearer ${fx.token}`, 'content-type': 'application/json' },
    body,
    onResponse: answers.record,
  }]
  const before = itemState(dbPath, itemId)
  const cpu0 = cpuSeconds(server.proc.pid)
  const load = await runLoad({
    url: server.url, requests, connections: 'amount' in size ? Math.min(connections, size.amount) : connections,
    durationSec: 'seconds' in size ? size.seconds : 0, ...('amount' in size ? { amount: size.amount } : {}),
  })
  const cpu1 = cpuSeconds(server.proc.pid)
  return { key, label, itemId, load, cpuSec: cpu0 === null || cpu1 === null ? null : cpu1 - cpu0, answers, before, after: itemState(dbPath, itemId) }
}

/**
 * The reconciliation of a measured phase (every order was answered): each 200 names a row (`missing`
 * of them do not), the rows added are exactly the 200s, and a tracked item's stock fell by exactly
 * the units answered 200. Returns the problems found (empty: consistent). Pure, unit-tested.
 */
export function reconcile(p: Pick<Phase, 'load' | 'answers' | 'before' | 'after'>, missing: number, tracked: boolean): string[] {
  const ok = p.answers.ids.length
  const problems: string[] = []
  if (p.load.errors || p.load.timeouts) problems.push(`${p.load.errors} connection errors and ${p.load.timeouts} timeouts: not every order was answered`)
  if (ok !== p.load.ok2xx) problems.push(`${p.load.ok2xx} 2xx counted but ${ok} bodies were 200`)
  if (missing) problems.push(`${missing} of ${ok} orders answered 200 have no row`)
  if (p.after.orders - p.before.orders !== ok) problems.push(`${p.after.orders - p.before.orders} order rows added for ${ok} answers 200`)
  if (p.after.unitsOrdered - p.before.unitsOrdered !== ok) problems.push(`${p.after.unitsOrdered - p.before.unitsOrdered} units on order lines for ${ok} answers 200`)
  if (tracked) {
    const taken = (p.before.stock ?? NaN) - (p.after.stock ?? NaN)
    if (taken !== ok) problems.push(`stock ${p.before.stock} → ${p.after.stock} (${taken} taken) but ${ok} orders were answered 200`)
    if ((p.after.stock ?? -1) < 0) problems.push(`stock below zero: ${p.after.stock}`)
  } else if (p.after.stock !== null) problems.push(`the untracked item now has stock ${p.after.stock}`)
  return problems
}

function row(p: Phase, load: string): BenchRow {
  const l = p.load
  return {
    scenario: p.label,
    load,
    durationSec: Math.round(l.durationSec * 100) / 100,
    requests: l.ok2xx + l.non2xx,
    throughput: l.ok2xx / l.durationSec,
    p50Ms: l.p50,
    p90Ms: l.p90,
    p99Ms: l.p99,
    maxMs: l.max,
    non2xx: l.non2xx,
    errors: l.errors + l.timeouts,
    ratio: null,
    serverCpuPct: p.cpuSec === null ? null : (p.cpuSec / l.durationSec) * 100,
    serverCpuUsPerReq: p.cpuSec === null || l.ok2xx === 0 ? null : (p.cpuSec / l.ok2xx) * 1e6,
    extra: {
      itemId: p.itemId, statuses: l.statuses, meanMs: l.mean, outOfStock: p.answers.outOfStock, otherRefusals: p.answers.other,
      stockBefore: p.before.stock, stockAfter: p.after.stock, ordersAdded: p.after.orders - p.before.orders,
    },
  }
}

const n = (x: number | null) => (x === null ? 'null' : x.toLocaleString('en-US'))

async function run(opts: ScenarioOptions): Promise<ScenarioResult> {
  const dbDir = process.env.BENCH_DB_DIR ?? tmpdir()
  const want = (key: string) => opts.only.length === 0 || opts.only.some((o) => key.includes(o))
  return withBenchDir(dbDir, 'stock-bench-', async (dir, track) => {
    const dbPath = join(dir, 'bench.db')
    const filler = process.env.BENCH_STOCK_CATALOGUE === undefined ? 0 : envInt('BENCH_STOCK_CATALOGUE', 1)
    const fx = prepare(dbPath, filler)
    const server = track(await startApp(dbPath, ROOT))
    const conns = opts.connections
    const log = (s: string) => opts.log(`[stock] ${s}`)

    // Warm-up on both items (the hot one's stock is measured per phase, so what this takes does not
    // matter); its rate sizes the measured phases so that each item gets about --duration seconds in all.
    log(`warm-up ${opts.warmup} s per item, ${conns} connections`)
    const warm = [
      await phase(server, dbPath, fx, 'warm', 'warm-up', fx.untracked, conns, { seconds: opts.warmup }),
      await phase(server, dbPath, fx, 'warm', 'warm-up', fx.hot, conns, { seconds: opts.warmup }),
    ]
    await settle(dbPath)
    const rounds = envInt('BENCH_STOCK_ROUNDS', 4)
    // The warm-up is slowed by compilation and by whatever else the machine runs: at least 1,000/s.
    const rate = Math.max(1000, ...warm.map((w) => w.load.ok2xx / w.load.durationSec))
    const amount = Math.max(conns * 20, Math.round((rate * opts.duration) / rounds))

    const rows: BenchRow[] = []
    const failures: string[] = []
    const targets: NonNullable<ScenarioResult['targets']> = []
    const load = `closed loop, ${conns} conns, ${n(amount)} orders`
    const measured: Record<'untracked' | 'hot', Phase[]> = { untracked: [], hot: [] }
    const ratios: number[] = []
    // Rounds alternate the order (U H, H U, …): on a shared machine the load from elsewhere moves
    // from phase to phase, and the server still warms up; with an even number of rounds a steady
    // drift falls on both items alike, and summing the rounds keeps a burst from deciding alone.
    for (let r = 1; r <= rounds; r++) {
      const order = (r % 2 ? ['untracked', 'hot'] : ['hot', 'untracked']) as Array<'untracked' | 'hot'>
      const inRound: Partial<Record<'untracked' | 'hot', BenchRow>> = {}
      for (const key of order.filter(want)) {
        const tracked = key === 'hot'
        const label = `${tracked ? 'hot item (tracked stock)' : 'untracked item (stock null)'} #${r}`
        log(`${label}: ${n(amount)} orders, ${conns} connections`)
        const p = await phase(server, dbPath, fx, key, label, tracked ? fx.hot : fx.untracked, conns, { amount })
        failures.push(...reconcile(p, missingRows(dbPath, p.answers.ids), tracked).map((x) => `${label}: ${x}`))
        measured[key].push(p)
        inRound[key] = row(p, load)
      }
      const { untracked: u, hot: h } = inRound
      if (u && h && u.throughput > 0) {
        h.ratio = h.throughput / u.throughput
        ratios.push(h.ratio)
      }
      rows.push(...order.flatMap((k) => (inRound[k] ? [inRound[k]] : [])))
    }
    const totals = (key: 'untracked' | 'hot'): BenchRow | null => {
      const ps = measured[key]
      if (ps.length === 0) return null
      const ok = ps.reduce((a, p) => a + p.load.ok2xx, 0)
      const sec = ps.reduce((a, p) => a + p.load.durationSec, 0)
      const cpu = ps.some((p) => p.cpuSec === null) ? null : ps.reduce((a, p) => a + p.cpuSec!, 0)
      const nan = Number.NaN // percentiles do not add up across runs: see the rows above
      return {
        scenario: `${key === 'hot' ? 'hot item' : 'untracked item'}, all ${ps.length} rounds`, load: `${n(ok)} orders`, durationSec: sec, requests: ok,
        throughput: ok / sec, p50Ms: nan, p90Ms: nan, p99Ms: nan, maxMs: nan, non2xx: ps.reduce((a, p) => a + p.load.non2xx, 0),
        errors: ps.reduce((a, p) => a + p.load.errors + p.load.timeouts, 0), ratio: null,
        serverCpuPct: cpu === null ? null : (cpu / sec) * 100, serverCpuUsPerReq: cpu === null || ok === 0 ? null : (cpu / ok) * 1e6,
        extra: { p50PerRound: ps.map((p) => p.load.p50), p99PerRound: ps.map((p) => p.load.p99) },
      }
    }
    const uAll = totals('untracked')
    const hAll = totals('hot')
    if (uAll && hAll) hAll.ratio = hAll.throughput / uAll.throughput
    for (const t of [uAll, hAll]) if (t) rows.push(t)
    if (measured.hot.length) {
      const first = measured.hot[0]!.before.stock ?? 0
      const last = measured.hot.at(-1)!.after.stock
      const ok = measured.hot.reduce((a, p) => a + p.answers.ids.length, 0)
      targets.push({
        target: 'hot item: stock = start − orders answered 200, every round (nothing oversold, nothing lost)',
        measured: `${n(first)} − ${n(ok)} = ${n(first - ok)}, stock now ${n(last)}`,
        met: !failures.some((f) => f.startsWith('hot')) && last === first - ok,
      })
    }
    if (want('small')) {
      log(`small stock ${n(SMALL_STOCK)}: ${n(SMALL_OFFERED)} orders, ${conns} connections`)
      const p = await phase(server, dbPath, fx, 'small', `small stock ${n(SMALL_STOCK)}`, fx.small, conns, { amount: SMALL_OFFERED })
      const problems = reconcile(p, missingRows(dbPath, p.answers.ids), true)
      const ok = p.answers.ids.length
      if (ok !== SMALL_STOCK) problems.push(`${ok} orders answered 200 for a stock of ${SMALL_STOCK}`)
      if (p.answers.outOfStock !== SMALL_OFFERED - SMALL_STOCK) problems.push(`${p.answers.outOfStock} answered 422 out_of_stock, expected ${SMALL_OFFERED - SMALL_STOCK}`)
      if (Object.keys(p.answers.other).length) problems.push(`other answers: ${JSON.stringify(p.answers.other)}`)
      if (p.after.stock !== 0) problems.push(`stock left ${p.after.stock}, expected 0`)
      failures.push(...problems.map((x) => `small: ${x}`))
      rows.push(row(p, `closed loop, ${Math.min(conns, SMALL_OFFERED)} conns, ${n(SMALL_OFFERED)} orders`))
      targets.push({
        target: `stock ${n(SMALL_STOCK)}, ${n(SMALL_OFFERED)} concurrent orders: exactly ${n(SMALL_STOCK)} taken, the rest 422 out_of_stock`,
        measured: `${n(ok)} × 200, ${n(p.answers.outOfStock)} × 422 out_of_stock, ${Object.values(p.answers.other).reduce((a, b) => a + b, 0)} other; stock ${n(p.before.stock)} → ${n(p.after.stock)}`,
        met: problems.length === 0,
      })
    }
    // Loudly: a stock mismatch is a correctness failure, not a slow run (the runner prints it and exits 1).
    if (failures.length) throw new Error(`stock reconciliation FAILED:\n  ${failures.join('\n  ')}`)

    const notes = [
      'the load generator (autocannon, pipelining 1) runs in the bench process on the same machine and shares its CPU cores with the server; srv CPU % is the server process alone (100 = one core)',
      `owner orders of one unit (delivery), each durable before its 200 (group commit: an fdatasync of the WAL after each batch); one fresh database and server; ${rounds} rounds alternating untracked/hot, each phase a fixed number of orders all answered (nothing cut off in flight) and reconciled against the database`,
      `"vs baseline" is the hot item's orders/s over the untracked item's of the same round; the small-stock row counts only its ${n(SMALL_STOCK)} 200s in req/s and latency (its refusals are the non-2xx), and its µs/req is server CPU over those 200s`,
    ]
    if (ratios.length) notes.push(`hot/untracked orders/s per round: ${ratios.map((x) => x.toFixed(2)).join(', ')}; the "all rounds" rows sum orders, time and server CPU (percentiles per round are in the rows above)`)
    const tmpfs = tmpfsWarning(dbDir)
    if (tmpfs) notes.push(tmpfs)
    return {
      name: 'stock-contention', rows, notes, targets, labels: { throughput: 'orders/s (200)', perReq: 'srv µs/order' },
      loadGenerator: 'autocannon in the bench process; the server is src/main.ts in a child process on the same machine',
    }
  })
}

export const scenario: Scenario = {
  name: 'stock-contention',
  description: 'owner orders of one hot item with a tracked stock vs an untracked item, stock reconciled; a small stock oversubscribed 3×',
  run,
}

export default scenario
