/**
 * App fixtures written straight into SQLite (for tests of billing, embedding and uninstall; the
 * OAuth tests go through the real flow). Rows are picked up at once: app tokens are resolved from
 * SQLite on every request.
 */
import { randomBytes } from 'node:crypto'
import type { Db } from '../../src/storage/db.ts'
import { insertSession } from '../../src/storage/owner-auth.ts'
import { nowIso } from '../../src/storage/db.ts'
import { appById, burnCode, createApp, installApp, insertCode, publishApp, type AppRow, type AppTerms, type InstallationRow } from '../../src/storage/apps.ts'
import { insertShellToken } from '../../src/storage/app-group.ts'
import { issueAppTokens, newAppCredentials } from '../../src/auth/app-tokens.ts'
import { newToken, sha256Hex } from '../../src/auth/tokens.ts'

export interface TestAppOpts {
  name?: string
  scopes?: string[]
  pricing?: AppTerms['pricing']
  /** Minor units. */
  price?: number
  cap?: number | null
  currency?: string
  redirectUris?: string[]
  embedUrl?: string | null
  webhookUrl?: string | null
  webhookEvents?: string[]
  /** Published (approved) unless false. */
  publish?: boolean
}

/** An app of `developerId` (published by default): the row, whose client_secret and webhook_secret are usable. */
export function createTestApp(db: Db, developerId: number, opts: TestAppOpts = {}): AppRow {
  const at = nowIso()
  const terms: AppTerms = {
    scopes: opts.scopes ?? ['orders:read'],
    pricing: opts.pricing ?? 'free',
    price: opts.price ?? 0,
    cap: opts.cap ?? null,
    currency: opts.currency ?? 'USD',
  }
  const cred = newAppCredentials()
  const app = createApp(db, {
    developerId,
    name: opts.name ?? `App ${cred.clientId.slice(-6)}`,
    redirectUris: opts.redirectUris ?? ['https://app.example/callback'],
    embedUrl: opts.embedUrl ?? null,
    webhookUrl: opts.webhookUrl ?? null,
    webhookEvents: opts.webhookEvents ?? [],
    ...cred,
    terms,
  }, at)
  return opts.publish === false ? app : publishApp(db, app.id, at)
}

/**
 * Installs `appId` for `ownerId` with `scopes` (default: the published terms' scopes) and issues
 * an access token, as a consent plus code redemption would (no recurring charge is made here).
 */
export function installTestApp(db: Db, appId: number, ownerId: number, scopes?: string[]): { installation: InstallationRow; accessToken: string; refreshToken: string } {
  const at = nowIso()
  const app = appById(db, appId)!
  const terms = app.published_terms ?? app.terms
  const granted = scopes ?? terms.scopes
  const installation = installApp(db, appId, ownerId, granted, { ...terms, scopes: granted }, at)
  const grantId = insertCode(db, {
    hash: sha256Hex(newToken('app')), appId, installationId: installation.id, redirectUri: 'fixture',
    scopes: granted, codeChallenge: null, at, expiresAt: at,
  })
  burnCode(db, grantId, at)
  const t = issueAppTokens(db, installation.id, grantId, granted)
  return { installation, accessToken: t.access_token, refreshToken: t.refresh_token }
}

/** A live shell token of `ownerId` for one device, made directly (the sign-in route's budget is 10 a minute per address). */
export function createShellToken(db: Db, ownerId: number, device = `dev-${Math.random()}`, platform = 'ios', appVersion: string | null = '1.2.0'): string {
  const token = newToken('shell')
  insertShellToken(db, { ownerId, tokenHash: sha256Hex(token), device, deviceName: 'Test phone', platform, appVersion, now: nowIso(), expiresAt: nowIso(Date.now() + 86_400_000) })
  return token
}

// ---- the real OAuth flow, for tests that drive it (test/oauth.test.ts, test/apps.test.ts) ----
/** A signed-in browser of `ownerId` (as /login makes one): cookie and CSRF token. */
export function signedIn(db: Db, ownerId: number): { cookie: string; csrf: string; sessionId: number } {
  const raw = randomBytes(32).toString('base64url')
  const csrf = randomBytes(24).toString('base64url')
  const sessionId = insertSession(db, { ownerId, tokenHash: sha256Hex(raw), csrf, via: 'password', ip: '127.0.0.1', userAgent: 'test', expiresAt: nowIso(Date.now() + 3_600_000) })
  return { cookie: `dsid=${raw}`, csrf, sessionId }
}

export type AuthorizeQuery = Partial<Record<'response_type' | 'client_id' | 'redirect_uri' | 'scope' | 'state' | 'code_challenge' | 'code_challenge_method' | 'resource', string>>

/** GET the consent page (no redirects followed). */
export const consentPage = (site: string, who: { cookie: string } | null, q: AuthorizeQuery): Promise<Response> =>
  fetch(`${site}/oauth/authorize?${new URLSearchParams(q as Record<string, string>)}`, { redirect: 'manual', headers: who ? { cookie: who.cookie } : {} })

/**
 * POST the consent form as the page's buttons do, with the site's `Origin` unless `origin` says
 * another (`'null'`: what a browser sends when it will not tell); returns the response (a 303 back
 * to the app when all is well).
 */
export const answerConsent = (site: string, who: { cookie: string; csrf: string }, q: AuthorizeQuery, decision: 'approve' | 'deny', origin = new URL(site).origin): Promise<Response> =>
  fetch(`${site}/oauth/authorize`, {
    method: 'POST', redirect: 'manual',
    headers: { cookie: who.cookie, 'content-type': 'application/x-www-form-urlencoded', origin },
    body: new URLSearchParams({ ...(q as Record<string, string>), decision, csrf: who.csrf }).toString(),
  })
