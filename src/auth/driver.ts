/**
 * Driver principal resolution (api-v1 §5 "Driver token"). Two kinds of token lead to a driver: the
 * owner-issued one (drivers.token_hash, replaced on rotation) and device tokens from the SMS login
 * (driver_tokens, revoked on rotation). Looked up on every use, so rotation applies at once.
 */
import type { Db } from '../storage/db.ts'
import { TOKEN_PREFIX, sha256Hex } from './tokens.ts'

export interface DriverPrincipal {
  kind: 'driver'
  driverId: number
  ownerId: number
  restaurantId: number | null
  /** The device token used (SMS login), or null for the owner-issued token. */
  tokenId: number | null
}

type Row = { id: number; owner_id: number; restaurant_id: number | null }

export function createDriverAuth(db: Db) {
  const primary = db.prepare<[string], Row>('SELECT id, owner_id, restaurant_id FROM drivers WHERE token_hash = ?')
  const device = db.prepare<[string], Row & { token_id: number }>(
    `SELECT d.id, d.owner_id, d.restaurant_id, t.id AS token_id FROM driver_tokens t JOIN drivers d ON d.id = t.driver_id
     WHERE t.token_hash = ? AND t.revoked_at IS NULL`,
  )
  return {
    resolve(rawToken: string): DriverPrincipal | null {
      // Other families' tokens never match; skip the lookups for them.
      if (!rawToken.startsWith(TOKEN_PREFIX.driver)) return null
      const hash = sha256Hex(rawToken)
      const p = primary.get(hash)
      if (p) return { kind: 'driver', driverId: p.id, ownerId: p.owner_id, restaurantId: p.restaurant_id, tokenId: null }
      const d = device.get(hash)
      return d ? { kind: 'driver', driverId: d.id, ownerId: d.owner_id, restaurantId: d.restaurant_id, tokenId: d.token_id } : null
    },
  }
}
export type DriverAuth = ReturnType<typeof createDriverAuth>
