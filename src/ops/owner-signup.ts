/**
 * The owner's sign-up and forgotten password on the site (issue 14; docs/dashboard.md "Signing in",
 * "Forgotten password") as public operations (issue 33 item 1), bound as the pages' forms
 * (src/http/routes/owner-auth.ts). The rules stay in src/ops/owner-auth.ts, which checks each
 * address's limit before it validates (a refused attempt counts): so these inputs only name the
 * posted fields, and the rules validate them.
 */
import * as v from 'valibot'
import { defineOp } from './op.ts'
import { requestPasswordReset, resetPassword, signUpOwner } from './owner-auth.ts'

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

export const ownerSignUpOps = [signUp, forgotPassword, setPassword]
