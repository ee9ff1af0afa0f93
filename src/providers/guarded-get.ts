/**
 * GET JSON from an outside service the operator configured (the OSRM router, the geocoder): the
 * webhook SSRF checks (the URL on every request, every connection's address at connect time:
 * src/webhooks/ssrf.ts), a time limit, no redirects. A failure is a short reason naming the service,
 * never an address or a response body, so callers can show or log it.
 */
import type { Agent } from 'undici'
import { checkUrl, guardedLookup } from '../webhooks/ssrf.ts'
import { cachedLookup } from '../webhooks/dns-cache.ts'

export interface GuardedTarget {
  /** The service's name in failure reasons (`osrm`, `nominatim`). */
  name: string
  url: string
  timeoutMs: number
  /** Plain http to a loopback server (development, tests); other internal addresses are always refused. */
  allowLoopback: boolean
}

/** undici is loaded by the first request, not at start (as the push sender does). */
let undiciLoading: Promise<typeof import('undici')> | null = null

/** The most of a service's answer that is read (an OSRM table or a geocoder's places are a few kB). */
export const GUARDED_ANSWER_MAX_BYTES = 1024 * 1024

export class GuardedGetter {
  private agent: Agent | null = null
  /** Requests sent, for tests and metrics. */
  requests = 0

  constructor(private readonly t: GuardedTarget, private readonly headers: Record<string, string> = {}) {}

  /** GET `t.url + path`: its JSON body when it answered 200 with JSON, else why not. */
  async json(path: string): Promise<{ body: unknown } | string> {
    const name = this.t.name
    this.requests++
    // IP-literal hosts never reach the connect-time lookup: checked here, as webhooks do (src/webhooks/client.ts).
    if (!checkUrl(this.t.url, this.t.allowLoopback).ok) return `${name} refused: its URL is not an allowed address`
    try {
      const undici = await (undiciLoading ??= import('undici'))
      this.agent ??= new undici.Agent({
        connect: undici.buildConnector({ lookup: guardedLookup(this.t.allowLoopback, cachedLookup()), timeout: this.t.timeoutMs }),
        headersTimeout: this.t.timeoutMs, bodyTimeout: this.t.timeoutMs, connections: 8,
      })
      // No redirects are followed (undici's request never does without its redirect interceptor).
      const res = await undici.request(this.t.url + path, { method: 'GET', headers: this.headers, dispatcher: this.agent, signal: AbortSignal.timeout(this.t.timeoutMs) })
      // At most GUARDED_ANSWER_MAX_BYTES of an answer is read: a service that sends more is not believed.
      const chunks: Buffer[] = []
      let size = 0
      for await (const chunk of res.body as AsyncIterable<Buffer>) {
        size += chunk.length
        if (size > GUARDED_ANSWER_MAX_BYTES) {
          res.body.destroy()
          return `${name} answered more than ${GUARDED_ANSWER_MAX_BYTES} bytes`
        }
        chunks.push(chunk)
      }
      const text = Buffer.concat(chunks).toString('utf8')
      if (res.statusCode !== 200) return `${name} answered ${res.statusCode}`
      try { return { body: JSON.parse(text) as unknown } } catch { return `${name} answered something that is not JSON` }
    } catch (err) {
      const e = err as { name?: string; code?: string; cause?: { code?: string } }
      const code = e.code ?? e.cause?.code
      if (code === 'EWEBHOOKBLOCKED') return `${name} refused: its host does not resolve to an allowed address`
      if (e.name === 'TimeoutError' || e.name === 'AbortError' || code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT' || code === 'UND_ERR_CONNECT_TIMEOUT') return `${name} timed out after ${this.t.timeoutMs} ms`
      return `${name} unreachable${code ? ` (${code})` : ''}`
    }
  }

  close(): Promise<void> {
    return this.agent ? this.agent.close().catch(() => {}) : Promise.resolve()
  }
}

/** A bounded map with an age limit (oldest out first): the providers' answer caches. */
export class AgedCache<V> {
  private readonly m = new Map<string, { v: V; at: number }>()
  constructor(private readonly ttlMs: number, private readonly entries: number) {}
  get(k: string, now: number): V | undefined {
    const e = this.m.get(k)
    if (!e) return undefined
    if (now - e.at > this.ttlMs) { this.m.delete(k); return undefined }
    return e.v
  }
  set(k: string, v: V, now: number): void {
    this.m.delete(k)
    this.m.set(k, { v, at: now })
    if (this.m.size > this.entries) this.m.delete(this.m.keys().next().value!)
  }
}
