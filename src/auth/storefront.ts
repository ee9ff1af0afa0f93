/**
 * Storefront tokens (api-v1 §4.3, §5): sent as `X-Storefront-Token`, one store each, scopes
 * `menu:read` and `order:write`, plus `agent` (issue 12): the token may also be used at the
 * storefront MCP server `{site_url}/mcp/storefront` (docs/mcp-storefront.md), where its tools still
 * need `menu:read` / `order:write`. Looked up on every use, so a revocation applies at once.
 */
import type { Db } from '../storage/db.ts'
import { TOKEN_PREFIX, sha256Hex } from './tokens.ts'

export const STOREFRONT_SCOPES = ['menu:read', 'order:write', 'agent'] as const
/** What a token gets when its issuer names no scopes (the storefront API's two; `agent` is opt-in). */
export const DEFAULT_STOREFRONT_SCOPES: readonly StorefrontScope[] = ['menu:read', 'order:write']
export type StorefrontScope = (typeof STOREFRONT_SCOPES)[number]

export interface StorefrontPrincipal {
  kind: 'storefront'
  tokenId: number
  storeId: number
  ownerId: number
  scopes: string[]
}

export function createStorefrontAuth(db: Db) {
  const byHash = db.prepare<[string], { id: number; store_id: number; owner_id: number; scopes: string }>(
    `SELECT t.id, t.store_id, s.owner_id, t.scopes FROM storefront_tokens t JOIN stores s ON s.id = t.store_id
     WHERE t.token_hash = ? AND t.revoked_at IS NULL`,
  )
  return {
    resolve(rawToken: string): StorefrontPrincipal | null {
      if (!rawToken.startsWith(TOKEN_PREFIX.storefront)) return null
      const r = byHash.get(sha256Hex(rawToken))
      if (!r) return null
      let scopes: string[] = []
      try { scopes = (JSON.parse(r.scopes) as unknown[]).filter((s): s is string => typeof s === 'string') } catch { scopes = [] }
      return { kind: 'storefront', tokenId: r.id, storeId: r.store_id, ownerId: r.owner_id, scopes }
    },
  }
}
