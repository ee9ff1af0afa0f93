/**
 * SMS through Twilio's Messages resource, or anything that speaks it (docs/providers.md "SMS"):
 * `POST {SMS_API_BASE}/2010-04-01/Accounts/{sid}/Messages.json`, HTTP Basic (account sid : auth
 * token), a form with `To`, `From` or `MessagingServiceSid`, and `Body`; 201 with a JSON `sid` is
 * accepted, errors are JSON `{code, message, status}`.
 */
import type { SmsProvider } from './sms.ts'
import type { SmsConfig } from './config.ts'
import { maskPhone, type Deliverer } from './delivery.ts'
import { httpFailure, networkFailure, type Attempt } from './retry.ts'

type Twilio = Extract<SmsConfig, { kind: 'twilio' }>

export class TwilioSmsProvider implements SmsProvider {
  private readonly url: string
  private readonly auth: string

  constructor(private readonly cfg: Twilio, private readonly deliver: Deliverer) {
    this.url = `${cfg.apiBase}/2010-04-01/Accounts/${encodeURIComponent(cfg.accountSid)}/Messages.json`
    this.auth = `Basic ${Buffer.from(`${cfg.accountSid}:${cfg.authToken}`).toString('base64')}`
  }

  /** Awaited by the sign-in flows: a failure is 503 `delivery_failed` for them (delivery.ts). */
  send(to: string, body: string): Promise<void> {
    return this.deliver.interactive({ channel: 'sms', provider: 'twilio', to: maskPhone(to) }, (ms) => this.attempt(to, body, ms))
  }

  private async attempt(to: string, body: string, timeoutMs: number): Promise<Attempt> {
    const form = new URLSearchParams({ To: to, Body: body })
    if (this.cfg.messagingServiceSid) form.set('MessagingServiceSid', this.cfg.messagingServiceSid)
    else form.set('From', this.cfg.from!)
    try {
      const res = await fetch(this.url, {
        method: 'POST',
        headers: { authorization: this.auth, 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
        body: form.toString(),
        signal: AbortSignal.timeout(timeoutMs),
        redirect: 'error',
      })
      const answer = await res.json().catch(() => null) as { code?: unknown } | null
      // Any 2xx was accepted (Twilio answers 201 with the message's `sid`); retrying it could text twice.
      if (res.ok) return { ok: true }
      // Twilio's `message` may quote the number or the text: only the numeric code is kept.
      const code = typeof answer?.code === 'number' ? ` code ${answer.code}` : ''
      return httpFailure(res.status, `twilio ${res.status}${code}`, res.headers.get('retry-after'))
    } catch (err) {
      return networkFailure(err)
    }
  }
}
