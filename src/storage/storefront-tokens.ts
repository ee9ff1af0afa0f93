/**
 * Storefront tokens in SQLite (api-v1 §4.3, §5; docs/storefront.md "Tokens"): only a hash of each
 * token is kept. Writes are called inside committer transactions (`svc.committer.write`).
 */
import { perDb, type Db } from './db.ts'

export interface StorefrontTokenRow { id: number; scopes: string; revoked_at: string | null; created_at: string }

function prepare(db: Db) {
  return {
    list: db.prepare<[number], StorefrontTokenRow>('SELECT id, scopes, revoked_at, created_at FROM storefront_tokens WHERE store_id = ? ORDER BY id'),
    insert: db.prepare<[number, string, string, string], StorefrontTokenRow>(
      'INSERT INTO storefront_tokens (store_id, token_hash, scopes, created_at) VALUES (?, ?, ?, ?) RETURNING id, scopes, revoked_at, created_at'),
    revoke: db.prepare('UPDATE storefront_tokens SET revoked_at = COALESCE(revoked_at, ?) WHERE id = ? AND store_id = ?'),
  }
}

const stmts = perDb(prepare)

export const storefrontTokens = {
  /** A store's tokens, oldest first (never the tokens themselves: only their hashes are stored). */
  list: (db: Db, storeId: number): StorefrontTokenRow[] => stmts(db).list.all(storeId),
  /** Inside a write: store the hash of a new token with its scopes. */
  insert: (db: Db, storeId: number, tokenHash: string, scopes: readonly string[], now: string): StorefrontTokenRow =>
    stmts(db).insert.get(storeId, tokenHash, JSON.stringify(scopes), now)!,
  /** Inside a write: revoke one of the store's tokens (revoking twice keeps the first time); false when the store has no such token. */
  revoke: (db: Db, storeId: number, id: number, now: string): boolean => stmts(db).revoke.run(now, id, storeId).changes > 0,
}
