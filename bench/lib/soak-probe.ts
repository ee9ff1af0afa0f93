/**
 * Preloaded into the server process by the soak (bench/soak.ts passes `--import <this file>`
 * through startApp's nodeArgs; nothing in src knows about it): every SOAK_PROBE_MS (default 1000)
 * it appends one JSON line to SOAK_PROBE_FILE with process.memoryUsage() and the event-loop delay
 * since the previous line (perf_hooks monitorEventLoopDelay, p99 and max in ms). Without
 * SOAK_PROBE_FILE it does nothing.
 */
import { appendFileSync } from 'node:fs'
import { monitorEventLoopDelay } from 'node:perf_hooks'

const file = process.env.SOAK_PROBE_FILE
if (file) {
  const every = Number(process.env.SOAK_PROBE_MS ?? 1000)
  const eld = monitorEventLoopDelay({ resolution: 10 })
  eld.enable()
  const timer = setInterval(() => {
    const m = process.memoryUsage()
    const line = { t: Date.now(), rss: m.rss, heapUsed: m.heapUsed, heapTotal: m.heapTotal, external: m.external, eldP99Ms: eld.percentile(99) / 1e6, eldMaxMs: eld.max / 1e6 }
    eld.reset()
    appendFileSync(file, JSON.stringify(line) + '\n')
  }, every)
  timer.unref() // never keeps the server alive on its own
}
