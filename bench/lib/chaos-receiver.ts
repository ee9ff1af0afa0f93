/**
 * The webhook receiver of the chaos run (issue 21 item 3): a real HTTP server in the driver process
 * that records every delivery by its `webhook-id` (docs/webhooks.md: the id receivers deduplicate
 * on) and answers 503 to a seeded share of them, so retries are pending when the server is killed.
 */
import { createServer, type Server } from 'node:http'
import { Webhook } from 'standardwebhooks'

/** Failures the receiver answers to one webhook-id at most (well under the server's 5 attempts). */
export const MAX_FAILS = 2

export interface Delivery {
  /** The `webhook-id` header. */
  id: string
  event: string
  /** The change it describes: event + created_at + data, as the body carried them. */
  change: string
  /** Requests that carried this id (retries repeat it). */
  requests: number
  /** Whether one of them was answered 2xx. */
  accepted: boolean
}

export class ChaosReceiver {
  private server: Server | null = null
  url = ''
  secret = ''
  readonly byId = new Map<string, Delivery>()
  /** Problems seen on arrival (bad signature, body id ≠ header id); the run fails on any. */
  readonly problems: string[] = []
  requests = 0

  constructor(private readonly failShare: number, private readonly rand: () => number) {}

  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = []
      req.on('data', (c: Buffer) => chunks.push(c))
      req.on('end', () => {
        this.requests++
        const raw = Buffer.concat(chunks).toString('utf8')
        const id = String(req.headers['webhook-id'] ?? '')
        let body: { id?: string; event?: string; created_at?: string; data?: unknown }
        try { body = JSON.parse(raw) } catch { body = {} }
        if (body.id !== id) this.problems.push(`body id ${String(body.id)} differs from webhook-id header ${id}`)
        // Verify one request in ten (the receiver shares the CPU with the server under test).
        if (this.secret && this.requests % 10 === 0) {
          try { new Webhook(this.secret).verify(raw, req.headers as Record<string, string>) } catch { this.problems.push(`signature of ${id} does not verify`) }
        }
        const change = JSON.stringify([body.event, body.created_at, body.data])
        const d = this.byId.get(id) ?? { id, event: String(body.event), change, requests: 0, accepted: false }
        if (d.change !== change) this.problems.push(`webhook-id ${id} was sent for two different changes`)
        d.requests++
        this.byId.set(id, d)
        // At most MAX_FAILS failures per delivery: the server gives up after 5 attempts (docs/webhooks.md
        // "Retries"), and this run checks that every event is delivered, not the give-up rule.
        if (!d.accepted && d.requests <= MAX_FAILS && this.rand() < this.failShare) { res.writeHead(503).end('chaos says not now'); return }
        d.accepted = true
        res.writeHead(200).end('ok')
      })
    })
    await new Promise<void>((r) => this.server!.listen(0, '127.0.0.1', () => r()))
    this.url = `http://127.0.0.1:${(this.server.address() as { port: number }).port}`
  }

  /** Changes that arrived under more than one webhook-id (a duplicate event, not a retry). */
  duplicates(): string[][] {
    const ids = new Map<string, string[]>()
    for (const d of this.byId.values()) ids.set(d.change, [...(ids.get(d.change) ?? []), d.id])
    return [...ids.values()].filter((xs) => xs.length > 1)
  }

  close(): Promise<void> {
    if (!this.server) return Promise.resolve()
    this.server.closeAllConnections()
    return new Promise((r) => this.server!.close(() => r()))
  }
}
