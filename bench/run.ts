/**
 * Bench runner: `npm run bench [-- <scenario…>] [--duration S] [--warmup S] [--connections N]
 * [--rate R] [--rate-duration S] [--only KEY,…]`. Runs the named scenarios (default: every one
 * present), prints a table per scenario and writes bench/results/<timestamp>-<name>.json, a chart
 * per scenario (<timestamp>-<name>.svg and .png) and a summary of the run (<timestamp>-summary.md).
 * Long steps show progress on stderr (bench/lib/progress.ts; BENCH_PROGRESS=0 turns it off).
 *
 * Scenarios are found by file: bench/<name>.ts exporting `scenario` (or a default export) that is
 * a `Scenario` (bench/lib/scenario.ts), or a `run(opts)` function returning a `ScenarioResult`.
 * Files that are absent are skipped, so the runner works whatever scenarios exist.
 */
import { existsSync, mkdirSync, writeFileSync } from 'node:fs'
import { cpus, loadavg } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { writeChart } from './lib/chart.ts'
import { machineInfo } from './lib/machine.ts'
import { setPhase } from './lib/progress.ts'
import { formatTable, RESULTS_DIR, writeResult, type Scenario, type ScenarioOptions, type ScenarioResult } from './lib/scenario.ts'
import { summaryMarkdown, type SummaryEntry } from './lib/summary.ts'

/** Known scenarios, in the order `npm run bench` runs them. */
const KNOWN = ['orders', 'webhooks', 'tracking', 'tracking-fanout', 'kds', 'catalog-search', 'mcp', 'fitment-filter', 'stock-contention', 'guests', 'cold-start', 'cluster', 'dispatch'] as const
/** Short names: `npm run bench -- fitment` runs bench/fitment-filter.ts. */
const ALIASES: Record<string, string> = { fitment: 'fitment-filter', stock: 'stock-contention' }

const USAGE = `usage: npm run bench -- [scenario…] [options]
scenarios: ${KNOWN.join(', ')} (those whose bench/<name>.ts exists; default: all present)
options:
  --duration S        measured seconds per max-throughput run (default 10)
  --warmup S          warm-up seconds before each variant (default 2)
  --connections N     closed-loop connections (default 64)
  --rate R            offered requests/s for the latency runs (default 5000)
  --rate-duration S   seconds of each fixed-rate run (default 10)
  --only KEY,…        run only variants whose key contains one of these (e.g. gc-on,baseline)
  --quick             short smoke run (duration 3, warmup 1, rate-duration 3)`

type Loaded = Scenario

function asScenario(name: string, mod: Record<string, unknown>): Loaded | null {
  const candidate = (mod.scenario ?? mod.default) as unknown
  if (candidate && typeof candidate === 'object' && typeof (candidate as Scenario).run === 'function') {
    const s = candidate as Scenario
    return { name: s.name ?? name, description: s.description ?? '', run: (o) => s.run(o) }
  }
  const fn = (typeof candidate === 'function' ? candidate : mod.run) as ((o: ScenarioOptions) => Promise<ScenarioResult>) | undefined
  if (typeof fn === 'function') return { name, description: '', run: fn }
  return null
}

async function load(name: string): Promise<Loaded | null> {
  const file = new URL(`./${name}.ts`, import.meta.url)
  if (!existsSync(file)) return null
  const mod = (await import(file.href)) as Record<string, unknown>
  const s = asScenario(name, mod)
  if (!s) console.warn(`bench/${name}.ts exports no scenario (expected \`scenario\`, a default export or \`run\`); skipped`)
  return s
}

async function main(): Promise<number> {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      duration: { type: 'string' }, warmup: { type: 'string' }, connections: { type: 'string' }, rate: { type: 'string' },
      'rate-duration': { type: 'string' }, only: { type: 'string' }, quick: { type: 'boolean' }, help: { type: 'boolean', short: 'h' },
    },
  })
  if (values.help) {
    console.log(USAGE)
    return 0
  }
  const num = (s: string | undefined, fallback: number, what: string): number => {
    if (s === undefined) return fallback
    const n = Number(s)
    if (!Number.isFinite(n) || n <= 0) throw new Error(`--${what} must be a positive number, got "${s}"`)
    return n
  }
  const quick = Boolean(values.quick)
  const opts: ScenarioOptions = {
    duration: num(values.duration, quick ? 3 : 10, 'duration'),
    warmup: num(values.warmup, quick ? 1 : 2, 'warmup'),
    connections: Math.round(num(values.connections, 64, 'connections')),
    rate: Math.round(num(values.rate, 5000, 'rate')),
    rateDuration: num(values['rate-duration'], quick ? 3 : 10, 'rate-duration'),
    only: values.only ? values.only.split(',').map((s) => s.trim()).filter(Boolean) : [],
    log: (line) => {
      // The line names the phase that follows (warm-up, measured run, cache build): load bars use it as their label.
      setPhase(line)
      console.log(line)
    },
  }

  const names = positionals.length ? positionals : [...KNOWN]
  const scenarios: Loaded[] = []
  for (const name of names) {
    if (!/^[\w-]+$/.test(name)) throw new Error(`bad scenario name "${name}"`)
    const s = await load(ALIASES[name] ?? name)
    if (s) scenarios.push(s)
    else if (positionals.length) throw new Error(`no scenario bench/${name}.ts`)
  }
  if (scenarios.length === 0) throw new Error('no scenarios found under bench/')

  console.log(`bench: ${scenarios.map((s) => s.name).join(', ')} on ${cpus().length} cores (${cpus()[0]?.model ?? '?'}), load average ${loadavg().map((x) => x.toFixed(2)).join(' ')}`)
  console.log('note: the load generators run on this same machine (in this process or in child processes, as each scenario says), sharing its CPU cores with the server under test.')
  let failed = 0
  const runStartedAt = new Date()
  const entries: SummaryEntry[] = []
  for (const s of scenarios) {
    const startedAt = new Date()
    try {
      const result = await s.run(opts)
      console.log(`\n${formatTable(result)}`)
      const json = writeResult(result, opts, startedAt)
      console.log(`\nresults: ${json}`)
      entries.push({ name: s.name, result, json, ...(await chart(result, json, startedAt)) })
    } catch (err) {
      failed++
      console.error(`\n[${s.name}] failed: ${(err as Error).stack ?? String(err)}`)
      entries.push({ name: s.name, error: (err as Error).message ?? String(err) })
    }
  }
  mkdirSync(RESULTS_DIR, { recursive: true })
  const summary = join(RESULTS_DIR, `${runStartedAt.toISOString().replace(/[:.]/g, '-')}-summary.md`)
  const { log: _log, ...options } = opts
  writeFileSync(summary, summaryMarkdown({ startedAt: runStartedAt, finishedAt: new Date(), machine: machineInfo(), options, entries }))
  console.log(`\nsummary: ${summary}`)
  return failed ? 1 : 0
}

/** The scenario's chart next to its JSON; a chart that fails to render is reported, not fatal (the numbers are already saved). */
async function chart(result: ScenarioResult, json: string, startedAt: Date): Promise<{ svg: string | null; png: string | null }> {
  try {
    const files = await writeChart(result, json.replace(/\.json$/, ''), `${startedAt.toISOString()} · ${cpus().length} × ${cpus()[0]?.model?.trim() ?? '?'} · Node ${process.version}`)
    if (files) console.log(`chart: ${files.svg} (+ .png)`)
    return files ?? { svg: null, png: null }
  } catch (err) {
    console.error(`[${result.name}] chart not written: ${(err as Error).message}`)
    return { svg: null, png: null }
  }
}

main().then((code) => process.exit(code), (err: unknown) => {
  console.error((err as Error).message ?? err)
  process.exit(2)
})
