/**
 * Third-party apps, their installations, OAuth codes and app tokens (015_apps.sql; docs/apps.md).
 * Reads run directly; writes are meant to run inside `committer.write` (one transaction).
 * JSON columns are parsed here so callers see arrays and objects.
 */
import type { Db } from './db.ts'
import { stmt } from './db.ts'
import type { AppTerms } from '../domain/app-scopes.ts'

export type { AppTerms }
export type AppStatus = 'draft' | 'in_review' | 'published'

export interface AppRow {
  id: number
  /** The developer account; null for an agent client, which registered itself (issue 36). */
  developer_id: number | null
  name: string
  description: string
  icon_url: string | null
  embed_url: string | null
  webhook_url: string | null
  webhook_events: string[]
  redirect_uris: string[]
  client_id: string
  /** Raw: the HS256 key of session tokens and the client credential (compare in constant time). */
  client_secret: string
  /** `whsec_…`: signs the app's webhook deliveries. */
  webhook_secret: string
  status: AppStatus
  /** The developer's current terms. */
  terms: AppTerms
  /** What the marketplace and new installs see; null until first approved. */
  published_terms: AppTerms | null
  published_at: string | null
  created_at: string
  updated_at: string
  /** `app`: registered by a developer; `agent`: an AI agent's own registration (033_agent_clients.sql). */
  kind: 'app' | 'agent'
  /** An agent known by its client ID metadata document: the document's https address (= client_id). */
  metadata_url: string | null
}

export interface InstallationRow {
  id: number
  app_id: number
  owner_id: number
  scopes: string[]
  terms: AppTerms
  status: 'active' | 'uninstalled'
  installed_at: string
  uninstalled_at: string | null
}

interface RawApp extends Omit<AppRow, 'webhook_events' | 'redirect_uris' | 'terms' | 'published_terms'> {
  webhook_events: string; redirect_uris: string; terms: string; published_terms: string | null
}
interface RawInstallation extends Omit<InstallationRow, 'scopes' | 'terms'> { scopes: string; terms: string }

const APP_COLS = `id, developer_id, name, description, icon_url, embed_url, webhook_url, webhook_events, redirect_uris,
  client_id, client_secret, webhook_secret, status, terms, published_terms, published_at, created_at, updated_at, kind, metadata_url`
const INST_COLS = 'id, app_id, owner_id, scopes, terms, status, installed_at, uninstalled_at'

function toApp(r: RawApp | undefined): AppRow | null {
  if (!r) return null
  return {
    ...r,
    webhook_events: JSON.parse(r.webhook_events),
    redirect_uris: JSON.parse(r.redirect_uris),
    terms: JSON.parse(r.terms),
    published_terms: r.published_terms ? JSON.parse(r.published_terms) : null,
  }
}
function toInstallation(r: RawInstallation | undefined): InstallationRow | null {
  return r ? { ...r, scopes: JSON.parse(r.scopes), terms: JSON.parse(r.terms) } : null
}

// ---- apps ------------------------------------------------------------------------------------

export const appById = (db: Db, id: number): AppRow | null =>
  toApp(stmt<[number], RawApp>(db, `SELECT ${APP_COLS} FROM apps WHERE id = ?`).get(id))

export const appByClientId = (db: Db, clientId: string): AppRow | null =>
  toApp(stmt<[string], RawApp>(db, `SELECT ${APP_COLS} FROM apps WHERE client_id = ?`).get(clientId))

/** A developer's own app, or null (another developer's app reads as missing: 404). */
export function developerApp(db: Db, developerId: number, id: number): AppRow | null {
  const app = appById(db, id)
  return app && app.developer_id === developerId ? app : null
}

/** A developer's apps, oldest first, at most 200. */
export const appsByDeveloper = (db: Db, developerId: number): AppRow[] =>
  stmt<[number], RawApp>(db, `SELECT ${APP_COLS} FROM apps WHERE developer_id = ? ORDER BY id LIMIT 200`).all(developerId).map((r) => toApp(r)!)

/**
 * Apps with published terms (the marketplace): an app back in review after a price or scope change
 * stays listed with its last published terms (§9 rule 4).
 */
export const publishedApps = (db: Db, limit = 200, afterId = 0): AppRow[] =>
  stmt<[number, number], RawApp>(db, `SELECT ${APP_COLS} FROM apps WHERE published_terms IS NOT NULL AND kind = 'app' AND id > ? ORDER BY id LIMIT ?`)
    .all(afterId, limit).map((r) => toApp(r)!)

export interface NewApp {
  developerId: number
  name: string
  description?: string
  iconUrl?: string | null
  embedUrl?: string | null
  webhookUrl?: string | null
  webhookEvents?: string[]
  redirectUris: string[]
  clientId: string
  clientSecret: string
  webhookSecret: string
  terms: AppTerms
}

/** Inside a write: a new draft app. */
export function createApp(db: Db, a: NewApp, at: string): AppRow {
  const id = Number(stmt(db, `INSERT INTO apps (developer_id, name, description, icon_url, embed_url, webhook_url, webhook_events,
      redirect_uris, client_id, client_secret, webhook_secret, status, terms, created_at, updated_at)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'draft', ?, ?, ?)`).run(
    a.developerId, a.name, a.description ?? '', a.iconUrl ?? null, a.embedUrl ?? null, a.webhookUrl ?? null,
    JSON.stringify(a.webhookEvents ?? []), JSON.stringify(a.redirectUris), a.clientId, a.clientSecret, a.webhookSecret,
    JSON.stringify(a.terms), at, at).lastInsertRowid)
  return appById(db, id)!
}

/** An agent client as it registered itself (RFC 7591 or a client ID metadata document). */
export interface NewAgentClient {
  clientId: string
  name: string
  description: string
  iconUrl: string | null
  redirectUris: string[]
  /** A random value nobody is told: agent clients are public (no secret authenticates them). */
  clientSecret: string
  webhookSecret: string
  terms: AppTerms
  metadataUrl: string | null
}

/**
 * Inside a write: register an agent client, or (same `client_id`, a metadata document fetched
 * again) refresh what it says of itself. Published at once with its terms, never listed.
 */
export function upsertAgentClient(db: Db, a: NewAgentClient, at: string): AppRow {
  const cur = appByClientId(db, a.clientId)
  if (cur) {
    stmt(db, 'UPDATE apps SET name = ?, description = ?, icon_url = ?, redirect_uris = ?, updated_at = ? WHERE id = ?')
      .run(a.name, a.description, a.iconUrl, JSON.stringify(a.redirectUris), at, cur.id)
    return appById(db, cur.id)!
  }
  const terms = JSON.stringify(a.terms)
  stmt(db, `INSERT INTO apps (developer_id, name, description, icon_url, redirect_uris, client_id, client_secret, webhook_secret,
      status, terms, published_terms, published_at, created_at, updated_at, kind, metadata_url)
    VALUES (NULL, ?, ?, ?, ?, ?, ?, ?, 'published', ?, ?, ?, ?, ?, 'agent', ?)`).run(
    a.name, a.description, a.iconUrl, JSON.stringify(a.redirectUris), a.clientId, a.clientSecret, a.webhookSecret,
    terms, terms, at, at, at, a.metadataUrl)
  return appByClientId(db, a.clientId)!
}

/** Metadata: published at once whatever the review state (§9 rule 4). */
export interface AppMetadata {
  name?: string
  description?: string
  iconUrl?: string | null
  embedUrl?: string | null
  webhookUrl?: string | null
  webhookEvents?: string[]
  redirectUris?: string[]
}

/** Inside a write: save metadata and, when given, the developer's terms and the review state. */
export function updateApp(db: Db, id: number, m: AppMetadata, terms: AppTerms | null, status: AppStatus | null, at: string): AppRow {
  const cur = appById(db, id)!
  stmt(db, `UPDATE apps SET name = ?, description = ?, icon_url = ?, embed_url = ?, webhook_url = ?, webhook_events = ?,
      redirect_uris = ?, terms = ?, status = ?, updated_at = ? WHERE id = ?`).run(
    m.name ?? cur.name, m.description ?? cur.description,
    m.iconUrl !== undefined ? m.iconUrl : cur.icon_url,
    m.embedUrl !== undefined ? m.embedUrl : cur.embed_url,
    m.webhookUrl !== undefined ? m.webhookUrl : cur.webhook_url,
    JSON.stringify(m.webhookEvents ?? cur.webhook_events), JSON.stringify(m.redirectUris ?? cur.redirect_uris),
    JSON.stringify(terms ?? cur.terms), status ?? cur.status, at, id)
  return appById(db, id)!
}

/** Inside a write: the review state only (submit). */
export function setAppStatus(db: Db, id: number, status: AppStatus, at: string): void {
  stmt(db, 'UPDATE apps SET status = ?, updated_at = ? WHERE id = ?').run(status, at, id)
}

/** Inside a write: approve: the current terms become the published ones. */
export function publishApp(db: Db, id: number, at: string): AppRow {
  stmt(db, `UPDATE apps SET status = 'published', published_terms = terms, published_at = ?, updated_at = ? WHERE id = ?`).run(at, at, id)
  return appById(db, id)!
}

/** Inside a write: a new client secret (the old one stops working at once). */
export function setClientSecret(db: Db, id: number, secret: string, at: string): void {
  stmt(db, 'UPDATE apps SET client_secret = ?, updated_at = ? WHERE id = ?').run(secret, at, id)
}

// ---- installations ---------------------------------------------------------------------------

export const installationById = (db: Db, id: number): InstallationRow | null =>
  toInstallation(stmt<[number], RawInstallation>(db, `SELECT ${INST_COLS} FROM app_installations WHERE id = ?`).get(id))

export const activeInstallation = (db: Db, appId: number, ownerId: number): InstallationRow | null =>
  toInstallation(stmt<[number, number], RawInstallation>(db,
    `SELECT ${INST_COLS} FROM app_installations WHERE app_id = ? AND owner_id = ? AND status = 'active'`).get(appId, ownerId))

/** The account's active installations, oldest first. */
export const activeInstallations = (db: Db, ownerId: number): InstallationRow[] =>
  stmt<[number], RawInstallation>(db, `SELECT ${INST_COLS} FROM app_installations WHERE owner_id = ? AND status = 'active' ORDER BY id`)
    .all(ownerId).map((r) => toInstallation(r)!)

/**
 * Inside a write: install `appId` for the account, or, when it is already installed, re-consent:
 * the active installation takes the new scopes and terms (one active installation per app and
 * account: the partial unique index).
 */
export function installApp(db: Db, appId: number, ownerId: number, scopes: string[], terms: AppTerms, at: string): InstallationRow {
  const cur = activeInstallation(db, appId, ownerId)
  if (cur) {
    stmt(db, 'UPDATE app_installations SET scopes = ?, terms = ? WHERE id = ?').run(JSON.stringify(scopes), JSON.stringify(terms), cur.id)
    return installationById(db, cur.id)!
  }
  const id = Number(stmt(db, `INSERT INTO app_installations (app_id, owner_id, scopes, terms, status, installed_at)
    VALUES (?, ?, ?, ?, 'active', ?)`).run(appId, ownerId, JSON.stringify(scopes), JSON.stringify(terms), at).lastInsertRowid)
  return installationById(db, id)!
}

/** Inside a write: mark an installation uninstalled (Y's uninstall op; tokens are revoked separately). False when not active. */
export const markUninstalled = (db: Db, installationId: number, at: string): boolean =>
  stmt(db, `UPDATE app_installations SET status = 'uninstalled', uninstalled_at = ? WHERE id = ? AND status = 'active'`)
    .run(at, installationId).changes > 0

// ---- OAuth codes -----------------------------------------------------------------------------

export interface OAuthCodeRow {
  id: number; code_hash: string; app_id: number; installation_id: number; redirect_uri: string
  scopes: string[]; code_challenge: string | null; created_at: string; expires_at: string; used_at: string | null
  /** RFC 8707: the resource the authorization request named, or null. */
  resource: string | null
}

/** Inside a write: store a new code (its SHA-256). */
export function insertCode(db: Db, c: { hash: string; appId: number; installationId: number; redirectUri: string; scopes: string[]; codeChallenge: string | null; at: string; expiresAt: string; resource?: string | null }): number {
  return Number(stmt(db, `INSERT INTO oauth_codes (code_hash, app_id, installation_id, redirect_uri, scopes, code_challenge, created_at, expires_at, resource)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`).run(c.hash, c.appId, c.installationId, c.redirectUri, JSON.stringify(c.scopes), c.codeChallenge, c.at, c.expiresAt, c.resource ?? null).lastInsertRowid)
}

export function codeByHash(db: Db, hash: string): OAuthCodeRow | null {
  const r = stmt<[string], Omit<OAuthCodeRow, 'scopes'> & { scopes: string }>(db,
    'SELECT id, code_hash, app_id, installation_id, redirect_uri, scopes, code_challenge, created_at, expires_at, used_at, resource FROM oauth_codes WHERE code_hash = ?').get(hash)
  return r ? { ...r, scopes: JSON.parse(r.scopes) } : null
}

/** Inside a write: burn a code; false when it was already used (a replay). */
export const burnCode = (db: Db, id: number, at: string): boolean =>
  stmt(db, 'UPDATE oauth_codes SET used_at = ? WHERE id = ? AND used_at IS NULL').run(at, id).changes > 0

// ---- app tokens ------------------------------------------------------------------------------

export interface AppTokenRow {
  id: number; kind: 'access' | 'refresh'; installation_id: number; grant_id: number; scopes: string[]
  created_at: string; expires_at: string | null; used_at: string | null; revoked_at: string | null
  /** RFC 8707 audience: the address the token was issued for, or null (any of the account's doors, as before). */
  resource: string | null
}
const TOKEN_COLS = 'id, kind, installation_id, grant_id, scopes, created_at, expires_at, used_at, revoked_at, resource'

export function appTokenByHash(db: Db, hash: string): AppTokenRow | null {
  const r = stmt<[string], Omit<AppTokenRow, 'scopes'> & { scopes: string }>(db, `SELECT ${TOKEN_COLS} FROM app_tokens WHERE token_hash = ?`).get(hash)
  return r ? { ...r, scopes: JSON.parse(r.scopes) } : null
}

/** An unrevoked access token of an active installation, read in one query (every API call of an app resolves one). */
export interface LiveAppAccess {
  id: number; scopes: string[]; expires_at: string | null; resource: string | null
  installation_id: number; owner_id: number; app_id: number; installation_scopes: string[]
}

export function liveAppAccess(db: Db, hash: string): LiveAppAccess | null {
  const r = stmt<[string], Omit<LiveAppAccess, 'scopes' | 'installation_scopes'> & { scopes: string; installation_scopes: string }>(db,
    `SELECT t.id, t.scopes, t.expires_at, t.resource, i.id AS installation_id, i.owner_id, i.app_id, i.scopes AS installation_scopes
       FROM app_tokens t JOIN app_installations i ON i.id = t.installation_id
      WHERE t.token_hash = ? AND t.kind = 'access' AND t.revoked_at IS NULL AND i.status = 'active'`).get(hash)
  return r ? { ...r, scopes: JSON.parse(r.scopes), installation_scopes: JSON.parse(r.installation_scopes) } : null
}

/** Inside a write: store a token's SHA-256. */
export function insertAppToken(db: Db, t: { hash: string; kind: 'access' | 'refresh'; installationId: number; grantId: number; scopes: string[]; at: string; expiresAt: string | null; resource: string | null }): number {
  return Number(stmt(db, `INSERT INTO app_tokens (token_hash, kind, installation_id, grant_id, scopes, created_at, expires_at, resource)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?)`).run(t.hash, t.kind, t.installationId, t.grantId, JSON.stringify(t.scopes), t.at, t.expiresAt, t.resource).lastInsertRowid)
}

/** Inside a write: mark a refresh token used (rotation); false when it was used already (reuse). */
export const useRefreshToken = (db: Db, id: number, at: string): boolean =>
  stmt(db, `UPDATE app_tokens SET used_at = ? WHERE id = ? AND kind = 'refresh' AND used_at IS NULL`).run(at, id).changes > 0

/** Inside a write: revoke every token of a grant (replayed code, reused refresh token). */
export const revokeGrantTokens = (db: Db, grantId: number, at: string): number =>
  stmt(db, 'UPDATE app_tokens SET revoked_at = COALESCE(revoked_at, ?) WHERE grant_id = ?').run(at, grantId).changes

/** Inside a write: revoke every access/refresh token and session token of an installation. */
export function revokeInstallationTokenRows(db: Db, installationId: number, at: string): number {
  const n = stmt(db, 'UPDATE app_tokens SET revoked_at = COALESCE(revoked_at, ?) WHERE installation_id = ?').run(at, installationId).changes
  stmt(db, 'UPDATE app_session_tokens SET revoked_at = COALESCE(revoked_at, ?) WHERE installation_id = ?').run(at, installationId)
  return n
}
