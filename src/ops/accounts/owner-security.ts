/**
 * The owner's account security (issue 14; docs/dashboard.md "Account security") as operations of the
 * web session family (issue 33 item 1): sign out one of the account's sessions, and turn two-factor
 * sign-in on or off. The security page binds each as a form (src/http/routes/owner-auth.ts); the
 * session is the account, so there is no scope to resolve and another account's session is a 404.
 */
import * as v from 'valibot'
import { defineOp, type OpCtx } from '../op.ts'
import type { SessionPrincipal } from '../../auth/owner-sessions.ts'
import { listOwnerSessions, revokeOwnerSession } from './owner-sessions.ts'
import { beginTwoFactor, confirmTwoFactor, disableTwoFactor, twoFactorState } from './owner-auth.ts'
import type { Services } from '../../services.ts'
import { ownerById } from '../../storage/owners.ts'

const tag = 'Owner sign-in'
const access = { session: true } as const
const sessionOf = (ctx: OpCtx): SessionPrincipal => ctx.principal as SessionPrincipal
const Code = v.object({ code: v.string() })

/** What the security page shows: the account's email, its sessions (this one marked) and two-factor sign-in. */
export const securityState = (svc: Services, ownerId: number, sessionId: number) => ({
  email: ownerById(svc.db, ownerId)?.email ?? '', sessions: listOwnerSessions(svc, ownerId, sessionId), twoFactor: twoFactorState(svc, ownerId),
})

/** What a security action answers: which session it was taken from (a revoked own session signs the browser out). */
export interface SecurityDone { session_id: number; ended_own_session: boolean }

export const revokeSession = defineOp({
  id: 'owner.sessions.revoke', tag, summary: 'Ends one of the account\'s sessions and its API tokens (another account\'s: 404)',
  access, scope: [], input: v.object({ session_id: v.number() }),
  run: async (ctx, { session_id }): Promise<SecurityDone> => {
    const p = sessionOf(ctx)
    await revokeOwnerSession(ctx.svc, p.ownerId, session_id)
    return { session_id: p.sessionId, ended_own_session: session_id === p.sessionId }
  },
})

/** A two-factor action of the session's account: `act` with the posted code (none for the start). */
const twoFactorOp = (id: string, summary: string, act: (svc: Services, ownerId: number, code: string) => Promise<void>) => defineOp({
  id, tag, summary, access, scope: [], input: Code,
  run: async (ctx, { code }): Promise<SecurityDone> => {
    const p = sessionOf(ctx)
    await act(ctx.svc, p.ownerId, code)
    return { session_id: p.sessionId, ended_own_session: false }
  },
})

export const startTwoFactor = twoFactorOp('owner.two_factor.start', 'Starts two-factor enrolment: a new TOTP key to confirm', (svc, ownerId) => beginTwoFactor(svc, ownerId))
export const confirmTwoFactorOp = twoFactorOp('owner.two_factor.confirm', 'Turns two-factor sign-in on with a code of the new key', confirmTwoFactor)
export const disableTwoFactorOp = twoFactorOp('owner.two_factor.disable', 'Turns two-factor sign-in off (needs a current code)', disableTwoFactor)

export const ownerSecurityOps = [revokeSession, startTwoFactor, confirmTwoFactorOp, disableTwoFactorOp]
