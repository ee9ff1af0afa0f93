/**
 * Cluster mode's cost on the primary (issue 35 item 6; docs/cluster.md "Numbers"): the orders bench
 * (bench/orders.ts: the same bodies, load generator, row checks) against the single process as the
 * baseline, then the same server as a cluster primary on NATS JetStream, with one nats-server (R1)
 * and with three routed into a cluster (R3), all in the same run on this machine. Each primary
 * answers an order only after its fsync and the stream's acknowledgement. The three servers run side by
 * side and are measured in alternating rounds (CLUSTER_BENCH_ROUNDS, default 5): each cluster figure
 * is paired with the single process's figure of the same round, so a busy machine skews neither.
 *
 * Everything shares the two cores: the nats-servers' CPU is not counted in "srv CPU" (the primary's
 * own process only), but it competes for the cores, so throughput here is lower than three machines
 * would give; CPU per order is the figure that carries over.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { BenchRow, Scenario, ScenarioOptions, ScenarioResult } from './lib/scenario.ts'
import { appArgs, cpuSeconds, freePort, LOAD_TEST_LIMITS, startServer, type Server } from './lib/proc.ts'
import { quantile } from './lib/growth.ts'
import { runBenchLoad } from './lib/raw-load.ts'
import { demoPrintedBy, measureMax, measureRate, openVariant, orderBodies, readMenu, row, type Measured, type OpenVariant, type Variant } from './orders.ts'
import { natsServers } from './lib/nats.ts'
import { createPairs, sleep, Workers } from './tracking.ts'

const ROOT = fileURLToPath(new URL('..', import.meta.url))
/** Kills of the primary in the failover stage (CLUSTER_BENCH_KILLS). */
const KILLS = Number(process.env.CLUSTER_BENCH_KILLS ?? 10)
/** Drivers (each watched by one customer) and their positions per second in the tracking stage. */
const TRACK_PAIRS = Number(process.env.CLUSTER_BENCH_DRIVERS ?? 150)
const TRACK_HZ = Number(process.env.CLUSTER_BENCH_HZ ?? 4)
/** Alternating rounds of the single/R1/R3 comparison (CLUSTER_BENCH_ROUNDS). */
const ROUNDS = Number(process.env.CLUSTER_BENCH_ROUNDS ?? 5)

const clusterVariant = (key: string, label: string, servers: number): Variant => ({
  key, label, args: 'app', env: { GROUP_COMMIT: '1' },
  readyPath: '/readyz?role=primary', seedByServer: true,
  around: async () => {
    const nats = await natsServers(servers)
    return { env: { NATS_URL: nats.urls.join(','), NODE_ID: 'bench-1', CLUSTER_NAME: `bench${Date.now()}` }, stop: () => nats.stop() }
  },
})

interface NodeProc { id: string; port: number; server: Server; url: string }

/**
 * The replica and failover stages: three nats-servers (R3), two nodes. First a replica's
 * commit-to-apply delay while the primary takes `opts.rate` orders/s (the replica's own /readyz
 * figures over its last 4,096 messages); then KILLS times: SIGKILL the primary and time until an
 * order sent to the other node is answered 200 (it has taken the lease, caught up and serves), then
 * start the killed one again and wait until it is a caught-up replica.
 */
async function replicaStages(opts: ScenarioOptions, dbDir: string): Promise<{ rows: BenchRow[]; targets: NonNullable<ScenarioResult['targets']>; notes: string[] }> {
  const nats = await natsServers(3)
  const dir = mkdtempSync(join(dbDir, 'dispatch-bench-replica-'))
  const cluster = `benchrep${Date.now()}`
  const nodes: NodeProc[] = []
  const start = async (id: string, port: number, ready: string): Promise<NodeProc> => {
    const server = await startServer(appArgs(ROOT), {
      DB_PATH: join(dir, `${id}.db`), PORT: String(port), HOST: '127.0.0.1', SITE_URL: `http://127.0.0.1:${port}`, LOG_LEVEL: 'warn',
      ...LOAD_TEST_LIMITS, DEMO_SEED: '1', GROUP_COMMIT: '1', NATS_URL: nats.urls.join(','), NODE_ID: id, CLUSTER_NAME: cluster,
    }, port, ready, ROOT)
    return { id, port, server, url: `http://127.0.0.1:${port}` }
  }
  const readyz = async (n: NodeProc, q = ''): Promise<{ status: number; body: Record<string, unknown> }> => {
    const r = await fetch(`${n.url}/readyz${q}`, { signal: AbortSignal.timeout(2000) })
    return { status: r.status, body: await r.json() as Record<string, unknown> }
  }
  try {
    nodes.push(await start('n1', await freePort(), '/readyz?role=primary'))
    const demo = await demoPrintedBy(nodes[0]!.server)
    nodes.push(await start('n2', await freePort(), '/readyz'))
    const bodies = orderBodies(readMenu(join(dir, 'n1.db'), demo.store.id))
    const path = `/api/v1/restaurants/${demo.store.id}/orders`
    const headers = { authorization: `Bearer ${demo.owner.token}`, 'content-type': 'application/json' }

    // 1. Replication delay at a fixed rate.
    const [primary, replica] = nodes as [NodeProc, NodeProc]
    const requests = bodies.map((body) => ({ method: 'POST', path, headers, body }))
    const conns = Math.min(opts.connections, opts.rate)
    // Warm up at the same rate; the replica's figures cover the last 10 s, so measure 10 s.
    await runBenchLoad({ url: primary.url, requests, connections: conns, durationSec: opts.warmup, rate: opts.rate })
    opts.log(`[cluster] replica delay: ${opts.rate} orders/s to the primary for 10 s`)
    const seq0 = Number((await readyz(replica)).body.applied_seq)
    const cpu0 = [cpuSeconds(primary.server.proc.pid), cpuSeconds(replica.server.proc.pid)]
    const lagSeen: number[] = []
    const poll = setInterval(() => { readyz(replica).then((r) => lagSeen.push(Number(r.body.lag_ms)), () => {}) }, 250)
    const load = await runBenchLoad({ url: primary.url, requests, connections: conns, durationSec: 10, rate: opts.rate })
    clearInterval(poll)
    await new Promise((r) => setTimeout(r, 300))
    const after = (await readyz(replica)).body
    const cpu1 = [cpuSeconds(primary.server.proc.pid), cpuSeconds(replica.server.proc.pid)]
    const delays = after.apply_delay_ms as { p50: number; p99: number; max: number; samples: number }
    const messages = Number(after.applied_seq) - seq0
    const replicaCpu = cpu0[1] !== null && cpu1[1] !== null ? cpu1[1] - cpu0[1] : null
    const rows: BenchRow[] = [{
      scenario: 'replica commit-to-apply delay', load: `${opts.rate}/s offered to the primary (R3)`, durationSec: load.durationSec,
      requests: messages, throughput: messages / load.durationSec, p50Ms: delays.p50, p90Ms: NaN, p99Ms: delays.p99, maxMs: delays.max,
      non2xx: load.non2xx, errors: load.errors + load.timeouts, ratio: null,
      serverCpuUsPerReq: replicaCpu === null || messages === 0 ? null : (replicaCpu / messages) * 1e6,
      serverCpuPct: replicaCpu === null ? null : (replicaCpu / load.durationSec) * 100,
      extra: { ordersPerSec: load.ok2xx / load.durationSec, messages, samples: delays.samples, readyzLagMsMax: Math.max(0, ...lagSeen), note: 'throughput = stream messages/s applied; srv CPU = the replica per message' },
    }]
    opts.log(`[cluster] replica: ${messages} messages for ${load.ok2xx} orders, delay p50 ${delays.p50} ms p99 ${delays.p99} ms max ${delays.max} ms`)

    // 2. Tracking across nodes: drivers on the primary, their watchers on the primary itself, then
    //    on the replica (served by it, the primary's frames over NATS); frames delivered per second of both nodes' CPU.
    const pairs = await createPairs(primary.url, join(dir, 'n1.db'), demo, TRACK_PAIRS, opts.log)
    for (const [label, watchPort] of [['watchers on the primary', primary.port], ['watchers on a replica', replica.port]] as const) {
      const w = await Workers.start(2, 'uws', false, primary.port, watchPort)
      try {
        const connected = await w.all<'connected'>((i) => ({ cmd: 'connect', pairs: w.share(pairs, i), watch: true }))
        const failed = connected.reduce((a, c) => a + c.failed, 0)
        if (failed) throw new Error(`${failed} tracking pairs failed to connect: ${connected.find((c) => c.firstError)?.firstError}`)
        const pending = w.all<'ran'>(() => ({ cmd: 'run', rateHz: TRACK_HZ, durationSec: 10, warmupSec: 2 }))
        await sleep(2000)
        const c0 = nodes.map((n) => cpuSeconds(n.server.proc.pid) ?? 0)
        await sleep(10_000)
        const c1 = nodes.map((n) => cpuSeconds(n.server.proc.pid) ?? 0)
        const ran = await pending
        const delivered = ran.reduce((a, r) => a + r.delivered, 0)
        const sent = ran.reduce((a, r) => a + r.sent, 0)
        const lat = ran.flatMap((r) => r.latencies)
        const cpu = [c1[0]! - c0[0]!, c1[1]! - c0[1]!]
        const total = cpu[0]! + cpu[1]!
        rows.push({
          scenario: `tracking, ${label}`, load: `${pairs.length} drivers at ${TRACK_HZ} Hz on the primary, one watcher each`, durationSec: 10,
          requests: delivered, throughput: delivered / 10, p50Ms: quantile(lat, 0.5), p90Ms: quantile(lat, 0.9), p99Ms: quantile(lat, 0.99), maxMs: Math.max(0, ...lat),
          non2xx: Math.max(0, sent - delivered), errors: ran.reduce((a, r) => a + r.errors, 0), ratio: null,
          serverCpuUsPerReq: delivered ? (total / delivered) * 1e6 : null, serverCpuPct: (total / 10) * 100,
          extra: { framesPerCpuSecond: delivered / total, primaryCpuSec: cpu[0], replicaCpuSec: cpu[1], sent, note: 'srv CPU = primary + replica, per frame delivered to a watcher' },
        })
        opts.log(`[cluster] tracking, ${label}: ${delivered}/${sent} frames delivered, ${Math.round(delivered / total)} per CPU second (primary ${cpu[0]!.toFixed(2)} s, replica ${cpu[1]!.toFixed(2)} s), p99 ${quantile(lat, 0.99).toFixed(1)} ms`)
      } finally {
        await w.close()
      }
    }

    // 3. Failover: kill the primary, time until the other node answers a write.
    const times: number[] = []
    for (let k = 0; k < KILLS; k++) {
      const statuses = await Promise.all(nodes.map((n) => readyz(n, '?role=primary').then((r) => r.status, () => 0)))
      const p = statuses.indexOf(200)
      if (p < 0) throw new Error('no primary before a kill')
      const victim = nodes[p]!
      const other = nodes[1 - p]!
      const gone = new Promise((r) => victim.server.proc.once('exit', r))
      const t0 = performance.now()
      victim.server.proc.kill('SIGKILL')
      await gone
      for (let i = 0; ; i++) {
        const r = await fetch(`${other.url}${path}`, { method: 'POST', headers, body: bodies[i % bodies.length], signal: AbortSignal.timeout(5000) }).then((x) => { void x.arrayBuffer(); return x.status }, () => 0)
        if (r === 200) break
        if (performance.now() - t0 > 60_000) throw new Error(`no write answered 60 s after killing ${victim.id}`)
        await new Promise((res) => setTimeout(res, 20))
      }
      times.push(performance.now() - t0)
      opts.log(`[cluster] kill ${k + 1}/${KILLS}: ${victim.id} killed, ${other.id} answered a write after ${times.at(-1)!.toFixed(0)} ms`)
      nodes[p] = await start(victim.id, victim.port, '/readyz')
    }
    const p50 = quantile(times, 0.5)
    const p99 = quantile(times, 0.99)
    if (times.length > 0) rows.push({
      scenario: `failover over ${times.length} kills`, load: 'SIGKILL of the primary; a write to the other node until 200', durationSec: times.reduce((a, b) => a + b, 0) / 1000,
      requests: times.length, throughput: NaN, p50Ms: p50, p90Ms: quantile(times, 0.9), p99Ms: p99, maxMs: Math.max(...times),
      non2xx: 0, errors: 0, ratio: null, serverCpuUsPerReq: null, serverCpuPct: null, extra: { timesMs: times.map((x) => Math.round(x)), leaseMs: 3000 },
    })
    return {
      rows,
      targets: [
        { target: `replication delay p99 <= 100 ms at ${opts.rate}/s`, measured: `p99 ${delays.p99.toFixed(1)} ms (p50 ${delays.p50.toFixed(1)}, max ${delays.max.toFixed(1)}, ${delays.samples} messages)`, met: delays.p99 <= 100 },
        ...times.length === 0 ? [] : [{ target: `failover p50/p99 <= 5 s over ${times.length} kills`, measured: `p50 ${(p50 / 1000).toFixed(2)} s, p99 ${(p99 / 1000).toFixed(2)} s, max ${(Math.max(...times) / 1000).toFixed(2)} s`, met: p99 <= 5000 }],
      ],
      notes: [
        'replica delay: from the primary capturing a batch (before its COMMIT) to the replica committing it, one clock (same machine); the replica\'s own /readyz figures (messages applied in its last 10 s)',
        'tracking: the same drivers sending positions to the primary, their watchers connected to the primary or to a replica that serves them itself, the primary publishing each frame once on NATS (src/ws/replica-sockets.ts): CPU per frame of both nodes together',
        'failover: SIGKILL of the primary until an order sent to the other node is answered 200 (the lease runs out, CLUSTER_LEASE_MS 3000 by default, then the other node catches up, appends its epoch and builds the server)',
      ],
    }
  } finally {
    for (const n of nodes) if (n.server.proc.exitCode === null) n.server.proc.kill('SIGKILL')
    await nats.stop()
    rmSync(dir, { recursive: true, force: true })
  }
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b)
  return s.length === 0 ? NaN : s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2
}
const cpuPerOrder = (m: Measured): number => (m.cpuSec === null || m.load.ok2xx === 0 ? NaN : (m.cpuSec / m.load.ok2xx) * 1e6)

interface Rounds { o: OpenVariant; max: Measured[]; rate: Measured[] }

/**
 * The single process and the two primaries, all started first, then measured in alternating rounds
 * (A B C, C B A, …): each round a closed-loop run and a fixed-rate run of every variant, half the
 * configured seconds each. Other load on the shared machine then falls on every variant alike, and
 * each cluster figure is compared with the single process's figure *of the same round*; the rows
 * are the round whose figure is the median, the ratios the medians of the paired ratios.
 */
async function alternatingRounds(variants: Variant[], opts: ScenarioOptions, dbDir: string): Promise<{ rows: BenchRow[]; ratios: Map<string, { cpu: number; p99: number }> }> {
  const all: Rounds[] = []
  const maxSec = Math.max(3, opts.duration / 2)
  const rateSec = Math.max(3, opts.rateDuration / 2)
  try {
    for (const v of variants) {
      opts.log(`[cluster] starting ${v.label}`)
      all.push({ o: await openVariant(v, dbDir), max: [], rate: [] })
    }
    for (const r of all) {
      opts.log(`[cluster] ${r.o.v.label}: warm-up ${opts.warmup} s`)
      await runBenchLoad({ url: r.o.server.url, requests: r.o.requests(), connections: opts.connections, durationSec: opts.warmup })
    }
    for (let round = 0; round < ROUNDS; round++) {
      for (const r of round % 2 === 0 ? all : [...all].reverse()) {
        const max = await measureMax(r.o, opts.connections, maxSec)
        const rate = await measureRate(r.o, opts.connections, opts.rate, rateSec)
        r.max.push(max)
        r.rate.push(rate)
        opts.log(`[cluster] round ${round + 1}/${ROUNDS} ${r.o.v.label}: max ${Math.round(max.load.ok2xx / max.load.durationSec)}/s ${cpuPerOrder(max).toFixed(0)} µs/order; @${opts.rate}/s p99 ${rate.load.p99.toFixed(2)} ms ${cpuPerOrder(rate).toFixed(0)} µs/order`)
      }
    }
  } catch (err) {
    for (const r of all) (err as Error).message += `\n--- ${r.o.v.label} output ---\n${r.o.server.output().slice(-4000)}`
    throw err
  } finally {
    for (const r of all) await r.o.close()
  }
  const medianRound = (ms: Measured[], by: (m: Measured) => number): Measured => {
    const sorted = [...ms].sort((a, b) => by(a) - by(b))
    return sorted[Math.floor((sorted.length - 1) / 2)]!
  }
  const rows: BenchRow[] = []
  const ratios = new Map<string, { cpu: number; p99: number }>()
  const single = all.find((r) => r.o.v.key === 'single')
  for (const r of all) {
    const max = row(`${r.o.v.label} max`, `closed loop, ${opts.connections} conns, median of ${ROUNDS} rounds of ${maxSec} s`, medianRound(r.max, cpuPerOrder))
    const rate = row(`${r.o.v.label} @${opts.rate}/s`, `${opts.rate}/s offered, median of ${ROUNDS} rounds of ${rateSec} s`, medianRound(r.rate, (m) => m.load.p99))
    const perRound = r.max.map((m, i) => ({ cpuUsPerOrder: Math.round(cpuPerOrder(m)), ordersPerSec: Math.round(m.load.ok2xx / m.load.durationSec), p99AtRateMs: r.rate[i]!.load.p99, cpuUsPerOrderAtRate: Math.round(cpuPerOrder(r.rate[i]!)) }))
    max.extra = { ...max.extra, rounds: perRound }
    rate.extra = { ...rate.extra, rounds: perRound }
    if (single && r !== single) {
      const cpu = median(r.max.map((m, i) => cpuPerOrder(m) / cpuPerOrder(single.max[i]!)))
      const p99 = median(r.rate.map((m, i) => m.load.p99 / single.rate[i]!.load.p99))
      ratios.set(r.o.v.key, { cpu, p99 })
      max.ratio = cpu
      rate.ratio = median(r.rate.map((m, i) => cpuPerOrder(m) / cpuPerOrder(single.rate[i]!)))
    } else {
      max.ratio = 1
      rate.ratio = 1
    }
    rows.push(max, rate)
  }
  return { rows, ratios }
}

const VARIANTS: Variant[] = [
  { key: 'single', label: 'single process', args: 'app', env: { GROUP_COMMIT: '1' } },
  clusterVariant('r1', 'cluster primary, NATS R1', 1),
  clusterVariant('r3', 'cluster primary, NATS R3 (3 servers)', 3),
]

export const scenario: Scenario = {
  name: 'cluster',
  description: 'POST /restaurants/{id}/orders on a cluster primary (stream ack before the answer) against the single process',
  async run(opts: ScenarioOptions): Promise<ScenarioResult> {
    const dbDir = process.env.BENCH_DB_DIR ?? tmpdir()
    const wanted = (key: string) => opts.only.length === 0 || opts.only.some((o) => key.includes(o))
    const chosen = VARIANTS.filter((x) => wanted(x.key))
    const compared = chosen.length > 0 ? await alternatingRounds(chosen, opts, dbDir) : { rows: [], ratios: new Map<string, { cpu: number; p99: number }>() }
    const rows = compared.rows
    const stages = wanted('replica') || wanted('failover') ? await replicaStages(opts, dbDir) : null
    const targets: NonNullable<ScenarioResult['targets']> = []
    const single = (suffix: string) => rows.find((r) => r.scenario.startsWith('single') && r.scenario.endsWith(suffix))
    for (const [key, name] of [['r1', 'NATS R1'], ['r3', 'NATS R3']] as const) {
      const ratio = compared.ratios.get(key)
      const max = rows.find((r) => r.scenario.includes(name) && r.scenario.endsWith(' max'))
      const rate = rows.find((r) => r.scenario.includes(name) && r.scenario.endsWith(`@${opts.rate}/s`))
      if (!ratio || !max || !rate) continue
      targets.push({ target: `${name}: primary CPU per durable order <= 1.3x single`, measured: `${ratio.cpu.toFixed(2)}x (median of ${ROUNDS} paired rounds; median rounds ${max.serverCpuUsPerReq?.toFixed(0)} vs ${single(' max')?.serverCpuUsPerReq?.toFixed(0)} µs)`, met: ratio.cpu <= 1.3 })
      targets.push({ target: `${name}: p99 at ${opts.rate}/s <= 2x single`, measured: `${ratio.p99.toFixed(2)}x (median of ${ROUNDS} paired rounds; median rounds ${rate.p99Ms.toFixed(2)} vs ${single(`@${opts.rate}/s`)?.p99Ms.toFixed(2)} ms)`, met: ratio.p99 <= 2 })
    }
    return {
      name: 'cluster', rows: [...rows, ...(stages?.rows ?? [])], targets: [...targets, ...(stages?.targets ?? [])],
      notes: [
        `ratio: server CPU per order against the single process in the same round (not throughput), the median over ${ROUNDS} alternating rounds`,
        'the nats-servers run on the same two cores as the server and the load generator; their CPU is not in srv CPU',
        ...(stages?.notes ?? []),
      ],
    }
  },
}

export default scenario
