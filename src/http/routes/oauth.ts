/**
 * OAuth 2.0 for third-party apps on the site (api-v1 §4.10; docs/apps.md "OAuth"): the consent page
 * (`GET /oauth/authorize`, signed-in owners; signed-out visits go to /login and come back), its
 * form (`POST /oauth/authorize`, CSRF like every session form) and the token address
 * (`POST /oauth/token`). Only the web's concerns live here; the rules are src/ops/apps/oauth.ts.
 */
import * as v from 'valibot'
import { Reply, route, type Ctx } from '../route.ts'
import { errorEnvelope } from '../../errors.ts'
import { checkAuthorize, exchangeToken, installedAlready, installRefusal, OAuthError, tokenResources, type AuthorizeParams } from '../../ops/apps/oauth.ts'
import { isMetadataClientId, registerClient, RegistrationError, resolveMetadataClient } from '../../ops/apps/agent-clients.ts'
import { AUTHORIZE_FIELDS, decideConsent } from '../../ops/apps/oauth-consent.ts'
import { form } from '../form.ts'
import { consentPage, oauthErrorPage } from '../pages/oauth-consent.ts'
import { APP_SCOPES } from '../../domain/app-scopes.ts'
import { protectedResources } from '../../ops/apps/protected-resources.ts'
import type { Services } from '../../services.ts'

const tag = 'OAuth'
const HTML = 'text/html; charset=utf-8'
const FIELDS = AUTHORIZE_FIELDS
const Param = v.optional(v.pipe(v.string(), v.maxLength(2000)))
const AuthorizeQuery = v.object(Object.fromEntries(FIELDS.map((f) => [f, Param])) as Record<(typeof FIELDS)[number], typeof Param>)

const see = (to: string): Reply => new Reply(303, null, { Location: to, 'Cache-Control': 'no-store', 'Referrer-Policy': 'no-referrer' })
const formOf = (ctx: { body: unknown }): URLSearchParams => (ctx.body instanceof URLSearchParams ? ctx.body : new URLSearchParams())
/** The authorization request's fields the consent form sent back. */
function paramsOf(f: URLSearchParams): AuthorizeParams {
  const params: AuthorizeParams = {}
  for (const k of FIELDS) { const val = f.get(k); if (val !== null) params[k] = val }
  return params
}

/**
 * An agent known by its client ID metadata document (issue 36): fetch it (SSRF-guarded) before the
 * request is checked; an error page when it cannot be used (never a redirect: nothing is verified yet).
 */
async function metadataProblem(svc: Services, params: AuthorizeParams): Promise<Reply | null> {
  if (!params.client_id || !isMetadataClientId(svc, params.client_id)) return null
  const r = await resolveMetadataClient(svc, params.client_id)
  return 'problem' in r ? oauthErrorPage(400, r.problem) : null
}

/** The consent page for a checked request (or the refusal of an account whose plan lacks apps). */
function consent(ctx: Ctx<'session', unknown, unknown>, params: AuthorizeParams, refusal?: string | null): Reply {
  const c = checkAuthorize(ctx.svc, params)
  if (c.kind === 'page') return oauthErrorPage(c.status, c.message)
  if (c.kind === 'redirect') return see(c.location)
  const { req } = c
  const fields: Record<string, string> = {}
  for (const f of FIELDS) if (params[f] !== undefined) fields[f] = params[f]!
  return consentPage({
    csrf: ctx.principal.csrf, appName: req.app.name, description: req.app.description, scopes: req.scopes, terms: req.terms,
    fields, redirectOrigin: new URL(req.redirectUri).origin,
    agent: req.app.kind === 'agent' ? { verifiedBy: req.app.metadata_url ? new URL(req.app.metadata_url).host : null, resource: req.resource } : null, reinstall: installedAlready(ctx.svc, req.app.id, ctx.principal.ownerId) !== null,
    refusal: refusal ?? installRefusal(ctx.svc, ctx.principal.ownerId),
  })
}

/** RFC 6749 §5.1/§5.2 answers: JSON, never cached; 401 with a Basic challenge when Basic failed. */
function tokenReply(status: number, body: unknown, extra: Record<string, string> = {}): Reply {
  return new Reply(status, body, { 'Cache-Control': 'no-store', Pragma: 'no-cache', ...extra })
}

export const oauthRoutes = [
  route({
    method: 'GET', path: '/oauth/authorize', site: true, auth: 'session', tag, produces: HTML,
    summary: 'OAuth 2.0 authorization: the consent page (approve or deny installing the app)',
    description: 'Query `response_type=code`, `client_id`, `redirect_uri` (exactly as registered), `scope` (space-separated, default: all the app registered), `state`, and optionally `code_challenge` with `code_challenge_method=S256` (required for agents, which are public clients) and `resource` (RFC 8707: `{site_url}/mcp` or `{base_url}`; the token then works there only). '
      + 'An agent may use an https URL as `client_id`: its client ID metadata document is fetched from there (SSRF-guarded, 5 KB, 5 s). '
      + 'Signed-out owners are sent to /login and back. An unknown client or unregistered redirect URI shows an error page; other problems redirect to the app with `error` (RFC 6749 §4.1.2.1) and `iss`.',
    query: AuthorizeQuery,
    pageErrors: { 400: 'unknown client, unusable client metadata document or unregistered redirect_uri (never redirected)', 403: 'the account\'s plan does not include apps' },
    handler: async (ctx) => (await metadataProblem(ctx.svc, ctx.query as AuthorizeParams)) ?? consent(ctx as never, ctx.query as AuthorizeParams),
  }),
  form(decideConsent, {
    path: '/oauth/authorize', auth: 'session', tag,
    summary: 'OAuth 2.0 authorization: the owner\'s answer (decision=approve|deny), then back to the app',
    description: 'Form fields: the authorization request again, `decision` and `csrf`. Approve installs the app with the granted scopes at its published price and redirects with `code` (valid 5 minutes, single use); deny redirects with `error=access_denied`.',
    pageErrors: { 400: 'unknown client or unregistered redirect_uri', 402: 'the wallet cannot pay the first period', 403: 'the account\'s plan does not include apps' },
    fields: (req) => ({ params: paramsOf(req.form), decision: req.form.get('decision') ?? '' }),
    success: (out) => ('page' in out ? oauthErrorPage(out.page.status, out.page.message) : see(out.redirect)),
    // Refused (the plan lacks apps, the wallet cannot pay): the consent page again, saying why.
    failure: (_errors, req, e) => consent(req as unknown as Ctx<'session', unknown, unknown>, paramsOf(req.form), e.message),
  }),
  route({
    method: 'POST', path: '/oauth/token', site: true, auth: 'none', tag, form: true,
    summary: 'OAuth 2.0 token: exchange a code, or rotate a refresh token',
    description: 'Form fields (`application/x-www-form-urlencoded`): `grant_type=authorization_code` with `code`, `redirect_uri`, `code_verifier` (when a challenge was sent); or `grant_type=refresh_token` with `refresh_token` (and optionally a narrower `scope`); either with an optional `resource` (RFC 8707; the grant\'s, or one when the grant named none: `invalid_target` otherwise). '
      + 'Client credentials as `client_id` + `client_secret` fields or HTTP Basic; agents (public clients) send `client_id` alone. Answers `{access_token, token_type: "bearer", expires_in, refresh_token, scope}` with `Cache-Control: no-store`. '
      + 'Errors follow RFC 6749 §5.2: `{error, error_description}` with `error` one of `invalid_request`, `invalid_client` (401), `invalid_grant`, `unsupported_grant_type`, `invalid_scope`; the body also carries this API\'s envelope: `message`, `code` and `reason` (the same as `error`; `code` is `unauthenticated` for the 401). ' 
      + 'While the installing account\'s plan lacks `apps`, both grants answer `invalid_grant` with `details: {feature: "apps", plan}`; the refresh token is not spent and works again once the plan includes apps.',
    response: {
      type: 'object', required: ['access_token', 'token_type', 'expires_in', 'refresh_token', 'scope'],
      properties: {
        access_token: { type: 'string', description: '`dsa_…`, 1 hour: `Authorization: Bearer` on /api/v1' },
        token_type: { type: 'string', enum: ['bearer'] }, expires_in: { type: 'integer' },
        refresh_token: { type: 'string', description: '`dsar_…`, 90 days, single use: each refresh returns a new one' },
        scope: { type: 'string', description: 'Granted scopes, space-separated' },
      },
    },
    handler: async (ctx) => {
      try {
        return tokenReply(200, await exchangeToken(ctx.svc, formOf(ctx), ctx.headers.authorization))
      } catch (e) {
        if (!(e instanceof OAuthError)) throw e
        return tokenReply(e.status, { error: e.error, error_description: e.message, ...errorEnvelope(e.error, e.message), ...(e.details ? { details: e.details } : {}) },
          e.basic ? { 'WWW-Authenticate': 'Basic realm="oauth", charset="UTF-8"' } : {})
      }
    },
  }),
  route({
    method: 'POST', path: '/oauth/register', site: true, auth: 'none', tag, status: 201, rateLimit: { perMinute: 20 },
    summary: 'OAuth 2.0 dynamic client registration (RFC 7591) for AI agents',
    description: 'JSON client metadata: `redirect_uris` (1-10, https or http to localhost, exact), optional `client_name`, `client_uri`, `logo_uri`, `scope`, `grant_types` (`authorization_code`, `refresh_token`), `response_types` (`code`), `token_endpoint_auth_method` (`none` only: agents are public clients and use PKCE S256). '
      + 'Answers 201 with the `client_id` (`agt_…`) and the metadata as registered; no secret. The client appears to an owner only once the owner consents, as an app of kind `agent` (free, unlisted) on the dashboard\'s Apps page, where it is uninstalled. '
      + 'Errors (400) follow RFC 7591 §3.2.2: `{error, error_description}` with `invalid_redirect_uri` or `invalid_client_metadata`, plus this API\'s envelope. 20 registrations per minute per address.',
    body: v.unknown(),
    response: {
      type: 'object', required: ['client_id', 'client_id_issued_at', 'client_name', 'redirect_uris', 'grant_types', 'response_types', 'token_endpoint_auth_method', 'scope'],
      properties: {
        client_id: { type: 'string' }, client_id_issued_at: { type: 'integer' }, client_name: { type: 'string' },
        redirect_uris: { type: 'array', items: { type: 'string' } }, grant_types: { type: 'array', items: { type: 'string' } },
        response_types: { type: 'array', items: { type: 'string' } }, token_endpoint_auth_method: { type: 'string', enum: ['none'] },
        scope: { type: 'string', description: 'Scopes the client may ask for, space-separated' },
      },
    },
    handler: async (ctx) => {
      try {
        return tokenReply(201, await registerClient(ctx.svc, ctx.body))
      } catch (e) {
        if (!(e instanceof RegistrationError)) throw e
        return tokenReply(400, { error: e.error, error_description: e.message, ...errorEnvelope(e.error, e.message) })
      }
    },
  }),
  route({
    method: 'GET', path: '/.well-known/oauth-authorization-server', site: true, auth: 'none', tag,
    summary: 'OAuth 2.0 authorization server metadata (RFC 8414)',
    description: 'Everything a client needs, agents included: the authorization, token and registration (RFC 7591) endpoints, PKCE S256, public clients (`none`) and client ID metadata documents.',
    handler: (ctx) => {
      const site = ctx.svc.config.siteUrl
      return {
        issuer: site,
        authorization_endpoint: `${site}/oauth/authorize`,
        token_endpoint: `${site}/oauth/token`,
        registration_endpoint: `${site}/oauth/register`,
        response_types_supported: ['code'],
        response_modes_supported: ['query'],
        grant_types_supported: ['authorization_code', 'refresh_token'],
        code_challenge_methods_supported: ['S256'],
        token_endpoint_auth_methods_supported: ['client_secret_post', 'client_secret_basic', 'none'],
        scopes_supported: [...APP_SCOPES],
        authorization_response_iss_parameter_supported: true,
        client_id_metadata_document_supported: true,
        resource_indicators_supported: tokenResources(site),
        service_documentation: `${site}/docs`,
      }
    },
  }),
  ...protectedResources.map((pr) => route({
    method: 'GET', path: pr.wellKnown, site: true, auth: 'none', tag,
    summary: `OAuth 2.0 protected resource metadata (RFC 9728) of ${pr.name}`,
    description: 'Where to get a token for this resource and what it accepts. An MCP client finds this address in the `resource_metadata` of a 401\'s `WWW-Authenticate`.',
    handler: (ctx) => pr.metadata(ctx.svc.config.siteUrl),
  })),
]
