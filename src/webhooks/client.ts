/**
 * The webhook delivery client (api-v1 §6 rule 2, ARCHITECTURE "Webhooks"): one POST, a hard time
 * limit for the whole exchange, no redirects (undici `request` follows none), at most
 * `MAX_RESPONSE_BYTES` of the answer read. Each endpoint gets its own connection pool, capped at
 * its concurrency, so a slow receiver holds only its own sockets. Addresses are checked at connect
 * time by `guardedLookup`; IP-literal hosts never reach a lookup and are checked here first.
 * Time-outs are paced per event-loop turn (ABORTS_PER_TURN), so a crowd of hung receivers is cut
 * off in slices between other requests (docs/webhooks.md "Fairness").
 */
import type { Agent, buildConnector } from 'undici'
import { checkAddress, guardedLookup } from './ssrf.ts'
import { cachedLookup } from './dns-cache.ts'

/** Bytes of a response kept as the logged excerpt (api-v1 §6 rule 4). */
export const EXCERPT_BYTES = 1024
/** Bytes read at most; anything longer is cut off (and the connection dropped). */
export const MAX_RESPONSE_BYTES = 16 * 1024

/**
 * Attempts cut off at the time limit per event-loop turn at most. Cutting one off destroys its
 * socket with an error whose stack Node formats (source-mapped under tsx): a few hundred
 * microseconds. Attempts started together time out together — 64 of an account's hung receivers
 * in one timer phase would hold everyone's requests for tens of milliseconds — so the rest wait for
 * the next turns, after the I/O in between has been served (issue 10 item 6).
 */
export const ABORTS_PER_TURN = 16

/**
 * undici is loaded on the first attempt, not at start: it is the biggest module the server has (about
 * 85 ms to load), and a server whose accounts have no webhook endpoints never needs it.
 */
type Undici = typeof import('undici')
let undiciLoading: Promise<Undici> | null = null
const loadUndici = (): Promise<Undici> => (undiciLoading ??= import('undici'))

export interface Outcome {
  ok: boolean
  /** HTTP status, or null when no response came (timeout, refused, blocked). */
  status: number | null
  /** `timeout`, `blocked: …`, `connection: CODE`; null when a response came. */
  error: string | null
  excerpt: string
  durationMs: number
}

export interface ClientOptions {
  timeoutMs: number
  allowLoopback: boolean
  /** Concurrent requests (and sockets) per endpoint. */
  connections: number
}

export class WebhookClient {
  private readonly agents = new Map<number, Agent>()
  /**
   * One connector for every pool: built per connection it would cost each of them a TLS session
   * cache (a FinalizationRegistry) — measurable when a storm of failing attempts opens connections
   * by the hundred. Names resolve through a cache with bounded concurrency (dns-cache.ts), then the
   * SSRF check of every address (ssrf.ts).
   */
  private connector: buildConnector.connector | null = null
  private closedAll = false
  private doneThisTurn = 0
  private turnScheduled = false
  private readonly queued: Array<() => void> = []

  constructor(private readonly opts: ClientOptions) {}

  private agentFor(u: Undici, endpointId: number): Agent {
    let a = this.agents.get(endpointId)
    if (!a) {
      this.connector ??= u.buildConnector({ lookup: guardedLookup(this.opts.allowLoopback, cachedLookup()), timeout: this.opts.timeoutMs })
      a = new u.Agent({
        connect: this.connector,
        connections: this.opts.connections,
        pipelining: 1,
        headersTimeout: this.opts.timeoutMs,
        bodyTimeout: this.opts.timeoutMs,
        keepAliveTimeout: 4000,
      })
      this.agents.set(endpointId, a)
    }
    return a
  }

  /** Run `fn` now while this turn has room, else in a later turn (see ABORTS_PER_TURN). */
  private paced(fn: () => void): void {
    this.scheduleTurn()
    if (this.doneThisTurn < ABORTS_PER_TURN && this.queued.length === 0) {
      this.doneThisTurn++
      fn()
    } else {
      this.queued.push(fn)
    }
  }

  private scheduleTurn(): void {
    if (this.turnScheduled) return
    this.turnScheduled = true
    setImmediate(() => {
      this.turnScheduled = false
      this.doneThisTurn = 0
      while (this.doneThisTurn < ABORTS_PER_TURN && this.queued.length > 0) {
        this.doneThisTurn++
        this.queued.shift()!()
      }
      if (this.queued.length > 0) this.scheduleTurn()
    })
  }

  /** POST `body` to `url`; never throws. */
  async send(endpointId: number, url: URL, headers: Record<string, string>, body: string): Promise<Outcome> {
    const started = performance.now()
    const done = (o: Omit<Outcome, 'durationMs'>): Outcome => ({ ...o, durationMs: Math.round(performance.now() - started) })
    if (this.closedAll) return done({ ok: false, status: null, error: 'connection: closed', excerpt: '' })
    const host = url.hostname
    if (/^[\d.]+$|^\[/.test(host)) {
      const v = checkAddress(host, this.opts.allowLoopback)
      if (!v.ok) return done({ ok: false, status: null, error: `blocked: ${v.reason}`, excerpt: '' })
    }
    // A timer cleared when the attempt ends, not AbortSignal.timeout: that one fires for every
    // attempt, finished or not, and builds a TimeoutError (with its stack) each time — hundreds at
    // once, two seconds after a storm of quick failures.
    const ac = new AbortController()
    const timer = setTimeout(() => this.paced(() => ac.abort(new DOMException('The webhook attempt timed out.', 'TimeoutError'))), this.opts.timeoutMs)
    try {
      const u = await loadUndici()
      // Closed while undici loaded (first attempt at shutdown): no pool may be opened after closeAll.
      if (this.closedAll) return done({ ok: false, status: null, error: 'connection: closed', excerpt: '' })
      const res = await u.request(url, {
        method: 'POST',
        dispatcher: this.agentFor(u, endpointId),
        headers: { 'content-type': 'application/json', 'user-agent': 'dispatch-webhooks/1', ...headers },
        body,
        signal: ac.signal,
      })
      const chunks: Buffer[] = []
      let size = 0
      for await (const chunk of res.body) {
        chunks.push(chunk as Buffer)
        size += (chunk as Buffer).length
        if (size >= MAX_RESPONSE_BYTES) {
          res.body.destroy()
          break
        }
      }
      const excerpt = Buffer.concat(chunks).subarray(0, EXCERPT_BYTES).toString('utf8')
      return done({ ok: res.statusCode >= 200 && res.statusCode < 300, status: res.statusCode, error: null, excerpt })
    } catch (err) {
      return done({ ok: false, status: null, error: describe(err), excerpt: '' })
    } finally {
      clearTimeout(timer)
    }
  }

  /** Drop an endpoint's pool (endpoint deleted). */
  async close(endpointId: number): Promise<void> {
    const a = this.agents.get(endpointId)
    if (!a) return
    this.agents.delete(endpointId)
    await a.destroy().catch(() => {})
  }

  /** Abort everything still in flight and close every pool (shutdown). */
  async closeAll(): Promise<void> {
    this.closedAll = true
    const all = [...this.agents.values()]
    this.agents.clear()
    await Promise.all(all.map((a) => a.destroy().catch(() => {})))
  }
}

function describe(err: unknown): string {
  const e = err as { name?: string; code?: string; message?: string; cause?: { code?: string; message?: string } }
  if (e.name === 'TimeoutError' || e.name === 'AbortError' || e.code === 'UND_ERR_HEADERS_TIMEOUT' || e.code === 'UND_ERR_BODY_TIMEOUT' || e.code === 'UND_ERR_CONNECT_TIMEOUT') return 'timeout'
  const code = e.code ?? e.cause?.code
  if (code === 'EWEBHOOKBLOCKED') return `blocked: ${(e.message ?? e.cause?.message ?? '').replace(/^webhook refused: /, '')}`
  return `connection: ${code ?? e.message ?? 'error'}`
}
