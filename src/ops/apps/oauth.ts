/**
 * The OAuth 2.0 authorization-code flow for third-party apps (api-v1 §4.10, §5; RFC 6749, RFC 7636
 * PKCE, RFC 9700 best practice, RFC 9207 `iss`; docs/apps.md "OAuth"). Hand-written (see
 * ../shared/DEPENDENCIES.md): the pages and the token address (src/http/routes/oauth.ts) call these
 * functions, which hold every rule.
 *
 * - Authorization requests are checked in RFC order: an unknown client or a `redirect_uri` that is
 *   not registered exactly is shown as an error page (never redirected to); every other problem
 *   goes back to the app as `error=` on its redirect URI, with `state` and `iss`.
 * - Codes live 5 minutes and are single use: the token request burns the code before any other
 *   check of it, and a second redemption revokes every token the first one issued (RFC 6749 §4.1.2).
 * - PKCE S256 is optional; when a challenge was sent the verifier is required, and a verifier
 *   without a challenge is refused (RFC 9700 §2.1.1). `plain` is not accepted.
 * - Refresh tokens rotate: each use returns a new pair; using one twice revokes the whole grant.
 * - While the account's plan lacks `apps` (src/auth/account-gate.ts `appsRefusal`) the consent page
 *   installs nothing and the token address refuses both grants with `invalid_grant` (details name
 *   the feature), spending no refresh token and revoking nothing, so the grant works again, as it
 *   was, once the feature is back (issue 31 item 3).
 * - AI agents are public clients (src/ops/apps/agent-clients.ts, issue 36): no secret, PKCE S256 required.
 * - Audience (RFC 8707): an authorization or token request may name the `resource` the token is for,
 *   `{site_url}/mcp` or `{base_url}`; the token then works there only (src/auth/app-tokens.ts
 *   `audienceAccepts`). Refreshes keep the grant's resource.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto'
import type { Services } from '../../services.ts'
import type { Db } from '../../storage/db.ts'
import { nowIso } from '../../storage/db.ts'
import {
  activeInstallation, appByClientId, appTokenByHash, burnCode, codeByHash, installApp, installationById, insertCode,
  revokeGrantTokens, useRefreshToken, type AppRow, type InstallationRow,
} from '../../storage/apps.ts'
import { appsRefusal } from '../../auth/account-gate.ts'
import { issueAppTokens, type IssuedAppTokens } from '../../auth/app-tokens.ts'
import { sha256Hex } from '../../auth/tokens.ts'
import { isAppScope, normalizeScopes, type AppTerms } from '../../domain/app-scopes.ts'
import { chargeAtInstall } from '../../billing/app-charges.ts'
import { ERROR_CATALOG } from '../../errors.ts'

export const CODE_TTL_MS = 5 * 60_000

/** What an authorization request carries (query of GET, hidden fields of the consent form). */
export interface AuthorizeParams {
  response_type?: string | undefined
  client_id?: string | undefined
  redirect_uri?: string | undefined
  scope?: string | undefined
  state?: string | undefined
  code_challenge?: string | undefined
  code_challenge_method?: string | undefined
  /** RFC 8707 resource indicator: the address the token will be used at. */
  resource?: string | undefined
}

/** A request that is fine: what the consent page shows and the approval installs. */
export interface AuthorizeRequest {
  app: AppRow
  terms: AppTerms
  redirectUri: string
  scopes: string[]
  state: string | null
  codeChallenge: string | null
  /** The resource (RFC 8707) named, normalized; null when none was. */
  resource: string | null
}

/** The outcome: consent to show, an error page (client or redirect URI unusable), or a redirect back to the app. */
export type Checked =
  | { kind: 'ok'; req: AuthorizeRequest }
  | { kind: 'page'; status: number; message: string }
  | { kind: 'redirect'; location: string }

/** `redirectUri` with the answer's parameters (and `iss`, RFC 9207) added to its query. */
export function redirectTo(issuer: string, redirectUri: string, params: Record<string, string | null>): string {
  const u = new URL(redirectUri)
  for (const [k, v] of Object.entries(params)) if (v !== null) u.searchParams.set(k, v)
  u.searchParams.set('iss', issuer)
  return u.href
}

const VERIFIER_OR_CHALLENGE = /^[A-Za-z0-9\-._~]{43,128}$/

/**
 * The resource identifiers tokens can be bound to (RFC 8707): the admin MCP server and the API.
 * A trailing slash is ignored; anything else is refused (`invalid_target`).
 */
export function tokenResources(siteUrl: string): string[] {
  return [`${siteUrl}/mcp`, `${siteUrl}/api/v1`]
}
export function normalizeResource(siteUrl: string, raw: string): string | null {
  const r = raw.replace(/\/+$/, '')
  return tokenResources(siteUrl).includes(r) ? r : null
}

/** Check an authorization request (RFC 6749 §4.1.1, §4.1.2.1). */
export function checkAuthorize(svc: Services, p: AuthorizeParams): Checked {
  const app = p.client_id ? appByClientId(svc.db, p.client_id) : null
  if (!app || !app.published_terms) return { kind: 'page', status: 400, message: 'This app is unknown or not published: the link that sent you here is wrong.' }
  if (!p.redirect_uri || !app.redirect_uris.includes(p.redirect_uri)) {
    return { kind: 'page', status: 400, message: 'The redirect address is not one the app registered, so you were not sent back to it.' }
  }
  const state = p.state ?? null
  const back = (error: string, description: string): Checked =>
    ({ kind: 'redirect', location: redirectTo(svc.config.siteUrl, p.redirect_uri!, { error, error_description: description, state }) })
  if (p.response_type !== 'code') return back('unsupported_response_type', 'Only response_type=code is supported.')
  const terms = app.published_terms
  const asked = (p.scope ?? '').split(' ').filter(Boolean)
  const unknown = asked.filter((s) => !isAppScope(s) || !terms.scopes.includes(s))
  if (unknown.length) return back('invalid_scope', `Scopes the app did not register: ${unknown.join(' ')}.`)
  // No scope asked: everything the app registered (RFC 6749 §3.3 lets the server choose a default).
  const scopes = normalizeScopes(asked.length ? asked : terms.scopes)
  let codeChallenge: string | null = null
  if (p.code_challenge !== undefined || p.code_challenge_method !== undefined) {
    if (p.code_challenge_method !== 'S256') return back('invalid_request', 'Use code_challenge_method=S256 (plain is not accepted).')
    if (!p.code_challenge || !VERIFIER_OR_CHALLENGE.test(p.code_challenge)) return back('invalid_request', 'code_challenge must be the base64url SHA-256 of the verifier.')
    codeChallenge = p.code_challenge
  } else if (app.kind === 'agent') {
    // A public client has no secret: PKCE is what binds the code to the one who asked for it.
    return back('invalid_request', 'Agents are public clients: send code_challenge with code_challenge_method=S256.')
  }
  let resource: string | null = null
  if (p.resource !== undefined) {
    resource = normalizeResource(svc.config.siteUrl, p.resource)
    if (!resource) return back('invalid_target', `Tokens are issued for ${tokenResources(svc.config.siteUrl).join(' or ')} only.`)
  }
  return { kind: 'ok', req: { app, terms, redirectUri: p.redirect_uri, scopes, state, codeChallenge, resource } }
}

/** Deny: back to the app with `access_denied`. */
export const denyLocation = (svc: Services, req: AuthorizeRequest): string =>
  redirectTo(svc.config.siteUrl, req.redirectUri, { error: 'access_denied', error_description: 'The owner declined.', state: req.state })

/** Whether the account may install apps (the `apps` plan feature): the refusal's message, or null. */
export const installRefusal = (svc: Services, ownerId: number): string | null => appsRefusal(svc.db, ownerId)?.message ?? null

/**
 * Approve: install the app for the account with the granted scopes and the published terms (a
 * re-consent updates the active installation), make the install-time charge and delivery set-up
 * (src/billing/app-charges.ts) and a code, all in one transaction; then redirect back with the code.
 */
export async function approve(svc: Services, ownerId: number, req: AuthorizeRequest): Promise<{ location: string; installation: InstallationRow }> {
  const code = randomBytes(32).toString('base64url')
  const installation = await svc.committer.write((db) => {
    // Checked in the installing transaction: the plan may have changed since the page was shown.
    const refused = appsRefusal(db, ownerId)
    if (refused) throw refused
    const now = Date.now()
    const at = nowIso(now)
    const inst = installApp(db, req.app.id, ownerId, req.scopes, { ...req.terms, scopes: req.scopes }, at)
    chargeAtInstall(db, inst, new Date(now))
    insertCode(db, {
      hash: sha256Hex(code), appId: req.app.id, installationId: inst.id, redirectUri: req.redirectUri, scopes: req.scopes,
      codeChallenge: req.codeChallenge, at, expiresAt: nowIso(now + CODE_TTL_MS), resource: req.resource,
    })
    return inst
  })
  return { location: redirectTo(svc.config.siteUrl, req.redirectUri, { code, state: req.state }), installation }
}

/** The account's active installation of an app, if any (the consent page says "update"). */
export const installedAlready = (svc: Services, appId: number, ownerId: number): InstallationRow | null =>
  activeInstallation(svc.db, appId, ownerId)

// ---- token endpoint --------------------------------------------------------------------------

/** An RFC 6749 §5.2 error (the token address answers it with `error` and `error_description`). */
export class OAuthError extends Error {
  constructor(
    readonly error: 'invalid_request' | 'invalid_client' | 'invalid_grant' | 'unsupported_grant_type' | 'invalid_scope' | 'invalid_target',
    message: string,
    readonly basic = false,
    /** Machine-readable facts, sent as `details` (the plan's refusal: `{feature, plan}`). */
    readonly details?: Record<string, unknown>,
  ) {
    super(message)
  }
  /** The catalog's status of the same code (src/errors.ts): 401 for invalid_client, else 400. */
  get status(): number { return ERROR_CATALOG[this.error].status }
}

export interface TokenAnswer extends IssuedAppTokens { token_type: 'bearer'; scope: string }

/** Client credentials from HTTP Basic (RFC 6749 §2.3.1: each part form-encoded) or the form; never both. */
function clientOf(svc: Services, form: URLSearchParams, authorization: string | undefined): AppRow {
  let id = form.get('client_id')
  let secret = form.get('client_secret')
  const basic = authorization !== undefined && /^basic\s+/i.test(authorization)
  if (basic) {
    if (secret !== null) throw new OAuthError('invalid_request', 'Send the client credentials once: in HTTP Basic or in the form, not both.')
    const raw = Buffer.from(authorization.replace(/^basic\s+/i, '').trim(), 'base64').toString('utf8')
    const i = raw.indexOf(':')
    if (i < 0) throw new OAuthError('invalid_client', 'Malformed HTTP Basic credentials.', true)
    const dec = (s: string) => { try { return decodeURIComponent(s.replace(/\+/g, ' ')) } catch { return '' } }
    const basicId = dec(raw.slice(0, i))
    if (id !== null && id !== basicId) throw new OAuthError('invalid_request', 'client_id differs from the HTTP Basic user.')
    id = basicId
    secret = dec(raw.slice(i + 1))
  }
  const app = id ? appByClientId(svc.db, id) : null
  // A public agent client authenticates with nothing but its id; PKCE (required for it) does the rest.
  if (app?.kind === 'agent') {
    if (secret !== null || basic) throw new OAuthError('invalid_client', 'This client is public: send client_id without a secret.', basic)
    return app
  }
  const a = Buffer.from(sha256Hex(secret ?? ''), 'hex')
  const b = Buffer.from(sha256Hex(app?.client_secret ?? randomBytes(16).toString('hex')), 'hex')
  // Compared as digests in constant time, whether or not the client exists.
  if (!app || !secret || !timingSafeEqual(a, b)) throw new OAuthError('invalid_client', 'Unknown client or wrong client secret.', basic)
  return app
}

const s256 = (verifier: string): string => createHash('sha256').update(verifier).digest('base64url')

/**
 * The installing account's plan lacks `apps`: the grant cannot be used now. `invalid_grant`, not
 * `unauthorized_client`: RFC 6749 §5.2 keeps the latter for a client not allowed a grant type at
 * all, whereas this client may use both, only not this account's grant until the plan changes.
 * The plan's `details` tell it apart from a dead grant (docs/apps.md "When the plan lacks apps").
 */
function notInPlan(db: Db, ownerId: number): OAuthError | null {
  const refused = appsRefusal(db, ownerId)
  return refused
    ? new OAuthError('invalid_grant', `${refused.message} Nothing is revoked: the grant works again once the plan includes apps.`, false, refused.details)
    : null
}

type Redeemed = { ok: TokenAnswer } | { err: OAuthError }

function answer(t: IssuedAppTokens, scopes: string[]): TokenAnswer {
  return { access_token: t.access_token, token_type: 'bearer', expires_in: t.expires_in, refresh_token: t.refresh_token, scope: scopes.join(' ') }
}

/** Inside a write: redeem a code. The code is burned first, so the checks below cannot be retried. */
function redeemCode(db: Db, site: string, app: AppRow, form: URLSearchParams): Redeemed {
  const raw = form.get('code')
  if (!raw) return { err: new OAuthError('invalid_request', 'Missing code.') }
  const code = codeByHash(db, sha256Hex(raw))
  if (!code) return { err: new OAuthError('invalid_grant', 'Unknown authorization code.') }
  const now = Date.now()
  if (!burnCode(db, code.id, nowIso(now))) {
    // A replay: whoever holds the code is not to be trusted, nor what it issued (RFC 6749 §4.1.2).
    revokeGrantTokens(db, code.id, nowIso(now))
    return { err: new OAuthError('invalid_grant', 'The authorization code was already used; the tokens it issued are revoked.') }
  }
  if (code.app_id !== app.id) return { err: new OAuthError('invalid_grant', 'The code was issued to another client.') }
  if (Date.parse(code.expires_at) <= now) return { err: new OAuthError('invalid_grant', 'The authorization code has expired.') }
  if (form.get('redirect_uri') !== code.redirect_uri) return { err: new OAuthError('invalid_grant', 'redirect_uri differs from the authorization request.') }
  const verifier = form.get('code_verifier')
  if (code.code_challenge) {
    if (!verifier || !VERIFIER_OR_CHALLENGE.test(verifier) || s256(verifier) !== code.code_challenge) return { err: new OAuthError('invalid_grant', 'The code_verifier does not match the code_challenge.') }
  } else if (verifier !== null) {
    return { err: new OAuthError('invalid_grant', 'A code_verifier was sent but the authorization request had no code_challenge.') }
  }
  const inst = installationById(db, code.installation_id)
  if (!inst || inst.status !== 'active') return { err: new OAuthError('invalid_grant', 'The app is no longer installed.') }
  const refused = notInPlan(db, inst.owner_id)
  if (refused) return { err: refused }
  const resource = targetOf(site, form, code.resource)
  if ('err' in resource) return resource
  return { ok: answer(issueAppTokens(db, inst.id, code.id, code.scopes, now, resource.ok), code.scopes) }
}

/** Inside a write: rotate a refresh token; reuse of a rotated one revokes the grant. */
function rotateRefresh(db: Db, site: string, app: AppRow, form: URLSearchParams): Redeemed {
  const raw = form.get('refresh_token')
  if (!raw) return { err: new OAuthError('invalid_request', 'Missing refresh_token.') }
  const row = appTokenByHash(db, sha256Hex(raw))
  const inst = row && row.kind === 'refresh' ? installationById(db, row.installation_id) : null
  if (!row || !inst || inst.app_id !== app.id) return { err: new OAuthError('invalid_grant', 'Unknown refresh token.') }
  const now = Date.now()
  if (row.revoked_at) return { err: new OAuthError('invalid_grant', 'The refresh token was revoked.') }
  // Refused before the token is spent, so the same refresh token works once the plan has apps again;
  // a token already used still goes on to the reuse detection below.
  const refused = row.used_at === null && inst.status === 'active' ? notInPlan(db, inst.owner_id) : null
  if (refused) return { err: refused }
  // Checked before the token is spent too: asking another audience is a mistake to correct, not an attack.
  const resource = targetOf(site, form, row.resource)
  if ('err' in resource) return resource
  if (!useRefreshToken(db, row.id, nowIso(now))) {
    revokeGrantTokens(db, row.grant_id, nowIso(now))
    return { err: new OAuthError('invalid_grant', 'The refresh token was already used; every token of this grant is revoked.') }
  }
  if (row.expires_at && Date.parse(row.expires_at) <= now) return { err: new OAuthError('invalid_grant', 'The refresh token has expired.') }
  if (inst.status !== 'active') return { err: new OAuthError('invalid_grant', 'The app is no longer installed.') }
  // What the grant holds, as far as the installation still grants it (a re-consent may have narrowed it).
  const held = row.scopes.filter((s) => inst.scopes.includes(s))
  const asked = (form.get('scope') ?? '').split(' ').filter(Boolean)
  const beyond = asked.filter((s) => !held.includes(s))
  if (beyond.length) return { err: new OAuthError('invalid_scope', `Not granted: ${beyond.join(' ')}.`) }
  const scopes = normalizeScopes(asked.length ? asked : held)
  return { ok: answer(issueAppTokens(db, inst.id, row.grant_id, scopes, now, resource.ok), scopes) }
}

/**
 * The token's audience (RFC 8707 §2.2): the grant's resource; a `resource` in the token request
 * must be that one, or may name one when the grant had none.
 */
function targetOf(site: string, form: URLSearchParams, granted: string | null): { ok: string | null } | { err: OAuthError } {
  const asked = form.getAll('resource')
  if (asked.length === 0) return { ok: granted }
  const r = asked.length === 1 ? normalizeResource(site, asked[0]!) : null
  if (!r) return { err: new OAuthError('invalid_target', `Name one resource: ${tokenResources(site).join(' or ')}.`) }
  if (granted !== null && r !== granted) return { err: new OAuthError('invalid_target', `This grant is for ${granted}.`) }
  return { ok: r }
}

/** `POST {site_url}/oauth/token`: authenticate the client, then the grant. Throws OAuthError. */
export async function exchangeToken(svc: Services, form: URLSearchParams, authorization: string | undefined): Promise<TokenAnswer> {
  const grant = form.get('grant_type')
  if (!grant) throw new OAuthError('invalid_request', 'Missing grant_type.')
  if (grant !== 'authorization_code' && grant !== 'refresh_token') throw new OAuthError('unsupported_grant_type', 'Use grant_type authorization_code or refresh_token.')
  const app = clientOf(svc, form, authorization)
  // One transaction: the burn (or rotation) and what follows are durable together, and an
  // error answer still keeps the code burned.
  const r = await svc.committer.write((db) => (grant === 'authorization_code' ? redeemCode(db, svc.config.siteUrl, app, form) : rotateRefresh(db, svc.config.siteUrl, app, form)))
  if ('err' in r) throw r.err
  return r.ok
}
