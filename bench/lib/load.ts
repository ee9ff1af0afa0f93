/**
 * Load generation with autocannon (programmatic), in this process: it shares the machine's cores
 * with the server under test, which every report must say. The orders bench uses the leaner
 * bench/lib/raw-load.ts instead (about half autocannon's CPU per request; BENCH_LOADGEN=autocannon
 * switches it back here).
 *
 * Latencies are recorded here from autocannon's per-response `responseTime` (float ms) rather
 * than its own histogram, which has 1 ms resolution and, in rate mode, applies a coordinated-
 * omission correction with a 1 ms expected interval whatever the rate (autocannon 9 computes
 * `ceil(1 / perConnectionRate)`), which would invent samples.
 */
import autocannon, { type Request } from 'autocannon'
import { currentPhase, progress, timedProgress } from './progress.ts'

export interface LoadSpec {
  url: string
  /** Request templates, cycled per connection (pre-built once: no per-request cost in the generator). */
  requests: Request[]
  connections: number
  durationSec: number
  /** Offered rate over all connections (autocannon `overallRate`); closed loop when absent. */
  rate?: number
  /**
   * Send exactly this many requests and wait for every answer (autocannon `amount`; `durationSec`
   * is then ignored): nothing is cut off in flight, so a caller can reconcile every response.
   */
  amount?: number
  /** Label of the progress bar (default: the phase the scenario last logged). */
  label?: string
}

export interface LoadResult {
  durationSec: number
  ok2xx: number
  non2xx: number
  /** Status code → count, for the JSON. */
  statuses: Record<string, number>
  errors: number
  timeouts: number
  /** 2xx latency percentiles, ms. */
  p50: number
  p90: number
  p99: number
  max: number
  mean: number
  /** CPU (user + system) this process used during the run: the generator's own cost (it runs in-process). */
  generatorCpuSec?: number
  /** The system (kernel) part of generatorCpuSec: loopback TCP sends and receives. */
  generatorSysSec?: number
}

/** The q-quantile (0..1) of sorted samples, nearest-rank. */
export function quantile(sorted: Float64Array, q: number): number {
  if (sorted.length === 0) return NaN
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))
  return sorted[i]!
}

/**
 * The latency and generator-CPU part of a LoadResult, from the first `n` 2xx latencies recorded (ms)
 * and the generator's CPU since the run began (`process.cpuUsage(cpu0)`); both generators end with it.
 */
export function latencyStats(lat: Float64Array, n: number, cpu: NodeJS.CpuUsage): Pick<LoadResult, 'p50' | 'p90' | 'p99' | 'max' | 'mean' | 'generatorCpuSec' | 'generatorSysSec'> {
  const sorted = lat.subarray(0, n).sort()
  let sum = 0
  for (let i = 0; i < n; i++) sum += sorted[i]!
  return {
    p50: quantile(sorted, 0.5),
    p90: quantile(sorted, 0.9),
    p99: quantile(sorted, 0.99),
    max: n ? sorted[n - 1]! : NaN,
    mean: n ? sum / n : NaN,
    generatorCpuSec: (cpu.user + cpu.system) / 1e6,
    generatorSysSec: cpu.system / 1e6,
  }
}

export function runLoad(spec: LoadSpec): Promise<LoadResult> {
  return new Promise((resolve, reject) => {
    let lat = new Float64Array(1 << 16)
    let n = 0
    const statuses: Record<string, number> = {}
    const started = process.hrtime.bigint()
    const cpu0 = process.cpuUsage()
    let lastAt = started
    // Progress (stderr, redrawn from a timer): one counter increment per response, nothing else on the measured path.
    let answered = 0
    const label = spec.label ?? (currentPhase() || `load: ${spec.rate ? `${spec.rate}/s offered` : 'closed loop'}, ${spec.connections} conns`)
    const stopProgress = spec.amount ? polled(label, spec.amount, () => answered) : timedProgress(label, spec.durationSec, () => answered)
    const inst = autocannon(
      {
        url: spec.url,
        connections: spec.connections,
        pipelining: 1,
        duration: spec.durationSec,
        timeout: 10,
        requests: spec.requests,
        ...(spec.amount ? { amount: spec.amount } : {}),
        ...(spec.rate ? { overallRate: spec.rate, ignoreCoordinatedOmission: true } : {}),
      },
      (err, res) => {
        stopProgress()
        if (err) return reject(err)
        // With `amount`, autocannon reports on its next 1 s tick after the last answer: time to that answer.
        const durationSec = Number((spec.amount ? lastAt : process.hrtime.bigint()) - started) / 1e9
        resolve({
          durationSec,
          ok2xx: res['2xx'],
          non2xx: res.non2xx,
          statuses,
          errors: res.errors,
          timeouts: res.timeouts,
          ...latencyStats(lat, n, process.cpuUsage(cpu0)),
        })
      },
    )
    inst.on('response', (_client, statusCode, _bytes, responseTime) => {
      statuses[statusCode] = (statuses[statusCode] ?? 0) + 1
      answered++
      if (spec.amount) lastAt = process.hrtime.bigint()
      if (statusCode < 200 || statusCode > 299) return
      if (n === lat.length) {
        const bigger = new Float64Array(lat.length * 2)
        bigger.set(lat)
        lat = bigger
      }
      lat[n++] = responseTime
    })
  })
}

/** A counted bar for `amount` runs, polled twice a second (both generators). */
export function polled(label: string, total: number, read: () => number): () => void {
  const bar = progress(label, total, 'responses')
  const timer = setInterval(() => bar.set(read()), 500)
  timer.unref()
  return () => {
    clearInterval(timer)
    bar.set(read())
    bar.done()
  }
}
