/**
 * Listing an owner's API tokens for operators (docs/dashboard.md "API tokens"):
 *
 *   dispatch token list --owner ID [--json]
 *     → {"owner_id", "tokens": [{"id", "name", "prefix", "capabilities", "created_at", "expires_at", "revoked_at"}]}
 *
 * Only what is stored: tokens are kept as SHA-256 hashes plus their first 10 characters (`prefix`,
 * the family prefix and 6 more, as `GET /tokens` shows), so no secret can be listed. Newest first,
 * revoked and expired ones included; a dashboard session's short-lived tokens are not listed.
 */
import type { Db } from './storage/db.ts'
import { ownerTokens } from './storage/owner-tokens.ts'
import { ownerArg } from './cli-stores.ts'
import type { Emit, Reply } from './cli-help.ts'

export const TOKEN_LIST_USAGE = '  dispatch token list --owner ID [--json]'

export function tokenList(db: Db, owner: string | undefined, emit: Emit): Reply {
  const ownerId = ownerArg(db, owner, 'token list')
  const tokens = ownerTokens.list(db, ownerId).map((r) => ({
    id: r.id, name: r.name, prefix: r.token_prefix, capabilities: JSON.parse(r.capabilities) as string[],
    created_at: r.created_at, expires_at: r.expires_at, revoked_at: r.revoked_at,
  }))
  const now = new Date().toISOString()
  const state = (t: (typeof tokens)[number]) => (t.revoked_at ? 'revoked' : t.expires_at && t.expires_at <= now ? 'expired' : 'active')
  const text = tokens.length === 0
    ? `owner ${ownerId} has no API tokens (create one: dispatch token create --owner ${ownerId} --scopes read)`
    : tokens.map((t) => `${t.id}\t${t.prefix}…\t${state(t)}\t${t.capabilities.join(',')}\t${t.name || '-'}\tcreated ${t.created_at}${t.expires_at ? `\texpires ${t.expires_at}` : ''}`).join('\n')
  return { code: 0, out: emit({ owner_id: ownerId, tokens }, text) }
}
