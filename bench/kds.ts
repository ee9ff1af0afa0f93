/**
 * Kitchen screens under load (issue 5 item 9): the real server in its own process
 * (`node --import tsx src/main.ts`), storefront orders arriving at a steady rate, cooks bumping
 * every line queued → preparing → ready → served over HTTP, and 50 kitchen screens on /ws/kds in a
 * separate process (bench/kds-screens.ts). Reported: bump-to-screen latency, from the moment the
 * cook's `PUT /staff/kds/items/{id}/bump` is sent to the moment each screen showing that station
 * reads the `item` frame off its socket; and order-to-screen latency (storefront POST sent → `ticket`
 * frame). The order rate is stepped up until p99 passes 20 ms, the server falls behind, or the
 * steps run out; the highest rate that kept p99 under 20 ms is the answer.
 *
 * Every delivery is checked: each bump must reach every screen of its station plus every
 * all-station screen, each new order every screen that shows one of its lines.
 *
 * Environment: BENCH_KDS_SCREENS (default 50), BENCH_KDS_RATES (orders/s, comma-separated;
 * default 25,50,100,200,400,800,1600), BENCH_KDS_GAP_MS (a cook's mean pause between two steps of
 * one item, default 150), BENCH_DB_DIR (where the SQLite file goes), BENCH_SERVER_NODE_ARGS (extra
 * node flags for the server, e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`).
 */
import { fork, type ChildProcess } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { Pool } from 'undici'
import type { BenchRow, Scenario, ScenarioOptions, ScenarioResult } from './lib/scenario.ts'
import { cpuSeconds, freePort, runNode, startServer, type Server, LOAD_TEST_LIMITS } from './lib/proc.ts'
import { quantile } from './lib/load.ts'
import { rng } from './lib/rng.ts'
import { monoMs, type ParentMsg, type ScreenSpec, type WorkerMsg } from './kds-screens.ts'

const ROOT = fileURLToPath(new URL('..', import.meta.url))
const P99_LIMIT_MS = 20
const TARGET = { rate: 100, p99Ms: 5 }

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

interface PhaseResult {
  rate: number
  seconds: number
  orders: { ok: number; failed: number; httpMs: number[] }
  bumps: { ok: number; failed: number; httpMs: number[] }
  bumpToScreen: Float64Array
  orderToScreen: Float64Array
  deliveries: { expected: number; received: number; missing: number }
  frames: number
  cpuSec: number | null
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
async function phase(o: { pool: Pool; server: Server; screens: Screens; demo: Demo; bodies: string[]; cooks: string[]; perStation: Map<string | null, number>; rate: number; seconds: number; gapMs: number }): Promise<PhaseResult> {
  const { pool, rate, seconds, gapMs, demo, bodies, cooks, perStation } = o
  const allScreens = perStation.get(null) ?? 0
  const screensFor = (station: string | null) => allScreens + (station === null ? 0 : perStation.get(station) ?? 0)
  const sent = new Map<string, { t0: number; expect: number }>()
  const res: PhaseResult = {
    rate, seconds, orders: { ok: 0, failed: 0, httpMs: [] }, bumps: { ok: 0, failed: 0, httpMs: [] },
    bumpToScreen: new Float64Array(0), orderToScreen: new Float64Array(0), deliveries: { expected: 0, received: 0, missing: 0 }, frames: 0, cpuSec: null, clientCpuPct: { loadGenerator: 0, screens: null }, errors: 0,
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
    const r = await pool.request({ method: 'PUT', path: `/api/v1/staff/kds/items/${line.id}/bump`, headers: { authorization: `Bearer ${cooks[seq++ % cooks.length]}` } })
    const text = await r.body.text()
    res.bumps.httpMs.push(monoMs() - t0)
    if (r.statusCode !== 200) { res.bumps.failed++; return }
    res.bumps.ok++
    const state = (JSON.parse(text) as { item: { kds_state: string } }).item.kds_state
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
    const stations = new Set(created.items.map((l) => l.station).filter((s): s is string => s !== null))
    sent.set(`t${created.id}`, { t0, expect: allScreens + [...stations].reduce((n, s) => n + (perStation.get(s) ?? 0), 0) })
    for (const line of created.items) later(gapMs * (0.5 + rand()), () => void bump(line))
  })

  await o.screens.collect() // forget anything left from the previous phase
  const cpu0 = cpuSeconds(o.server.proc.pid)
  const screens0 = cpuSeconds(o.screens.proc.pid)
  const self0 = process.cpuUsage()
  await paced(rate, seconds, (i) => void order(bodies[i % bodies.length]!))
  stopped = true
  for (const t of timers) clearTimeout(t)
  const deadline = monoMs() + 30_000
  while (inFlight > 0 && monoMs() < deadline) await new Promise((r) => setTimeout(r, 5))
  const cpu1 = cpuSeconds(o.server.proc.pid)
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

function row(name: string, load: string, p: PhaseResult, lat: Float64Array, count: number): BenchRow {
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
    serverCpuUsPerReq: p.cpuSec === null || p.orders.ok + p.bumps.ok === 0 ? null : (p.cpuSec / (p.orders.ok + p.bumps.ok)) * 1e6,
    extra: {
      samples: lat.length,
      meanMs: lat.length ? sum / lat.length : NaN,
      ordersOk: p.orders.ok,
      bumpsOk: p.bumps.ok,
      httpP99Ms: quantile(Float64Array.from(ok.httpMs).sort(), 0.99),
      deliveries: p.deliveries,
      framesToScreens: p.frames,
      clientCpuPct: p.clientCpuPct,
      loadAverageAfter: loadavg(),
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

export const scenario: Scenario = {
  name: 'kds',
  description: 'Kitchen screens: bump-to-screen latency at the kitchen socket with storefront orders arriving at a steady rate',
  async run(opts: ScenarioOptions): Promise<ScenarioResult> {
    const screenCount = Math.round(envList('BENCH_KDS_SCREENS', [50])[0]!)
    const rates = envList('BENCH_KDS_RATES', [25, 50, 100, 200, 400, 800, 1600])
    const gapMs = envList('BENCH_KDS_GAP_MS', [150])[0]!
    const dir = mkdtempSync(join(process.env.BENCH_DB_DIR ?? tmpdir(), 'dispatch-bench-kds-'))
    const dbPath = join(dir, 'bench.db')
    let server: Server | null = null
    let screens: Screens | null = null
    let pool: Pool | null = null
    try {
      const demo = JSON.parse((await runNode(['bin/dispatch.js', 'seed', '--demo', '--json'], { DB_PATH: dbPath, LOG_LEVEL: 'warn' }, ROOT)).trim().split('\n').pop()!) as Demo
      const port = await freePort()
      const nodeArgs = (process.env.BENCH_SERVER_NODE_ARGS ?? '').split(/\s+/).filter(Boolean)
      server = await startServer([...nodeArgs, '--import', 'tsx', 'src/main.ts'], {
        DB_PATH: dbPath, PORT: String(port), HOST: '127.0.0.1', SITE_URL: `http://127.0.0.1:${port}`, LOG_LEVEL: 'warn', ...LOAD_TEST_LIMITS, DEMO_SEED: '0',
      }, port, '/healthz', ROOT)
      const base = `${server.url}/api/v1`

      const menuRes = await fetch(`${base}/storefront/menu`, { headers: { 'x-storefront-token': demo.store.storefront_token } })
      const categories = (await menuRes.json()) as Array<{ station: string | null; items: Array<{ id: number; is_sold_out: boolean; variations: Array<{ id: number }>; extras: Array<{ id: number }> }> }>
      const menu: MenuItem[] = categories.flatMap((c) => c.items.filter((i) => !i.is_sold_out).map((i) => ({ id: i.id, station: c.station, variations: i.variations.map((x) => x.id), extras: i.extras.map((x) => x.id) })))
      const stations = [...new Set(menu.map((i) => i.station).filter((s): s is string => s !== null))].sort()

      // A few devices signed in by PIN (PIN sign-in is limited to 10 a minute per address): the
      // kitchen member's token drives the station screens, the waiter's the all-station screens,
      // and all three bump as cooks.
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
      screens = Screens.start()
      const conn = await screens.connect(`${base.replace(/^http/, 'ws')}/ws/kds`, specs)
      opts.log(`[kds] ${conn.screens} kitchen screens connected in ${conn.ms.toFixed(0)} ms (${[...perStation].map(([s, n]) => `${s ?? 'all'}: ${n}`).join(', ')})`)

      pool = new Pool(server.url, { connections: 32, pipelining: 1 })
      const bodies = orderBodies(menu)
      const ctx = { pool, server, screens, demo, bodies, cooks: [kitchen, waiter, manager], perStation, gapMs }

      opts.log(`[kds] warm-up: ${rates[0]} orders/s for ${opts.warmup} s`)
      await phase({ ...ctx, rate: rates[0]!, seconds: opts.warmup })

      const rows: BenchRow[] = []
      const results: PhaseResult[] = []
      const floorRate = 7 * TARGET.rate
      opts.log(`[kds] floor: GET /healthz at ${floorRate}/s for ${opts.rateDuration} s`)
      const floorRow = await floor(pool, server, floorRate, opts.rateDuration)
      opts.log(`[kds]   floor p50 ${floorRow.p50Ms.toFixed(2)} ms, p99 ${floorRow.p99Ms.toFixed(2)} ms`)
      const ok = (p: PhaseResult) => p.deliveries.missing === 0 && p.orders.failed === 0 && p.bumps.failed === 0 && p.orders.ok >= p.rate * p.seconds * 0.9
      const passes = (p: PhaseResult) => ok(p) && quantile(p.bumpToScreen, 0.99) < P99_LIMIT_MS
      const step = async (rate: number): Promise<PhaseResult> => {
        opts.log(`[kds] ${rate} orders/s for ${opts.rateDuration} s, ${screenCount} screens`)
        const p = await phase({ ...ctx, rate, seconds: opts.rateDuration })
        results.push(p)
        const bumpsPerSec = Math.round(p.bumps.ok / p.seconds)
        const load = `${rate} orders/s + ${bumpsPerSec} bumps/s, ${screenCount} screens`
        rows.push(row(`bump→screen @${rate} orders/s`, load, p, p.bumpToScreen, p.bumps.ok))
        rows.push(row(`order→screen @${rate} orders/s`, load, p, p.orderToScreen, p.orders.ok))
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
      for (const rate of rates) {
        if (passes(await step(rate))) {
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
        if (passes(await step(mid))) lastPass = mid
        else firstFail = mid
      }

      // The issue's target rate is always measured, even when a lower step already failed.
      if (rates.includes(TARGET.rate) && !results.some((p) => p.rate === TARGET.rate)) await step(TARGET.rate)
      const rateOf = (r: BenchRow) => Number(/@(\d+)/.exec(r.scenario)![1])
      rows.sort((x, y) => rateOf(x) - rateOf(y))
      rows.unshift(floorRow)

      const best = results.find((p) => p.rate === lastPass) ?? null
      const firstOver = results.find((p) => p.rate === firstFail)
      const atTarget = results.find((p) => p.rate === TARGET.rate)
      const targets: NonNullable<ScenarioResult['targets']> = []
      if (atTarget) {
        const p99 = quantile(atTarget.bumpToScreen, 0.99)
        targets.push({ target: `bump→screen p99 < ${TARGET.p99Ms} ms at ${TARGET.rate} orders/s with ${screenCount} screens`, measured: `p99 ${p99.toFixed(2)} ms (p50 ${quantile(atTarget.bumpToScreen, 0.5).toFixed(2)} ms), ${atTarget.deliveries.missing} deliveries missing`, met: ok(atTarget) && p99 < TARGET.p99Ms && screenCount >= 50 })
      }
      targets.push({
        target: `highest order rate with bump→screen p99 < ${P99_LIMIT_MS} ms`,
        measured: best
          ? `${best.rate} orders/s (p99 ${quantile(best.bumpToScreen, 0.99).toFixed(2)} ms)` + (firstOver
            ? `; at ${firstOver.rate} orders/s p99 ${quantile(firstOver.bumpToScreen, 0.99).toFixed(2)} ms, ${firstOver.orders.ok}/${Math.round(firstOver.rate * firstOver.seconds)} orders served`
            : `; the highest step tried (${rates[rates.length - 1]}), so the limit is above it`)
          : 'none of the steps',
        met: best !== null && best.rate >= TARGET.rate,
      })
      const notes = [
        'bump→screen: from sending PUT /staff/kds/items/{id}/bump to reading the `item` frame on each kitchen socket showing that station ' +
          '(samples = bumps × screens reached); order→screen: from sending POST /storefront/orders to the `ticket` frame',
        `the server, the load generator (this process: orders and bumps over 32 keep-alive connections) and the ${screenCount} screens (one more process) share the machine's cores; srv CPU % is the server process alone (100 = one core)`,
        `screens: ${[...perStation].map(([s, n]) => `${n} × ${s ?? 'all stations'}`).join(', ')}; every line is bumped three times (to served), a cook's pause of ${gapMs} ms ± 50 % apart`,
        'every expected delivery was checked (each bump to every screen of its station and every all-station screen); a step fails with p99 ≥ 20 ms, missing deliveries, failed requests, or fewer than 90 % of the offered orders served; ' +
          'the stepping stops after two failing steps in a row and then halves the gap twice',
        'group commit on (each batch answered after an fdatasync of the WAL), fresh database file; storefront orders (takeaway and on-table), 2–3 lines each',
        `the floor row is a bare GET /healthz round trip at about the bump rate of ${TARGET.rate} orders/s (no auth, no write, no socket): the latency this machine adds to any request at that moment`,
      ]
      return { name: 'kds', rows, notes, targets }
    } catch (err) {
      if (server) (err as Error).message += `\n--- server output ---\n${server.output()}`
      throw err
    } finally {
      await pool?.close()
      screens?.close()
      await server?.stop()
      rmSync(dir, { recursive: true, force: true })
    }
  },
}

export default scenario
