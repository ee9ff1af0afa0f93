/**
 * MCP against REST (issue 12 item 10): `tools/call` round trips on the admin MCP server against
 * the same operations over the owner API, side by side in one run, on the real server in its own
 * process (`node --import tsx src/main.ts`, as bench/orders.ts):
 *
 *   read  — `get_menu`       vs GET  /api/v1/restaurants/{id}/menu
 *   write — `add_menu_item`  vs POST /api/v1/restaurants/{id}/menu/items
 *
 * Same server, same token, same connections; each variant gets a warm-up and a closed-loop run;
 * the server's CPU time per answered call comes from /proc. Target: an MCP call costs at most 1.3×
 * the server CPU of the equivalent REST call. Every MCP answer is checked to be a result, not a
 * JSON-RPC error or an `isError` result (a failure counts as non-2xx).
 */
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import Database from 'better-sqlite3'
import type { Request } from 'autocannon'
import type { BenchRow, Scenario, ScenarioOptions, ScenarioResult } from './lib/scenario.ts'
import { cpuSeconds, seedDemo, startApp, withBenchDir } from './lib/proc.ts'
import { runLoad, type LoadResult } from './lib/load.ts'
import { setAccountPlan } from '../src/storage/plans.ts'
import { FEATURE_KEYS } from '../src/domain/plans.ts'

const ROOT = fileURLToPath(new URL('..', import.meta.url))
const TARGET_RATIO = 1.3

interface Demo { owner: { id: number; token: string }; store: { id: number } }

type VariantKey = 'rest-get-menu' | 'mcp-get-menu' | 'rest-add-item' | 'mcp-add-item'
interface Variant { key: VariantKey; label: string; requests: (ctx: Ctx, check: Check) => Request[] }
interface Ctx {
  token: string
  /** The seeded demo store (reads). */
  storeId: number
  /** One empty store per write variant, so each starts from the same menu (an insert costs more as the menu grows). */
  writeStores: Record<'rest' | 'mcp', { storeId: number; categoryId: number }>
}

/** Counts MCP answers that are errors although HTTP said 200 (JSON-RPC error or isError result). */
class Check {
  failed = 0
  mcp = (status: number, body: string) => {
    if (status === 200 && (body.includes('"isError":true') || body.startsWith('{"jsonrpc":"2.0","id":1,"error"'))) this.failed++
  }
}

const itemBody = (i: number, categoryId: number) => ({ category_id: categoryId, name: `Bench item ${i}`, price: 4.5 + (i % 7), description: 'Benchmark item', is_vegan: i % 2 === 0 })
const rpc = (name: string, args: Record<string, unknown>) => JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } })
const BODIES = 64

const VARIANTS: Variant[] = [
  {
    key: 'rest-get-menu', label: 'REST GET menu',
    requests: (c) => [{ method: 'GET', path: `/api/v1/restaurants/${c.storeId}/menu`, headers: { authorization: `Bearer ${c.token}` } }],
  },
  {
    key: 'mcp-get-menu', label: 'MCP get_menu',
    requests: (c, check) => [{
      method: 'POST', path: '/mcp', body: rpc('get_menu', { restaurant_id: c.storeId }), onResponse: check.mcp,
      headers: { authorization: `Bearer ${c.token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18' },
    }],
  },
  {
    key: 'rest-add-item', label: 'REST POST menu item',
    requests: (c) => Array.from({ length: BODIES }, (_, i) => ({
      method: 'POST', path: `/api/v1/restaurants/${c.writeStores.rest.storeId}/menu/items`, body: JSON.stringify(itemBody(i, c.writeStores.rest.categoryId)),
      headers: { authorization: `Bearer ${c.token}`, 'content-type': 'application/json' },
    })),
  },
  {
    key: 'mcp-add-item', label: 'MCP add_menu_item',
    requests: (c, check) => Array.from({ length: BODIES }, (_, i) => ({
      method: 'POST', path: '/mcp', body: rpc('add_menu_item', { restaurant_id: c.writeStores.mcp.storeId, ...itemBody(i, c.writeStores.mcp.categoryId) }), onResponse: check.mcp,
      headers: { authorization: `Bearer ${c.token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18' },
    })),
  },
]

/**
 * The demo account on a plan with every feature and no quota: the write runs add tens of
 * thousands of items, which the Pro plan's menu-item quota would refuse part-way (the quota check
 * itself still runs on every insert, on both doors).
 */
function prepare(dbPath: string, demo: Demo): Ctx['writeStores'] {
  const db = new Database(dbPath)
  try {
    const now = new Date().toISOString()
    db.prepare(`INSERT INTO plans (key, name, price, features, quotas, created_at) VALUES ('bench-unlimited', 'Bench', 0, ?, '{}', ?)`)
      .run(JSON.stringify([...FEATURE_KEYS]), now)
    db.transaction(() => setAccountPlan(db as never, demo.owner.id, 'bench-unlimited'))()
    const store = (key: string) => {
      const storeId = Number(db.prepare(`INSERT INTO stores (owner_id, title, slug, template, store_type, currency, city, settings, created_at)
        VALUES (?, ?, ?, 'classic', 'restaurant', 'USD', 'Benchville', '{}', ?)`).run(demo.owner.id, `Bench ${key}`, `bench-${key}`, now).lastInsertRowid)
      const categoryId = Number(db.prepare('INSERT INTO menu_categories (store_id, name, position, station, created_at) VALUES (?, ?, 0, NULL, ?)').run(storeId, 'Bench', now).lastInsertRowid)
      return { storeId, categoryId }
    }
    return { rest: store('rest'), mcp: store('mcp') }
  } finally {
    db.close()
  }
}

function row(v: Variant, opts: ScenarioOptions, l: LoadResult, cpuSec: number | null, failed: number): BenchRow {
  const ok = l.ok2xx - failed
  return {
    scenario: v.label,
    load: `closed loop, ${opts.connections} conns`,
    durationSec: Math.round(l.durationSec * 100) / 100,
    requests: l.ok2xx + l.non2xx,
    throughput: ok / l.durationSec,
    p50Ms: l.p50, p90Ms: l.p90, p99Ms: l.p99, maxMs: l.max,
    non2xx: l.non2xx + failed,
    errors: l.errors + l.timeouts,
    ratio: null,
    serverCpuPct: cpuSec === null ? null : (cpuSec / l.durationSec) * 100,
    serverCpuUsPerReq: cpuSec === null || ok <= 0 ? null : (cpuSec / ok) * 1e6,
    extra: { key: v.key, statuses: l.statuses, mcpErrorsIn200: failed, meanMs: l.mean },
  }
}

export const scenario: Scenario = {
  name: 'mcp',
  description: 'admin MCP tools/call (get_menu, add_menu_item) vs the same operations over REST, one server',
  async run(opts: ScenarioOptions): Promise<ScenarioResult> {
    const rows = await withBenchDir(process.env.BENCH_DB_DIR ?? tmpdir(), 'dispatch-bench-mcp-', async (dir, track) => {
      const dbPath = join(dir, 'bench.db')
      const demo = await seedDemo<Demo>(dbPath, ROOT)
      const ctx: Ctx = { token: demo.owner.token, storeId: demo.store.id, writeStores: prepare(dbPath, demo) }
      const srv = track(await startApp(dbPath, ROOT))
      const out: BenchRow[] = []
      // Reads on the seeded store; each write variant on its own empty store, so both start alike.
      const chosen = VARIANTS.filter((v) => opts.only.length === 0 || opts.only.some((o) => v.key.includes(o)))
      for (const v of chosen) {
        opts.log(`[mcp] ${v.label}: warm-up ${opts.warmup} s`)
        await runLoad({ url: srv.url, requests: v.requests(ctx, new Check()), connections: opts.connections, durationSec: opts.warmup })
        opts.log(`[mcp] ${v.label}: closed loop, ${opts.connections} connections, ${opts.duration} s`)
        const check = new Check()
        const cpu0 = cpuSeconds(srv.proc.pid)
        const load = await runLoad({ url: srv.url, requests: v.requests(ctx, check), connections: opts.connections, durationSec: opts.duration })
        const cpu1 = cpuSeconds(srv.proc.pid)
        out.push(row(v, opts, load, cpu0 === null || cpu1 === null ? null : cpu1 - cpu0, check.failed))
      }
      return out
    })

    const by = (k: VariantKey) => rows.find((r) => r.extra?.key === k)
    const targets: NonNullable<ScenarioResult['targets']> = []
    for (const [what, rest, mcp] of [['get_menu', 'rest-get-menu', 'mcp-get-menu'], ['add_menu_item', 'rest-add-item', 'mcp-add-item']] as const) {
      const r = by(rest)
      const m = by(mcp)
      if (!r || !m) continue
      m.ratio = r.throughput > 0 ? m.throughput / r.throughput : null
      const cpuRatio = r.serverCpuUsPerReq && m.serverCpuUsPerReq ? m.serverCpuUsPerReq / r.serverCpuUsPerReq : null
      targets.push({
        target: `MCP ${what} server CPU <= ${TARGET_RATIO}x REST`,
        measured: cpuRatio === null ? 'no CPU figures (no /proc?)' : `${cpuRatio.toFixed(2)}x (${m.serverCpuUsPerReq!.toFixed(0)} vs ${r.serverCpuUsPerReq!.toFixed(0)} µs/call)`,
        met: cpuRatio !== null && cpuRatio <= TARGET_RATIO,
      })
    }
    return {
      name: 'mcp',
      rows,
      targets,
      notes: [
        'one server process for all four variants; "vs baseline" on an MCP row is its throughput relative to the REST row of the same operation',
        'the load generator (autocannon, pipelining 1) runs on the same machine and shares its CPU cores with the server; srv µs/req is the server process alone',
        'MCP requests are stateless tools/call POSTs with MCP-Protocol-Version 2025-06-18 (no initialize per call, as a connected agent sends them)',
        'writes: every answer follows the durable commit of the store actor; the account is on an unlimited test plan so the quota never refuses (the check still runs)',
      ],
    }
  },
}

export default scenario
