/**
 * Owner sign-in on the site (issue 14; docs/dashboard.md "Signing in"): the sign-in, sign-up and
 * verification pages, sign-out, the account's security page (sessions, two-factor), and the
 * dashboard's short-lived API token. Only the web's concerns live here (cookies, redirects, CSRF,
 * HTML); what each form does is src/ops/accounts/owner-auth.ts and src/ops/accounts/owner-sessions.ts.
 * Session pages are `auth: 'session'`: the HTTP door sends signed-out visits to /login and refuses
 * posts without the session's CSRF token (src/http/session-gate.ts) before a handler runs.
 */
import * as v from 'valibot'
import { Reply, route, type Ctx } from '../route.ts'
import { form, type Admitted, type FormRequest } from '../form.ts'
import * as site from '../../ops/accounts/owner-signup.ts'
import * as security from '../../ops/accounts/owner-security.ts'
import type { SecurityDone } from '../../ops/accounts/owner-security.ts'
import type { Op } from '../../ops/op.ts'
import { invoke } from '../../ops/invoke.ts'
import type { SessionPrincipal } from '../../auth/principals.ts'
import { ApiError } from '../../errors.ts'
import { issueSessionApiToken, sessionCookie } from '../../ops/accounts/owner-sessions.ts'
import {
  resetLinkLive,
} from '../../ops/accounts/owner-auth.ts'
import { authPage, checkMailBody, forgotBody, loginBody, resetBody, resetSentBody, securityBody, signUpBody, type LoginForm } from '../pages/owner-auth-pages.ts'
import { fromSite, safeNext } from '../session-gate.ts'

const tag = 'Owner sign-in'
const HTML = 'text/html; charset=utf-8'

const ApiTokenSchema = {
  type: 'object', required: ['token', 'expires_at'],
  properties: {
    token: { type: 'string', description: 'An owner token (`dso_…`) with capabilities `["*"]` for `Authorization: Bearer`' },
    expires_at: { type: 'string', description: 'ISO 8601; 15 minutes after issue. Ask for a new one before then.' },
  },
}

const see = (to: string, cookie?: string): Reply =>
  new Reply(303, null, { Location: to, 'Cache-Control': 'no-store', ...(cookie ? { 'Set-Cookie': cookie } : {}) })

const refusedForm = () => authPage(403, 'This form has expired', '<p>For your safety the form was not sent. <a href="/login">Go back</a> and try again.</p>')

/** An ApiError as the page's own status, message and (for 429) Retry-After. */
const errorHeaders = (e: ApiError): Record<string, string> => e.headers ?? {}

/** What a refused form tells the person: the field messages when there are some, else the message. */
const pageMessage = (e: ApiError): string =>
  (e.details && typeof e.details === 'object' ? Object.values(e.details as Record<string, string[]>).flat().join(' ') : '') || e.message

const deadResetLink = '<p>It was used already or has expired. <a href="/forgot-password">Ask for a new one</a>.</p>'

type SessionCtx = Ctx<'session', undefined, URLSearchParams | undefined>

async function securityPage(ctx: Pick<SessionCtx, 'svc' | 'principal'>, status = 200, msg: { error?: string; ok?: string } = {}, extra: Record<string, string> = {}): Promise<Reply> {
  const { ownerId, sessionId, csrf } = ctx.principal
  return authPage(status, 'Account security', securityBody({
    csrf, ...security.securityState(ctx.svc, ownerId, sessionId), ...msg,
  }), extra)
}

/** The sign-in, sign-up and password forms act as no one, and only from this site's own pages (login CSRF, src/http/session-gate.ts `fromSite`). */
const fromThisSite = (req: FormRequest): Admitted | Reply => (fromSite(req.svc.config.siteUrl, req.headers) ? { principal: null } : refusedForm())

/** A security-page action bound as a form: the page again with the outcome, or with the refusal (wrong code, …). */
const securityForm = (op: Op<any, SecurityDone>, path: string, summary: string, pageErrors: Record<number, string>, ok: string) => form(op, {
  path, auth: 'session', summary, pageErrors,
  fields: { code: 'code' },
  success: (_done, req) => securityPage(req as FormRequest<SessionPrincipal>, 200, { ok }),
  failure: (_errors, req, e) => securityPage(req as FormRequest<SessionPrincipal>, e.status, { error: e.message }),
})

export const ownerAuthRoutes = [
  route({
    method: 'GET', path: '/login', site: true, auth: 'none', tag, produces: HTML,
    summary: 'The owner sign-in page (email, password, two-factor code when on)',
    query: v.object({ next: v.optional(v.pipe(v.string(), v.maxLength(2000))) }),
    handler: (ctx) => authPage(200, 'Sign in', loginBody({ next: ctx.query.next })),
  }),
  form(site.signIn, {
    path: '/login', auth: 'none', admit: fromThisSite,
    summary: 'Sign in: starts a web session (cookie `dsid`) and goes back to `next`',
    description: 'Form fields `email`, `password`, `otp` (when two-factor is on), `next`. Limits: 10 attempts a minute per address, 5 failures per account in 15 minutes (429). A session cookie sent along is ended and replaced (docs/dashboard.md "Signing in").',
    pageErrors: { 401: 'wrong email or password, or the two-factor code is needed', 403: 'not from this site, account suspended, or email not confirmed', 422: 'wrong two-factor code', 429: 'too many attempts' },
    fields: (req) => ({
      email: req.form.get('email') ?? '', password: req.form.get('password') ?? '', ...(req.form.get('otp') ? { otp: req.form.get('otp')! } : {}),
      cookie: req.headers.cookie ?? '', user_agent: req.headers['user-agent'] ?? '',
    }),
    success: ({ set_cookie }, req) => see(safeNext(req.form.get('next') ?? ''), set_cookie),
    failure: (_errors, req, e) => {
      const askOtp = e.code === 'two_factor_required' || e.code === 'otp_invalid'
      const form: LoginForm = { email: req.form.get('email') ?? '', next: req.form.get('next') ?? '' }
      return authPage(e.status, 'Sign in', loginBody({ ...form, askOtp, error: e.message }), errorHeaders(e))
    },
  }),
  form(site.signOut, {
    path: '/logout', auth: 'session', fields: {},
    summary: 'Sign out: ends this web session and its API tokens',
    success: (_done, req) => see('/login', sessionCookie(req.svc, null)),
    failure: (_errors, _req, e) => { throw e },
  }),
  route({
    method: 'GET', path: '/signup', site: true, auth: 'none', tag, produces: HTML,
    summary: 'The owner sign-up page',
    handler: () => authPage(200, 'Create your account', signUpBody({})),
  }),
  form(site.signUp, {
    path: '/signup', auth: 'none', admit: fromThisSite,
    summary: 'Sign up: creates the account and mails a verification link',
    description: 'Form fields `name`, `email`, `password` (10 characters or more). The answer is the same whether or not the address already has an account (that address gets a mail saying so).',
    pageErrors: { 403: 'not from this site', 422: 'invalid email or password', 429: 'too many attempts' },
    fields: { name: 'name', email: 'email', password: 'password' },
    success: ({ email }) => authPage(200, 'Check your email', checkMailBody(email)),
    failure: (_errors, req, e) => authPage(e.status, 'Create your account', signUpBody({ name: req.form.get('name') ?? '', email: req.form.get('email') ?? '', error: pageMessage(e) }), errorHeaders(e)),
  }),
  route({
    method: 'GET', path: '/verify-email/{token}', site: true, auth: 'none', tag, produces: HTML,
    // The link's page runs the operation itself (a GET: no form), answering the page either way.
    op: site.verifyEmail,
    summary: 'Confirms the owner\'s email address (the link of the verification mail; works once)',
    pageErrors: { 404: 'unknown, used or expired link' },
    handler: async (ctx) => {
      const verified = await invoke(site.verifyEmail, { svc: ctx.svc, principal: null, ids: {}, read: () => ({ token: ctx.params.token ?? '' }), where: 'query', requestId: ctx.requestId, ip: ctx.ip })
        .then(() => true, (err: unknown) => { if (err instanceof ApiError && err.status === 404) return false; throw err })
      if (!verified) return authPage(404, 'This link does not work', '<p>It was used already or has expired. <a href="/login">Sign in</a> to get a new one.</p>')
      return authPage(200, 'Email confirmed', `<p class="ok" role="status">Thank you. <a href="/login">Sign in</a> to open your dashboard.</p>`)
    },
  }),
  route({
    method: 'GET', path: '/forgot-password', site: true, auth: 'none', tag, produces: HTML,
    summary: 'The forgotten-password page: asks for the address to mail a reset link to',
    handler: () => authPage(200, 'Forgot your password?', forgotBody({})),
  }),
  form(site.forgotPassword, {
    path: '/forgot-password', auth: 'none', admit: fromThisSite,
    summary: 'Mails a one-time link to set a new password (same answer whether or not the address has an account)',
    description: 'Form field `email`. The link `{site_url}/reset-password/{token}` works once, for one hour; at most three links an hour per account; 10 requests a minute per client address (429). Docs: docs/dashboard.md "Forgotten password".',
    pageErrors: { 403: 'not from this site', 422: 'not an email address', 429: 'too many requests' },
    fields: { email: 'email' },
    success: (_sent, req) => authPage(200, 'Check your email', resetSentBody((req.form.get('email') ?? '').trim())),
    failure: (_errors, req, e) => authPage(e.status, 'Forgot your password?', forgotBody({ email: req.form.get('email') ?? '', error: pageMessage(e) }), errorHeaders(e)),
  }),
  route({
    method: 'GET', path: '/reset-password/{token}', site: true, auth: 'none', tag, produces: HTML,
    summary: 'The new-password form of a reset link (the link itself is not used up by looking)',
    pageErrors: { 404: 'unknown, used or expired link' },
    handler: (ctx) => {
      const token = ctx.params.token ?? ''
      if (!resetLinkLive(ctx.svc, token)) return authPage(404, 'This link does not work', deadResetLink)
      return authPage(200, 'Set a new password', resetBody(token))
    },
  }),
  form(site.setPassword, {
    path: '/reset-password/{token}', auth: 'none', admit: fromThisSite,
    summary: 'Sets the new password with a reset link: uses the link, ends every session of the account',
    description: 'Form field `password` (10 characters or more). The address counts as confirmed; the account\'s web sessions and their API tokens end; then sign in at /login.',
    pageErrors: { 403: 'not from this site', 404: 'unknown, used or expired link', 422: 'password too short or too long' },
    fields: (req) => ({ token: req.params.token ?? '', password: req.form.get('password') ?? '' }),
    success: () => authPage(200, 'Password changed', '<p class="ok" role="status">Your new password is set and every session of the account has ended. <a href="/login">Sign in</a> with it.</p>'),
    failure: (_errors, req, e) => (e.code === 'not_found' ? authPage(404, 'This link does not work', deadResetLink) : authPage(e.status, 'Set a new password', resetBody(req.params.token ?? '', pageMessage(e)))),
  }),
  route({
    method: 'GET', path: '/account/security', site: true, auth: 'session', tag, produces: HTML,
    summary: 'The owner\'s sessions (sign out any of them) and two-factor sign-in',
    handler: (ctx) => securityPage(ctx as SessionCtx),
  }),
  form(security.revokeSession, {
    path: '/account/sessions/{id}/revoke', auth: 'session', fields: {}, params: { id: 'session_id' },
    summary: 'Ends one of the account\'s sessions and its API tokens (another account\'s: 404)',
    pageErrors: { 404: 'no such session of this account' },
    success: (done, req) => (done.ended_own_session ? see('/login', sessionCookie(req.svc, null)) : see('/account/security')),
    failure: (_errors, req, e) => {
      if (e.code === 'not_found') return securityPage(req as FormRequest<SessionPrincipal>, 404, { error: 'That session does not exist or has ended.' })
      throw e
    },
  }),
  securityForm(security.startTwoFactor, '/account/two-factor/start', 'Starts two-factor enrolment: shows a new TOTP key', { 409: 'two-factor sign-in is on already' }, 'Add the key to your app and enter its code.'),
  securityForm(security.confirmTwoFactorOp, '/account/two-factor/confirm', 'Turns two-factor sign-in on with a code of the new key', { 409: 'no enrolment started', 422: 'wrong code' }, 'Two-factor sign-in is on.'),
  securityForm(security.disableTwoFactorOp, '/account/two-factor/disable', 'Turns two-factor sign-in off (needs a current code)', { 409: 'two-factor is off', 422: 'wrong code' }, 'Two-factor sign-in is off.'),
  route({
    method: 'POST', path: '/dashboard/api-token', site: true, auth: 'session', tag,
    summary: 'A short-lived API token for the signed-in dashboard (15 min, capabilities *)',
    description: 'Needs the session cookie and its CSRF token (`X-CSRF-Token`). The token ends with the session, is not counted in the api_tokens quota and is not listed among the account\'s tokens (docs/dashboard.md "Calling the API").',
    response: ApiTokenSchema,
    handler: async (ctx) => new Reply(200, await issueSessionApiToken(ctx.svc, ctx.principal.ownerId, ctx.principal.sessionId), { 'Cache-Control': 'no-store' }),
  }),
]

