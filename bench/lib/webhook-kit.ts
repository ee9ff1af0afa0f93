/**
 * Pieces shared by the webhook bench scenarios (bench/webhooks.ts, bench/lib/webhook-storm.ts): a
 * local receiver with per-endpoint behaviour, a small API client, paced order load, polling.
 */
import { createServer, type Server as HttpServer } from 'node:http'
import { Pool } from 'undici'
import { Webhook } from 'standardwebhooks'

/** Verify one delivery in this many with standardwebhooks (the receiver shares the CPU). */
export const VERIFY_EVERY = 50

export type Behaviour = 'ok' | 'fail' | 'hang'

/** The local receiver: per-endpoint behaviour, first-arrival latency per webhook-id, sampled verification. */
export class Receiver {
  server!: HttpServer
  port = 0
  behaviour: Behaviour[] = []
  secrets: string[] = []
  private seen = new Set<string>()
  lat: number[] = []
  latHealthy: number[] = []
  ok2xx = 0
  non2xx = 0
  arrivals = 0
  verified = 0
  badSignatures = 0
  measuring = false
  private n = 0

  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = []
      req.on('data', (c: Buffer) => chunks.push(c))
      req.on('end', () => {
        const at = Date.now()
        const ep = Number(req.url!.slice(4)) // /ep/<i>
        const b = this.behaviour[ep] ?? 'ok'
        const raw = Buffer.concat(chunks).toString('utf8')
        const id = req.headers['webhook-id'] as string
        this.arrivals++
        if (!this.seen.has(id)) {
          this.seen.add(id)
          if (this.measuring) {
            const created = Date.parse(JSON.parse(raw).created_at as string)
            this.lat.push(at - created)
            if (b === 'ok') this.latHealthy.push(at - created)
          }
        }
        if (++this.n % VERIFY_EVERY === 0) {
          try { new Webhook(this.secrets[ep]!).verify(raw, req.headers as Record<string, string>); this.verified++ } catch { this.badSignatures++ }
        }
        if (b === 'hang') return
        if (b === 'fail') { this.non2xx++; res.writeHead(500).end('down'); return }
        this.ok2xx++
        res.writeHead(200).end()
      })
    })
    this.server.keepAliveTimeout = 30_000
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', () => r()))
    this.port = (this.server.address() as { port: number }).port
  }

  reset(): void {
    this.lat = []
    this.latHealthy = []
    this.ok2xx = 0
    this.non2xx = 0
    this.arrivals = 0
  }

  close(): Promise<void> {
    this.server.closeAllConnections()
    return new Promise((r) => this.server.close(() => r()))
  }
}

export interface Demo { owner: { token: string }; store: { id: number } }

export class Api {
  readonly pool: Pool
  constructor(url: string, private readonly token: string) {
    this.pool = new Pool(url, { connections: 32, pipelining: 1 })
  }

  async call(method: 'GET' | 'POST', path: string, body?: unknown): Promise<{ status: number; json: any }> {
    const r = await this.pool.request({
      method, path: `/api/v1${path}`,
      headers: { authorization: `Bearer ${this.token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    })
    const text = await r.body.text()
    return { status: r.statusCode, json: text ? JSON.parse(text) : null }
  }
}

/**
 * Orders at `rate`/s, evenly spaced (a 10 ms tick), for `seconds`; resolves when all are answered.
 * With `latencies`, each answered 201's round trip (ms, measured here) is pushed to it (and, with
 * `sentAt`, when it was sent: performance.now()).
 */
export async function paced(api: Api, orderPath: string, body: unknown, rate: number, seconds: number, latencies?: number[], sentAt?: number[]): Promise<{ sent: number; failed: number; firstFailure: string | null }> {
  let sent = 0
  let failed = 0
  let firstFailure: string | null = null
  const inflight = new Set<Promise<void>>()
  const start = performance.now()
  const total = Math.round(rate * seconds)
  while (sent < total) {
    const due = Math.min(total, Math.floor(((performance.now() - start) / 1000) * rate))
    while (sent < due) {
      sent++
      const t0 = performance.now()
      const p = api.call('POST', orderPath, body).then((r) => {
        if (r.status < 200 || r.status > 299) {
          failed++
          firstFailure ??= `${r.status} ${JSON.stringify(r.json).slice(0, 200)}`
        }
        else {
          latencies?.push(performance.now() - t0)
          sentAt?.push(t0)
        }
      }, (err: unknown) => {
        failed++
        firstFailure ??= String(err)
      })
      inflight.add(p)
      void p.finally(() => inflight.delete(p))
    }
    await new Promise((r) => setTimeout(r, 10))
  }
  await Promise.all(inflight)
  return { sent, failed, firstFailure }
}

export async function until(cond: () => boolean | Promise<boolean>, ms: number, what: string): Promise<number> {
  const start = performance.now()
  while (!(await cond())) {
    if (performance.now() - start > ms) throw new Error(`${what}: not within ${ms} ms`)
    await new Promise((r) => setTimeout(r, 20))
  }
  return performance.now() - start
}
