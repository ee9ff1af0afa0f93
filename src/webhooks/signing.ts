/**
 * Webhook signatures (api-v1 §6; Standard Webhooks 1.0): the secret is `whsec_` + base64 of 32
 * random bytes and the HMAC key is the decoded bytes. `webhook-signature` is `v1,` + base64
 * HMAC-SHA256 of `{id}.{timestamp}.{body}`. The legacy `X-Webhook-Signature` is the hex
 * HMAC-SHA256 of the body alone, keyed with the secret string exactly as it was shown.
 */
import { createHmac, randomBytes } from 'node:crypto'

export const SECRET_PREFIX = 'whsec_'

/** A new endpoint signing secret, in the form the Standard Webhooks libraries accept. */
export const newSecret = (): string => SECRET_PREFIX + randomBytes(32).toString('base64')

/** The HMAC key of a secret: the base64-decoded part after `whsec_`. */
export const signingKey = (secret: string): Buffer =>
  Buffer.from(secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret, 'base64')

export interface SignedHeaders {
  'webhook-id': string
  'webhook-timestamp': string
  'webhook-signature': string
  'x-webhook-event': string
  'x-webhook-signature': string
}

/** Every signature header of one attempt; `timestamp` is Unix seconds at send time. */
export function signedHeaders(key: Buffer, secret: string, msgId: string, event: string, timestamp: number, body: string): SignedHeaders {
  const v1 = createHmac('sha256', key).update(`${msgId}.${timestamp}.${body}`).digest('base64')
  return {
    'webhook-id': msgId,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': `v1,${v1}`,
    'x-webhook-event': event,
    'x-webhook-signature': createHmac('sha256', secret).update(body).digest('hex'),
  }
}
