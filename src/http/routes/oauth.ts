/**
 * OAuth 2.0 for third-party apps on the site (api-v1 §4.10; docs/apps.md "OAuth"): the consent page
 * (`GET /oauth/authorize`, signed-in owners; signed-out visits go to /login and come back), its
 * form (`POST /oauth/authorize`, CSRF like every session form) and the token address
 * (`POST /oauth/token`). Only the web's concerns live here; the rules are src/ops/oauth.ts.
 */
import * as v from 'valibot'
import { Reply, route, type Ctx } from '../route.ts'
import { errorEnvelope } from '../../errors.ts'
import { checkAuthorize, exchangeToken, installedAlready, installRefusal, OAuthError, type AuthorizeParams } from '../../ops/oauth.ts'
import { AUTHORIZE_FIELDS, decideConsent } from '../../ops/oauth-consent.ts'
import { form } from '../form.ts'
import { consentPage, oauthErrorPage } from '../pages/oauth-consent.ts'
import { APP_SCOPES } from '../../domain/app-scopes.ts'

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
    fields, redirectOrigin: new URL(req.redirectUri).origin, reinstall: installedAlready(ctx.svc, req.app.id, ctx.principal.ownerId) !== null,
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
    description: 'Query `response_type=code`, `client_id`, `redirect_uri` (exactly as registered), `scope` (space-separated, default: all the app registered), `state`, and optionally `code_challenge` with `code_challenge_method=S256`. '
      + 'Signed-out owners are sent to /login and back. An unknown client or unregistered redirect URI shows an error page; other problems redirect to the app with `error` (RFC 6749 §4.1.2.1) and `iss`.',
    query: AuthorizeQuery,
    pageErrors: { 400: 'unknown client or unregistered redirect_uri (never redirected)', 403: 'the account\'s plan does not include apps' },
    handler: (ctx) => consent(ctx as never, ctx.query as AuthorizeParams),
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
    description: 'Form fields (`application/x-www-form-urlencoded`): `grant_type=authorization_code` with `code`, `redirect_uri`, `code_verifier` (when a challenge was sent); or `grant_type=refresh_token` with `refresh_token` (and optionally a narrower `scope`). '
      + 'Client credentials as `client_id` + `client_secret` fields or HTTP Basic. Answers `{access_token, token_type: "bearer", expires_in, refresh_token, scope}` with `Cache-Control: no-store`. '
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
    method: 'GET', path: '/.well-known/oauth-authorization-server', site: true, auth: 'none', tag,
    summary: 'OAuth 2.0 authorization server metadata (RFC 8414)',
    handler: (ctx) => {
      const site = ctx.svc.config.siteUrl
      return {
        issuer: site,
        authorization_endpoint: `${site}/oauth/authorize`,
        token_endpoint: `${site}/oauth/token`,
        response_types_supported: ['code'],
        grant_types_supported: ['authorization_code', 'refresh_token'],
        code_challenge_methods_supported: ['S256'],
        token_endpoint_auth_methods_supported: ['client_secret_post', 'client_secret_basic'],
        scopes_supported: [...APP_SCOPES],
        authorization_response_iss_parameter_supported: true,
      }
    },
  }),
]
