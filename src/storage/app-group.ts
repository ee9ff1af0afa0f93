/**
 * The app group's repository (api-v1 §4.9, docs/app-shell.md, migration 014): shell tokens per
 * device, their push registrations and the one-time handoff nonces. Secrets arrive here already
 * hashed (SHA-256); writes are called inside `committer.write`.
 */
import { stmt, type Db } from './db.ts'

export interface ShellTokenRow {
  id: number
  owner_id: number
  device: string
  device_name: string
  platform: string
  app_version: string | null
  created_at: string
  expires_at: string
  revoked_at: string | null
}

export interface NewShellToken {
  ownerId: number
  tokenHash: string
  device: string
  deviceName: string
  platform: string
  appVersion: string | null
  now: string
  expiresAt: string
}

/**
 * Issue a shell token for one device; the device's earlier tokens are revoked and their push
 * registrations dropped (one live sign-in per installation). Returns the new row's id, the ids of
 * the tokens it replaced (their web sessions are ended by the caller) and the push registrations
 * dropped (the caller tells the push provider).
 */
export function insertShellToken(db: Db, t: NewShellToken): { id: number; replaced: number[]; droppedPush: ShellPushRow[] } {
  const replaced = stmt<[number, string], number>(db, 'SELECT id FROM shell_tokens WHERE owner_id = ? AND device = ? AND revoked_at IS NULL')
    .pluck().all(t.ownerId, t.device)
  const droppedPush = replaced.flatMap((id) => pushDevicesOfToken(db, id))
  for (const id of replaced) revokeShellToken(db, id, t.now)
  const id = Number(stmt(db, `INSERT INTO shell_tokens (owner_id, token_hash, device, device_name, platform, app_version, created_at, expires_at)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?)`).run(t.ownerId, t.tokenHash, t.device, t.deviceName, t.platform, t.appVersion, t.now, t.expiresAt).lastInsertRowid)
  return { id, replaced, droppedPush }
}

/** The live (unrevoked, unexpired) token with this digest, or undefined. */
export const liveShellToken = (db: Db, tokenHash: string, now: string): ShellTokenRow | undefined =>
  stmt<[string, string], ShellTokenRow>(db, `SELECT id, owner_id, device, device_name, platform, app_version, created_at, expires_at, revoked_at
    FROM shell_tokens WHERE token_hash = ? AND revoked_at IS NULL AND expires_at > ?`).get(tokenHash, now)

export const shellTokenById = (db: Db, id: number): ShellTokenRow | undefined =>
  stmt<[number], ShellTokenRow>(db, 'SELECT id, owner_id, device, device_name, platform, app_version, created_at, expires_at, revoked_at FROM shell_tokens WHERE id = ?').get(id)

/** Revoke one token and forget its push registrations (a signed-out device gets no pushes). */
export function revokeShellToken(db: Db, id: number, now: string): boolean {
  const changed = stmt(db, 'UPDATE shell_tokens SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL').run(now, id).changes > 0
  stmt(db, 'DELETE FROM shell_push_devices WHERE shell_token_id = ?').run(id)
  return changed
}

// ---- push registrations ---------------------------------------------------------------------------

export interface ShellPushRow { id: number; owner_id: number; shell_token_id: number; push_token: string; platform: string; created_at: string }

/** A push token belongs to one installation at a time: registering it again moves it to the caller. */
export function registerShellPush(db: Db, ownerId: number, shellTokenId: number, pushToken: string, platform: string, now: string): void {
  stmt(db, `INSERT INTO shell_push_devices (owner_id, shell_token_id, push_token, platform, created_at) VALUES (?, ?, ?, ?, ?)
    ON CONFLICT (push_token) DO UPDATE SET owner_id = excluded.owner_id, shell_token_id = excluded.shell_token_id, platform = excluded.platform`)
    .run(ownerId, shellTokenId, pushToken, platform, now)
}

/** False when the push token is not registered to this account: another account's is never touched. */
export const unregisterShellPush = (db: Db, ownerId: number, pushToken: string): boolean =>
  stmt(db, 'DELETE FROM shell_push_devices WHERE push_token = ? AND owner_id = ?').run(pushToken, ownerId).changes > 0

/** The push registrations of one device's sign-in. */
export const pushDevicesOfToken = (db: Db, shellTokenId: number): ShellPushRow[] =>
  stmt<[number], ShellPushRow>(db, 'SELECT * FROM shell_push_devices WHERE shell_token_id = ? ORDER BY id').all(shellTokenId)

// ---- handoff nonces ------------------------------------------------------------------------------

/** Store a new nonce (by digest); the token's expired nonces are dropped on the way (they can never be used). */
export function insertHandoff(db: Db, ownerId: number, shellTokenId: number, nonceHash: string, now: string, expiresAt: string): void {
  stmt(db, 'DELETE FROM shell_handoffs WHERE shell_token_id = ? AND expires_at <= ?').run(shellTokenId, now)
  stmt(db, 'INSERT INTO shell_handoffs (owner_id, shell_token_id, nonce_hash, created_at, expires_at) VALUES (?, ?, ?, ?, ?)')
    .run(ownerId, shellTokenId, nonceHash, now, expiresAt)
}

export interface HandoffClaim { id: number; owner_id: number; shell_token_id: number }

/**
 * Spend a nonce: succeeds once, while it is unexpired and its shell token is still live. The
 * UPDATE … WHERE used_at IS NULL is the single-use guarantee (one write transaction at a time).
 */
export function claimHandoff(db: Db, nonceHash: string, now: string): HandoffClaim | undefined {
  const row = stmt<[string, string, string], HandoffClaim>(db, `SELECT h.id, h.owner_id, h.shell_token_id FROM shell_handoffs h
    JOIN shell_tokens t ON t.id = h.shell_token_id
    WHERE h.nonce_hash = ? AND h.used_at IS NULL AND h.expires_at > ? AND t.revoked_at IS NULL AND t.expires_at > ?`).get(nonceHash, now, now)
  if (!row) return undefined
  const won = stmt(db, 'UPDATE shell_handoffs SET used_at = ? WHERE id = ? AND used_at IS NULL').run(now, row.id).changes > 0
  return won ? row : undefined
}

/** Remember the web session a redeemed nonce started, so signing the device out ends it. */
export const setHandoffSession = (db: Db, handoffId: number, sessionId: number): void => {
  stmt(db, 'UPDATE shell_handoffs SET session_id = ? WHERE id = ?').run(sessionId, handoffId)
}

/** The web sessions started through a shell token's handoffs. */
export const handoffSessionsOf = (db: Db, shellTokenIds: readonly number[]): number[] =>
  shellTokenIds.flatMap((id) => stmt<[number], number>(db, 'SELECT session_id FROM shell_handoffs WHERE shell_token_id = ? AND session_id IS NOT NULL').pluck().all(id))
