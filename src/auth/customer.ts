/**
 * Customer authentication (api-v1 §4.5, §5 "Customer token"): per store, per device, individually
 * revocable tokens, and SMS one-time codes stored only as salted hashes.
 */
import { createHash, randomBytes, randomInt } from 'node:crypto'
import type { Db } from '../storage/db.ts'
import { nowIso } from '../storage/db.ts'
import { customerTokens } from '../storage/customers.ts'
import { TOKEN_PREFIX, newToken, sha256Hex, safeEqualHex } from './tokens.ts'

export interface CustomerPrincipal {
  kind: 'customer'
  customerId: number
  storeId: number
  ownerId: number
  tokenId: number
}

export function createCustomerAuth(db: Db) {
  return {
    resolve(rawToken: string): CustomerPrincipal | null {
      if (!rawToken.startsWith(TOKEN_PREFIX.customer)) return null
      const r = customerTokens.byHash(db, sha256Hex(rawToken))
      return r ? { kind: 'customer', customerId: r.customer_id, storeId: r.store_id, ownerId: r.owner_id, tokenId: r.token_id } : null
    },
  }
}

/** A token for one device; an earlier token of the same customer and device is revoked. Call inside a durable write. */
export function issueCustomerToken(db: Db, customerId: number, device: string): string {
  const token = newToken('customer')
  customerTokens.replaceForDevice(db, customerId, device, sha256Hex(token), nowIso())
  return token
}

/** One-time SMS codes (docs/customers.md "One-time codes"). */
export const OTP = { digits: 6, ttlMs: 5 * 60_000, maxAttempts: 5 } as const

const MINUTE = 60_000
const DAY = 24 * 60 * MINUTE
/**
 * Per phone number, across every store and client address (docs/customers.md "Limits per phone"):
 * texts cost money and reach a person, so few; verifications allow for typos at a few stores but
 * keep guessing at 6 digits hopeless (at most 30 guesses a day against 10^6 codes).
 */
export const OTP_PER_PHONE = {
  sms: [{ limit: 3, periodMs: 10 * MINUTE }, { limit: 10, periodMs: DAY }],
  verify: [{ limit: 10, periodMs: 10 * MINUTE }, { limit: 30, periodMs: DAY }],
} as const

export const newOtpCode = (): string => String(randomInt(0, 10 ** OTP.digits)).padStart(OTP.digits, '0')

/** `salt$sha256(salt:code)`: a code is short-lived and attempt-limited, so a fast salted hash suffices. */
export function hashOtp(code: string): string {
  const salt = randomBytes(8).toString('hex')
  return `${salt}$${createHash('sha256').update(`${salt}:${code}`).digest('hex')}`
}

export function otpMatches(code: string, stored: string): boolean {
  const [salt, digest] = stored.split('$')
  if (!salt || !digest) return false
  return safeEqualHex(createHash('sha256').update(`${salt}:${code}`).digest('hex'), digest)
}
