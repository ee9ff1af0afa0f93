/**
 * The contract every bench scenario implements, plus the table printer and the JSON writer the
 * runner uses. A scenario file (bench/<name>.ts) exports a `Scenario`; bench/run.ts finds it.
 */
import { mkdirSync, writeFileSync } from 'node:fs'
import { cpus, loadavg } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { gitCommit } from './machine.ts'

/** Options every scenario understands; each may ignore what does not apply to it. */
export interface ScenarioOptions {
  /** Seconds of measured load per run (max-throughput runs). */
  duration: number
  /** Seconds of unmeasured load before each measured run. */
  warmup: number
  /** Concurrent connections for closed-loop (max-throughput) runs. */
  connections: number
  /** Offered rate (requests/s) for the fixed-rate latency runs. */
  rate: number
  /** Seconds of the fixed-rate runs. */
  rateDuration: number
  /** Only run the variants whose name contains one of these (empty: all). */
  only: string[]
  /** Print progress lines. */
  log: (line: string) => void
}

/** One measured run: one line of the table. */
export interface BenchRow {
  /** Short name, e.g. `uws group-commit max`. */
  scenario: string
  /** What drove it: `closed-loop 64 conns` or `5000 req/s offered`. */
  load: string
  durationSec: number
  requests: number
  /** Completed 2xx responses per second. */
  throughput: number
  p50Ms: number
  p90Ms: number
  p99Ms: number
  maxMs: number
  non2xx: number
  errors: number
  /** Throughput relative to the matching baseline row (max runs) or null. */
  ratio: number | null
  /** Server CPU time per 2xx response, from /proc (user + system), µs. */
  serverCpuUsPerReq: number | null
  /** Server CPU use over the run, % of one core. */
  serverCpuPct: number | null
  /** Anything else worth keeping in the JSON (commit batches, row checks, ...). */
  extra?: Record<string, unknown>
  /**
   * For the chart (bench/lib/chart.ts), where the name does not say it: whether this row is the
   * conventional baseline, and the series it belongs to. Derived from the name when absent.
   */
  role?: 'ours' | 'baseline'
  series?: string
}

export interface ScenarioResult {
  name: string
  rows: BenchRow[]
  /** Caveats and checks to print under the table. */
  notes: string[]
  /** Pass/fail against the targets, if the scenario has targets. */
  targets?: Array<{ target: string; measured: string; met: boolean }>
  /** Column headings where the defaults (HTTP requests) do not fit, e.g. socket frames. */
  labels?: { throughput?: string; non2xx?: string; perReq?: string }
  /** How the load was generated, for the JSON (default: autocannon in the bench process). */
  loadGenerator?: string
}

export interface Scenario {
  name: string
  description: string
  run(opts: ScenarioOptions): Promise<ScenarioResult>
}

const fmt = (n: number | null, digits = 0): string => (n === null || !Number.isFinite(n) ? '-' : n.toFixed(digits))

/** The result as a fixed-width text table with notes and targets underneath. */
export function formatTable(r: ScenarioResult): string {
  const head = ['scenario', 'load', r.labels?.throughput ?? 'req/s (2xx)', 'p50 ms', 'p90 ms', 'p99 ms', 'max ms', r.labels?.non2xx ?? 'non-2xx', 'errors', 'vs baseline', 'srv CPU %', r.labels?.perReq ?? 'srv µs/req']
  const body = r.rows.map((x) => [
    x.scenario, x.load, fmt(x.throughput), fmt(x.p50Ms, 2), fmt(x.p90Ms, 2), fmt(x.p99Ms, 2), fmt(x.maxMs, 1), String(x.non2xx), String(x.errors),
    x.ratio === null ? '-' : `${x.ratio.toFixed(2)}x`, fmt(x.serverCpuPct), fmt(x.serverCpuUsPerReq),
  ])
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((row) => row[i]!.length)))
  const line = (cells: string[]) => cells.map((c, i) => (i < 2 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ')
  const out = [`== ${r.name} ==`, line(head), widths.map((w) => '-'.repeat(w)).join('  '), ...body.map(line)]
  if (r.targets?.length) {
    out.push('', 'targets:')
    for (const t of r.targets) out.push(`  [${t.met ? 'met' : 'MISSED'}] ${t.target}: ${t.measured}`)
  }
  if (r.notes.length) out.push('', ...r.notes.map((n) => `note: ${n}`))
  return out.join('\n')
}

export const RESULTS_DIR = join(dirname(fileURLToPath(import.meta.url)), '..', 'results')

/** Write `bench/results/<timestamp>-<name>.json` with the machine context; returns the path. */
export function writeResult(r: ScenarioResult, opts: ScenarioOptions, startedAt: Date): string {
  mkdirSync(RESULTS_DIR, { recursive: true })
  const stamp = startedAt.toISOString().replace(/[:.]/g, '-')
  const file = join(RESULTS_DIR, `${stamp}-${r.name}.json`)
  const { log: _log, ...options } = opts
  const machine = {
    node: process.version,
    cpus: cpus().length,
    cpuModel: cpus()[0]?.model ?? 'unknown',
    loadavgAtEnd: loadavg(),
    loadGenerator: r.loadGenerator ?? 'autocannon in the bench process, on the same machine (shares the CPU cores with the server)',
    // The code measured (`+dirty`: with uncommitted changes); the README table cites it (tools/bench-readme.ts).
    commit: gitCommit(),
  }
  writeFileSync(file, JSON.stringify({ startedAt: startedAt.toISOString(), machine, options, ...r }, null, 2) + '\n')
  return file
}
