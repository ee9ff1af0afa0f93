/**
 * Webhook deliveries (issue 4 item 8): signed POSTs from the real server (its own process) to a
 * local receiver (node:http in this process) on N endpoints, each subscribed to `order.created`;
 * events are made by creating orders over HTTP, so one order fans out to N deliveries.
 *
 * - drain: N healthy endpoints, paused while K orders queue K×N deliveries, then resumed: the
 *   time until the receiver has them all is the maximum delivery throughput.
 * - all healthy @rate: orders at a fixed rate (evenly spaced) for `rateDuration` s so that the N
 *   endpoints are offered half of `--rate` deliveries/s (below saturation, where latency means
 *   something): throughput and first-attempt latency (event created_at → arrival at the receiver).
 * - half failing/hanging @rate: the same, but N/4 endpoints answer 500 and N/4 never answer (time
 *   out); the latency of the healthy half is compared with the all-healthy run.
 * - storm-refused / storm-hang / storm-500 (bench/lib/webhook-storm.ts): owner B's order-create
 *   latency alone, then while owner A's 60 failing endpoints get 300 orders' worth of deliveries,
 *   in the same server (issue 10 item 6: B's p99 within 1.5× of idle). `--only storm-none` adds
 *   the control: A's same orders with no endpoints.
 *
 * The receiver verifies a sample of the deliveries with the `standardwebhooks` package. Retries run
 * on a shortened schedule (WEBHOOK_RETRY_SCHEDULE=5,10,15,20) and a 2 s time limit so that failing
 * endpoints retry and time out inside a full-length run (production: 1 min … 1 h and 10 s).
 * BENCH_SERVER_NODE_ARGS (e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof") is passed to the server's node.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { BenchRow, Scenario, ScenarioOptions, ScenarioResult } from './lib/scenario.ts'
import { appArgs, cpuSeconds, freePort, runNode, startServer, type Server, LOAD_TEST_LIMITS } from './lib/proc.ts'
import { quantile } from './lib/load.ts'
import { Api, Receiver, VERIFY_EVERY, paced, until, type Behaviour, type Demo } from './lib/webhook-kit.ts'
import { storm, type StormKind } from './lib/webhook-storm.ts'

const ROOT = fileURLToPath(new URL('..', import.meta.url))
const ENDPOINTS = Number(process.env.BENCH_WEBHOOK_ENDPOINTS ?? 20)
const TIMEOUT_MS = 2000
const RETRY_SCHEDULE = '5,10,15,20'

interface Setup { server: Server; api: Api; rcv: Receiver; endpoints: number[]; orderPath: string; orderBody: unknown; dir: string }

async function setup(behaviour: Behaviour[], dbDir: string): Promise<Setup> {
  const dir = mkdtempSync(join(dbDir, 'dispatch-bench-webhooks-'))
  const dbPath = join(dir, 'bench.db')
  const demo = JSON.parse((await runNode(['bin/dispatch.js', 'seed', '--demo', '--json'], { DB_PATH: dbPath, LOG_LEVEL: 'warn' }, ROOT)).trim().split('\n').pop()!) as Demo
  const port = await freePort()
  const server = await startServer([...(process.env.BENCH_SERVER_NODE_ARGS ?? '').split(' ').filter(Boolean), ...appArgs(ROOT)], {
    DB_PATH: dbPath, PORT: String(port), HOST: '127.0.0.1', SITE_URL: `http://127.0.0.1:${port}`, LOG_LEVEL: 'warn', ...LOAD_TEST_LIMITS,
    DEMO_SEED: '0', WEBHOOK_ALLOW_LOOPBACK: '1', WEBHOOK_RETRY_SCHEDULE: RETRY_SCHEDULE, WEBHOOK_TIMEOUT_MS: String(TIMEOUT_MS),
  }, port, '/healthz', ROOT)
  const api = new Api(server.url, demo.owner.token)
  const rcv = new Receiver()
  await rcv.start()
  rcv.behaviour = behaviour
  const endpoints: number[] = []
  for (let i = 0; i < behaviour.length; i++) {
    const r = await api.call('POST', '/webhook-endpoints', { url: `http://127.0.0.1:${rcv.port}/ep/${i}`, events: ['order.created'] })
    if (r.status !== 201) throw new Error(`endpoint create: ${r.status} ${JSON.stringify(r.json)}`)
    endpoints.push(r.json.id)
    rcv.secrets[i] = r.json.secret
  }
  const menu = (await api.call('GET', `/restaurants/${demo.store.id}/menu`)).json as Array<{ items: Array<{ id: number; is_sold_out: boolean }> }>
  const item = menu.flatMap((c) => c.items).find((i) => !i.is_sold_out)!
  return { server, api, rcv, endpoints, dir, orderPath: `/restaurants/${demo.store.id}/orders`, orderBody: { type: 'takeaway', customer_name: 'Bench', items: [{ item_id: item.id, quantity: 1 }] } }
}

async function teardown(s: Setup | null): Promise<void> {
  if (!s) return
  await s.api.pool.close().catch(() => {})
  await s.server.stop()
  await s.rcv.close()
  rmSync(s.dir, { recursive: true, force: true })
}

const sorted = (xs: number[]) => Float64Array.from(xs).sort()

function row(scenario: string, load: string, durationSec: number, deliveries: number, lat: number[], s: Setup, cpuSec: number | null, extra: Record<string, unknown>): BenchRow {
  const l = sorted(lat)
  return {
    scenario, load, durationSec: Math.round(durationSec * 100) / 100, requests: deliveries, throughput: deliveries / durationSec,
    p50Ms: quantile(l, 0.5), p90Ms: quantile(l, 0.9), p99Ms: quantile(l, 0.99), maxMs: l.length ? l[l.length - 1]! : NaN,
    non2xx: s.rcv.non2xx, errors: s.rcv.badSignatures, ratio: null,
    serverCpuPct: cpuSec === null ? null : (cpuSec / durationSec) * 100,
    serverCpuUsPerReq: cpuSec === null || deliveries === 0 ? null : (cpuSec / deliveries) * 1e6,
    extra: { verifiedSample: s.rcv.verified, badSignatures: s.rcv.badSignatures, ...extra },
  }
}

/** Max throughput: queue K×N deliveries behind paused endpoints, resume, time the drain. */
async function drain(opts: ScenarioOptions, dbDir: string): Promise<BenchRow> {
  let s: Setup | null = null
  try {
    s = await setup(Array<Behaviour>(ENDPOINTS).fill('ok'), dbDir)
    const st = s
    const orders = Math.max(500, Math.round(opts.duration * 500))
    const expected = orders * ENDPOINTS
    opts.log(`[webhooks] drain: ${ENDPOINTS} endpoints paused, ${orders} orders → ${expected} deliveries queued`)
    await Promise.all(st.endpoints.map((id) => st.api.call('POST', `/webhook-endpoints/${id}/pause`)))
    let done = 0
    await Promise.all(Array.from({ length: 32 }, async () => { while (done < orders) { done++; await st.api.call('POST', st.orderPath, st.orderBody) } }))
    await until(async () => {
      const counts = await Promise.all(st.endpoints.map((id) => st.api.call('GET', `/webhook-endpoints/${id}/deliveries?status=pending`).then((r) => r.json.total as number)))
      return counts.every((c) => c >= orders)
    }, 120_000, 'fan-out of the queued events')
    st.rcv.reset()
    st.rcv.measuring = false
    const cpu0 = cpuSeconds(st.server.proc.pid)
    const started = performance.now()
    await Promise.all(st.endpoints.map((id) => st.api.call('POST', `/webhook-endpoints/${id}/resume`)))
    await until(() => st.rcv.ok2xx >= expected, 300_000, `drain of ${expected} deliveries`)
    const secs = (performance.now() - started) / 1000
    const cpu1 = cpuSeconds(st.server.proc.pid)
    opts.log(`[webhooks] drain: ${expected} deliveries in ${secs.toFixed(2)} s`)
    return row('drain (max)', `${ENDPOINTS} endpoints, ${expected} queued`, secs, st.rcv.ok2xx, [], st, cpu0 === null || cpu1 === null ? null : cpu1 - cpu0, { orders, duplicates: st.rcv.arrivals - expected })
  } catch (err) {
    if (s) (err as Error).message += `\n--- server output ---\n${s.server.output()}`
    throw err
  } finally {
    await teardown(s)
  }
}

/** Fixed event rate; first-attempt latency of all (or the healthy) endpoints. */
async function atRate(name: string, behaviour: Behaviour[], rate: number, opts: ScenarioOptions, dbDir: string): Promise<BenchRow & { healthyP99: number }> {
  let s: Setup | null = null
  try {
    s = await setup(behaviour, dbDir)
    const st = s
    const healthy = behaviour.filter((b) => b === 'ok').length
    opts.log(`[webhooks] ${name}: warm-up ${opts.warmup} s`)
    await paced(st.api, st.orderPath, st.orderBody, rate, opts.warmup)
    await until(() => st.rcv.ok2xx >= Math.round(rate * opts.warmup) * healthy, 60_000, 'warm-up deliveries')
    st.rcv.reset()
    st.rcv.measuring = true
    opts.log(`[webhooks] ${name}: ${rate} orders/s × ${behaviour.length} endpoints (${healthy} healthy) for ${opts.rateDuration} s`)
    const cpu0 = cpuSeconds(st.server.proc.pid)
    const self0 = process.cpuUsage()
    const started = performance.now()
    const { sent, failed } = await paced(st.api, st.orderPath, st.orderBody, rate, opts.rateDuration)
    const expected = (sent - failed) * healthy
    await until(() => st.rcv.latHealthy.length >= expected, 60_000, `${expected} healthy deliveries`)
    const secs = (performance.now() - started) / 1000
    const cpu1 = cpuSeconds(st.server.proc.pid)
    const self = process.cpuUsage(self0)
    st.rcv.measuring = false
    const hp = sorted(st.rcv.latHealthy)
    const r = row(name, `${rate} orders/s × ${behaviour.length} endpoints (${healthy} healthy)`, secs, st.rcv.latHealthy.length, st.rcv.latHealthy, st,
      cpu0 === null || cpu1 === null ? null : cpu1 - cpu0,
      { orders: sent, orderFailures: failed, attemptsAtReceiver: st.rcv.arrivals, benchProcessCpuPct: ((self.user + self.system) / 1e6 / secs) * 100, allEndpointsP99Ms: quantile(sorted(st.rcv.lat), 0.99) })
    return { ...r, healthyP99: quantile(hp, 0.99) }
  } catch (err) {
    if (s) (err as Error).message += `\n--- server output ---\n${s.server.output()}`
    throw err
  } finally {
    await teardown(s)
  }
}

export const scenario: Scenario = {
  name: 'webhooks',
  description: 'signed webhook deliveries to a local receiver from N endpoints: max drain, and latency with all healthy vs half failing/timing out',
  async run(opts: ScenarioOptions): Promise<ScenarioResult> {
    const dbDir = process.env.BENCH_DB_DIR ?? tmpdir()
    const want = (key: string) => opts.only.length === 0 || opts.only.some((o) => key.includes(o))
    const rows: BenchRow[] = []
    const targets: NonNullable<ScenarioResult['targets']> = []
    if (want('drain')) {
      const d = await drain(opts, dbDir)
      rows.push(d)
      targets.push({ target: '>= 5000 signed deliveries/s (drain)', measured: `${Math.round(d.throughput)}/s`, met: d.throughput >= 5000 })
      const dup = d.extra?.duplicates as number
      targets.push({ target: 'drain: every queued delivery arrives exactly once', measured: `${d.requests} delivered, ${dup} extra requests`, met: dup === 0 })
    }
    // Latency is compared below saturation: the N endpoints are offered half of `--rate` deliveries/s.
    const rate = Math.max(1, Math.round(opts.rate / 2 / ENDPOINTS))
    let base: (BenchRow & { healthyP99: number }) | null = null
    if (want('healthy')) rows.push((base = await atRate('all healthy @rate', Array<Behaviour>(ENDPOINTS).fill('ok'), rate, opts, dbDir)))
    if (want('half')) {
      const mixed = Array.from({ length: ENDPOINTS }, (_, i): Behaviour => (i % 2 === 0 ? 'ok' : i % 4 === 1 ? 'fail' : 'hang'))
      const hb = await atRate('half failing/hanging @rate', mixed, rate, opts, dbDir)
      rows.push(hb)
      if (base) {
        const ratio = hb.healthyP99 / base.healthyP99
        hb.extra = { ...hb.extra, healthyP99VsAllHealthy: ratio }
        targets.push({ target: 'healthy endpoints\' p99 with half failing/hanging within 1.2x of all-healthy', measured: `${hb.healthyP99.toFixed(1)} ms vs ${base.healthyP99.toFixed(1)} ms (${ratio.toFixed(2)}x)`, met: ratio <= 1.2 })
      }
    }
    for (const kind of ['refused', 'hang', '500', 'none'] as StormKind[]) {
      // The control runs only when asked for by name (--only storm-none).
      if (kind === 'none' ? !opts.only.includes('storm-none') : !want(`storm-${kind}`)) continue
      const [idle, during] = await storm(kind, opts, { root: ROOT, dbDir, timeoutMs: TIMEOUT_MS, retrySchedule: RETRY_SCHEDULE })
      rows.push(idle!, during!)
      targets.push({ target: `storm-${kind}: B's order p99 during A's storm within 1.5x of idle`, measured: `${during!.p99Ms.toFixed(1)} ms vs ${idle!.p99Ms.toFixed(1)} ms (${during!.ratio!.toFixed(2)}x)`, met: during!.ratio! <= 1.5 })
      // The same per window (median of the windows' p99s): one stall of the shared machine in one window does not decide it.
      const [mi, md] = [idle!.extra!.medianWindowP99Ms as number, during!.extra!.medianWindowP99Ms as number]
      targets.push({ target: `storm-${kind}: the same, median of per-window p99s`, measured: `${md.toFixed(1)} ms vs ${mi.toFixed(1)} ms (${(md / mi).toFixed(2)}x)`, met: md / mi <= 1.5 })
    }
    for (const r of rows) {
      delete (r as { healthyP99?: number }).healthyP99
    }
    const notes = [
      'the receiver (node:http) and the order load both run in the bench process on the same machine, sharing its CPU cores with the server; srv CPU % is the server process alone (100 = one core)',
      'req/s = deliveries answered 2xx per second (healthy endpoints); p50–max = first-attempt latency, event created_at → arrival at the receiver; non-2xx = 500s answered by failing endpoints; errors = deliveries that failed signature verification',
      `every ${VERIFY_EVERY}th delivery is verified with the standardwebhooks package; retries after ${RETRY_SCHEDULE} s and a ${TIMEOUT_MS} ms time limit so failing endpoints retry and time out within a full-length run`,
      'orders are sent evenly spaced (10 ms ticks); each order fans out to every endpoint; the @rate rows offer half of --rate deliveries/s; in the half-failing row srv µs/req divides the server CPU (failing attempts included) by the healthy deliveries; --only drain,healthy,half,storm picks rows',
      'storm rows: p50–max = owner B\'s order-create round trip measured in the bench process, in 4 idle windows, then 4 storm windows (each --rate-duration/2 s; A\'s 300 orders are spread over the storm windows; the medians of the windows\' p99s are printed too, against the shared machine\'s stalls); vs baseline = B\'s storm p99 / idle p99; A\'s attempts, delivery statuses and endpoint states are in the JSON (extra)',
    ]
    return { name: 'webhooks', rows, notes, targets }
  },
}

export default scenario
