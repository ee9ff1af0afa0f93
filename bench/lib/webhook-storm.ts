/**
 * The webhook storm (issue 10 item 6): one server, two accounts. Owner B places orders at a steady
 * rate and has two healthy endpoints. Owner A has 60 `*` endpoints pointing at a receiver that
 * refuses connections, never answers, or answers 500, and places 300 orders (18,000 failing
 * deliveries). In the same server: B alone ("idle"), then B while A places its orders ("storm"),
 * each phase four windows long. B's order-create latency idle vs storm is the fairness measure
 * (target: p99 within 1.5× of idle).
 *
 * The endpoint cap is raised to 60 for this run (WEBHOOK_MAX_ENDPOINTS) so the scenario can
 * be reproduced; the other limits are the defaults. Retries use the shortened bench schedule so
 * that A's failing deliveries are retried inside the run.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { mkdtempSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import type { BenchRow, ScenarioOptions } from './scenario.ts'
import { appArgs, cpuSeconds, freePort, runNode, startServer, type Server } from './proc.ts'
import { unlimitedPlan } from './unlimited-plan.ts'
import { quantile } from './load.ts'
import { Api, Receiver, paced, type Demo } from './webhook-kit.ts'

/** What A's receiver does; `none`: A has no endpoints (the control: what A's orders alone cost B). */
export type StormKind = 'refused' | 'hang' | '500' | 'none'

const A_ENDPOINTS = 60
const A_ORDERS = 300
/** Windows per phase (idle, storm); each lasts half of --rate-duration. */
const WINDOWS = 4
/**
 * B's steady rate. A's orders are paced too (300 over the storm windows: 20/s by default): the
 * measure is what A's webhooks cost B, not what a burst of A's order writes costs (that slows B by
 * itself, webhooks or not; `--only storm-none` is the control without endpoints).
 */
const B_RATE = Number(process.env.BENCH_STORM_B_RATE ?? 50)

export interface StormEnv { root: string; dbDir: string; timeoutMs: number; retrySchedule: string }

const sorted = (xs: number[]) => Float64Array.from(xs).sort()
const median = (xs: number[]) => quantile(sorted(xs), 0.5)

interface Account { api: Api; orderPath: string; orderBody: unknown; ownerId: number }

async function account(server: Server, demo: Demo & { owner: { id: number } }): Promise<Account> {
  const api = new Api(server.url, demo.owner.token)
  const menu = (await api.call('GET', `/restaurants/${demo.store.id}/menu`)).json as Array<{ items: Array<{ id: number; is_sold_out: boolean }> }>
  const item = menu.flatMap((c) => c.items).find((i) => !i.is_sold_out)!
  return { api, ownerId: demo.owner.id, orderPath: `/restaurants/${demo.store.id}/orders`, orderBody: { type: 'takeaway', customer_name: 'Bench', items: [{ item_id: item.id, quantity: 1 }] } }
}

async function endpoint(a: Account, url: string): Promise<{ id: number; secret: string }> {
  const r = await a.api.call('POST', '/webhook-endpoints', { url, events: ['*'] })
  if (r.status !== 201) throw new Error(`endpoint create: ${r.status} ${JSON.stringify(r.json)}`)
  return r.json as { id: number; secret: string }
}


function latencyRow(name: string, load: string, secs: number, lat: number[], failed: number, cpu: number | null, extra: Record<string, unknown>): BenchRow {
  const l = sorted(lat)
  return {
    scenario: name, load, durationSec: Math.round(secs * 100) / 100, requests: lat.length, throughput: lat.length / secs,
    p50Ms: quantile(l, 0.5), p90Ms: quantile(l, 0.9), p99Ms: quantile(l, 0.99), maxMs: l.length ? l[l.length - 1]! : NaN,
    non2xx: failed, errors: 0, ratio: null,
    serverCpuPct: cpu === null ? null : (cpu / secs) * 100,
    serverCpuUsPerReq: cpu === null || lat.length === 0 ? null : (cpu / lat.length) * 1e6,
    extra,
  }
}

/** Run one storm; returns B's idle row and B's storm row (ratio = storm p99 / idle p99). */
export async function storm(kind: StormKind, opts: ScenarioOptions, env: StormEnv): Promise<BenchRow[]> {
  const dir = mkdtempSync(join(env.dbDir, 'dispatch-bench-storm-'))
  const dbPath = join(dir, 'bench.db')
  const seed = async () => JSON.parse((await runNode(['bin/dispatch.js', 'seed', '--demo', '--json'], { DB_PATH: dbPath, LOG_LEVEL: 'warn' }, env.root)).trim().split('\n').pop()!) as Demo & { owner: { id: number } }
  const demoA = await seed()
  // A's 60 endpoints are more than the Pro plan's 20 (the quota check still runs).
  unlimitedPlan(dbPath, demoA.owner.id)
  const demoB = await seed()
  const port = await freePort()
  let server: Server | null = null
  const rcvB = new Receiver()
  let rcvA: ChildProcess | null = null
  let aArrivals: number | null = null
  try {
    // BENCH_SERVER_NODE_ARGS, e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof", to look inside the server.
    const nodeArgs = (process.env.BENCH_SERVER_NODE_ARGS ?? '').split(' ').filter(Boolean)
    server = await startServer([...nodeArgs, ...appArgs(env.root)], {
      DB_PATH: dbPath, PORT: String(port), HOST: '127.0.0.1', SITE_URL: `http://127.0.0.1:${port}`, LOG_LEVEL: 'warn', RATE_LIMIT_PER_MINUTE: '100000000',
      DEMO_SEED: '0', WEBHOOK_ALLOW_LOOPBACK: '1', WEBHOOK_RETRY_SCHEDULE: env.retrySchedule, WEBHOOK_TIMEOUT_MS: String(env.timeoutMs),
      WEBHOOK_MAX_ENDPOINTS: String(A_ENDPOINTS),
    }, port, '/healthz', env.root)
    const a = await account(server, demoA)
    const b = await account(server, demoB)
    await rcvB.start()
    rcvB.behaviour = ['ok', 'ok']
    for (let i = 0; i < 2; i++) rcvB.secrets[i] = (await endpoint(b, `http://127.0.0.1:${rcvB.port}/ep/${i}`)).secret
    // A's receiver: a port nobody listens on (refused at once), or one that never answers or answers 500.
    let aBase: string
    if (kind === 'refused' || kind === 'none') aBase = `http://127.0.0.1:${await freePort()}`
    else {
      // In a process of its own (storm-receiver.ts): its work must not land where B is measured.
      const child = spawn(process.execPath, ['--import', 'tsx', 'bench/lib/storm-receiver.ts', kind], { cwd: env.root, stdio: ['ignore', 'pipe', 'inherit'] })
      rcvA = child
      let out = ''
      child.stdout!.on('data', (c: Buffer) => {
        out += c.toString()
        const m = /arrivals (\d+)/.exec(out)
        if (m) aArrivals = Number(m[1])
      })
      const port = await new Promise<number>((resolve, reject) => {
        child.once('exit', () => reject(new Error('storm receiver exited')))
        const check = () => { const m = /port (\d+)/.exec(out); if (m) resolve(Number(m[1])); else setTimeout(check, 20) }
        check()
      })
      aBase = `http://127.0.0.1:${port}`
    }
    const aIds: number[] = []
    if (kind !== 'none') for (let i = 0; i < A_ENDPOINTS; i++) aIds.push((await endpoint(a, `${aBase}/ep/${i}`)).id)

    // B alone first (A has done nothing yet), then the storm: B while A places its orders, and
    // whatever they set off (retries, probes). Each phase is cut into windows whose p99s are also
    // reported: the machine is shared, and one stall of another process in one window should not
    // decide the comparison on its own. (Alternating the phases would let a storm's leftovers —
    // the retries of an implementation without a breaker — run in the "idle" windows.)
    const win = opts.rateDuration / 2
    const aRate = A_ORDERS / (WINDOWS * win)
    opts.log(`[webhooks] storm-${kind}: warm-up ${opts.warmup} s, ${WINDOWS} × ${win} s B alone at ${B_RATE}/s, then ${WINDOWS} × ${win} s B + A at ${aRate}/s on ${A_ENDPOINTS} failing endpoints (${A_ORDERS} orders, ${A_ORDERS * A_ENDPOINTS} deliveries)`)
    await paced(b.api, b.orderPath, b.orderBody, B_RATE, opts.warmup)
    const idle = { lat: [] as number[], at: [] as number[], failed: 0, first: null as string | null, secs: 0, cpu: 0 as number | null, windowP99: [] as number[] }
    const during = { lat: [] as number[], at: [] as number[], failed: 0, first: null as string | null, secs: 0, cpu: 0 as number | null, windowP99: [] as number[] }
    const aLat: number[] = []
    let aFailed = 0
    const t0 = performance.now()
    const pid = server.proc.pid
    rcvB.reset()
    rcvB.measuring = true
    for (const phase of [idle, during]) {
      for (let w = 0; w < WINDOWS; w++) {
        const c0 = cpuSeconds(pid)
        const w0 = performance.now()
        const lat: number[] = []
        const bRun = paced(b.api, b.orderPath, b.orderBody, B_RATE, win, lat, phase.at)
        const aRun = phase === during ? paced(a.api, a.orderPath, a.orderBody, aRate, win, aLat) : null
        const [r, ar] = await Promise.all([bRun, aRun])
        phase.secs += (performance.now() - w0) / 1000
        const c1 = cpuSeconds(pid)
        phase.cpu = c0 === null || c1 === null || phase.cpu === null ? null : phase.cpu + (c1 - c0)
        phase.lat.push(...lat)
        phase.windowP99.push(quantile(sorted(lat), 0.99))
        phase.failed += r.failed
        phase.first ??= r.firstFailure
        if (ar) aFailed += ar.failed
      }
    }
    rcvB.measuring = false

    // What A's endpoints look like now (the dashboard view), then the attempt log from the file.
    const states: Record<string, number> = {}
    for (let page = 1; page <= Math.ceil(A_ENDPOINTS / 50); page++) {
      const list = (await a.api.call('GET', `/webhook-endpoints?page=${page}`)).json as { data: Array<{ state?: string; paused?: boolean }> }
      for (const e of list.data) {
        const st = e.state ?? (e.paused ? 'paused' : 'active')
        states[st] = (states[st] ?? 0) + 1
      }
    }
    await Promise.all([a.api.pool.close(), b.api.pool.close()])
    await server.stop()
    server = null
    if (rcvA) {
      const exited = once(rcvA, 'exit')
      rcvA.kill('SIGTERM')
      await exited
      rcvA = null
    }
    const db = new Database(dbPath, { readonly: true })
    let aAttempts = 0
    let aDeliveries: Record<string, number> = {}
    try {
      const inA = `endpoint_id IN (${aIds.join(',') || 'NULL'})`
      aAttempts = db.prepare(`SELECT COUNT(*) FROM webhook_attempts WHERE delivery_id IN (SELECT id FROM webhook_deliveries WHERE ${inA})`).pluck().get() as number
      aDeliveries = Object.fromEntries((db.prepare(`SELECT status, COUNT(*) AS n FROM webhook_deliveries WHERE ${inA} GROUP BY status`).all() as Array<{ status: string; n: number }>).map((r) => [r.status, r.n]))
    } finally {
      db.close()
    }
    const bHook = sorted(rcvB.lat)
    // The slowest of B's orders: [s since the first window began, ms]; a stall shows as a cluster.
    const slowest = (lat: number[], at: number[]) => lat.map((ms, i) => [Math.round((at[i]! - t0) / 10) / 100, Math.round(ms)]).sort((x, y) => y[1]! - x[1]!).slice(0, 12)
    const idleRow = latencyRow(`storm-${kind}: B idle`, `B ${B_RATE} orders/s, A quiet`, idle.secs, idle.lat, idle.failed, idle.cpu, { windows: WINDOWS, windowSecs: win, windowP99Ms: idle.windowP99, medianWindowP99Ms: median(idle.windowP99), bSlowest: slowest(idle.lat, idle.at), bFirstFailure: idle.first })
    const stormRow = latencyRow(`storm-${kind}: B during A's storm`, kind === 'none' ? `B ${B_RATE}/s + A ${aRate}/s, no endpoints (control)` : `B ${B_RATE}/s + A ${aRate}/s × ${A_ENDPOINTS} ${kind} endpoints`, during.secs, during.lat, during.failed, during.cpu, {
      windows: WINDOWS, windowSecs: win, windowP99Ms: during.windowP99, medianWindowP99Ms: median(during.windowP99), aOrders: aLat.length, aOrderFailures: aFailed, aOrderP50Ms: quantile(sorted(aLat), 0.5), aOrderP99Ms: quantile(sorted(aLat), 0.99),
      bFirstFailure: during.first, aAttempts, aDeliveries, aEndpointStates: states, aRequestsAtReceiver: aArrivals,
      bSlowest: slowest(during.lat, during.at),
      bWebhookFirstAttemptP50Ms: quantile(bHook, 0.5), bWebhookFirstAttemptP99Ms: quantile(bHook, 0.99), bWebhookDeliveries: rcvB.lat.length,
    })
    stormRow.ratio = stormRow.p99Ms / idleRow.p99Ms
    return [idleRow, stormRow]
  } catch (err) {
    if (server) (err as Error).message += `\n--- server output ---\n${server.output()}`
    throw err
  } finally {
    await server?.stop()
    if (rcvB.port) await rcvB.close()
    rcvA?.kill('SIGKILL')
    rmSync(dir, { recursive: true, force: true })
  }
}
