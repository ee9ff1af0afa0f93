/**
 * Owner API tokens managed over the API (api-v1 §5 "issued by the dashboard; shown once";
 * docs/dashboard.md "API tokens"): only a SHA-256 of each token is kept. Tokens a dashboard session
 * minted for itself (`session_id` set, docs/dashboard.md "Signing in") are not listed here and
 * cannot be revoked here: they end with their session.
 * Writes are called inside committer transactions (`svc.committer.write`).
 */
import type { Db } from './db.ts'
import { stmt } from './db.ts'

export interface OwnerTokenRow {
  id: number; name: string; token_prefix: string; capabilities: string
  expires_at: string | null; created_at: string; revoked_at: string | null
}

const COLS = 'id, name, token_prefix, capabilities, expires_at, created_at, revoked_at'
/** Tokens of the owner's own making (not a dashboard session's). */
const OWN = 'owner_id = ? AND session_id IS NULL'

export const ownerTokens = {
  /** The owner's tokens, newest first, revoked ones included (for the record), at most 500. */
  list: (db: Db, ownerId: number): OwnerTokenRow[] =>
    stmt<[number], OwnerTokenRow>(db, `SELECT ${COLS} FROM owner_tokens WHERE ${OWN} ORDER BY id DESC LIMIT 500`).all(ownerId),
  /** Inside a write: store the hash of a new token. */
  insert: (db: Db, t: { ownerId: number; hash: string; prefix: string; name: string; capabilities: readonly string[]; expiresAt: string | null; now: string }): OwnerTokenRow =>
    stmt<unknown[], OwnerTokenRow>(db, `INSERT INTO owner_tokens (owner_id, token_hash, token_prefix, name, capabilities, expires_at, created_at)
      VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING ${COLS}`).get(t.ownerId, t.hash, t.prefix, t.name, JSON.stringify(t.capabilities), t.expiresAt, t.now)!,
  /** Inside a write: revoke one of the owner's tokens (revoking twice keeps the first time); false when the owner has no such token. */
  revoke: (db: Db, ownerId: number, id: number, now: string): boolean =>
    stmt(db, `UPDATE owner_tokens SET revoked_at = COALESCE(revoked_at, ?) WHERE id = ? AND ${OWN}`).run(now, id, ownerId).changes > 0,
}
