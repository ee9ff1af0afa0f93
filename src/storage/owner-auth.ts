/**
 * Owner sign-in storage (issue 14; docs/dashboard.md "Signing in"): credentials on `owners`, web
 * sessions, the API tokens a session holds, one-time email links. The only SQL of the feature.
 * Reads take a `Db`; writes are called inside `committer.write` by src/ops/accounts/owner-auth.ts and
 * src/ops/accounts/owner-sessions.ts.
 */
import { stmt, nowIso, type Db } from './db.ts'

export interface OwnerCredentials {
  id: number
  name: string
  email: string
  password_hash: string | null
  email_verified_at: string | null
  totp_secret: string | null
  totp_pending: string | null
  totp_last_step: number | null
}

const CRED_COLS = 'id, name, email, password_hash, email_verified_at, totp_secret, totp_pending, totp_last_step'

/** The account that signs in with `email` (case-insensitive), if it has a password. */
export const ownerByLoginEmail = (db: Db, email: string): OwnerCredentials | undefined =>
  stmt<[string], OwnerCredentials>(db, `SELECT ${CRED_COLS} FROM owners WHERE lower(email) = lower(?) AND password_hash IS NOT NULL`).get(email)

export const ownerCredentials = (db: Db, ownerId: number): OwnerCredentials | undefined =>
  stmt<[number], OwnerCredentials>(db, `SELECT ${CRED_COLS} FROM owners WHERE id = ?`).get(ownerId)

/** Any owner row with this address, with or without a password (sign-up refuses taken addresses). */
export const ownerIdByEmail = (db: Db, email: string): number | undefined =>
  (stmt<[string], { id: number }>(db, 'SELECT id FROM owners WHERE lower(email) = lower(?) ORDER BY id LIMIT 1').get(email))?.id

export function insertOwnerWithPassword(db: Db, name: string, email: string, passwordHash: string): number {
  return Number(stmt(db, 'INSERT INTO owners (name, email, password_hash, created_at) VALUES (?, ?, ?, ?)').run(name, email, passwordHash, nowIso()).lastInsertRowid)
}

export const setOwnerPassword = (db: Db, ownerId: number, passwordHash: string): boolean =>
  stmt(db, 'UPDATE owners SET password_hash = ? WHERE id = ?').run(passwordHash, ownerId).changes > 0

export const markEmailVerified = (db: Db, ownerId: number): void => {
  stmt(db, 'UPDATE owners SET email_verified_at = COALESCE(email_verified_at, ?) WHERE id = ?').run(nowIso(), ownerId)
}

export const setTotpPending = (db: Db, ownerId: number, secret: string | null): void => {
  stmt(db, 'UPDATE owners SET totp_pending = ? WHERE id = ?').run(secret, ownerId)
}

/** Confirms the pending secret as the account's TOTP secret (null: two-factor off). */
export const setTotpSecret = (db: Db, ownerId: number, secret: string | null, lastStep: number | null): void => {
  stmt(db, 'UPDATE owners SET totp_secret = ?, totp_pending = NULL, totp_last_step = ? WHERE id = ?').run(secret, lastStep, ownerId)
}

/** Records the step of an accepted code, only if newer: a code cannot be replayed (RFC 6238 §5.2). */
export const advanceTotpStep = (db: Db, ownerId: number, step: number): boolean =>
  stmt(db, 'UPDATE owners SET totp_last_step = ? WHERE id = ? AND (totp_last_step IS NULL OR totp_last_step < ?)').run(step, ownerId, step).changes > 0

// ---- sessions ---------------------------------------------------------------------------------------------

export interface SessionRow {
  id: number
  owner_id: number
  csrf: string
  via: 'password' | 'handoff'
  ip: string
  user_agent: string
  created_at: string
  last_seen_at: string
  expires_at: string
  revoked_at: string | null
}
const SESSION_COLS = 'id, owner_id, csrf, via, ip, user_agent, created_at, last_seen_at, expires_at, revoked_at'

/** The live session of a cookie digest, if any (not revoked, not expired). */
export const liveSessionByHash = (db: Db, tokenHash: string, now = nowIso()): SessionRow | undefined =>
  stmt<[string, string], SessionRow>(db, `SELECT ${SESSION_COLS} FROM owner_sessions WHERE token_hash = ? AND revoked_at IS NULL AND expires_at > ?`).get(tokenHash, now)

export const sessionById = (db: Db, id: number): SessionRow | undefined =>
  stmt<[number], SessionRow>(db, `SELECT ${SESSION_COLS} FROM owner_sessions WHERE id = ?`).get(id)

/** The account's live sessions, newest first. */
export const liveSessionsOf = (db: Db, ownerId: number, now = nowIso()): SessionRow[] =>
  stmt<[number, string], SessionRow>(db, `SELECT ${SESSION_COLS} FROM owner_sessions WHERE owner_id = ? AND revoked_at IS NULL AND expires_at > ? ORDER BY id DESC`).all(ownerId, now)

export function insertSession(db: Db, s: { ownerId: number; tokenHash: string; csrf: string; via: 'password' | 'handoff'; ip: string; userAgent: string; expiresAt: string }): number {
  const now = nowIso()
  return Number(stmt(db, `INSERT INTO owner_sessions (owner_id, token_hash, csrf, via, ip, user_agent, created_at, last_seen_at, expires_at)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`).run(s.ownerId, s.tokenHash, s.csrf, s.via, s.ip, s.userAgent.slice(0, 300), now, now, s.expiresAt).lastInsertRowid)
}

export const touchSession = (db: Db, id: number, at: string): void => {
  stmt(db, 'UPDATE owner_sessions SET last_seen_at = ? WHERE id = ? AND last_seen_at < ?').run(at, id, at)
}

/**
 * Ends sessions and every API token they hold, at once (docs/dashboard.md). `ownerId` limits the
 * end to that account's sessions (another owner's session id changes nothing). Returns how many
 * sessions ended.
 */
export function revokeSessions(db: Db, ids: readonly number[], ownerId?: number): number {
  const now = nowIso()
  let n = 0
  for (const id of ids) {
    const r = ownerId === undefined
      ? stmt(db, 'UPDATE owner_sessions SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL').run(now, id)
      : stmt(db, 'UPDATE owner_sessions SET revoked_at = ? WHERE id = ? AND owner_id = ? AND revoked_at IS NULL').run(now, id, ownerId)
    if (r.changes === 0) continue
    n++
    stmt(db, 'UPDATE owner_tokens SET revoked_at = ? WHERE session_id = ? AND revoked_at IS NULL').run(now, id)
  }
  return n
}

/** Every live session of the account but `keepId` (after a password change, "sign out everywhere else"). */
export const otherLiveSessionIds = (db: Db, ownerId: number, keepId: number | null): number[] =>
  liveSessionsOf(db, ownerId).map((s) => s.id).filter((id) => id !== keepId)

/** An API token held by a session (capabilities `["*"]`), outside the quota and the token list. */
export function insertSessionToken(db: Db, ownerId: number, sessionId: number, tokenHash: string, prefix: string, expiresAt: string): number {
  return Number(stmt(db, `INSERT INTO owner_tokens (owner_id, token_hash, token_prefix, name, capabilities, expires_at, created_at, session_id)
    VALUES (?, ?, ?, 'dashboard session', '["*"]', ?, ?, ?)`).run(ownerId, tokenHash, prefix, expiresAt, nowIso(), sessionId).lastInsertRowid)
}

// ---- one-time email links -------------------------------------------------------------------------------

/** What a one-time link does: confirm the address (two days) or set a new password (one hour). */
export type EmailTokenPurpose = 'verify_email' | 'reset_password'

export const insertEmailToken = (db: Db, ownerId: number, tokenHash: string, expiresAt: string, purpose: EmailTokenPurpose = 'verify_email'): void => {
  stmt(db, 'INSERT INTO owner_email_tokens (owner_id, token_hash, purpose, created_at, expires_at) VALUES (?, ?, ?, ?, ?)').run(ownerId, tokenHash, purpose, nowIso(), expiresAt)
}

/** The owner a live (unused, unexpired) link of this purpose belongs to, without using it. */
export const emailTokenOwner = (db: Db, tokenHash: string, purpose: EmailTokenPurpose): number | undefined =>
  stmt<[string, string, string], { owner_id: number }>(db,
    'SELECT owner_id FROM owner_email_tokens WHERE token_hash = ? AND purpose = ? AND used_at IS NULL AND expires_at > ?').get(tokenHash, purpose, nowIso())?.owner_id

/** Uses a link once: the owner id, or undefined when unknown, used, expired or of another purpose. */
export function useEmailToken(db: Db, tokenHash: string, purpose: EmailTokenPurpose = 'verify_email'): number | undefined {
  const now = nowIso()
  const row = stmt<[string, string, string], { id: number; owner_id: number }>(db,
    'SELECT id, owner_id FROM owner_email_tokens WHERE token_hash = ? AND purpose = ? AND used_at IS NULL AND expires_at > ?').get(tokenHash, purpose, now)
  if (!row) return undefined
  stmt(db, 'UPDATE owner_email_tokens SET used_at = ? WHERE id = ?').run(now, row.id)
  return row.owner_id
}

/** Reset links mailed to an account since `since` (at most a few an hour: the mailbox is not ours to flood). */
export const resetLinksSince = (db: Db, ownerId: number, since: string): number =>
  stmt<[number, string], { n: number }>(db, "SELECT count(*) AS n FROM owner_email_tokens WHERE owner_id = ? AND purpose = 'reset_password' AND created_at > ?").get(ownerId, since)!.n

/** Ends every other live reset link of the account (a used link makes the older ones worthless). */
export const expireResetLinks = (db: Db, ownerId: number): void => {
  stmt(db, "UPDATE owner_email_tokens SET used_at = ? WHERE owner_id = ? AND purpose = 'reset_password' AND used_at IS NULL").run(nowIso(), ownerId)
}
