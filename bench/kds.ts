/**
 * Kitchen screens under load (issue 5 item 9): the real server in its own process
 * (`node dist/src/main.js`, as `npm start`), storefront orders arriving at a steady rate, cooks bumping
 * every line queued → preparing → ready → served (over their kitchen sockets as the kitchen page
 * does, or over HTTP: BENCH_KDS_BUMP_VIA=socket|http), and 50 kitchen screens on /ws/kds in a
 * separate process (bench/kds-screens.ts). Reported: bump-to-screen latency, from the moment the
 * cook's bump is sent to the moment each screen showing that station
 * reads the `item` frame off its socket; and order-to-screen latency (storefront POST sent → `ticket`
 * frame); and server CPU per bump, fan-out included (issue 19 item 3). At the target rate (100
 * orders/s) the scenario makes BENCH_KDS_RUNS runs (default 5), each measuring the floor (a bare
 * `GET /healthz` round trip), the orders alone (their CPU) and then orders with their bumps, and
 * reports the distribution of p99 over the runs (median and range) with the floor of the same runs.
 * Server CPU per bump = (server CPU of the run with bumps − its orders × CPU per order measured
 * alone in the same run) / bumps. Then the order rate is stepped up until p99 passes 20 ms, the
 * server falls behind, or the steps run out; the highest rate that kept p99 under 20 ms is the answer.
 *
 * Every delivery is checked: each bump must reach every screen of its station plus every
 * all-station screen, each new order every screen that shows one of its lines.
 *
 * Environment: BENCH_KDS_SCREENS (default 50), BENCH_KDS_RATES (orders/s, comma-separated;
 * default 25,50,100,200,400,800,1600), BENCH_KDS_GAP_MS (a cook's mean pause between two steps of
 * one item, default 150), BENCH_DB_DIR (where the SQLite file goes), BENCH_SERVER_NODE_ARGS (extra
 * node flags for the server, e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`), BENCH_KDS_RUNS (runs at the
 * target rate, default 5), BENCH_KDS_SERVER_ROOT (the checkout whose server is measured, default
 * this one), BENCH_KDS_COMPARE (a second checkout, e.g. the code before a change, measured in the
 * same run with its own database and screens, the two alternating run by run; its rows are the
 * baseline), BENCH_KDS_METRICS=1 (serve /metrics with a token and report each phase's commits per
 * bump, the batching that CPU per bump depends on; off by default, as the metrics cost a little
 * CPU themselves).
 */
import { fork, type ChildProcess } from 'node:child_process'
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { randomBytes } from 'node:crypto'
import { loadavg, tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { Pool } from 'undici'
import WebSocket from 'ws'
import type { BenchRow, Scenario, ScenarioOptions, ScenarioResult } from './lib/scenario.ts'
import { appArgs, cpuSeconds, freePort, runNode, startServer, type Server, LOAD_TEST_LIMITS } from './lib/proc.ts'
import { quantile } from './lib/load.ts'
import { rng } from './lib/rng.ts'
import { envInt } from './lib/env.ts'
import { monoMs, type ParentMsg, type ScreenSpec, type WorkerMsg } from './kds-screens.ts'

const ROOT = fileURLToPath(new URL('..', import.meta.url))
const P99_LIMIT_MS = 20
const TARGET = { rate: 100, p99Ms: 5, cpuUsPerBump: 100 }

const envList = (name: string, fallback: number[]): number[] => {
  const raw = process.env[name]
  if (!raw) return fallback
  const xs = raw.split(',').map((s) => Number(s.trim()))
  if (xs.some((x) => !Number.isFinite(x) || x <= 0)) throw new Error(`${name} must be positive numbers, got "${raw}"`)
  return xs
}

interface Demo { owner: { token: string }; store: { id: number; storefront_token: string }; staff: Array<{ role: string; pin: string }> }
interface MenuItem { id: number; station: string | null; variations: number[]; extras: number[] }
interface Line { id: number; station: string | null }

/** Storefront orders of 2–3 lines spread over the stations, mostly at a table. */
function orderBodies(menu: MenuItem[], count = 128): string[] {
  const rand = rng(7)
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!
  return Array.from({ length: count }, () => {
    const n = 2 + Math.floor(rand() * 2)
    const items = Array.from({ length: n }, () => {
      const it = pick(menu)
      const line: Record<string, unknown> = { item_id: it.id, quantity: 1 + Math.floor(rand() * 2) }
      if (it.variations.length && rand() < 0.6) line.variation = pick(it.variations)
      if (it.extras.length && rand() < 0.4) line.extras = [pick(it.extras)]
      return line
    })
    const table = rand() < 0.7
    return JSON.stringify({ type: table ? 'on-table' : 'takeaway', ...(table ? { table_number: String(1 + Math.floor(rand() * 40)) } : {}), customer_name: pick(['Ada', 'Grace', 'Alan', 'Edsger']), items })
  })
}

/** The screens process: connect, collect arrivals, close. */
class Screens {
  private waiting: ((m: WorkerMsg) => void) | null = null
  private constructor(readonly proc: ChildProcess) {
    proc.on('message', (m: WorkerMsg) => { const w = this.waiting; this.waiting = null; w?.(m) })
  }
  static start(): Screens {
    return new Screens(fork(fileURLToPath(new URL('./kds-screens.ts', import.meta.url)), [], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] }))
  }
  private ask<E extends WorkerMsg['ev']>(msg: ParentMsg, ev: E): Promise<Extract<WorkerMsg, { ev: E }>> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`screens process: no ${ev} within 60 s`)), 60_000)
      this.waiting = (m) => {
        clearTimeout(timer)
        if (m.ev === 'error') reject(new Error(`screens process: ${m.message}`))
        else if (m.ev !== ev) reject(new Error(`screens process answered ${m.ev}, expected ${ev}`))
        else resolve(m as Extract<WorkerMsg, { ev: E }>)
      }
      this.proc.send(msg)
    })
  }
  connect(wsUrl: string, screens: ScreenSpec[]) { return this.ask({ cmd: 'connect', wsUrl, screens }, 'connected') }
  collect() { return this.ask({ cmd: 'collect' }, 'collected') }
  close() { if (this.proc.connected) this.proc.send({ cmd: 'close' } satisfies ParentMsg) }
}

/**
 * CPU seconds (user + system) of the server's main thread and of its other threads (libuv's pool
 * doing the WAL fdatasync, V8's compiler and GC helpers), from /proc/<pid>/task.
 */
function threadSeconds(pid: number | undefined): { main: number; other: number } | null {
  try {
    let main = 0
    let other = 0
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8')
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
      const sec = (Number(f[11]) + Number(f[12])) / 100
      if (tid === String(pid)) main += sec
      else other += sec
    }
    return { main, other }
  } catch {
    return null
  }
}

/** Committed transactions and the writes in them so far (`dispatch_commit_batch_size`), when the server serves /metrics. */
async function commitCounts(server: Server, token: string | null): Promise<{ commits: number; writes: number } | null> {
  if (!token) return null
  try {
    const text = await (await fetch(`${server.url}/metrics`, { headers: { authorization: `Bearer ${token}` } })).text()
    const num = (name: string) => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1] ?? NaN)
    const commits = num('dispatch_commit_batch_size_count')
    const writes = num('dispatch_commit_batch_size_sum')
    return Number.isFinite(commits) && Number.isFinite(writes) ? { commits, writes } : null
  } catch {
    return null
  }
}

/** The server's system (kernel) CPU seconds so far, from /proc: most of a socket write is kernel time. */
function systemSeconds(pid: number | undefined): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[12]) / 100
  } catch {
    return null
  }
}

/**
 * A cook's kitchen socket in this process, bumping the way the kitchen page does (a `bump` frame,
 * answered by an `ack` with the same `seq`). It shows a station no item has, so it receives only its
 * own acks and is not one of the measured screens.
 */
class CookSocket {
  private readonly waiting = new Map<number, (r: { ok: boolean; state: string | null }) => void>()
  private seq = 0
  private constructor(private readonly ws: WebSocket) {
    ws.on('message', (data: Buffer) => {
      const f = JSON.parse(data.toString()) as { type: string; seq?: number; kds_state?: string | null }
      if ((f.type !== 'ack' && f.type !== 'error') || f.seq === undefined) return
      const done = this.waiting.get(f.seq)
      this.waiting.delete(f.seq)
      done?.({ ok: f.type === 'ack', state: f.kds_state ?? null })
    })
    ws.on('close', () => { for (const done of this.waiting.values()) done({ ok: false, state: null }); this.waiting.clear() })
  }
  static open(wsUrl: string, token: string): Promise<CookSocket> {
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(`${wsUrl}?${new URLSearchParams({ token, station_id: 'bench-cook (no items)' })}`, { perMessageDeflate: false })
      ws.once('message', () => resolve(new CookSocket(ws))) // the snapshot
      ws.once('error', reject)
    })
  }
  bump(itemId: number): Promise<{ ok: boolean; state: string | null }> {
    const seq = ++this.seq
    return new Promise((resolve) => {
      this.waiting.set(seq, resolve)
      this.ws.send(JSON.stringify({ type: 'bump', item_id: itemId, seq }))
    })
  }
  close() { this.ws.terminate() }
}

/** How cooks bump: over their kitchen sockets (the kitchen page's way, the default) or `PUT /staff/kds/items/{id}/bump`. */
type BumpVia = 'socket' | 'http'
const bumpVia = (): BumpVia => {
  const v = process.env.BENCH_KDS_BUMP_VIA ?? 'socket'
  if (v !== 'socket' && v !== 'http') throw new Error(`BENCH_KDS_BUMP_VIA must be socket or http, got "${v}"`)
  return v
}

interface PhaseResult {
  rate: number
  seconds: number
  orders: { ok: number; failed: number; httpMs: number[] }
  bumps: { ok: number; failed: number; httpMs: number[] }
  /** Lines of the orders this phase created (a later phase without orders may bump them). */
  created: Line[][]
  bumpToScreen: Float64Array
  orderToScreen: Float64Array
  deliveries: { expected: number; received: number; missing: number }
  frames: number
  cpuSec: number | null
  /** Of which system (kernel) time: socket writes, fdatasync. */
  sysSec: number | null
  /** The same CPU split by thread: the event loop's, and the other threads' (fdatasync, JIT, GC). */
  threads: { main: number; other: number } | null
  /** Transactions committed during the phase and the writes in them (BENCH_KDS_METRICS=1 only). */
  commits: { commits: number; writes: number } | null
  /** CPU of the measuring side over the run, % of one core (it shares the cores with the server). */
  clientCpuPct: { loadGenerator: number; screens: number | null }
  errors: number
}

/** Call `fire(i)` `rate` times a second for `seconds`, evenly spread (whatever is due every 2 ms, not a burst a second). */
function paced(rate: number, seconds: number, fire: (i: number) => void): Promise<void> {
  const start = monoMs()
  let issued = 0
  return new Promise<void>((resolve) => {
    const tick = setInterval(() => {
      const elapsed = monoMs() - start
      if (elapsed >= seconds * 1000) { clearInterval(tick); return resolve() }
      for (const due = Math.floor((elapsed / 1000) * rate); issued < due; issued++) fire(issued)
    }, 2)
  })
}

/**
 * One phase: orders at `rate`/s for `seconds`; each line of each created order is bumped three
 * times, a cook's pause (`gapMs` ± 50 %) after the previous step's reply. At the end, new orders
 * and pending bumps stop, in-flight requests finish, and the screens' arrivals are matched.
 */
async function phase(o: { pool: Pool; server: Server; screens: Screens; demo: Demo; bodies: string[]; cooks: string[]; cookSockets: CookSocket[]; perStation: Map<string | null, number>; metricsToken: string | null; rate: number; seconds: number; gapMs: number; bumps?: boolean; bumpOnly?: Line[][] }): Promise<PhaseResult> {
  const { pool, rate, seconds, gapMs, demo, bodies, cooks, perStation } = o
  const bumping = o.bumps ?? true
  const allScreens = perStation.get(null) ?? 0
  const screensFor = (station: string | null) => allScreens + (station === null ? 0 : perStation.get(station) ?? 0)
  const sent = new Map<string, { t0: number; expect: number }>()
  const res: PhaseResult = {
    rate, seconds, orders: { ok: 0, failed: 0, httpMs: [] }, bumps: { ok: 0, failed: 0, httpMs: [] }, created: [],
    bumpToScreen: new Float64Array(0), orderToScreen: new Float64Array(0), deliveries: { expected: 0, received: 0, missing: 0 }, frames: 0, cpuSec: null, sysSec: null, threads: null, commits: null, clientCpuPct: { loadGenerator: 0, screens: null }, errors: 0,
  }
  const rand = rng(rate)
  const timers = new Set<NodeJS.Timeout>()
  let stopped = false
  let inFlight = 0
  let seq = 0
  const track = async (work: () => Promise<void>) => {
    inFlight++
    try { await work() } catch { res.errors++ } finally { inFlight-- }
  }
  const later = (ms: number, fn: () => void) => {
    const t = setTimeout(() => { timers.delete(t); if (!stopped) fn() }, ms)
    timers.add(t)
  }

  const bump = (line: Line) => track(async () => {
    const t0 = monoMs()
    let state: string
    if (o.cookSockets.length > 0) {
      const r = await o.cookSockets[seq++ % o.cookSockets.length]!.bump(line.id)
      res.bumps.httpMs.push(monoMs() - t0)
      if (!r.ok || r.state === null) { res.bumps.failed++; return }
      state = r.state
    } else {
      const r = await pool.request({ method: 'PUT', path: `/api/v1/staff/kds/items/${line.id}/bump`, headers: { authorization: `Bearer ${cooks[seq++ % cooks.length]}` } })
      const text = await r.body.text()
      res.bumps.httpMs.push(monoMs() - t0)
      if (r.statusCode !== 200) { res.bumps.failed++; return }
      state = (JSON.parse(text) as { item: { kds_state: string } }).item.kds_state
    }
    res.bumps.ok++
    sent.set(`i${line.id}:${state}`, { t0, expect: screensFor(line.station) })
    if (state !== 'served') later(gapMs * (0.5 + rand()), () => void bump(line))
  })

  const order = (body: string) => track(async () => {
    const t0 = monoMs()
    const r = await pool.request({ method: 'POST', path: '/api/v1/storefront/orders', headers: { 'x-storefront-token': demo.store.storefront_token, 'content-type': 'application/json' }, body })
    const text = await r.body.text()
    res.orders.httpMs.push(monoMs() - t0)
    if (r.statusCode !== 200) { res.orders.failed++; return }
    res.orders.ok++
    const created = JSON.parse(text) as { id: number; items: Line[] }
    res.created.push(created.items)
    const stations = new Set(created.items.map((l) => l.station).filter((s): s is string => s !== null))
    sent.set(`t${created.id}`, { t0, expect: allScreens + [...stations].reduce((n, s) => n + (perStation.get(s) ?? 0), 0) })
    if (bumping) for (const line of created.items) later(gapMs * (0.5 + rand()), () => void bump(line))
  })

  await o.screens.collect() // forget anything left from the previous phase
  const commits0 = await commitCounts(o.server, o.metricsToken) // before the CPU window: the scrape costs the server a little
  const cpu0 = cpuSeconds(o.server.proc.pid)
  const sys0 = systemSeconds(o.server.proc.pid)
  const threads0 = threadSeconds(o.server.proc.pid)
  const screens0 = cpuSeconds(o.screens.proc.pid)
  const self0 = process.cpuUsage()
  // Bumps alone: the lines of orders created earlier start being bumped at the order rate, as if
  // their orders were arriving now, so the bumps come at the pace of a normal run, without its POSTs.
  const only = o.bumpOnly
  if (only) await paced(rate, seconds, (i) => { for (const line of only[i] ?? []) later(gapMs * (0.5 + rand()), () => void bump(line)) })
  else await paced(rate, seconds, (i) => void order(bodies[i % bodies.length]!))
  stopped = true
  for (const t of timers) clearTimeout(t)
  const deadline = monoMs() + 30_000
  while (inFlight > 0 && monoMs() < deadline) await new Promise((r) => setTimeout(r, 5))
  const cpu1 = cpuSeconds(o.server.proc.pid)
  const sys1 = systemSeconds(o.server.proc.pid)
  const threads1 = threadSeconds(o.server.proc.pid)
  const commits1 = await commitCounts(o.server, o.metricsToken)
  const screens1 = cpuSeconds(o.screens.proc.pid)
  const self1 = process.cpuUsage(self0)
  res.clientCpuPct = {
    loadGenerator: ((self1.user + self1.system) / 1e6 / seconds) * 100,
    screens: screens0 === null || screens1 === null ? null : ((screens1 - screens0) / seconds) * 100,
  }
  await new Promise((r) => setTimeout(r, 500)) // frames of the last replies
  const got = await o.screens.collect()
  res.frames = got.frames
  if (got.closed > 0) throw new Error(`${got.closed} kitchen sockets closed during the run`)
  res.cpuSec = cpu0 === null || cpu1 === null ? null : cpu1 - cpu0
  res.sysSec = sys0 === null || sys1 === null ? null : sys1 - sys0
  res.threads = threads0 && threads1 ? { main: threads1.main - threads0.main, other: threads1.other - threads0.other } : null
  res.commits = commits0 && commits1 ? { commits: commits1.commits - commits0.commits, writes: commits1.writes - commits0.writes } : null

  const arrivals = new Map(got.arrivals)
  const bumpLat: number[] = []
  const orderLat: number[] = []
  for (const [key, { t0, expect }] of sent) {
    const times = arrivals.get(key) ?? []
    res.deliveries.expected += expect
    res.deliveries.received += Math.min(expect, times.length)
    const into = key.startsWith('i') ? bumpLat : orderLat
    for (const t of times) into.push(t - t0)
  }
  res.deliveries.missing = res.deliveries.expected - res.deliveries.received
  res.bumpToScreen = Float64Array.from(bumpLat).sort()
  res.orderToScreen = Float64Array.from(orderLat).sort()
  return res
}

/**
 * The machine's floor: `GET /healthz` (no auth, no write, no socket) at `rate` evenly spaced
 * requests for `seconds`. Whatever latency this shows, every bump pays as well.
 */
async function floor(pool: Pool, server: Server, rate: number, seconds: number): Promise<BenchRow> {
  const lat: number[] = []
  let errors = 0
  let inFlight = 0
  const cpu0 = cpuSeconds(server.proc.pid)
  await paced(rate, seconds, () => {
    inFlight++
    const t0 = monoMs()
    pool.request({ method: 'GET', path: '/healthz' }).then((r) => r.body.text()).then(() => { lat.push(monoMs() - t0) }, () => { errors++ }).finally(() => { inFlight-- })
  })
  while (inFlight > 0) await new Promise((r) => setTimeout(r, 5))
  const cpu1 = cpuSeconds(server.proc.pid)
  const sorted = Float64Array.from(lat).sort()
  return {
    scenario: 'floor: GET /healthz', load: `${rate} req/s evenly spaced`, durationSec: seconds, requests: lat.length + errors, throughput: lat.length / seconds,
    p50Ms: quantile(sorted, 0.5), p90Ms: quantile(sorted, 0.9), p99Ms: quantile(sorted, 0.99), maxMs: sorted.length ? sorted[sorted.length - 1]! : NaN, non2xx: 0, errors, ratio: null,
    serverCpuPct: cpu0 === null || cpu1 === null ? null : ((cpu1 - cpu0) / seconds) * 100,
    serverCpuUsPerReq: cpu0 === null || cpu1 === null || lat.length === 0 ? null : ((cpu1 - cpu0) / lat.length) * 1e6,
    extra: { loadAverageAfter: loadavg() },
  }
}

/** A phase's CPU per bump by thread, and its bumps per commit when known: CPU per bump falls as more bumps share a commit and a socket write. */
function perBumpSplit(p: PhaseResult): string {
  const n = p.bumps.ok
  if (n === 0) return '-'
  const t = p.threads ? `event loop ${((p.threads.main / n) * 1e6).toFixed(0)} µs, other threads ${((p.threads.other / n) * 1e6).toFixed(0)} µs` : 'threads ?'
  const c = p.commits && p.commits.commits > 0 ? `, ${(n / p.commits.commits).toFixed(2)} bumps per commit (${p.commits.commits} commits of ${p.commits.writes} writes)` : ''
  return t + c
}

/** µs of server CPU per bump, marginal: the run's CPU less what its orders cost (measured without bumps), over its bumps. */
const perBumpUs = (p: PhaseResult, orderUs: number | null): number | null =>
  p.cpuSec === null || orderUs === null || p.bumps.ok === 0 ? null : ((p.cpuSec - (p.orders.ok * orderUs) / 1e6) / p.bumps.ok) * 1e6
/** µs of server CPU per order in a phase without bumps (the orders' own cost, ticket fan-out included). */
const perOrderUs = (p: PhaseResult): number | null => (p.cpuSec === null || p.orders.ok === 0 ? null : (p.cpuSec / p.orders.ok) * 1e6)

/** A latency row of a phase. `cpuUs`: server CPU per bump (bump rows) or per order (order rows), when known. */
function row(name: string, load: string, p: PhaseResult, lat: Float64Array, count: number, cpuUs: number | null, more: Partial<BenchRow> = {}): BenchRow {
  const ok = name.startsWith('bump') ? p.bumps : p.orders
  let sum = 0
  for (const x of lat) sum += x
  return {
    scenario: name,
    load,
    durationSec: p.seconds,
    requests: ok.ok + ok.failed,
    throughput: count / p.seconds,
    p50Ms: quantile(lat, 0.5),
    p90Ms: quantile(lat, 0.9),
    p99Ms: quantile(lat, 0.99),
    maxMs: lat.length ? lat[lat.length - 1]! : NaN,
    non2xx: ok.failed,
    errors: p.errors,
    ratio: null,
    serverCpuPct: p.cpuSec === null ? null : (p.cpuSec / p.seconds) * 100,
    serverCpuUsPerReq: cpuUs,
    ...more,
    extra: {
      samples: lat.length,
      meanMs: lat.length ? sum / lat.length : NaN,
      ordersOk: p.orders.ok,
      bumpsOk: p.bumps.ok,
      // Server CPU over the run per operation (orders and bumps alike): the earlier reports' µs/req.
      serverSystemCpuPct: p.sysSec === null ? null : (p.sysSec / p.seconds) * 100,
      serverCpuUsPerOp: p.cpuSec === null || p.orders.ok + p.bumps.ok === 0 ? null : (p.cpuSec / (p.orders.ok + p.bumps.ok)) * 1e6,
      httpP99Ms: quantile(Float64Array.from(ok.httpMs).sort(), 0.99),
      deliveries: p.deliveries,
      framesToScreens: p.frames,
      clientCpuPct: p.clientCpuPct,
      loadAverageAfter: loadavg(),
      ...(more.extra ?? {}),
    },
  }
}

/** PIN sign-in on a device the owner enrolls first (docs/staff.md "PIN devices"). */
async function login(base: string, ownerToken: string, storeId: number, pin: string, device: string): Promise<string> {
  const json = { 'content-type': 'application/json' }
  const e = await fetch(`${base}/restaurants/${storeId}/pin-devices`, { method: 'POST', headers: { ...json, authorization: `Bearer ${ownerToken}` }, body: JSON.stringify({ name: device }) })
  if (e.status !== 200) throw new Error(`device enrollment failed: ${e.status} ${await e.text()}`)
  const { key } = (await e.json()) as { key: string }
  const r = await fetch(`${base}/restaurants/${storeId}/staff/pin`, { method: 'POST', headers: json, body: JSON.stringify({ pin, device: key }) })
  if (r.status !== 200) throw new Error(`PIN sign-in failed: ${r.status} ${await r.text()}`)
  return ((await r.json()) as { token: string }).token
}

/** One server under test (this checkout, or another one for a before/after in the same run) with its screens and load. */
interface Target {
  label: string
  root: string
  dir: string
  server: Server
  screens: Screens
  pool: Pool
  ctx: { pool: Pool; server: Server; screens: Screens; demo: Demo; bodies: string[]; cooks: string[]; cookSockets: CookSocket[]; perStation: Map<string | null, number>; metricsToken: string | null; gapMs: number }
  screenCount: number
  cookSockets: CookSocket[]
}

/** Seed a fresh database, start `root`'s server on it, sign in the cooks and connect the screens. */
async function startTarget(label: string, root: string, screenCount: number, gapMs: number, via: BumpVia, log: (line: string) => void, track: (t: Partial<Target>) => void): Promise<Target> {
  const dir = mkdtempSync(join(process.env.BENCH_DB_DIR ?? tmpdir(), 'dispatch-bench-kds-'))
  track({ dir })
  const dbPath = join(dir, 'bench.db')
  const demo = JSON.parse((await runNode(['bin/dispatch.js', 'seed', '--demo', '--json'], { DB_PATH: dbPath, LOG_LEVEL: 'warn' }, root)).trim().split('\n').pop()!) as Demo
  const port = await freePort()
  const nodeArgs = (process.env.BENCH_SERVER_NODE_ARGS ?? '').split(/\s+/).filter(Boolean)
  const metricsToken = process.env.BENCH_KDS_METRICS === '1' ? randomBytes(16).toString('hex') : null
  const server = await startServer([...nodeArgs, ...appArgs(root)], {
    DB_PATH: dbPath, PORT: String(port), HOST: '127.0.0.1', SITE_URL: `http://127.0.0.1:${port}`, LOG_LEVEL: 'warn', ...LOAD_TEST_LIMITS, DEMO_SEED: '0',
    ...(metricsToken ? { METRICS_TOKEN: metricsToken } : {}),
  }, port, '/healthz', root)
  track({ server })
  const base = `${server.url}/api/v1`

  const menuRes = await fetch(`${base}/storefront/menu`, { headers: { 'x-storefront-token': demo.store.storefront_token } })
  const categories = (await menuRes.json()) as Array<{ station: string | null; items: Array<{ id: number; is_sold_out: boolean; variations: Array<{ id: number }>; extras: Array<{ id: number }> }> }>
  const menu: MenuItem[] = categories.flatMap((c) => c.items.filter((i) => !i.is_sold_out).map((i) => ({ id: i.id, station: c.station, variations: i.variations.map((x) => x.id), extras: i.extras.map((x) => x.id) })))
  const stations = [...new Set(menu.map((i) => i.station).filter((s): s is string => s !== null))].sort()

  // A few devices signed in by PIN (PIN sign-in is limited to 10 a minute per address): the
  // kitchen member's token drives the station screens, the waiter's the all-station screens.
  // The waiter and the manager bump as cooks: every line of every station, which the kitchen
  // member, bound to the oven, may not (docs/kds.md "Who may bump").
  const pinOf = (role: string) => demo.staff.find((s) => s.role === role)!.pin
  const kitchen = await login(base, demo.owner.token, demo.store.id, pinOf('kitchen'), 'bench-kitchen')
  const waiter = await login(base, demo.owner.token, demo.store.id, pinOf('waiter'), 'bench-waiter')
  const manager = await login(base, demo.owner.token, demo.store.id, pinOf('manager'), 'bench-manager')

  // A quarter of the screens show every station (the expo/pass), the rest one station each.
  const specs: ScreenSpec[] = Array.from({ length: screenCount }, (_, i) => {
    const all = i % 4 === 3
    return { token: all ? waiter : kitchen, station: all ? null : stations[i % stations.length]! }
  })
  const perStation = new Map<string | null, number>()
  for (const s of specs) perStation.set(s.station, (perStation.get(s.station) ?? 0) + 1)
  const screens = Screens.start()
  track({ screens })
  const conn = await screens.connect(`${base.replace(/^http/, 'ws')}/ws/kds`, specs)
  log(`[kds] ${label}: ${conn.screens} kitchen screens connected in ${conn.ms.toFixed(0)} ms (${[...perStation].map(([s, n]) => `${s ?? 'all'}: ${n}`).join(', ')})`)
  const pool = new Pool(server.url, { connections: 32, pipelining: 1 })
  track({ pool })
  // Cooks bumping over sockets: two per signed-in device, like tablets at the stations.
  const cookSockets: CookSocket[] = []
  track({ cookSockets })
  const cooks = [waiter, manager]
  if (via === 'socket') for (const token of [...cooks, ...cooks, ...cooks]) cookSockets.push(await CookSocket.open(`${base.replace(/^http/, 'ws')}/ws/kds`, token))
  const ctx = { pool, server, screens, demo, bodies: orderBodies(menu), cooks, cookSockets, perStation, metricsToken, gapMs }
  return { label, root, dir, server, screens, pool, ctx, screenCount, cookSockets }
}

async function stopTarget(t: Partial<Target>): Promise<void> {
  await t.pool?.close()
  for (const c of t.cookSockets ?? []) c.close()
  t.screens?.close()
  await t.server?.stop()
  if (t.dir) rmSync(t.dir, { recursive: true, force: true })
}

/** One of the five runs at the target rate: the floor, the orders alone, then orders with bumps. */
interface TargetRun { floor: BenchRow; ordersOnly: PhaseResult; bumpsOnly: PhaseResult; full: PhaseResult; orderUs: number | null; bumpUs: number | null; marginalUs: number | null }

const pct = (sec: number | null, p: PhaseResult): string => (sec === null ? '?' : ((sec / p.seconds) * 100).toFixed(0))
const median = (xs: number[]): number => {
  const s = xs.filter(Number.isFinite).sort((a, b) => a - b)
  if (s.length === 0) return NaN
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2
}
const span = (xs: number[], digits = 2): string => {
  const s = xs.filter(Number.isFinite)
  return s.length ? `${Math.min(...s).toFixed(digits)}–${Math.max(...s).toFixed(digits)}` : '-'
}

export const scenario: Scenario = {
  name: 'kds',
  description: 'Kitchen screens: bump-to-screen latency and server CPU per bump at the kitchen socket with storefront orders arriving at a steady rate',
  async run(opts: ScenarioOptions): Promise<ScenarioResult> {
    const screenCount = Math.round(envList('BENCH_KDS_SCREENS', [50])[0]!)
    const rates = envList('BENCH_KDS_RATES', [25, 50, 100, 200, 400, 800, 1600])
    const gapMs = envList('BENCH_KDS_GAP_MS', [150])[0]!
    const runs = envInt('BENCH_KDS_RUNS', 5)
    const via = bumpVia()
    const ours = process.env.BENCH_KDS_SERVER_ROOT ? resolve(process.env.BENCH_KDS_SERVER_ROOT) : ROOT
    const compare = process.env.BENCH_KDS_COMPARE ? resolve(process.env.BENCH_KDS_COMPARE) : null
    const started: Array<Partial<Target>> = []
    const track = (slot: Partial<Target>) => (t: Partial<Target>) => Object.assign(slot, t)
    try {
      const targets: Target[] = []
      for (const [label, root] of [['this checkout', ours], ...(compare ? [['compared checkout', compare]] : [])] as const) {
        const slot: Partial<Target> = {}
        started.push(slot)
        targets.push(await startTarget(root === ROOT ? label : `${label} (${root})`, root, screenCount, gapMs, via, opts.log, track(slot)))
      }
      for (const t of targets) {
        opts.log(`[kds] ${t.label}: warm-up, ${rates[0]} orders/s for ${opts.warmup} s`)
        await phase({ ...t.ctx, rate: rates[0]!, seconds: opts.warmup })
      }

      // The five runs at the target rate, the checkouts alternating run by run (so a burst of other
      // load on the machine hits both alike). Each run: the floor, the orders alone (their CPU), then orders with bumps.
      const target = TARGET.rate
      const floorRate = 7 * target // about the bump rate at the target order rate
      const byTarget = new Map<Target, TargetRun[]>(targets.map((t) => [t, []]))
      for (let i = 1; i <= runs; i++) {
        for (const t of targets) {
          const tag = `[kds] ${t.label}: run ${i}/${runs}`
          opts.log(`${tag}, floor: GET /healthz at ${floorRate}/s for ${opts.rateDuration} s`)
          const floorRow = await floor(t.pool, t.server, floorRate, opts.rateDuration)
          opts.log(`${tag}, orders alone: ${target} orders/s for ${opts.rateDuration} s`)
          const ordersOnly = await phase({ ...t.ctx, rate: target, seconds: opts.rateDuration, bumps: false })
          opts.log(`${tag}, orders and bumps: ${target} orders/s for ${opts.rateDuration} s, ${screenCount} screens`)
          const full = await phase({ ...t.ctx, rate: target, seconds: opts.rateDuration })
          opts.log(`${tag}, bumps alone: the lines of the orders-alone phase, started at ${target} orders/s, for ${opts.rateDuration} s`)
          const bumpsOnly = await phase({ ...t.ctx, rate: target, seconds: opts.rateDuration, bumpOnly: ordersOnly.created })
          const orderUs = perOrderUs(ordersOnly)
          const bumpUs = bumpsOnly.cpuSec === null || bumpsOnly.bumps.ok === 0 ? null : (bumpsOnly.cpuSec / bumpsOnly.bumps.ok) * 1e6
          const marginalUs = perBumpUs(full, orderUs)
          byTarget.get(t)!.push({ floor: floorRow, ordersOnly, bumpsOnly, full, orderUs, bumpUs, marginalUs })
          opts.log(`[kds]   floor p99 ${floorRow.p99Ms.toFixed(2)} ms; bump→screen p50 ${quantile(full.bumpToScreen, 0.5).toFixed(2)} ms, p99 ${quantile(full.bumpToScreen, 0.99).toFixed(2)} ms ` +
            `over ${full.bumpToScreen.length} deliveries; ${full.orders.ok} orders, ${full.bumps.ok} bumps, missing ${full.deliveries.missing}; ` +
            `server CPU ${orderUs?.toFixed(0) ?? '?'} µs/order (alone), ${bumpUs?.toFixed(0) ?? '?'} µs/bump (alone; ${bumpsOnly.bumps.ok} bumps, p99 ${quantile(bumpsOnly.bumpToScreen, 0.99).toFixed(2)} ms), ${marginalUs?.toFixed(0) ?? '?'} µs/bump (marginal); ` +
            `server CPU % orders alone ${pct(ordersOnly.cpuSec, ordersOnly)} (sys ${pct(ordersOnly.sysSec, ordersOnly)}), bumps alone ${pct(bumpsOnly.cpuSec, bumpsOnly)} (sys ${pct(bumpsOnly.sysSec, bumpsOnly)}), both ${pct(full.cpuSec, full)} (sys ${pct(full.sysSec, full)}); ` +
            `bumps alone per bump: ${perBumpSplit(bumpsOnly)}; load average ${loadavg()[0]!.toFixed(2)}`)
        }
      }

      const ok = (p: PhaseResult) => p.deliveries.missing === 0 && p.orders.failed === 0 && p.bumps.failed === 0 && p.orders.ok >= p.rate * p.seconds * 0.9
      const rows: BenchRow[] = []
      const summaries = new Map<Target, { p99: number[]; floorP99: number[]; bumpUs: number[]; marginalUs: number[]; sysUs: number[]; orderUs: number[]; allOk: boolean }>()
      for (const t of targets) {
        const rs = byTarget.get(t)!
        const mine = t === targets[0]
        const role = mine ? 'ours' : 'baseline'
        const who = mine ? '' : ' (compared checkout)'
        const s = {
          p99: rs.map((r) => quantile(r.full.bumpToScreen, 0.99)),
          floorP99: rs.map((r) => r.floor.p99Ms),
          bumpUs: rs.map((r) => r.bumpUs ?? NaN),
          marginalUs: rs.map((r) => r.marginalUs ?? NaN),
          sysUs: rs.map((r) => (r.bumpsOnly.sysSec === null || r.bumpsOnly.bumps.ok === 0 ? NaN : (r.bumpsOnly.sysSec / r.bumpsOnly.bumps.ok) * 1e6)),
          orderUs: rs.map((r) => r.orderUs ?? NaN),
          allOk: rs.every((r) => ok(r.full)),
        }
        summaries.set(t, s)
        const mid = rs.map((r, i) => ({ r, p99: s.p99[i]! })).sort((a, b) => a.p99 - b.p99)[(rs.length - 1) >> 1]!.r
        const load = `${target} orders/s + ${Math.round(median(rs.map((r) => r.full.bumps.ok / r.full.seconds)))} bumps/s (${via === 'socket' ? 'socket' : 'HTTP'}), ${screenCount} screens`
        const range = {
          p99RangeMs: [Math.min(...s.p99), Math.max(...s.p99)], p99PerRunMs: s.p99, floorP99PerRunMs: s.floorP99, cpuUsPerBumpPerRun: s.bumpUs, systemCpuUsPerBumpPerRun: s.sysUs, marginalCpuUsPerBumpPerRun: s.marginalUs, cpuUsPerOrderPerRun: s.orderUs,
          eventLoopCpuUsPerBumpPerRun: rs.map((r) => (r.bumpsOnly.threads && r.bumpsOnly.bumps.ok ? (r.bumpsOnly.threads.main / r.bumpsOnly.bumps.ok) * 1e6 : null)),
          otherThreadsCpuUsPerBumpPerRun: rs.map((r) => (r.bumpsOnly.threads && r.bumpsOnly.bumps.ok ? (r.bumpsOnly.threads.other / r.bumpsOnly.bumps.ok) * 1e6 : null)),
          bumpsPerCommitPerRun: rs.map((r) => (r.bumpsOnly.commits?.commits ? r.bumpsOnly.bumps.ok / r.bumpsOnly.commits.commits : null)),
          root: t.root,
        }
        // Headline rows first (the README shows the first ones): the run with the median p99, its
        // p99 the median over the runs, the range and the floor of the same runs in the name.
        rows.push(row(`bump→screen @${target} orders/s${who}: median of ${runs} runs (p99 ${span(s.p99)} ms; floor p99 ${span(s.floorP99)} ms)`, load, mid.full, mid.full.bumpToScreen, mid.full.bumps.ok, median(s.bumpUs), {
          p99Ms: median(s.p99), role, series: `bump→screen, ${runs} runs${who}`, extra: range,
        }))
        rows.push({ ...mid.floor, scenario: `floor: GET /healthz${who}: median of ${runs} runs (p99 ${span(s.floorP99)} ms)`, p99Ms: median(s.floorP99), role, series: `floor${who}` })
        rows.push(row(`order→screen @${target} orders/s${who}: median of ${runs} runs`, load, mid.full, mid.full.orderToScreen, mid.full.orders.ok, median(s.orderUs), {
          p99Ms: median(rs.map((r) => quantile(r.full.orderToScreen, 0.99))), role, series: `order→screen, ${runs} runs${who}`,
        }))
      }
      for (const t of targets) {
        const who = t === targets[0] ? '' : ' (compared checkout)'
        const role = t === targets[0] ? 'ours' : 'baseline'
        byTarget.get(t)!.forEach((r, i) => {
          rows.push(row(`bump→screen @${target} orders/s${who} #${i + 1}`, `${target} orders/s, run ${i + 1}`, r.full, r.full.bumpToScreen, r.full.bumps.ok, r.bumpUs, { role, series: `bump→screen, each run${who}` }))
          rows.push({ ...r.floor, scenario: `floor: GET /healthz${who} #${i + 1}`, load: `${floorRate} req/s, run ${i + 1}`, role, series: `floor, each run${who}` })
        })
      }

      // The highest order rate with bump→screen p99 under 20 ms, on this checkout: the target rate's
      // answer is its five runs (the median run), the other rates one step each.
      const mine = targets[0]!
      const mineRuns = byTarget.get(mine)!
      const medianRun = mineRuns.map((r) => r.full).sort((a, b) => quantile(a.bumpToScreen, 0.99) - quantile(b.bumpToScreen, 0.99))[(mineRuns.length - 1) >> 1]!
      const results: PhaseResult[] = []
      const passes = (p: PhaseResult) => ok(p) && quantile(p.bumpToScreen, 0.99) < P99_LIMIT_MS
      const step = async (rate: number): Promise<PhaseResult> => {
        if (rate === target) return medianRun
        opts.log(`[kds] step: ${rate} orders/s for ${opts.rateDuration} s, ${screenCount} screens`)
        const p = await phase({ ...mine.ctx, rate, seconds: opts.rateDuration })
        results.push(p)
        const bumpsPerSec = Math.round(p.bumps.ok / p.seconds)
        const load = `${rate} orders/s + ${bumpsPerSec} bumps/s, ${screenCount} screens`
        rows.push(row(`bump→screen @${rate} orders/s`, load, p, p.bumpToScreen, p.bumps.ok, null, { series: 'bump→screen, rate steps' }))
        opts.log(`[kds]   bump→screen p50 ${quantile(p.bumpToScreen, 0.5).toFixed(2)} ms, p99 ${quantile(p.bumpToScreen, 0.99).toFixed(2)} ms over ${p.bumpToScreen.length} deliveries; ` +
          `${p.orders.ok} orders, ${p.bumps.ok} bumps, missing deliveries ${p.deliveries.missing}; CPU % server ${p.cpuSec === null ? '?' : ((p.cpuSec / p.seconds) * 100).toFixed(0)}, ` +
          `load generator ${p.clientCpuPct.loadGenerator.toFixed(0)}, screens ${p.clientCpuPct.screens?.toFixed(0) ?? '?'}; load average ${loadavg()[0]!.toFixed(2)}`)
        return p
      }
      let lastPass: number | null = null
      let firstFail: number | null = null
      // One step over the limit may be another process's burst on a shared machine: the stepping
      // stops after two failing steps in a row, and the answer is the last pass before them.
      let failedInRow = 0
      const stepped = new Map<number, PhaseResult>()
      for (const rate of rates) {
        const p = await step(rate)
        stepped.set(rate, p)
        if (passes(p)) {
          lastPass = rate
          firstFail = null
          failedInRow = 0
        } else {
          firstFail ??= rate
          if (++failedInRow === 2) break
        }
      }
      // Narrow the answer between the last passing and the first failing step (two halvings).
      for (let i = 0; i < 2 && lastPass !== null && firstFail !== null; i++) {
        const mid = Math.round((lastPass + firstFail) / 20) * 10
        if (mid <= lastPass || mid >= firstFail) break
        const p = await step(mid)
        stepped.set(mid, p)
        if (passes(p)) lastPass = mid
        else firstFail = mid
      }

      const best = lastPass === null ? null : stepped.get(lastPass)!
      const firstOver = firstFail === null ? undefined : stepped.get(firstFail)
      const s = summaries.get(mine)!
      const p99 = median(s.p99)
      const bumpUs = median(s.bumpUs)
      const targets_: NonNullable<ScenarioResult['targets']> = [
        {
          target: `bump→screen p99 < ${TARGET.p99Ms} ms at ${target} orders/s with ${screenCount} screens (median of ${runs} runs)`,
          measured: `median p99 ${p99.toFixed(2)} ms, range ${span(s.p99)} ms over ${runs} runs; floor (GET /healthz) p99 ${span(s.floorP99)} ms in the same runs${s.allOk ? '' : '; some run missed deliveries or failed requests'}`,
          met: s.allOk && p99 < TARGET.p99Ms && screenCount >= 50,
        },
        {
          target: `server CPU ≤ ${TARGET.cpuUsPerBump} µs per bump, fan-out included, at ${target} orders/s with ${screenCount} screens (median of ${runs} runs)`,
          measured: `median ${bumpUs.toFixed(0)} µs per bump (bumps alone), range ${span(s.bumpUs, 0)} µs, of which kernel ${median(s.sysUs).toFixed(0)} µs; marginal in the runs with orders ${span(s.marginalUs, 0)} µs (orders alone ${span(s.orderUs, 0)} µs per order)`,
          met: bumpUs <= TARGET.cpuUsPerBump,
        },
        {
          target: `highest order rate with bump→screen p99 < ${P99_LIMIT_MS} ms`,
          measured: best
            ? `${best.rate} orders/s (p99 ${quantile(best.bumpToScreen, 0.99).toFixed(2)} ms)` + (firstOver
              ? `; at ${firstOver.rate} orders/s p99 ${quantile(firstOver.bumpToScreen, 0.99).toFixed(2)} ms, ${firstOver.orders.ok}/${Math.round(firstOver.rate * firstOver.seconds)} orders served`
              : `; the highest step tried (${rates[rates.length - 1]}), so the limit is above it`)
            : 'none of the steps',
          met: best !== null && best.rate >= target,
        },
      ]
      if (compare) {
        const c = summaries.get(targets[1]!)!
        targets_.push({
          target: 'this checkout against the compared one, same run, alternating',
          measured: `bump→screen median p99 ${p99.toFixed(2)} vs ${median(c.p99).toFixed(2)} ms; server CPU per bump (alone) ${bumpUs.toFixed(0)} vs ${median(c.bumpUs).toFixed(0)} µs (${(median(c.bumpUs) / bumpUs).toFixed(2)}×), marginal ${median(s.marginalUs).toFixed(0)} vs ${median(c.marginalUs).toFixed(0)} µs; per order alone ${median(s.orderUs).toFixed(0)} vs ${median(c.orderUs).toFixed(0)} µs`,
          met: bumpUs < median(c.bumpUs),
        })
      }
      const notes = [
        `bump→screen: from sending the bump (${via === 'socket' ? 'a `bump` frame on a cook\'s kitchen socket, as the kitchen page does; 6 cook sockets on a station without items, so they get only their acks' : 'PUT /staff/kds/items/{id}/bump'}; BENCH_KDS_BUMP_VIA=${via === 'socket' ? 'http' : 'socket'} for the other way) to reading the \`item\` frame on each kitchen socket showing that station ` +
          '(samples = bumps × screens reached); order→screen: from sending POST /storefront/orders to the `ticket` frame',
        `${runs} runs at ${target} orders/s${compare ? ', the two checkouts alternating run by run' : ''}; each run measures the floor (GET /healthz at ${floorRate}/s), then ${target} orders/s alone, then ${target} orders/s with their bumps, then bumps alone (the lines of the orders-alone phase, started at ${target} orders/s as if their orders arrived then), ${opts.rateDuration} s each. ` +
          'The headline rows are the run with the median p99, with the median p99 over the runs; the per-run rows (#1…) follow',
        'srv µs/op: server CPU (user + system, /proc) per bump on bump rows, from the bumps-alone phase: its CPU / its bumps, so it includes the bump\'s fan-out to the screens, the status frames and the events it causes; ' +
          'the JSON also has the marginal cost in the run with orders ((CPU − orders × µs per order alone) / bumps; noisier, as it subtracts the larger order cost) and the kernel share; ' +
          'per order on order rows (the orders-alone phase: creation and its ticket fan-out); the rate-step rows leave it empty (their JSON has serverCpuUsPerOp: CPU / (orders + bumps))',
        `the server, the load generator (this process: orders and bumps over 32 keep-alive connections) and the ${screenCount} screens (one more process) share the machine's cores; srv CPU % is the server process alone (100 = one core)`,
        `screens: ${[...mine.ctx.perStation].map(([st, n]) => `${n} × ${st ?? 'all stations'}`).join(', ')}; every line is bumped three times (to served), a cook's pause of ${gapMs} ms ± 50 % apart`,
        'every expected delivery was checked (each bump to every screen of its station and every all-station screen); a step fails with p99 ≥ 20 ms, missing deliveries, failed requests, or fewer than 90 % of the offered orders served; ' +
          'the stepping stops after two failing steps in a row and then halves the gap twice',
        'group commit on (each batch answered after an fdatasync of the WAL), fresh database file per checkout; storefront orders (takeaway and on-table), 2–3 lines each',
        `the floor row is a bare GET /healthz round trip at about the bump rate of ${target} orders/s (no auth, no write, no socket): the latency this machine adds to any request at that moment`,
        ...(compare ? [`compared checkout: ${compare} (its rows are marked so, role baseline)`] : []),
      ]
      return { name: 'kds', rows, notes, targets: targets_, labels: { perReq: 'srv µs/op' } }
    } catch (err) {
      const out = started.map((t) => t.server?.output()).filter(Boolean).join('\n--- next server ---\n')
      if (out) (err as Error).message += `\n--- server output ---\n${out}`
      throw err
    } finally {
      for (const t of started) await stopTarget(t)
    }
  },
}

export default scenario
