import type { BenchRow } from './scenario.ts'
import { quantile } from './load.ts'

/**
 * The row of requests sent one at a time: `lat` their client-side latencies in ms, SORTED ascending.
 * Throughput is what one client gets (1000 / mean); nothing is known of server CPU.
 */
export function sequentialRow(name: string, load: string, lat: Float64Array, extra: Record<string, unknown> = {}): BenchRow {
  const mean = lat.reduce((a, b) => a + b, 0) / lat.length
  return {
    scenario: name, load, durationSec: (mean * lat.length) / 1000, requests: lat.length, throughput: 1000 / mean,
    p50Ms: quantile(lat, 0.5), p90Ms: quantile(lat, 0.9), p99Ms: quantile(lat, 0.99), maxMs: lat[lat.length - 1]!, non2xx: 0, errors: 0, ratio: null,
    serverCpuUsPerReq: null, serverCpuPct: null, extra,
  }
}
