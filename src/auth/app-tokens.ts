/**
 * App credentials and tokens (api-v1 §4.10, §5; docs/apps.md "OAuth"): client ids and secrets, the
 * `dsa_` access tokens (1 hour) and `dsar_` rotating refresh tokens (90 days) of an installation,
 * kept as SHA-256 only, and their resolution into an owner principal limited to the granted scopes.
 * Writes are called inside committer transactions.
 */
import { randomBytes } from 'node:crypto'
import type { Db } from '../storage/db.ts'
import { nowIso } from '../storage/db.ts'
import { insertAppToken, liveAppAccess, revokeInstallationTokenRows } from '../storage/apps.ts'
import { capabilitiesForScopes } from '../domain/app-scopes.ts'
import { newToken, sha256Hex, TOKEN_PREFIX } from './tokens.ts'
import { newSecret } from '../webhooks/signing.ts'
import type { OwnerPrincipal } from './owner.ts'

export const ACCESS_TOKEN_TTL_S = 3600
export const REFRESH_TOKEN_TTL_S = 90 * 24 * 3600

/** A new app's credentials: the public client id, the secret (shown once) and the `whsec_` webhook secret. */
export function newAppCredentials(): { clientId: string; clientSecret: string; webhookSecret: string } {
  return {
    clientId: `app_${randomBytes(12).toString('hex')}`,
    clientSecret: newClientSecret(),
    webhookSecret: newSecret(),
  }
}
export const newClientSecret = (): string => `dscs_${randomBytes(32).toString('base64url')}`

export interface IssuedAppTokens { access_token: string; refresh_token: string; expires_in: number }

/** Inside a write: a fresh access and refresh token pair for an installation, tied to `grantId` (the code). */
export function issueAppTokens(db: Db, installationId: number, grantId: number, scopes: string[], atMs: number = Date.now(), resource: string | null = null): IssuedAppTokens {
  const access = newToken('app')
  const refresh = newToken('appRefresh')
  const at = nowIso(atMs)
  insertAppToken(db, { hash: sha256Hex(access), kind: 'access', installationId, grantId, scopes, at, expiresAt: nowIso(atMs + ACCESS_TOKEN_TTL_S * 1000), resource })
  insertAppToken(db, { hash: sha256Hex(refresh), kind: 'refresh', installationId, grantId, scopes, at, expiresAt: nowIso(atMs + REFRESH_TOKEN_TTL_S * 1000), resource })
  return { access_token: access, refresh_token: refresh, expires_in: ACCESS_TOKEN_TTL_S }
}

/** Inside a write: revoke every access, refresh and session token of an installation at once (uninstall). */
export function revokeInstallationTokens(db: Db, installationId: number, at: string): number {
  return revokeInstallationTokenRows(db, installationId, at)
}

export const isAppAccessToken = (raw: string): boolean => raw.startsWith(TOKEN_PREFIX.app) && !raw.startsWith(TOKEN_PREFIX.appRefresh)

/**
 * The owner principal of an app access token, or null when unknown, revoked, expired, a refresh
 * token, or its installation is no longer active. Looked up on every request (revocation applies at once).
 * Capabilities come from the granted scopes only, so account-wide operations stay refused.
 */
export function resolveAppToken(db: Db, raw: string): OwnerPrincipal | null {
  const row = liveAppAccess(db, sha256Hex(raw))
  if (!row) return null
  if (row.expires_at && Date.parse(row.expires_at) <= Date.now()) return null
  // The token's scopes as far as the installation still grants them: a re-consent with fewer
  // scopes narrows the tokens issued before it at once.
  const scopes = row.scopes.filter((s) => row.installation_scopes.includes(s))
  return {
    kind: 'owner',
    ownerId: row.owner_id,
    tokenId: row.id,
    capabilities: capabilitiesForScopes(scopes),
    expiresAt: row.expires_at,
    app: { appId: row.app_id, installationId: row.installation_id, tokenId: row.id, scopes, resource: row.resource },
  }
}

/**
 * RFC 8707 audience check (issue 36, docs/apps.md "Audience"): may a token issued for `resource`
 * be used at the door whose resource identifier is `door`? A token issued without a resource
 * indicator keeps working everywhere it did before (the API, and the admin MCP server with
 * `mcp:use`); one bound to a resource works there only, so a token an agent got for `/mcp` is
 * refused on `/api/v1` and the other way round.
 */
export const audienceAccepts = (resource: string | null | undefined, door: string): boolean =>
  resource == null || resource === door
