/**
 * Customer authentication (api-v1 §4.5, §5 "Customer token"): per store, per device, individually
 * revocable tokens, and SMS one-time codes stored only as salted hashes.
 */
import { createHash, randomBytes, randomInt } from 'node:crypto'
import type { Db } from '../storage/db.ts'
import { nowIso } from '../storage/db.ts'
import { TOKEN_PREFIX, newToken, sha256Hex, safeEqualHex } from './tokens.ts'

export interface CustomerPrincipal {
  kind: 'customer'
  customerId: number
  storeId: number
  ownerId: number
  tokenId: number
}

export function createCustomerAuth(db: Db) {
  const byHash = db.prepare<[string], { token_id: number; customer_id: number; store_id: number; owner_id: number }>(
    `SELECT t.id AS token_id, c.id AS customer_id, c.store_id, s.owner_id FROM customer_tokens t
     JOIN customers c ON c.id = t.customer_id JOIN stores s ON s.id = c.store_id
     WHERE t.token_hash = ? AND t.revoked_at IS NULL`,
  )
  return {
    resolve(rawToken: string): CustomerPrincipal | null {
      if (!rawToken.startsWith(TOKEN_PREFIX.customer)) return null
      const r = byHash.get(sha256Hex(rawToken))
      return r ? { kind: 'customer', customerId: r.customer_id, storeId: r.store_id, ownerId: r.owner_id, tokenId: r.token_id } : null
    },
  }
}

/** A token for one device; an earlier token of the same customer and device is revoked. Call inside a durable write. */
export function issueCustomerToken(db: Db, customerId: number, device: string): string {
  const now = nowIso()
  db.prepare('UPDATE customer_tokens SET revoked_at = ? WHERE customer_id = ? AND device = ? AND revoked_at IS NULL').run(now, customerId, device)
  const token = newToken('customer')
  db.prepare('INSERT INTO customer_tokens (customer_id, token_hash, device, created_at) VALUES (?, ?, ?, ?)').run(customerId, sha256Hex(token), device, now)
  return token
}

/** One-time SMS codes (docs/customers.md "OTP"). */
export const OTP = { digits: 6, ttlMs: 5 * 60_000, maxAttempts: 5 } as const

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
