/**
 * The OAuth 2.0 code flow for third-party apps (api-v1 §4.10; docs/apps.md "OAuth"), driven with
 * oauth4webapi as a real client: PKCE on and off, exact redirect_uri, single-use and expiring codes
 * (a replay revokes what the code issued), client authentication (post and Basic), refresh
 * rotation and reuse, deny → access_denied, and the consent page itself.
 */
import t from 'tap'
import * as oauth from 'oauth4webapi'
import { startServer, request } from './helpers/server.ts'
import { createOwner, createStore } from './helpers/fixtures.ts'
import { answerConsent, consentPage, createTestApp, signedIn, type AuthorizeQuery } from './helpers/apps.ts'
import { sha256Hex } from '../src/auth/tokens.ts'
import { APP_SCOPES } from '../src/domain/app-scopes.ts'

const s = await startServer({ RATE_LIMIT_PER_MINUTE: '100000' })
t.teardown(() => s.close())
const db = s.app.svc.db

const REDIRECT = 'https://app.example/callback'
const developer = createOwner(db)
const app = createTestApp(db, developer, { scopes: ['orders:read', 'menu:read'], redirectUris: [REDIRECT, 'http://127.0.0.1:9999/cb'] })
const owner = createOwner(db)
const store = createStore(db, owner)
const ORDERS = `/restaurants/${store.id}/orders`
const who = signedIn(db, owner)

const as: oauth.AuthorizationServer = {
  issuer: s.site,
  authorization_endpoint: `${s.site}/oauth/authorize`,
  token_endpoint: `${s.site}/oauth/token`,
  authorization_response_iss_parameter_supported: true,
}
const client: oauth.Client = { client_id: app.client_id }
const insecure = { [oauth.allowInsecureRequests]: true }
const post = oauth.ClientSecretPost(app.client_secret)

/** Consent (approve or deny) and return the redirect back to the app. */
async function authorize(q: AuthorizeQuery, decision: 'approve' | 'deny' = 'approve'): Promise<URL> {
  const r = await answerConsent(s.site, who, { response_type: 'code', client_id: app.client_id, redirect_uri: REDIRECT, ...q }, decision)
  if (r.status !== 303) throw new Error(`consent answered ${r.status}: ${await r.text()}`)
  return new URL(r.headers.get('location')!)
}

/** The whole flow with PKCE: consent, then the code exchanged for tokens. */
async function fullFlow(opts: { pkce?: boolean; auth?: oauth.ClientAuth; scope?: string } = {}) {
  const state = oauth.generateRandomState()
  const verifier = oauth.generateRandomCodeVerifier()
  const pkce = opts.pkce ?? true
  const back = await authorize({ state, ...(opts.scope ? { scope: opts.scope } : {}), ...(pkce ? { code_challenge: await oauth.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256' } : {}) })
  const params = oauth.validateAuthResponse(as, client, back, state)
  const res = await oauth.authorizationCodeGrantRequest(as, client, opts.auth ?? post, params, REDIRECT, pkce ? verifier : oauth.nopkce, insecure)
  return { back, params, res, verifier }
}

/** The RFC `error` of a failed token response, whichever way oauth4webapi reports it. */
async function tokenError(p: Promise<unknown>): Promise<{ error?: string; status?: number }> {
  try { await p } catch (e) {
    if (e instanceof oauth.ResponseBodyError) return { error: e.error, status: e.status }
    if (e instanceof oauth.WWWAuthenticateChallengeError) {
      return { error: 'invalid_client', status: e.status }
    }
    throw e
  }
  return {}
}

const apiAs = (token: string, path: string) => request(`${s.base}${path}`, 'GET', { token })

t.test('the full flow with PKCE: consent → code → tokens that work on /api/v1', async (t) => {
  const { back, res } = await fullFlow()
  t.equal(back.origin + back.pathname, REDIRECT, 'back to the registered redirect URI')
  t.equal(back.searchParams.get('iss'), s.site, 'RFC 9207 iss')
  t.equal(res.headers.get('cache-control'), 'no-store', 'token answers are never cached')
  const tokens = await oauth.processAuthorizationCodeResponse(as, client, res)
  t.equal(tokens.token_type, 'bearer')
  t.match(tokens.access_token, /^dsa_/)
  t.match(tokens.refresh_token, /^dsar_/)
  t.equal(tokens.expires_in, 3600)
  t.equal(tokens.scope, 'menu:read orders:read', 'granted scopes, canonical order')
  const me = await apiAs(tokens.access_token, ORDERS)
  t.equal(me.status, 200, 'the access token reads the account\'s orders')
  const inst = db.prepare("SELECT * FROM app_installations WHERE app_id = ? AND owner_id = ? AND status = 'active'").all(app.id, owner) as Array<{ scopes: string }>
  t.equal(inst.length, 1, 'one active installation')
})

t.test('without PKCE the flow works; a verifier then is refused, and a missing one is refused when a challenge was sent', async (t) => {
  const { res } = await fullFlow({ pkce: false })
  t.ok((await oauth.processAuthorizationCodeResponse(as, client, res)).access_token, 'no PKCE: tokens')

  // A challenge was sent but the token request carries no verifier.
  const state = oauth.generateRandomState()
  const verifier = oauth.generateRandomCodeVerifier()
  const back = await authorize({ state, code_challenge: await oauth.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256' })
  const params = oauth.validateAuthResponse(as, client, back, state)
  const noVerifier = await oauth.authorizationCodeGrantRequest(as, client, post, params, REDIRECT, oauth.nopkce, insecure)
  t.same(await tokenError(oauth.processAuthorizationCodeResponse(as, client, noVerifier)), { error: 'invalid_grant', status: 400 })

  // A wrong verifier.
  const state2 = oauth.generateRandomState()
  const back2 = await authorize({ state: state2, code_challenge: await oauth.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256' })
  const wrong = await oauth.authorizationCodeGrantRequest(as, client, post, oauth.validateAuthResponse(as, client, back2, state2), REDIRECT, oauth.generateRandomCodeVerifier(), insecure)
  t.same(await tokenError(oauth.processAuthorizationCodeResponse(as, client, wrong)), { error: 'invalid_grant', status: 400 })

  // A verifier without a challenge (RFC 9700 §2.1.1).
  const state3 = oauth.generateRandomState()
  const back3 = await authorize({ state: state3 })
  const extra = await oauth.authorizationCodeGrantRequest(as, client, post, oauth.validateAuthResponse(as, client, back3, state3), REDIRECT, verifier, insecure)
  t.same(await tokenError(oauth.processAuthorizationCodeResponse(as, client, extra)), { error: 'invalid_grant', status: 400 })

  // plain is not accepted: back to the app with invalid_request.
  const plain = await authorize({ state: 'p', code_challenge: verifier, code_challenge_method: 'plain' })
  t.equal(plain.searchParams.get('error'), 'invalid_request')
  t.equal(plain.searchParams.get('state'), 'p')
})

t.test('redirect_uri: an unregistered one is never redirected to; a different one at the token address is invalid_grant', async (t) => {
  const page = await consentPage(s.site, who, { response_type: 'code', client_id: app.client_id, redirect_uri: 'https://app.example/callback/evil' })
  t.equal(page.status, 400, 'an error page, not a redirect')
  t.equal(page.headers.get('location'), null)
  const prefix = await consentPage(s.site, who, { response_type: 'code', client_id: app.client_id, redirect_uri: 'https://app.example/callback?x=1' })
  t.equal(prefix.status, 400, 'exact match only: an added query is another URI')
  const unknown = await consentPage(s.site, who, { response_type: 'code', client_id: 'app_nope', redirect_uri: REDIRECT })
  t.equal(unknown.status, 400, 'unknown client: an error page')

  const state = oauth.generateRandomState()
  const back = await authorize({ state })
  const params = oauth.validateAuthResponse(as, client, back, state)
  const res = await oauth.authorizationCodeGrantRequest(as, client, post, params, 'http://127.0.0.1:9999/cb', oauth.nopkce, insecure)
  t.same(await tokenError(oauth.processAuthorizationCodeResponse(as, client, res)), { error: 'invalid_grant', status: 400 }, 'another registered URI than the one authorized')
})

t.test('a reused code is invalid_grant and revokes the tokens the first use issued', async (t) => {
  const { params, res } = await fullFlow({ pkce: false })
  const tokens = await oauth.processAuthorizationCodeResponse(as, client, res)
  t.equal((await apiAs(tokens.access_token, ORDERS)).status, 200, 'works before the replay')
  const again = await oauth.authorizationCodeGrantRequest(as, client, post, params, REDIRECT, oauth.nopkce, insecure)
  t.same(await tokenError(oauth.processAuthorizationCodeResponse(as, client, again)), { error: 'invalid_grant', status: 400 })
  t.equal((await apiAs(tokens.access_token, ORDERS)).status, 401, 'the first access token is revoked')
  const refresh = await oauth.refreshTokenGrantRequest(as, client, post, tokens.refresh_token!, insecure)
  t.same(await tokenError(oauth.processRefreshTokenResponse(as, client, refresh)), { error: 'invalid_grant', status: 400 }, 'and its refresh token')
})

t.test('an expired code is invalid_grant', async (t) => {
  const state = oauth.generateRandomState()
  const back = await authorize({ state })
  const params = oauth.validateAuthResponse(as, client, back, state)
  db.prepare('UPDATE oauth_codes SET expires_at = ? WHERE code_hash = ?').run('2000-01-01T00:00:00.000+00:00', sha256Hex(params.get('code')!))
  const res = await oauth.authorizationCodeGrantRequest(as, client, post, params, REDIRECT, oauth.nopkce, insecure)
  t.same(await tokenError(oauth.processAuthorizationCodeResponse(as, client, res)), { error: 'invalid_grant', status: 400 })
})

t.test('client authentication: a bad secret is invalid_client (401) and keeps the code usable; HTTP Basic works', async (t) => {
  const state = oauth.generateRandomState()
  const back = await authorize({ state })
  const params = oauth.validateAuthResponse(as, client, back, state)
  const bad = await oauth.authorizationCodeGrantRequest(as, client, oauth.ClientSecretPost('dscs_wrong'), params, REDIRECT, oauth.nopkce, insecure)
  t.same(await tokenError(oauth.processAuthorizationCodeResponse(as, client, bad)), { error: 'invalid_client', status: 401 })
  const badBasic = await oauth.authorizationCodeGrantRequest(as, client, oauth.ClientSecretBasic('dscs_wrong'), params, REDIRECT, oauth.nopkce, insecure)
  t.equal(badBasic.status, 401)
  t.match(badBasic.headers.get('www-authenticate') ?? '', /^Basic/, 'a Basic challenge after failed Basic authentication')
  const other = createTestApp(db, developer, { redirectUris: [REDIRECT] })
  const stolen = await oauth.authorizationCodeGrantRequest(as, { client_id: other.client_id }, oauth.ClientSecretPost(other.client_secret), params, REDIRECT, oauth.nopkce, insecure)
  t.same(await tokenError(oauth.processAuthorizationCodeResponse(as, { client_id: other.client_id }, stolen)), { error: 'invalid_grant', status: 400 }, 'another client cannot redeem the code (and burns it)')

  const { res } = await fullFlow({ auth: oauth.ClientSecretBasic(app.client_secret) })
  t.match((await oauth.processAuthorizationCodeResponse(as, client, res)).access_token, /^dsa_/, 'client_secret_basic')
})

t.test('refresh tokens rotate; reusing one revokes the grant', async (t) => {
  const { res } = await fullFlow()
  const first = await oauth.processAuthorizationCodeResponse(as, client, res)
  const r1 = await oauth.refreshTokenGrantRequest(as, client, post, first.refresh_token!, insecure)
  t.equal(r1.headers.get('cache-control'), 'no-store')
  const second = await oauth.processRefreshTokenResponse(as, client, r1)
  t.not(second.refresh_token, first.refresh_token, 'a new refresh token')
  t.not(second.access_token, first.access_token, 'a new access token')
  t.equal((await apiAs(second.access_token, ORDERS)).status, 200)
  const narrower = await oauth.refreshTokenGrantRequest(as, client, post, second.refresh_token!, { ...insecure, additionalParameters: { scope: 'orders:read' } })
  const third = await oauth.processRefreshTokenResponse(as, client, narrower)
  t.equal(third.scope, 'orders:read', 'a refresh may narrow the scopes')
  const wider = await oauth.refreshTokenGrantRequest(as, client, post, third.refresh_token!, { ...insecure, additionalParameters: { scope: 'orders:read menu:read' } })
  t.same(await tokenError(oauth.processRefreshTokenResponse(as, client, wider)), { error: 'invalid_scope', status: 400 }, 'never wider')

  // Reuse of the first (already rotated) refresh token.
  const reuse = await oauth.refreshTokenGrantRequest(as, client, post, first.refresh_token!, insecure)
  t.same(await tokenError(oauth.processRefreshTokenResponse(as, client, reuse)), { error: 'invalid_grant', status: 400 })
  t.equal((await apiAs(second.access_token, ORDERS)).status, 401, 'every token of the grant is revoked')
  const latest = await oauth.refreshTokenGrantRequest(as, client, post, third.refresh_token!, insecure)
  t.same(await tokenError(oauth.processRefreshTokenResponse(as, client, latest)), { error: 'invalid_grant', status: 400 }, 'including the newest refresh token')
})

t.test('deny → access_denied with state; nothing installed', async (t) => {
  const fresh = createTestApp(db, developer, { redirectUris: [REDIRECT] })
  const r = await answerConsent(s.site, who, { response_type: 'code', client_id: fresh.client_id, redirect_uri: REDIRECT, state: 'xyz' }, 'deny')
  t.equal(r.status, 303)
  const back = new URL(r.headers.get('location')!)
  t.equal(back.searchParams.get('error'), 'access_denied')
  t.equal(back.searchParams.get('state'), 'xyz')
  t.throws(() => oauth.validateAuthResponse(as, { client_id: fresh.client_id }, back, 'xyz'), oauth.AuthorizationResponseError, 'the client sees the RFC error')
  t.equal(db.prepare('SELECT COUNT(*) FROM app_installations WHERE app_id = ?').pluck().get(fresh.id), 0)
})

t.test('token address errors: unsupported_grant_type, invalid_request, unknown code', async (t) => {
  const form = (body: Record<string, string>) => request(`${s.site}/oauth/token`, 'POST', { raw: new URLSearchParams(body).toString(), headers: { 'content-type': 'application/x-www-form-urlencoded' } })
  const cred = { client_id: app.client_id, client_secret: app.client_secret }
  const pw = await form({ grant_type: 'password', username: 'a', password: 'b', ...cred })
  t.equal(pw.status, 400)
  t.equal(pw.body.error, 'unsupported_grant_type')
  t.equal(pw.headers.get('cache-control'), 'no-store')
  t.equal((await form({ ...cred })).body.error, 'invalid_request', 'no grant_type')
  t.equal((await form({ grant_type: 'authorization_code', ...cred, redirect_uri: REDIRECT })).body.error, 'invalid_request', 'no code')
  const unknown = await form({ grant_type: 'authorization_code', ...cred, redirect_uri: REDIRECT, code: 'nope' })
  t.equal(unknown.body.error, 'invalid_grant')
  t.equal(unknown.body.code, 'invalid_grant', 'the API envelope\'s code too')
  t.ok(unknown.body.message)
  t.equal((await form({ grant_type: 'authorization_code', client_id: app.client_id, code: 'x' })).body.error, 'invalid_client', 'no secret')
})

t.test('the consent page: signed out → sign-in and back; scopes, price, one approve and one deny button, CSRF', async (t) => {
  const q = { response_type: 'code', client_id: app.client_id, redirect_uri: REDIRECT, scope: 'orders:read', state: 's1' }
  const out = await consentPage(s.site, null, q)
  t.equal(out.status, 303)
  const login = new URL(out.headers.get('location')!, s.site)
  t.equal(login.pathname, '/login')
  t.equal(login.searchParams.get('next'), `/oauth/authorize?${new URLSearchParams(q)}`, 'comes back to this request after signing in')

  const priced = createTestApp(db, developer, { redirectUris: [REDIRECT], pricing: 'recurring', price: 499, scopes: ['orders:read', 'mcp:use'] })
  const page = await consentPage(s.site, who, { ...q, client_id: priced.client_id })
  t.equal(page.status, 200)
  const html = await page.text()
  t.match(html, 'orders:read')
  t.notMatch(html, 'mcp:use', 'only the scopes asked for')
  t.match(html, '4.99 USD every 30 days')
  t.equal(html.match(/<button/g)?.length, 2, 'two buttons')
  t.match(html, 'name="decision" value="approve"')
  t.match(html, 'name="decision" value="deny"')
  t.match(html, `name="csrf" value="${who.csrf}"`)
  t.match(page.headers.get('content-security-policy') ?? '', "frame-ancestors 'none'", 'not framable (clickjacking)')
  t.match(page.headers.get('content-security-policy') ?? '', "form-action 'self' https://app.example;", 'the form may go on to the app\'s redirect origin, nowhere else')
  t.equal(page.headers.get('referrer-policy'), 'same-origin', 'the authorization request is not leaked as a Referer, and the form posts with the site\'s Origin')

  const noCsrf = (origin?: string) => fetch(`${s.site}/oauth/authorize`, {
    method: 'POST', redirect: 'manual', headers: { cookie: who.cookie, 'content-type': 'application/x-www-form-urlencoded', ...(origin ? { origin } : {}) },
    body: new URLSearchParams({ ...q, decision: 'approve' }).toString(),
  })
  t.equal((await noCsrf()).status, 403, 'the form needs the session\'s CSRF token')
  t.equal((await noCsrf('null')).status, 403, 'also from a browser that sends Origin: null')
  t.equal((await answerConsent(s.site, { ...who, csrf: 'x'.repeat(who.csrf.length) }, q, 'approve', 'null')).status, 403, 'Origin: null with a wrong token')
  t.equal((await answerConsent(s.site, who, q, 'approve', 'http://127.0.0.1:1')).status, 403, 'the right token from another origin')
  const nullOrigin = await answerConsent(s.site, who, { ...q, state: 'null-origin' }, 'deny', 'null')
  t.equal(nullOrigin.status, 303, 'Origin: null with the session\'s token: the form\'s token decides')
  t.equal(new URL(nullOrigin.headers.get('location')!).searchParams.get('state'), 'null-origin', 'back to the app')

  const badScope = await consentPage(s.site, who, { ...q, scope: 'orders:write' })
  t.equal(badScope.status, 303)
  t.equal(new URL(badScope.headers.get('location')!).searchParams.get('error'), 'invalid_scope', 'a scope the app did not register')
  const badType = await consentPage(s.site, who, { ...q, response_type: 'token' })
  t.equal(new URL(badType.headers.get('location')!).searchParams.get('error'), 'unsupported_response_type')
})

t.test('an account whose plan lacks apps cannot install: the consent page says so and approval is refused', async (t) => {
  const poor = createOwner(db, undefined, 'free')
  const pw = signedIn(db, poor)
  const q = { response_type: 'code', client_id: app.client_id, redirect_uri: REDIRECT, state: 's' }
  const page = await consentPage(s.site, pw, q)
  t.equal(page.status, 403)
  const html = await page.text()
  t.notMatch(html, 'value="approve"', 'no approve button')
  const r = await answerConsent(s.site, pw, q, 'approve')
  t.equal(r.status, 403, 'approval refused with the plan message')
  t.equal(db.prepare('SELECT COUNT(*) FROM app_installations WHERE owner_id = ?').pluck().get(poor), 0, 'nothing installed')
})

t.test('authorization server metadata (RFC 8414)', async (t) => {
  const r = await request(`${s.site}/.well-known/oauth-authorization-server`, 'GET')
  t.equal(r.body.issuer, s.site)
  t.equal(r.body.token_endpoint, `${s.site}/oauth/token`)
  t.same(r.body.code_challenge_methods_supported, ['S256'])
  t.same(r.body.scopes_supported, [...APP_SCOPES], 'every scope an owner can grant, and no other')
})
