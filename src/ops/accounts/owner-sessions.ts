/**
 * Owner web sessions (issue 14; docs/dashboard.md "Signing in"): start one (after a password
 * sign-in, or a shell's handoff, api-v1 §4.9), end one, list and revoke them, and the short-lived
 * API token a session's dashboard calls `/api/v1` with. Durable before acknowledged: every write
 * goes through the committer and resolves after its commit.
 */
import { randomBytes } from 'node:crypto'
import type { Services } from '../../services.ts'
import { nowIso } from '../../storage/db.ts'
import { newToken, sha256Hex } from '../../auth/tokens.ts'
import { SESSION_COOKIE } from '../../auth/owner-sessions.ts'
import { insertSession, insertSessionToken, liveSessionsOf, revokeSessions, sessionById, type SessionRow } from '../../storage/owner-auth.ts'
import { ApiError, notFound } from '../../errors.ts'

/** A session lives 14 days from sign-in (absolute: signing in again is the way to extend it). */
export const SESSION_LIFETIME_MS = 14 * 86_400_000
/** The dashboard's API tokens live 15 minutes; the page asks for a new one before that. */
export const SESSION_TOKEN_LIFETIME_MS = 15 * 60_000

export interface SessionMeta { ip: string; userAgent: string; via: 'password' | 'handoff' }

/**
 * The `dsid` cookie: HttpOnly (no script reads it), SameSite=Lax (not sent on cross-site posts),
 * Path=/ (the dashboard and the site routes of api-v1 §4.10), Secure when the site is https.
 * `null` clears it.
 */
export function sessionCookie(svc: Services, raw: string | null): string {
  const secure = svc.config.siteUrl.startsWith('https:') ? '; Secure' : ''
  const age = raw === null ? 0 : Math.floor(SESSION_LIFETIME_MS / 1000)
  return `${SESSION_COOKIE}=${raw ?? ''}; Path=/; Max-Age=${age}; HttpOnly; SameSite=Lax${secure}`
}

/**
 * A new session for `ownerId`, durable when this resolves, with the `Set-Cookie` value that hands it
 * to the browser. Every sign-in makes a new session (and a new cookie value): a value planted before
 * sign-in is never promoted (session fixation).
 */
export async function startOwnerSession(svc: Services, ownerId: number, meta: SessionMeta): Promise<{ setCookie: string; sessionId: number }> {
  const raw = randomBytes(32).toString('base64url')
  const csrf = randomBytes(24).toString('base64url')
  const expiresAt = nowIso(Date.now() + SESSION_LIFETIME_MS)
  const sessionId = await svc.committer.write((db) => insertSession(db, { ownerId, tokenHash: sha256Hex(raw), csrf, via: meta.via, ip: meta.ip, userAgent: meta.userAgent, expiresAt }))
  return { setCookie: sessionCookie(svc, raw), sessionId }
}

/** Ends a session and the API tokens it holds; their open sockets close (src/ws/sessions.ts). */
export async function endOwnerSession(svc: Services, sessionId: number): Promise<void> {
  const ended = await svc.committer.write((db) => revokeSessions(db, [sessionId]))
  if (ended > 0) svc.realtime.credentialsChanged()
}

/** A session as the security page lists it: never another session's CSRF token. */
export type SessionView = Omit<SessionRow, 'owner_id' | 'csrf' | 'revoked_at'> & { current: boolean }

const view = ({ owner_id: _o, csrf: _c, revoked_at: _r, ...s }: SessionRow, currentId: number | null): SessionView => ({ ...s, current: s.id === currentId })

/** The account's live sessions, newest first, the caller's own marked `current`. */
export const listOwnerSessions = (svc: Services, ownerId: number, currentId: number | null): SessionView[] =>
  liveSessionsOf(svc.db, ownerId).map((s) => view(s, currentId))

/** Revokes one of the account's sessions: another account's (or an unknown) id is a 404. */
export async function revokeOwnerSession(svc: Services, ownerId: number, sessionId: number): Promise<void> {
  const ended = await svc.committer.write((db) => revokeSessions(db, [sessionId], ownerId))
  if (ended === 0) throw notFound('session')
  svc.realtime.credentialsChanged()
}

/**
 * The dashboard's API credential (docs/dashboard.md "Calling the API"): an owner token of the
 * session's account with capabilities `["*"]`, 15 minutes, tied to the session (ends with it),
 * outside the api_tokens quota and the token list. The session is re-read: a revoked one gets none.
 */
export async function issueSessionApiToken(svc: Services, ownerId: number, sessionId: number): Promise<{ token: string; expires_at: string }> {
  const token = newToken('owner')
  const expiresAt = nowIso(Date.now() + SESSION_TOKEN_LIFETIME_MS)
  const ok = await svc.committer.write((db) => {
    const s = sessionById(db, sessionId)
    if (!s || s.owner_id !== ownerId || s.revoked_at) return false
    insertSessionToken(db, ownerId, sessionId, sha256Hex(token), token.slice(0, 10), expiresAt)
    return true
  })
  if (!ok) throw new ApiError('unauthenticated', 'This session has ended; sign in again.')
  return { token, expires_at: expiresAt }
}
