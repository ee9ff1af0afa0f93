// The slice of autocannon@9's programmatic API the benches use (the package ships no types).
declare module 'autocannon' {
  import type { EventEmitter } from 'node:events'

  interface Request {
    method?: string
    path?: string
    headers?: Record<string, string>
    body?: string | Buffer
    /** Called with each response to this request (status, body as text). */
    onResponse?: (status: number, body: string, context: Record<string, unknown>, headers: Record<string, string | string[]>) => void
  }

  interface Options {
    url: string
    connections?: number
    pipelining?: number
    duration?: number
    amount?: number
    timeout?: number
    overallRate?: number
    connectionRate?: number
    ignoreCoordinatedOmission?: boolean
    method?: string
    headers?: Record<string, string>
    body?: string | Buffer
    requests?: Request[]
    setupClient?: (client: unknown) => void
  }

  interface Histogram {
    average: number
    mean: number
    stddev: number
    min: number
    max: number
    total: number
    p50: number
    p90: number
    p99: number
  }

  interface Result {
    duration: number
    start: Date
    finish: Date
    errors: number
    timeouts: number
    non2xx: number
    resets: number
    '1xx': number
    '2xx': number
    '3xx': number
    '4xx': number
    '5xx': number
    statusCodeStats: Record<string, { count: number }>
    latency: Histogram
    requests: Histogram & { sent: number }
    throughput: Histogram
  }

  interface Instance extends EventEmitter {
    stop(): void
    on(event: 'response', fn: (client: unknown, statusCode: number, resBytes: number, responseTime: number) => void): this
    on(event: 'done', fn: (result: Result) => void): this
    on(event: string, fn: (...args: any[]) => void): this
  }

  function autocannon(opts: Options, cb?: (err: Error | null, result: Result) => void): Instance
  export default autocannon
  export type { Options, Result, Instance, Request }
}
