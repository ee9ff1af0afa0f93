/**
 * Cluster mode's cost on the primary (issue 35 item 6; docs/cluster.md "Numbers"): the orders bench
 * (bench/orders.ts: the same bodies, load generator, row checks) against the single process as the
 * baseline, then the same server as a cluster primary on NATS JetStream, with one nats-server (R1)
 * and with three routed into a cluster (R3), all in the same run on this machine. Each primary
 * answers an order only after its fsync and the stream's acknowledgement.
 *
 * Everything shares the two cores: the nats-servers' CPU is not counted in "srv CPU" (the primary's
 * own process only), but it competes for the cores, so throughput here is lower than three machines
 * would give; CPU per order is the figure that carries over.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { BenchRow, Scenario, ScenarioOptions, ScenarioResult } from './lib/scenario.ts'
import { freePort } from './lib/proc.ts'
import { runVariant, type Variant } from './orders.ts'

const NATS_SERVER = process.env.NATS_SERVER ?? '/usr/sbin/nats-server'

/** `n` nats-servers with JetStream on loopback (routed into one cluster when n > 1). */
async function natsServers(n: number): Promise<{ urls: string[]; stop(): Promise<void> }> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-nats-'))
  const ports = await Promise.all(Array.from({ length: n }, () => freePort()))
  const routes = await Promise.all(Array.from({ length: n }, () => freePort()))
  const procs: ChildProcess[] = ports.map((port, i) => spawn(NATS_SERVER, [
    '-js', '-a', '127.0.0.1', '-p', String(port), '-n', `b${i}`, '-sd', join(dir, `s${i}`),
    ...(n > 1 ? ['--cluster_name', 'bench', '--cluster', `nats://127.0.0.1:${routes[i]}`, '--routes', routes.map((r) => `nats://127.0.0.1:${r}`).join(',')] : []),
  ], { stdio: 'ignore' }))
  await new Promise((r) => setTimeout(r, 1500))
  return {
    urls: ports.map((p) => `nats://127.0.0.1:${p}`),
    async stop() {
      await Promise.all(procs.map((p) => new Promise((r) => { p.once('exit', r); p.kill('SIGKILL') })))
      rmSync(dir, { recursive: true, force: true })
    },
  }
}

const clusterVariant = (key: string, label: string, servers: number): Variant => ({
  key, label, args: 'app', env: { GROUP_COMMIT: '1' },
  readyPath: '/readyz?role=primary', seedByServer: true,
  around: async () => {
    const nats = await natsServers(servers)
    return { env: { NATS_URL: nats.urls.join(','), NODE_ID: 'bench-1', CLUSTER_NAME: `bench${Date.now()}` }, stop: () => nats.stop() }
  },
})

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
    const rows: BenchRow[] = []
    for (const v of VARIANTS.filter((x) => opts.only.length === 0 || opts.only.some((o) => x.key.includes(o)))) rows.push(...(await runVariant(v, opts, dbDir)))
    const single = (suffix: string) => rows.find((r) => r.scenario.startsWith('single') && r.scenario.endsWith(suffix))
    for (const r of rows) {
      const b = single(r.scenario.endsWith(' max') ? ' max' : `@${opts.rate}/s`)
      r.ratio = b && b.serverCpuUsPerReq && r.serverCpuUsPerReq ? r.serverCpuUsPerReq / b.serverCpuUsPerReq : null
    }
    const targets: NonNullable<ScenarioResult['targets']> = []
    const singleMax = single(' max')
    const singleRate = single(`@${opts.rate}/s`)
    for (const key of ['NATS R1', 'NATS R3']) {
      const max = rows.find((r) => r.scenario.includes(key) && r.scenario.endsWith(' max'))
      const rate = rows.find((r) => r.scenario.includes(key) && r.scenario.endsWith(`@${opts.rate}/s`))
      if (max?.serverCpuUsPerReq && singleMax?.serverCpuUsPerReq) {
        const x = max.serverCpuUsPerReq / singleMax.serverCpuUsPerReq
        targets.push({ target: `${key}: primary CPU per durable order <= 1.3x single`, measured: `${max.serverCpuUsPerReq.toFixed(0)} vs ${singleMax.serverCpuUsPerReq.toFixed(0)} µs (${x.toFixed(2)}x)`, met: x <= 1.3 })
      }
      if (rate && singleRate) {
        targets.push({ target: `${key}: p99 at ${opts.rate}/s <= 2x single`, measured: `${rate.p99Ms.toFixed(2)} vs ${singleRate.p99Ms.toFixed(2)} ms`, met: rate.p99Ms <= 2 * singleRate.p99Ms })
      }
    }
    return {
      name: 'cluster', rows, targets,
      notes: [
        'ratio: server CPU per order against the single process in the same run (not throughput)',
        'the nats-servers run on the same two cores as the server and the load generator; their CPU is not in srv CPU',
        'replication lag and failover time are not measured by this scenario yet (docs/cluster.md "Not yet")',
      ],
    }
  },
}

export default scenario
