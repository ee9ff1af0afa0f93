/**
 * The `session` family (issue 14; docs/dashboard.md "Signing in"): the owner's web session, read
 * from the `dsid` cookie. Only routes declaring `auth: 'session'` (site pages of the dashboard and
 * of api-v1 §4.10) use it: it never authenticates an `/api/v1` route. Looked up in SQLite on every
 * request (by SHA-256 of the cookie value), so a revoked session is refused at once.
 */
import type { Db } from '../storage/db.ts'
import { nowIso } from '../storage/db.ts'
import { liveSessionByHash } from '../storage/owner-auth.ts'
import { sha256Hex } from './tokens.ts'

export const SESSION_COOKIE = 'dsid'

export interface SessionPrincipal {
  kind: 'session'
  ownerId: number
  sessionId: number
  /** The session's CSRF token: pages put it in forms (`csrf`) and fetches (`X-CSRF-Token`). */
  csrf: string
}

/** The value of one cookie in a `Cookie` header (the first, as browsers send the most specific first). */
export function cookieValue(cookieHeader: string | undefined, name: string): string | undefined {
  for (const part of (cookieHeader ?? '').split(';')) {
    const i = part.indexOf('=')
    if (i > 0 && part.slice(0, i).trim() === name) return part.slice(i + 1).trim()
  }
  return undefined
}

/** last_seen_at moves at most once a minute per session: a page view is not a disk write. */
const TOUCH_EVERY_MS = 60_000

export function createSessionAuth(db: Db, touch: (sessionId: number, at: string) => void) {
  return {
    resolve(cookieHeader: string | undefined): SessionPrincipal | null {
      const raw = cookieValue(cookieHeader, SESSION_COOKIE)
      if (!raw || !/^[A-Za-z0-9_-]{32,64}$/.test(raw)) return null
      const now = Date.now()
      const row = liveSessionByHash(db, sha256Hex(raw), nowIso(now))
      if (!row) return null
      if (now - Date.parse(row.last_seen_at) >= TOUCH_EVERY_MS) touch(row.id, nowIso(now))
      return { kind: 'session', ownerId: row.owner_id, sessionId: row.id, csrf: row.csrf }
    },
  }
}
