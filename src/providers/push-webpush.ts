/**
 * Web Push to browsers (RFC 8030) with VAPID (RFC 8292) and aes128gcm payloads (RFC 8291), built by
 * `web-push` and sent by undici. The endpoint comes from a browser, that is from a user: it gets the
 * webhook SSRF checks (src/webhooks/ssrf.ts) before the request and at connect time, no redirects.
 */
import type { Agent } from 'undici'
import type webpushModule from 'web-push'
import { checkUrl, guardedLookup } from '../webhooks/ssrf.ts'
import { cachedLookup } from '../webhooks/dns-cache.ts'
import type { VapidConfig } from './config.ts'
import type { WebSubscription } from './web-subscription.ts'
import { httpFailure, networkFailure, type Attempt } from './retry.ts'

/** Seconds a push service keeps an undelivered message: an offer or a new-order alert is stale after that. */
export const WEB_PUSH_TTL = 600

/** web-push and undici (about 120 ms to load together) are loaded by the first push, not at start. */
type Libs = { webpush: typeof webpushModule; undici: typeof import('undici') }
let libsLoading: Promise<Libs> | null = null
const loadLibs = (): Promise<Libs> => (libsLoading ??= Promise.all([import('web-push'), import('undici')]).then(([w, undici]) => ({ webpush: w.default, undici })))

export class WebPushSender {
  private agent: Agent | null = null
  private closed = false

  constructor(private readonly vapid: VapidConfig, private readonly allowLoopback: boolean, private readonly timeoutMs: number) {}

  async attempt(sub: WebSubscription, payload: string, timeoutMs: number): Promise<Attempt> {
    const checked = checkUrl(sub.endpoint, this.allowLoopback)
    // An endpoint that may not be reached never will be: the subscription is dropped.
    if (!checked.ok) return { ok: false, transient: false, dead: true, reason: `blocked: ${checked.reason}` }
    const { webpush, undici } = await loadLibs()
    if (this.closed) return networkFailure(new Error('web push sender closed'))
    this.agent ??= new undici.Agent({
      connect: undici.buildConnector({ lookup: guardedLookup(this.allowLoopback, cachedLookup()), timeout: this.timeoutMs }),
      headersTimeout: this.timeoutMs, bodyTimeout: this.timeoutMs, connections: 16,
    })
    let details: { headers: Record<string, string | number>; body: Buffer | null }
    try {
      details = webpush.generateRequestDetails(sub, payload, {
        vapidDetails: this.vapid, TTL: WEB_PUSH_TTL, contentEncoding: 'aes128gcm', urgency: 'high',
      }) as unknown as typeof details
    } catch {
      // web-push refuses keys that are not points on P-256: this subscription cannot work.
      return { ok: false, transient: false, dead: true, reason: 'invalid subscription keys' }
    }
    const headers = Object.fromEntries(Object.entries(details.headers).map(([k, val]) => [k.toLowerCase(), String(val)]))
    try {
      const res = await undici.request(checked.url!, { method: 'POST', headers, body: details.body ?? undefined, dispatcher: this.agent, signal: AbortSignal.timeout(timeoutMs) })
      await res.body.dump()
      if (res.statusCode >= 200 && res.statusCode < 300) return { ok: true }
      const retryAfter = res.headers['retry-after']
      // 404 and 410: the browser unsubscribed or the subscription expired (RFC 8030 §7.3; push services' docs).
      const gone = res.statusCode === 404 || res.statusCode === 410
      return httpFailure(res.statusCode, `web push ${res.statusCode}`, Array.isArray(retryAfter) ? retryAfter[0] : retryAfter, gone)
    } catch (err) {
      const code = (err as { code?: string; cause?: { code?: string } }).code ?? (err as { cause?: { code?: string } }).cause?.code
      if (code === 'EWEBHOOKBLOCKED') return { ok: false, transient: false, dead: true, reason: 'blocked: the endpoint does not resolve to a public address' }
      return networkFailure(err)
    }
  }

  close(): Promise<void> {
    this.closed = true
    return this.agent ? this.agent.close().catch(() => {}) : Promise.resolve()
  }
}
