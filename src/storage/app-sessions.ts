/** Issued app session tokens (015_apps.sql `app_session_tokens`): their ids, so an uninstall revokes them. Call inside a write. */
import { stmt, type Db } from './db.ts'

export function insertSessionTokenRow(db: Db, r: { jti: string; installationId: number; ownerSessionId: number; issuedAt: string; expiresAt: string }): number {
  return Number(stmt(db, 'INSERT INTO app_session_tokens (jti, installation_id, owner_session_id, issued_at, expires_at) VALUES (?, ?, ?, ?, ?)')
    .run(r.jti, r.installationId, r.ownerSessionId, r.issuedAt, r.expiresAt).lastInsertRowid)
}
