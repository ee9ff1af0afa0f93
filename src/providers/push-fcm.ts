/**
 * Native app pushes through FCM HTTP v1 (docs/providers.md "Push"): an access token from the
 * service account's JWT grant (jwt.ts), kept until shortly before it expires and shared by
 * concurrent sends, then `POST {FCM_API_BASE}/v1/projects/{id}/messages:send`.
 */
import type { FcmConfig } from './config.ts'
import { FCM_SCOPE, serviceAccountAssertion } from './jwt.ts'
import { httpFailure, networkFailure, type Attempt } from './retry.ts'

export interface FcmNotification { token: string; title: string; body: string; data: Record<string, unknown> }

/** FCM data values must be strings. */
export function fcmData(data: Record<string, unknown>): Record<string, string> {
  const out: Record<string, string> = {}
  for (const [k, val] of Object.entries(data)) if (val !== undefined) out[k] = typeof val === 'string' ? val : JSON.stringify(val)
  return out
}

/** FCM's errorCode (google.firebase.fcm.v1.FcmError) of an error answer, if any. */
function fcmErrorCode(body: unknown): string | undefined {
  const details = (body as { error?: { details?: Array<{ errorCode?: unknown }> } } | null)?.error?.details
  return Array.isArray(details) ? details.map((d) => d?.errorCode).find((c): c is string => typeof c === 'string') : undefined
}

/** Refusals that mean the registration token will never work again: drop the device (FCM "Manage registration tokens"). */
const DEAD = new Set(['UNREGISTERED', 'SENDER_ID_MISMATCH'])

/** A token is renewed this long before it expires. */
const EARLY_MS = 60_000

export class FcmSender {
  private token: { value: string; expiresAt: number } | null = null
  private pending: Promise<string | Attempt> | null = null

  constructor(private readonly cfg: FcmConfig, private readonly now: () => number = Date.now) {}

  async attempt(msg: FcmNotification, timeoutMs: number): Promise<Attempt> {
    const token = await this.accessToken(timeoutMs)
    if (typeof token !== 'string') return token
    const url = `${this.cfg.apiBase}/v1/projects/${encodeURIComponent(this.cfg.projectId)}/messages:send`
    const message = { token: msg.token, notification: { title: msg.title, body: msg.body }, data: fcmData(msg.data), android: { priority: 'high' } }
    try {
      const res = await fetch(url, {
        method: 'POST', redirect: 'error', signal: AbortSignal.timeout(timeoutMs),
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ message }),
      })
      const body = await res.json().catch(() => null) as unknown
      if (res.ok) return { ok: true }
      // An access token refused (revoked, clock skew): fetch a new one on the next attempt.
      if (res.status === 401) {
        this.token = null
        return { ok: false, transient: true, status: 401, reason: 'fcm 401' }
      }
      const code = fcmErrorCode(body)
      const dead = res.status === 404 || (code !== undefined && DEAD.has(code))
      return httpFailure(res.status, `fcm ${res.status}${code ? ` ${code}` : ''}`, res.headers.get('retry-after'), dead)
    } catch (err) {
      return networkFailure(err)
    }
  }

  /** The cached access token, or a new one; a failure is returned as the attempt's result. */
  private accessToken(timeoutMs: number): Promise<string | Attempt> {
    if (this.token && this.now() < this.token.expiresAt - EARLY_MS) return Promise.resolve(this.token.value)
    this.pending ??= this.exchange(timeoutMs).finally(() => { this.pending = null })
    return this.pending
  }

  private async exchange(timeoutMs: number): Promise<string | Attempt> {
    const { account } = this.cfg
    const form = new URLSearchParams({ grant_type: 'urn:ietf:params:oauth:grant-type:jwt-bearer', assertion: serviceAccountAssertion(account, FCM_SCOPE, this.now()) })
    try {
      const res = await fetch(account.token_uri, {
        method: 'POST', redirect: 'error', signal: AbortSignal.timeout(timeoutMs),
        headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
        body: form.toString(),
      })
      const body = await res.json().catch(() => null) as { access_token?: unknown; expires_in?: unknown; error?: unknown } | null
      if (!res.ok || typeof body?.access_token !== 'string') {
        const error = typeof body?.error === 'string' ? ` ${body.error}` : ''
        return httpFailure(res.ok ? 502 : res.status, `fcm token ${res.status}${error}`, res.headers.get('retry-after'))
      }
      const seconds = typeof body.expires_in === 'number' ? body.expires_in : 3600
      this.token = { value: body.access_token, expiresAt: this.now() + seconds * 1000 }
      return body.access_token
    } catch (err) {
      return networkFailure(err)
    }
  }
}
