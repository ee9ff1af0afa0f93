/**
 * The owner's sign-in, sign-out, sign-up and forgotten password on the site (issue 14; docs/dashboard.md
 * "Signing in", "Forgotten password") as operations (issue 33 item 1), bound as the pages' forms
 * (src/http/routes/owner-auth.ts). The rules stay in src/ops/accounts/owner-auth.ts, which checks each
 * address's limit before it validates (a refused attempt counts): so these inputs only name the
 * posted fields, and the rules validate them.
 */
import * as v from 'valibot'
import { defineOp } from '../op.ts'
import { checkOwnerPassword, requestPasswordReset, resetPassword, signUpOwner, verifyOwnerEmail } from './owner-auth.ts'
import { notFound } from '../../errors.ts'
import { endOwnerSession, startOwnerSession } from './owner-sessions.ts'
import type { Services } from '../../services.ts'
import type { SessionPrincipal } from '../../auth/owner-sessions.ts'

const tag = 'Owner sign-in'
const access = { public: true } as const

export const signUp = defineOp({
  id: 'owner.sign_up', tag, summary: 'Sign up: creates the account and mails a verification link',
  access, scope: [], input: v.object({ name: v.string(), email: v.string(), password: v.string() }),
  run: (ctx, input) => signUpOwner(ctx.svc, input, ctx.ip),
})

export const forgotPassword = defineOp({
  id: 'owner.password.forgot', tag, summary: 'Mails a one-time link to set a new password',
  access, scope: [], input: v.object({ email: v.string() }),
  run: (ctx, input) => requestPasswordReset(ctx.svc, input, ctx.ip),
})

export const setPassword = defineOp({
  id: 'owner.password.reset', tag, summary: 'Sets the new password with a reset link',
  access, scope: [], input: v.object({ token: v.string(), password: v.string() }),
  run: async (ctx, { token, password }) => { await resetPassword(ctx.svc, token, { password }); return null },
})


/**
 * Sign in with the password (and the TOTP code when two-factor is on): the limits and refusals of
 * `checkOwnerPassword`, the one check every password sign-in runs (the shell app's too). The session
 * the browser's cookie header names, if any, is ended and replaced (one browser, one session; never
 * promoted: session fixation). Answers the new session's cookie.
 */
export const signIn = defineOp({
  id: 'owner.sign_in', tag, summary: 'Sign in: starts a web session (cookie `dsid`)',
  access, scope: [],
  input: v.object({ email: v.string(), password: v.string(), otp: v.optional(v.string()), cookie: v.string(), user_agent: v.string() }),
  run: async (ctx, { email, password, otp, cookie, user_agent }) => {
    const { ownerId } = await checkOwnerPassword(ctx.svc, { email, password, otp }, ctx.ip)
    const previous = currentSession(ctx.svc, cookie)
    if (previous !== null) await endOwnerSession(ctx.svc, previous)
    const { setCookie } = await startOwnerSession(ctx.svc, ownerId, { ip: ctx.ip, userAgent: user_agent, via: 'password' })
    return { set_cookie: setCookie }
  },
})

/** The session a cookie header names (or none). */
function currentSession(svc: Services, cookie: string): number | null {
  try {
    return svc.auth.session({ headers: { cookie }, query: {}, bearer: null })?.sessionId ?? null
  } catch { return null }
}

export const signOut = defineOp({
  id: 'owner.sign_out', tag, summary: 'Sign out: ends this web session and its API tokens',
  access: { session: true }, scope: [],
  run: async (ctx) => { await endOwnerSession(ctx.svc, (ctx.principal as SessionPrincipal).sessionId); return null },
})

/** The verification mail's link (`GET /verify-email/{token}`): works once; unknown, used or expired → 404. */
export const verifyEmail = defineOp({
  id: 'owner.email.verify', tag, summary: 'Confirms the owner\'s email address with the verification link',
  access, scope: [], input: v.object({ token: v.string() }),
  run: async (ctx, { token }) => {
    if (await verifyOwnerEmail(ctx.svc, token) === null) throw notFound('link')
    return null
  },
})

export const ownerSignUpOps = [signIn, signOut, signUp, forgotPassword, setPassword, verifyEmail]
