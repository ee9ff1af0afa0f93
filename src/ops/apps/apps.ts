/**
 * Third-party apps for their developers, and the public marketplace (api-v1 §4.10, §9 rule 4;
 * docs/apps.md "Registering an app", "Review"). A developer is an owner account: managing its apps
 * is account-wide (`*:read` / `*:write`), so app tokens (scoped, never `*`) cannot do it.
 *
 * Review (§9 rule 4): `draft → in_review → published` (an operator approves: `dispatch app approve`).
 * After publication a change of price or scopes puts the app back in review while installs and the
 * marketplace keep the last published terms; metadata (name, description, icon, URLs) publishes at once.
 */
import * as v from 'valibot'
import { defineOp } from '../op.ts'
import { syncAppEndpoint } from './app-deliveries.ts'
import { ownerOf } from '../scope.ts'
import { ApiError } from '../../errors.ts'
import type { Db } from '../../storage/db.ts'
import { nowIso } from '../../storage/db.ts'
import { createApp, publishApp, publishedApps, setAppStatus, setClientSecret, updateApp, appsByDeveloper, type AppMetadata, type AppRow } from '../../storage/apps.ts'
import { APP_SCOPES, normalizeScopes, termsChanged, type AppTerms } from '../../domain/app-scopes.ts'
import { isEventPattern } from '../../domain/webhook-events.ts'
import { checkUrl } from '../../webhooks/ssrf.ts'
import { fromCents, hasAtMostTwoDecimals, toCents } from '../../domain/money.ts'
import { newAppCredentials, newClientSecret } from '../../auth/app-tokens.ts'
import { named } from '../schemas/named.ts'

const tag = 'Apps'

// ---- input -----------------------------------------------------------------------------------

const Url = v.pipe(v.string(), v.maxLength(2000))
const Price = v.pipe(v.number(), v.minValue(0), v.maxValue(1_000_000), v.check(hasAtMostTwoDecimals, 'Use at most two decimals.'))
const Scopes = v.pipe(
  v.array(v.picklist(APP_SCOPES, `Use scopes from: ${APP_SCOPES.join(', ')}.`)),
  v.minLength(1, 'Request at least one scope.'), v.maxLength(APP_SCOPES.length * 2),
)
const Events = v.pipe(v.array(v.pipe(v.string(), v.check(isEventPattern, 'Not an event name from the catalog (docs/webhooks.md).'))), v.maxLength(50))

const MetadataFields = {
  name: v.pipe(v.string(), v.trim(), v.minLength(1, 'Give the app a name.'), v.maxLength(100)),
  description: v.pipe(v.string(), v.maxLength(2000)),
  icon_url: v.nullable(Url),
  embed_url: v.nullable(Url),
  webhook_url: v.nullable(Url),
  webhook_events: Events,
  redirect_uris: v.pipe(v.array(Url), v.minLength(1, 'Register at least one redirect URI.'), v.maxLength(10)),
}
const TermsFields = {
  scopes: Scopes,
  pricing: v.picklist(['free', 'recurring', 'usage'] as const, 'Use free, recurring or usage.'),
  /** Major units (2 decimals): per 30-day period or per reported unit. */
  price: Price,
  cap: v.nullable(Price),
  currency: v.pipe(v.string(), v.regex(/^[A-Z]{3}$/, 'Use an ISO 4217 code such as USD.')),
}

export const AppInput = v.object({
  name: MetadataFields.name,
  description: v.optional(MetadataFields.description, ''),
  icon_url: v.optional(MetadataFields.icon_url, null),
  embed_url: v.optional(MetadataFields.embed_url, null),
  webhook_url: v.optional(MetadataFields.webhook_url, null),
  webhook_events: v.optional(MetadataFields.webhook_events, []),
  redirect_uris: MetadataFields.redirect_uris,
  scopes: TermsFields.scopes,
  pricing: v.optional(TermsFields.pricing, 'free'),
  price: v.optional(TermsFields.price, 0),
  cap: v.optional(TermsFields.cap, null),
  currency: v.optional(TermsFields.currency, 'USD'),
})
export type AppInputT = v.InferOutput<typeof AppInput>

const AppPatch = v.partial(v.object({ ...MetadataFields, ...TermsFields }))
type AppPatchT = v.InferOutput<typeof AppPatch>

type UrlChecks = { allowLoopback: boolean }

/**
 * What is wrong with a redirect URI (none: []): absolute, `https` (plain `http` only to a loopback
 * host, RFC 8252 §7.3), no fragment, no credentials. Apps and agent clients (src/ops/apps/agent-clients.ts) alike.
 */
export function redirectUriProblems(u: string): string[] {
  let url: URL
  try { url = new URL(u) } catch { return ['Not a valid absolute URL.'] }
  const out: string[] = []
  const loopback = ['localhost', '127.0.0.1', '[::1]'].includes(url.hostname)
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && loopback)) out.push('Use an https URL (http only to localhost).')
  if (url.hash || u.includes('#')) out.push('A redirect URI must not have a fragment (RFC 6749 §3.1.2).')
  if (url.username || url.password) out.push('The URL must not contain credentials.')
  return out
}

/**
 * Rules a schema cannot say: redirect URIs are absolute `https` (plain `http` only to a loopback
 * host, RFC 8252 §7.3) without fragment, compared exactly at authorization; the icon and embed URLs
 * are `https`; the webhook URL follows the webhook endpoints' SSRF rules (docs/webhooks.md), and the
 * sender checks every address again when it connects. Prices: a free app costs 0, others more; a
 * cap only for usage pricing.
 */
export function checkAppFields(f: AppPatchT, cur: AppTerms | null, c: UrlChecks): void {
  const errors: Record<string, string[]> = {}
  const add = (k: string, m: string) => { (errors[k] ??= []).push(m) }
  f.redirect_uris?.forEach((u, i) => { for (const m of redirectUriProblems(u)) add(`redirect_uris.${i}`, m) })
  for (const k of ['icon_url', 'embed_url'] as const) {
    const u = f[k]
    if (u == null) continue
    let ok = false
    try { const url = new URL(u); ok = url.protocol === 'https:' || (c.allowLoopback && url.protocol === 'http:') } catch { /* not a URL */ }
    if (!ok) add(k, 'Use an https URL.')
  }
  if (f.webhook_url != null) {
    const r = checkUrl(f.webhook_url, c.allowLoopback)
    if (!r.ok) add('webhook_url', r.reason)
  }
  const pricing = f.pricing ?? cur?.pricing ?? 'free'
  const price = f.price ?? (f.pricing === undefined && cur ? fromCents(cur.price) : 0)
  const cap = f.cap !== undefined ? f.cap : (cur ? (cur.cap === null ? null : fromCents(cur.cap)) : null)
  if (pricing === 'free' && price !== 0) add('price', 'A free app has no price; use recurring or usage pricing.')
  if (pricing !== 'free' && !(price > 0)) add('price', 'Give a price above 0 for recurring or usage pricing.')
  if (cap !== null && pricing !== 'usage') add('cap', 'Only usage pricing takes a cap.')
  if (cap !== null && pricing === 'usage' && cap < price) add('cap', 'The cap must be at least the price of one unit.')
  if (Object.keys(errors).length) throw new ApiError('validation_failed', undefined, errors)
}

/** The terms a change leads to, in minor units. */
function nextTerms(cur: AppTerms, f: AppPatchT): AppTerms {
  const pricing = f.pricing ?? cur.pricing
  return {
    scopes: f.scopes ? normalizeScopes(f.scopes) : cur.scopes,
    pricing,
    price: f.price !== undefined ? toCents(f.price) : pricing === 'free' ? 0 : cur.price,
    cap: f.cap !== undefined ? (f.cap === null ? null : toCents(f.cap)) : pricing === 'usage' ? cur.cap : null,
    currency: f.currency ?? cur.currency,
  }
}

/** Inside a write (API and CLI): a new draft app with fresh credentials. */
export function registerApp(db: Db, developerId: number, input: AppInputT, at: string): AppRow {
  const terms: AppTerms = {
    scopes: normalizeScopes(input.scopes), pricing: input.pricing, price: toCents(input.price),
    cap: input.cap === null ? null : toCents(input.cap), currency: input.currency,
  }
  return createApp(db, {
    developerId, name: input.name, description: input.description, iconUrl: input.icon_url, embedUrl: input.embed_url,
    webhookUrl: input.webhook_url, webhookEvents: [...new Set(input.webhook_events)], redirectUris: [...new Set(input.redirect_uris)],
    ...newAppCredentials(), terms,
  }, at)
}

/** Inside a write (CLI): an operator's approval publishes the current terms. */
export function approveApp(db: Db, app: AppRow, at: string): AppRow {
  return publishApp(db, app.id, at)
}

// ---- views -----------------------------------------------------------------------------------

const termsView = (t: AppTerms) => ({
  scopes: t.scopes, pricing: t.pricing, price: fromCents(t.price), cap: t.cap === null ? null : fromCents(t.cap), currency: t.currency,
})

export const appView = (a: AppRow) => ({
  id: a.id, name: a.name, description: a.description, icon_url: a.icon_url, embed_url: a.embed_url,
  webhook_url: a.webhook_url, webhook_events: a.webhook_events, redirect_uris: a.redirect_uris, client_id: a.client_id,
  status: a.status, terms: termsView(a.terms), published_terms: a.published_terms ? termsView(a.published_terms) : null,
  published_at: a.published_at, created_at: a.created_at, updated_at: a.updated_at,
})

/** What anyone sees of a published app: its metadata and published terms (never the draft ones). */
export const listingView = (a: AppRow) => ({
  id: a.id, name: a.name, description: a.description, icon_url: a.icon_url, client_id: a.client_id,
  embedded: a.embed_url !== null, ...termsView(a.published_terms!), published_at: a.published_at,
})

const TermsSchema = {
  type: 'object', required: ['scopes', 'pricing', 'price', 'cap', 'currency'],
  properties: {
    scopes: { type: 'array', items: { type: 'string', enum: [...APP_SCOPES] } },
    pricing: { type: 'string', enum: ['free', 'recurring', 'usage'] },
    price: { type: 'number', description: 'Per 30-day period (recurring) or per reported unit (usage), in major units' },
    cap: { type: ['number', 'null'], description: 'Usage pricing: most charged per period' },
    currency: { type: 'string' },
  },
}
const AppSchema = {
  type: 'object',
  required: ['id', 'name', 'description', 'icon_url', 'embed_url', 'webhook_url', 'webhook_events', 'redirect_uris', 'client_id', 'status', 'terms', 'published_terms', 'published_at', 'created_at', 'updated_at'],
  properties: {
    id: { type: 'integer' }, name: { type: 'string' }, description: { type: 'string' },
    icon_url: { type: ['string', 'null'] }, embed_url: { type: ['string', 'null'] }, webhook_url: { type: ['string', 'null'] },
    webhook_events: { type: 'array', items: { type: 'string' } }, redirect_uris: { type: 'array', items: { type: 'string' } },
    client_id: { type: 'string' },
    status: { type: 'string', enum: ['draft', 'in_review', 'published'] },
    terms: { ...TermsSchema, description: 'The developer\'s current terms (what review looks at)' },
    published_terms: { ...TermsSchema, type: ['object', 'null'], description: 'What the marketplace and new installs see' },
    published_at: { type: ['string', 'null'] }, created_at: { type: 'string' }, updated_at: { type: 'string' },
  },
}
named('App', AppSchema)
const SecretsSchema = {
  client_secret: { type: 'string', description: 'Shown in this answer only: the OAuth client secret and the HS256 key of session tokens' },
}
const ListingSchema = {
  type: 'object', required: ['id', 'name', 'description', 'icon_url', 'client_id', 'embedded', 'scopes', 'pricing', 'price', 'cap', 'currency', 'published_at'],
  properties: {
    id: { type: 'integer' }, name: { type: 'string' }, description: { type: 'string' }, icon_url: { type: ['string', 'null'] },
    client_id: { type: 'string' }, embedded: { type: 'boolean', description: 'The app opens inside the dashboard' },
    ...TermsSchema.properties, published_at: { type: ['string', 'null'] },
  },
}

// ---- operations ------------------------------------------------------------------------------

const urlChecks = (ctx: { svc: { config: { webhookAllowLoopback: boolean } } }): UrlChecks => ({ allowLoopback: ctx.svc.config.webhookAllowLoopback })

export const listDeveloperApps = defineOp({
  id: 'apps.developer.list', tag, access: { owner: '*:read' }, scope: [],
  output: { type: 'array', items: AppSchema },
  summary: 'The apps this account develops',
  run: (ctx) => appsByDeveloper(ctx.svc.db, ownerOf(ctx).ownerId).map(appView),
})

export const createDeveloperApp = defineOp({
  id: 'apps.developer.create', tag, access: { owner: '*:write' }, scope: [],
  input: AppInput,
  output: { ...AppSchema, required: [...AppSchema.required, 'client_secret', 'webhook_secret'], properties: { ...AppSchema.properties, ...SecretsSchema, webhook_secret: { type: 'string', pattern: '^whsec_', description: 'Signs the app\'s webhook deliveries (Standard Webhooks); shown in this answer only' } } },
  summary: 'Register an app (a draft; the client secret is shown once)',
  description: 'Body `{name, redirect_uris[], scopes[], pricing?, price?, cap?, currency?, description?, icon_url?, embed_url?, webhook_url?, webhook_events?}`; prices in major units. The app starts as a `draft`: submit it for review to publish it (docs/apps.md "Review").',
  run: async (ctx, input) => {
    checkAppFields(input, null, urlChecks(ctx))
    const me = ownerOf(ctx)
    const app = await ctx.svc.committer.write((db) => registerApp(db, me.ownerId, input, nowIso()))
    return { ...appView(app), client_secret: app.client_secret, webhook_secret: app.webhook_secret }
  },
})

export const getDeveloperApp = defineOp({
  id: 'apps.developer.get', tag, access: { owner: '*:read' }, scope: ['app'],
  output: AppSchema,
  summary: 'One of the account\'s apps (another developer\'s is a 404)',
  run: (ctx) => appView(ctx.scope.app!),
})

export const updateDeveloperApp = defineOp({
  id: 'apps.developer.update', tag, access: { owner: '*:write' }, scope: ['app'],
  input: AppPatch,
  output: AppSchema,
  summary: 'Change an app: metadata publishes at once, a price or scope change of a published app goes back to review',
  description: 'Any subset of the create fields. Name, description, icon, embed, webhook and redirect URIs apply at once, also to the live listing. '
    + 'Changing `scopes`, `pricing`, `price`, `cap` or `currency` of a published app sets `status` to `in_review`; the marketplace and new installs keep `published_terms` until an operator approves (api-v1 §9 rule 4).',
  run: async (ctx, patch) => {
    const app = ctx.scope.app!
    checkAppFields(patch, app.terms, urlChecks(ctx))
    const terms = nextTerms(app.terms, patch)
    let status = app.status
    if (termsChanged(app.terms, terms) && app.status === 'published') status = 'in_review'
    // Changing the terms back to the published ones leaves nothing to review.
    if (app.status === 'in_review' && app.published_terms && !termsChanged(app.published_terms, terms)) status = 'published'
    const meta: AppMetadata = {
      ...(patch.name !== undefined ? { name: patch.name } : {}),
      ...(patch.description !== undefined ? { description: patch.description } : {}),
      ...(patch.icon_url !== undefined ? { iconUrl: patch.icon_url } : {}),
      ...(patch.embed_url !== undefined ? { embedUrl: patch.embed_url } : {}),
      ...(patch.webhook_url !== undefined ? { webhookUrl: patch.webhook_url } : {}),
      ...(patch.webhook_events !== undefined ? { webhookEvents: [...new Set(patch.webhook_events)] } : {}),
      ...(patch.redirect_uris !== undefined ? { redirectUris: [...new Set(patch.redirect_uris)] } : {}),
    }
    const updated = await ctx.svc.committer.write((db) => updateApp(db, app.id, meta, terms, status, nowIso()))
    // The app's delivery endpoint follows a new webhook URL or event list at once (its actor caches them).
    if (patch.webhook_url !== undefined || patch.webhook_events !== undefined) await syncAppEndpoint(ctx.svc, app.id)
    return appView(updated)
  },
})

export const submitDeveloperApp = defineOp({
  id: 'apps.developer.submit', tag, access: { owner: '*:write' }, scope: ['app'],
  output: AppSchema,
  summary: 'Submit an app for review (draft → in_review)',
  description: 'Submitting an app already in review changes nothing. A published app whose terms are the published ones has nothing to review: 409 `conflict`.',
  run: async (ctx) => {
    const app = ctx.scope.app!
    if (app.status === 'published') throw new ApiError('conflict', 'The app is published and its terms are unchanged: there is nothing to review.')
    if (app.status === 'in_review') return appView(app)
    return appView(await ctx.svc.committer.write((db) => { setAppStatus(db, app.id, 'in_review', nowIso()); return { ...app, status: 'in_review' as const } }))
  },
})

export const rotateAppSecret = defineOp({
  id: 'apps.developer.rotate_secret', tag, access: { owner: '*:write' }, scope: ['app'],
  output: { type: 'object', required: ['client_id', 'client_secret'], properties: { client_id: { type: 'string' }, ...SecretsSchema } },
  summary: 'Issue a new client secret (the old one stops working at once; shown once)',
  description: 'Token requests with the old secret then fail with `invalid_client`; session tokens are signed with the new one from now on. Access and refresh tokens already issued stay valid.',
  run: async (ctx) => {
    const app = ctx.scope.app!
    const secret = newClientSecret()
    await ctx.svc.committer.write((db) => setClientSecret(db, app.id, secret, nowIso()))
    return { client_id: app.client_id, client_secret: secret }
  },
})

export const listMarketplace = defineOp({
  id: 'apps.marketplace.list', tag, access: { public: true, owner: 'any' }, scope: [],
  output: { type: 'array', items: ListingSchema },
  summary: 'The marketplace: published apps with their published terms',
  description: 'An app whose new price or scopes wait for review is listed with the terms it was last published with.',
  run: (ctx) => publishedApps(ctx.svc.db).map(listingView),
})

export const appOps = [listDeveloperApps, createDeveloperApp, getDeveloperApp, updateDeveloperApp, submitDeveloperApp, rotateAppSecret, listMarketplace]
