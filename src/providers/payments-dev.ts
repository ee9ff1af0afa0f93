/**
 * The development payment provider (docs/providers.md "Payments"): takes no money. A checkout is
 * completed or failed by whoever holds its client secret (`POST /payments/dev/complete`, enabled only
 * with PAYMENT_PROVIDER=dev), which makes the provider sign a webhook event exactly as a real one
 * would and hand it to the same webhook address. Refunds are recorded (`refunds`), like the SMS
 * provider records what it would send.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto'
import type { ClientAction, PaymentProvider, ProviderEvent, StartPayment } from './payments.ts'

/** Signed events older (or newer) than this are refused, so a captured one cannot be replayed later. */
export const WEBHOOK_TOLERANCE_S = 300

/**
 * Standard-Webhooks-style signature of a dev provider event: `v1,` + base64 HMAC-SHA256 of
 * `{id}.{timestamp}.{body}` keyed with the secret (PAYMENT_WEBHOOK_SECRET).
 */
export function signDevEvent(secret: string, id: string, timestamp: number, raw: string): Record<string, string> {
  const sig = createHmac('sha256', secret).update(`${id}.${timestamp}.${raw}`).digest('base64')
  return { 'webhook-id': id, 'webhook-timestamp': String(timestamp), 'webhook-signature': `v1,${sig}` }
}

/** The body of a dev provider event. */
export interface DevEventBody { id: string; type: 'payment.succeeded' | 'payment.failed'; data: { ref: string; amount: number } }

interface Checkout { secret: string; amount: number }

export class DevPaymentProvider implements PaymentProvider {
  readonly name = 'dev'
  /** Refunds it was asked for, newest last (bounded). */
  readonly refunds: Array<{ ref: string; payment_ref: string; amount: number; at: string; key: string }> = []
  /** Refund refs by idempotency key (bounded like the checkouts). */
  private readonly refundsByKey = new Map<string, string>()
  private readonly checkouts = new Map<string, Checkout>()

  constructor(private readonly secret: string, private readonly baseUrl: string, private readonly keep = 10_000) {}

  async create(p: StartPayment): Promise<{ ref: string; action: ClientAction }> {
    const ref = `devpay_${randomBytes(12).toString('hex')}`
    const secret = `${ref}_secret_${randomBytes(16).toString('hex')}`
    this.checkouts.set(ref, { secret, amount: p.amount + p.tip })
    if (this.checkouts.size > this.keep) this.checkouts.delete(this.checkouts.keys().next().value!)
    return { ref, action: { checkout_url: `${this.baseUrl}/payments/dev/complete`, client_secret: secret } }
  }

  /** Forget the checkout: its client secret no longer completes it. */
  async cancel(ref: string): Promise<void> {
    this.checkouts.delete(ref)
  }

  async refund(ref: string, amountCents: number, key: string): Promise<{ ref: string; status: 'completed' }> {
    // The same key is the same refund, as at a real provider: recorded (and money given back) once.
    const known = this.refundsByKey.get(key)
    if (known) return { ref: known, status: 'completed' }
    const r = { ref: `devref_${randomBytes(12).toString('hex')}`, payment_ref: ref, amount: amountCents, at: new Date().toISOString(), key }
    this.refunds.push(r)
    this.refundsByKey.set(key, r.ref)
    if (this.refunds.length > 1000) this.refunds.splice(0, this.refunds.length - 1000)
    if (this.refundsByKey.size > this.keep) this.refundsByKey.delete(this.refundsByKey.keys().next().value!)
    return { ref: r.ref, status: 'completed' }
  }

  /**
   * The dev checkout: the holder of `clientSecret` completes or fails payment `ref`. Returns the
   * signed webhook (body and headers) the provider sends, or null for an unknown ref or wrong secret.
   */
  complete(ref: string, clientSecret: string, outcome: 'succeeded' | 'failed', now = Date.now()): { raw: string; headers: Record<string, string> } | null {
    const c = this.checkouts.get(ref)
    if (!c || !equal(c.secret, clientSecret)) return null
    const body: DevEventBody = { id: `devevt_${randomBytes(12).toString('hex')}`, type: `payment.${outcome}`, data: { ref, amount: c.amount } }
    const raw = JSON.stringify(body)
    return { raw, headers: signDevEvent(this.secret, body.id, Math.floor(now / 1000), raw) }
  }

  verify(raw: string, headers: Readonly<Record<string, string>>, now = Date.now()): ProviderEvent | 'ignored' | null {
    const id = headers['webhook-id']
    const ts = Number(headers['webhook-timestamp'])
    const sig = headers['webhook-signature']
    if (!id || !sig || !Number.isInteger(ts) || Math.abs(now / 1000 - ts) > WEBHOOK_TOLERANCE_S) return null
    const want = signDevEvent(this.secret, id, ts, raw)['webhook-signature']!
    // Several space-separated signatures are allowed (secret rotation), as in Standard Webhooks.
    if (!sig.split(' ').some((s) => equal(s, want))) return null
    let body: DevEventBody
    try { body = JSON.parse(raw) as DevEventBody } catch { return null }
    if (body.id !== id || typeof body.data?.ref !== 'string') return null
    if (body.type !== 'payment.succeeded' && body.type !== 'payment.failed') return 'ignored'
    return { id: body.id, ref: body.data.ref, outcome: body.type === 'payment.succeeded' ? 'succeeded' : 'failed' }
  }
}

function equal(a: string, b: string): boolean {
  const x = Buffer.from(a)
  const y = Buffer.from(b)
  return x.length === y.length && timingSafeEqual(x, y)
}
