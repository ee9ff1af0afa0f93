/**
 * Owner principal resolution (api-v1 §5). Lookup is by SHA-256 digest through a unique index: the
 * raw token is never compared. Found tokens are cached per epoch (src/storage/auth-epoch.ts): a
 * token revoked or changed by the CLI from another process, or by this one, is refused at once,
 * and expiry is checked on every request.
 */
import type { Db } from '../storage/db.ts'
import { EpochCache } from '../storage/auth-epoch.ts'
import { sha256Hex } from './tokens.ts'
import { isAppAccessToken, resolveAppToken } from './app-tokens.ts'

export interface OwnerPrincipal {
  kind: 'owner'
  ownerId: number
  tokenId: number
  capabilities: string[]
  /** ISO 8601 end of the token's life, if it has one (open sockets close then: src/ws/sessions.ts). */
  expiresAt?: string | null
  /**
   * Set when the caller is a third-party app's access token (api-v1 §4.10, docs/apps.md "Calling the
   * API"): `capabilities` then come from the granted scopes only; `tokenId` is the app token's id;
   * `resource` the RFC 8707 audience it was issued for (null: none named; issue 36).
   */
  app?: { appId: number; installationId: number; tokenId: number; scopes: string[]; resource?: string | null }
}

export function createOwnerAuth(db: Db) {
  const byHash = db.prepare<[string], { id: number; owner_id: number; capabilities: string; expires_at: string | null; revoked_at: string | null }>(
    'SELECT id, owner_id, capabilities, expires_at, revoked_at FROM owner_tokens WHERE token_hash = ?',
  )
  // Keyed by the digest, so the process keeps no raw token; the principal is shared by the requests
  // of one epoch and must not be changed by them.
  const cache = new EpochCache<string, { principal: OwnerPrincipal; expiresMs: number }>(db)
  const load = (hash: string) => {
    const row = byHash.get(hash)
    if (!row || row.revoked_at) return undefined
    const principal: OwnerPrincipal = { kind: 'owner', ownerId: row.owner_id, tokenId: row.id, capabilities: JSON.parse(row.capabilities), expiresAt: row.expires_at }
    return { principal, expiresMs: row.expires_at ? Date.parse(row.expires_at) : Infinity }
  }
  return {
    /** The principal for a raw token, or null when missing, unknown, revoked or expired. */
    resolve(rawToken: string): OwnerPrincipal | null {
      // App access tokens are owner principals limited to their scopes (docs/apps.md "Calling the API").
      if (isAppAccessToken(rawToken)) return resolveAppToken(db, rawToken)
      const hash = sha256Hex(rawToken)
      const found = cache.get(hash, () => load(hash))
      if (!found || found.expiresMs <= Date.now()) return null
      return found.principal
    },
  }
}
export type OwnerAuth = ReturnType<typeof createOwnerAuth>
