/**
 * A real local webhook receiver (node:http on 127.0.0.1) for the webhook tests: it keeps every
 * request (headers, raw body, arrival time) and answers as the test says — a status, a delay, or
 * never (to force a timeout). Verification uses the `standardwebhooks` package as a real receiver would.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import { createHmac } from 'node:crypto'
import { Webhook } from 'standardwebhooks'
import type { Test } from 'tap'
import { checkSchema } from './jsonschema.ts'
import { EVENT_CATALOG } from '../../src/domain/webhook-events.ts'

export interface Received {
  path: string
  headers: Record<string, string>
  raw: string
  body: { id: string; event: string; created_at: string; data: Record<string, any> }
  at: number
}

/** What to answer: a status (and optional body/delay), or 'hang' to never answer. */
export type Answer = { status: number; body?: string; delayMs?: number; headers?: Record<string, string> } | 'hang'

export interface Receiver {
  url: string
  port: number
  received: Received[]
  /** Most requests open at once, per path. */
  peakOpen: Map<string, number>
  /** Most requests open at once, all paths together. */
  peakOpenAll: number
  /** Decide the answer per request (default 200). */
  respond: (r: Received) => Answer
  /** Wait until `pred` holds for the received list (polling), or throw after `ms`. */
  until(pred: (all: Received[]) => boolean, ms?: number, what?: string): Promise<void>
  /** Requests whose body `event` is `event`. */
  of(event: string): Received[]
  close(): Promise<void>
}

export async function startReceiver(): Promise<Receiver> {
  const hanging = new Set<ServerResponse>()
  const rcv: Receiver = {
    url: '', port: 0, received: [], peakOpen: new Map(), peakOpenAll: 0,
    respond: () => ({ status: 200, body: 'ok' }),
    async until(pred, ms = 5000, what = 'condition') {
      const end = Date.now() + ms
      while (!pred(rcv.received)) {
        if (Date.now() > end) throw new Error(`receiver: ${what} not met within ${ms} ms; got ${rcv.received.length} requests: ${rcv.received.map((r) => `${r.body.event}/${r.headers['webhook-id']}`).slice(-10).join(', ')}`)
        await new Promise((r) => setTimeout(r, 10))
      }
    },
    of: (event) => rcv.received.filter((r) => r.body.event === event),
    close: () => new Promise<void>((resolve) => {
      for (const res of hanging) res.destroy()
      server.closeAllConnections()
      server.close(() => resolve())
    }),
  }
  const open = new Map<string, number>()
  let openAll = 0
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const path = req.url ?? '/'
    open.set(path, (open.get(path) ?? 0) + 1)
    rcv.peakOpen.set(path, Math.max(rcv.peakOpen.get(path) ?? 0, open.get(path)!))
    rcv.peakOpenAll = Math.max(rcv.peakOpenAll, ++openAll)
    res.on('close', () => { open.set(path, open.get(path)! - 1); openAll-- })
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8')
      const headers: Record<string, string> = {}
      for (const [k, v] of Object.entries(req.headers)) if (typeof v === 'string') headers[k] = v
      let body: Received['body']
      try { body = JSON.parse(raw) } catch { body = { id: '', event: '(unparseable)', created_at: '', data: {} } }
      const r: Received = { path, headers, raw, body, at: Date.now() }
      rcv.received.push(r)
      const a = rcv.respond(r)
      if (a === 'hang') {
        hanging.add(res)
        res.on('close', () => hanging.delete(res))
        return
      }
      const send = () => { res.writeHead(a.status, { 'content-type': 'text/plain', ...a.headers }); res.end(a.body ?? '') }
      if (a.delayMs) setTimeout(send, a.delayMs)
      else send()
    })
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()))
  rcv.port = (server.address() as { port: number }).port
  rcv.url = `http://127.0.0.1:${rcv.port}`
  return rcv
}

/** Verify a received request with the Standard Webhooks library; returns the parsed payload or throws. */
export function verifyStandard(secret: string, r: Received): unknown {
  return new Webhook(secret).verify(r.raw, r.headers)
}

/** The legacy signature a receiver would compute: hex HMAC-SHA256 of the body, keyed with the secret string. */
export const legacySignature = (secret: string, raw: string): string => createHmac('sha256', secret).update(raw).digest('hex')

/** Register an endpoint through the API; returns `{id, secret, ...}`. */
export async function createEndpoint(base: string, token: string, url: string, events: string[] = ['*']): Promise<{ id: number; secret: string; url: string; events: string[] }> {
  const r = await fetch(`${base}/webhook-endpoints`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify({ url, events }) })
  const body = await r.json() as { id: number; secret: string; url: string; events: string[] }
  if (r.status !== 201) throw new Error(`endpoint create failed: ${r.status} ${JSON.stringify(body)}`)
  return body
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

/**
 * A received event is what the catalog documents (src/domain/webhook-events.ts): its `data` matches
 * the event's JSON Schema with no undocumented key, and the delivery is signed with `secret`.
 */
export function conformsToCatalog(t: Test, r: Received, secret: string): void {
  const spec = EVENT_CATALOG[r.body.event]
  if (!t.ok(spec, `${r.body.event} is in the catalog`)) return
  const schema = spec!.data as { properties: Record<string, unknown> }
  t.same(checkSchema(schema, r.body.data, {}), [], `${r.body.event} data matches the documented schema`)
  t.same(Object.keys(r.body.data).filter((k) => !(k in schema.properties)), [], `${r.body.event} has no undocumented key`)
  t.same(verifyStandard(secret, r), r.body, `${r.body.event} is signed`)
}
