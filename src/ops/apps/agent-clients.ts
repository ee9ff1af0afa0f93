/**
 * AI agents as OAuth clients (issue 36; docs/mcp.md "Authorization"; MCP 2025-06-18 and later
 * "Authorization"): an agent host that knows nothing but `{site_url}/mcp` registers itself and
 * asks the owner for consent. Two ways in, both ending as an app of kind `agent` (free, never
 * listed, no developer account) that the owner sees and uninstalls like any app:
 *
 * - **Dynamic client registration** (RFC 7591): `POST {site_url}/oauth/register` with the client's
 *   metadata. Public clients only (`token_endpoint_auth_method: none`): nothing secret is issued,
 *   and the authorization code flow then requires PKCE S256.
 * - **Client ID metadata documents** (MCP 2025-11-25): the `client_id` is an https URL whose
 *   document describes the client; it is fetched at the authorization request with the webhook
 *   SSRF guard (src/webhooks/ssrf.ts: public addresses only, checked again at connect time), no
 *   redirects, a time limit and a size cap, and must name itself as `client_id`.
 *
 * What the agent may ask for is the app scopes (src/domain/app-scopes.ts); the owner's consent
 * decides what it gets.
 */
import { randomBytes } from 'node:crypto'
import type { Services } from '../../services.ts'
import { nowIso } from '../../storage/db.ts'
import { appByClientId, upsertAgentClient, type AppRow } from '../../storage/apps.ts'
import { APP_SCOPES, isAppScope, type AppTerms } from '../../domain/app-scopes.ts'
import { newClientSecret } from '../../auth/app-tokens.ts'
import { newSecret } from '../../webhooks/signing.ts'
import { checkUrl, guardedLookup } from '../../webhooks/ssrf.ts'
import { cachedLookup } from '../../webhooks/dns-cache.ts'
import { redirectUriProblems } from './apps.ts'

/** What every agent client agrees to: free, any app scope (the owner grants a subset at consent). */
export const AGENT_TERMS: AppTerms = { scopes: [...APP_SCOPES], pricing: 'free', price: 0, cap: null, currency: 'USD' }

/** Largest metadata document read (bytes); the fetch is cut off beyond. */
export const METADATA_MAX_BYTES = 5 * 1024
/** Time limit of one metadata document fetch. */
export const METADATA_TIMEOUT_MS = 5000
/** A document fetched this recently is not fetched again (its client row is used as it is). */
export const METADATA_FRESH_MS = 5 * 60_000

/** An RFC 7591 §3.2.2 error: `invalid_redirect_uri` or `invalid_client_metadata`. */
export class RegistrationError extends Error {
  constructor(readonly error: 'invalid_redirect_uri' | 'invalid_client_metadata', message: string) {
    super(message)
  }
}

/** The client metadata this server reads (RFC 7591 §2); other members are ignored. */
interface ClientMetadata {
  redirect_uris?: unknown
  client_name?: unknown
  client_uri?: unknown
  logo_uri?: unknown
  scope?: unknown
  grant_types?: unknown
  response_types?: unknown
  token_endpoint_auth_method?: unknown
}

const text = (v: unknown, max: number): string | null => (typeof v === 'string' && v.trim() ? v.trim().slice(0, max) : null)

/** Check a client's metadata (registration or document): its redirect URIs, name, grant and auth method. */
function readMetadata(m: ClientMetadata): { name: string; redirectUris: string[]; clientUri: string | null; logo: string | null; scope: string | null } {
  if (m === null || typeof m !== 'object' || Array.isArray(m)) throw new RegistrationError('invalid_client_metadata', 'The client metadata must be a JSON object.')
  const uris = m.redirect_uris
  if (!Array.isArray(uris) || uris.length === 0 || uris.length > 10 || !uris.every((u) => typeof u === 'string' && u.length <= 2000)) {
    throw new RegistrationError('invalid_redirect_uri', 'redirect_uris must list 1 to 10 absolute URLs.')
  }
  for (const u of uris as string[]) {
    const problems = redirectUriProblems(u)
    if (problems.length) throw new RegistrationError('invalid_redirect_uri', `${u}: ${problems.join(' ')}`)
  }
  const auth = m.token_endpoint_auth_method ?? 'none'
  if (auth !== 'none') throw new RegistrationError('invalid_client_metadata', 'Only public clients register here: token_endpoint_auth_method must be "none" (PKCE S256 protects the code).')
  const grants = m.grant_types ?? ['authorization_code']
  if (!Array.isArray(grants) || !grants.every((g) => g === 'authorization_code' || g === 'refresh_token') || !grants.includes('authorization_code')) {
    throw new RegistrationError('invalid_client_metadata', 'grant_types may hold authorization_code and refresh_token only, and must hold authorization_code.')
  }
  const responses = m.response_types ?? ['code']
  if (!Array.isArray(responses) || responses.some((r) => r !== 'code')) throw new RegistrationError('invalid_client_metadata', 'response_types may hold only "code".')
  const scope = m.scope === undefined ? null : text(m.scope, 500)
  if (scope !== null) {
    const unknown = scope.split(' ').filter((s) => s && !isAppScope(s))
    if (unknown.length) throw new RegistrationError('invalid_client_metadata', `Unknown scopes: ${unknown.join(' ')}. Known: ${APP_SCOPES.join(' ')}.`)
  }
  const https = (v: unknown): string | null => {
    const s = text(v, 2000)
    if (!s) return null
    try { return new URL(s).protocol === 'https:' ? s : null } catch { return null }
  }
  return { name: text(m.client_name, 100) ?? 'Unnamed agent', redirectUris: [...new Set(uris as string[])], clientUri: https(m.client_uri), logo: https(m.logo_uri), scope }
}

/** The registration answer (RFC 7591 §3.2.1). */
export interface Registered {
  client_id: string
  client_id_issued_at: number
  client_name: string
  redirect_uris: string[]
  grant_types: string[]
  response_types: string[]
  token_endpoint_auth_method: 'none'
  scope: string
}

/** `POST {site_url}/oauth/register`: a new public agent client. Throws RegistrationError. */
export async function registerClient(svc: Services, body: unknown): Promise<Registered> {
  const m = readMetadata(body as ClientMetadata)
  const clientId = `agt_${randomBytes(12).toString('hex')}`
  const at = nowIso()
  await svc.committer.write((db) => upsertAgentClient(db, {
    clientId, name: m.name, description: m.clientUri ?? '', iconUrl: m.logo, redirectUris: m.redirectUris,
    clientSecret: newClientSecret(), webhookSecret: newSecret(), terms: AGENT_TERMS, metadataUrl: null,
  }, at))
  return {
    client_id: clientId, client_id_issued_at: Math.floor(Date.parse(at) / 1000), client_name: m.name, redirect_uris: m.redirectUris,
    grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'], token_endpoint_auth_method: 'none',
    scope: m.scope ?? APP_SCOPES.join(' '),
  }
}

/**
 * Is `clientId` a client ID metadata document address? An https URL with a path (MCP 2025-11-25
 * "Client ID Metadata Documents"); plain http only to loopback while WEBHOOK_ALLOW_LOOPBACK is on
 * (development and tests, as for webhooks).
 */
export function isMetadataClientId(svc: Services, clientId: string): boolean {
  if (!/^https?:\/\//i.test(clientId)) return false
  try {
    const u = new URL(clientId)
    return u.pathname !== '/' && !u.hash && checkUrl(clientId, svc.config.webhookAllowLoopback).ok
  } catch {
    return false
  }
}

type Undici = typeof import('undici')
let undiciLoading: Promise<Undici> | null = null
let agent: import('undici').Agent | null = null

/** GET a document with the webhook guard: public addresses only (checked when connecting), no redirects, a deadline and a size cap. */
async function guardedGet(svc: Services, url: string): Promise<string> {
  const checked = checkUrl(url, svc.config.webhookAllowLoopback)
  if (!checked.ok) throw new Error(checked.reason)
  const undici = await (undiciLoading ??= import('undici'))
  agent ??= new undici.Agent({
    connect: undici.buildConnector({ lookup: guardedLookup(svc.config.webhookAllowLoopback, cachedLookup()), timeout: METADATA_TIMEOUT_MS }),
    headersTimeout: METADATA_TIMEOUT_MS, bodyTimeout: METADATA_TIMEOUT_MS, connections: 4, keepAliveTimeout: 1000,
  })
  const res = await undici.request(checked.url!, { method: 'GET', headers: { accept: 'application/json' }, dispatcher: agent, signal: AbortSignal.timeout(METADATA_TIMEOUT_MS) })
  if (res.statusCode !== 200) {
    await res.body.dump()
    throw new Error(`it answered ${res.statusCode}`)
  }
  const chunks: Buffer[] = []
  let size = 0
  for await (const chunk of res.body) {
    size += (chunk as Buffer).length
    if (size > METADATA_MAX_BYTES) {
      res.body.destroy()
      throw new Error(`it is larger than ${METADATA_MAX_BYTES} bytes`)
    }
    chunks.push(chunk as Buffer)
  }
  return Buffer.concat(chunks).toString('utf8')
}

/**
 * The agent client a metadata-document `client_id` names, fetched (or fetched again when older
 * than METADATA_FRESH_MS) and saved; a message for the error page when it cannot be used.
 */
export async function resolveMetadataClient(svc: Services, clientId: string): Promise<{ app: AppRow } | { problem: string }> {
  const known = appByClientId(svc.db, clientId)
  if (known && known.kind !== 'agent') return { problem: 'This client id belongs to an app, not an agent.' }
  if (known && Date.now() - Date.parse(known.updated_at) < METADATA_FRESH_MS) return { app: known }
  let doc: ClientMetadata & { client_id?: unknown }
  try {
    doc = JSON.parse(await guardedGet(svc, clientId)) as typeof doc
  } catch (e) {
    return { problem: `The agent's client metadata document at ${clientId} could not be read: ${(e as Error).message}.` }
  }
  try {
    if (doc?.client_id !== clientId) throw new RegistrationError('invalid_client_metadata', 'its client_id is not the address it was fetched from')
    const m = readMetadata(doc)
    const app = await svc.committer.write((db) => upsertAgentClient(db, {
      clientId, name: m.name, description: m.clientUri ?? new URL(clientId).host, iconUrl: m.logo, redirectUris: m.redirectUris,
      clientSecret: newClientSecret(), webhookSecret: newSecret(), terms: AGENT_TERMS, metadataUrl: clientId,
    }, nowIso()))
    return { app }
  } catch (e) {
    if (e instanceof RegistrationError) return { problem: `The agent's client metadata document at ${clientId} is not usable: ${e.message}.` }
    throw e
  }
}
