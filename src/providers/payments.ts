/**
 * Online payments behind a small provider interface (issue 17 item 1; docs/providers.md
 * "Payments"), like SMS: the development provider (`payments-dev.ts`) takes no money and lets a
 * developer or a test complete or fail a checkout; a real gateway implements the same interface and
 * plugs in through `createPaymentProvider` without touching the order code. The order actor never
 * calls a provider: operations start a payment here, record it `pending` through the actor, and the
 * provider's signed webhook settles it through the actor again.
 */
import type { Config } from '../config.ts'
import { DevPaymentProvider } from './payments-dev.ts'
import { ApiError } from '../errors.ts'

/** What a client needs to complete an online payment (a hosted checkout page, or a client-side SDK). */
export interface ClientAction {
  /** Where to send the payer (the provider's hosted checkout). */
  checkout_url: string
  /** For client-side SDKs that confirm the payment themselves; secret to the payer. */
  client_secret: string
}

export interface StartPayment {
  orderId: number
  storeId: number
  /** Cents: what counts toward the order, and the tip on top; the provider charges both. */
  amount: number
  tip: number
  currency: string
}

/** A provider event the webhook verified: payment `ref` succeeded or failed. */
export interface ProviderEvent { id: string; ref: string; outcome: 'succeeded' | 'failed' }

export interface PaymentProvider {
  /** Stored with each online payment (`payments.provider`) and the `{provider}` of its webhook address. */
  readonly name: string
  /** Create the provider's payment; it stays pending until the provider's webhook says otherwise. */
  create(p: StartPayment): Promise<{ ref: string; action: ClientAction }>
  /**
   * Optional: close a checkout the store cancelled, so the payer can no longer complete it. Without
   * it (or if the payer completes it anyway) a late success is refunded in full (docs/operations.md
   * "Online payments and the payment provider").
   */
  cancel?(ref: string): Promise<void>
  /**
   * Give back (part of) a payment's money; resolves once the provider accepted the refund. `key` names
   * the refund (`refund_<id>`): asked again with the same key — a retry after a crash or a lost
   * answer — the provider answers the first request's refund and never gives the money back twice
   * (providers' idempotency keys).
   */
  refund(ref: string, amountCents: number, key: string): Promise<{ ref: string; status: 'completed' | 'pending' }>
  /**
   * Verify a webhook (raw body + request headers) and read its event; null when the signature is
   * missing, wrong or stale. An event this server does not act on reads as null too only if unsigned.
   */
  verify(raw: string, headers: Readonly<Record<string, string>>): ProviderEvent | 'ignored' | null
}

/**
 * The default: no online payments at all (cash and card taken by staff still work). Taking money
 * online is a deliberate choice of a real provider, and the development one (which takes none) must
 * be asked for by name, so a server never offers customers a checkout that marks orders paid for free.
 */
export class NoPaymentProvider implements PaymentProvider {
  readonly name = 'none'
  async create(): Promise<never> {
    throw new ApiError('online_payments_unavailable', undefined, { method: ['Online payments are not set up on this server (PAYMENT_PROVIDER).'] })
  }
  async refund(): Promise<never> {
    throw new ApiError('refund_failed', 'No payment provider is set up to give this money back.')
  }
  verify(): null { return null }
}

export function createPaymentProvider(config: Config): PaymentProvider {
  switch (config.paymentProvider) {
    case 'none':
      return new NoPaymentProvider()
    case 'dev':
      return new DevPaymentProvider(config.paymentWebhookSecret, config.baseUrl)
  }
}
