/**
 * Request counts and latency by route id and status (issue 20 item 3, docs/metrics.md).
 *
 * The hot path is one Map lookup and a few additions: each route gets its `RouteTimer` at mount
 * time (src/http/server.ts), which keeps plain counters and per-bucket counts per status it has
 * answered with. prom-client's own labelled children cost ~0.9 µs per request here (they validate
 * and hash the label set on every call); these cost a few tens of nanoseconds. The registry reads
 * them only on scrape, through two metric objects in prom-client's shape (`get()`), so the text
 * format, escaping and HELP/TYPE lines are still prom-client's.
 *
 * Label cardinality is bounded by construction: the route id is the route's method and path
 * template (`POST /api/v1/restaurants/{id}/orders`), never the raw URL; requests that match no
 * route share `unmatched`, CORS preflights share `preflight`.
 */

/** Seconds; from a cached GET (~0.1 ms) to a request stuck behind a slow disk. */
export const HTTP_BUCKETS: readonly number[] = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]

/** One route's answers with one status. `buckets[i]` counts observations in (le[i-1], le[i]]; the last is +Inf. */
interface Cell { count: number; sum: number; buckets: Float64Array }

export class RouteTimer {
  readonly cells = new Map<number, Cell>()
  constructor(readonly id: string) {}

  observe(status: number, seconds: number): void {
    let c = this.cells.get(status)
    if (!c) this.cells.set(status, (c = { count: 0, sum: 0, buckets: new Float64Array(HTTP_BUCKETS.length + 1) }))
    c.count++
    c.sum += seconds
    let i = 0
    while (i < HTTP_BUCKETS.length && seconds > HTTP_BUCKETS[i]!) i++
    c.buckets[i]!++
  }
}

/** Every route timer of one server; `timer(id)` hands out one per id (mount time, not per request). */
export class HttpTimings {
  private readonly timers = new Map<string, RouteTimer>()
  readonly unmatched: RouteTimer
  readonly preflight: RouteTimer
  constructor() {
    this.unmatched = this.timer('unmatched')
    this.preflight = this.timer('preflight')
  }

  timer(id: string): RouteTimer {
    let t = this.timers.get(id)
    if (!t) this.timers.set(id, (t = new RouteTimer(id)))
    return t
  }

  all(): Iterable<RouteTimer> {
    return this.timers.values()
  }
}

/** The route id of a table route (its method and full path template). */
export const routeId = (method: string, fullPath: string): string => `${method} ${fullPath}`

type Value = { value: number; labels: Record<string, string | number>; metricName?: string }
/** What prom-client's Registry reads from a metric (`registry.metrics()` calls `get()`). */
export interface MetricSource {
  name: string
  help: string
  type: 'counter' | 'histogram' | 'gauge'
  aggregator: 'sum'
  get(): { name: string; help: string; type: string; aggregator: 'sum'; values: Value[] }
  reset(): void
}

/** A metric read from the timings at each scrape: `values()` are its samples (nothing to reset). */
function source(name: string, help: string, type: 'counter' | 'histogram', values: () => Value[]): MetricSource {
  return { name, help, type, aggregator: 'sum', reset: () => {}, get: () => ({ name, help, type, aggregator: 'sum', values: values() }) }
}

/** `dispatch_http_requests_total{route,status}`: answers given. */
export function requestCounter(t: HttpTimings): MetricSource {
  return source('dispatch_http_requests_total', 'HTTP requests answered, by route id (method and path template) and status.', 'counter', () => {
    const values: Value[] = []
    for (const r of t.all()) for (const [status, c] of r.cells) values.push({ value: c.count, labels: { route: r.id, status } })
    return values
  })
}

/** `dispatch_http_request_duration_seconds{route,status}`: first byte to last byte of the answer. */
export function requestHistogram(t: HttpTimings): MetricSource {
  const name = 'dispatch_http_request_duration_seconds'
  return source(name, 'HTTP request latency in seconds, from the request line to the answer written, by route id and status.', 'histogram', () => {
    const values: Value[] = []
    for (const r of t.all()) {
      for (const [status, c] of r.cells) {
        let cumulative = 0
        for (let i = 0; i <= HTTP_BUCKETS.length; i++) {
          cumulative += c.buckets[i]!
          values.push({ metricName: `${name}_bucket`, value: cumulative, labels: { le: i < HTTP_BUCKETS.length ? HTTP_BUCKETS[i]! : '+Inf', route: r.id, status } })
        }
        values.push({ metricName: `${name}_sum`, value: c.sum, labels: { route: r.id, status } })
        values.push({ metricName: `${name}_count`, value: c.count, labels: { route: r.id, status } })
      }
    }
    return values
  })
}
