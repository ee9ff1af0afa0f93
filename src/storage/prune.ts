/**
 * Retention (issue 21 item 7; docs/running.md "Backups and retention"): deletes what grows
 * without bound once nobody can need it any more. Every rule keeps what is still in use:
 * a pending webhook delivery keeps all its attempts; an idempotency key lives at least 24 h (the
 * configuration refuses less); a driver's last position stays while the driver is on shift or has
 * an active delivery; a sign-in code, session or token goes only after it expired or was revoked
 * and the retention period after that has passed; an OAuth code stays while tokens granted by it
 * exist (they cascade from it).
 *
 * Times in the database are `nowIso()` text (`…+00:00`, one format), so cut-offs compare as text.
 */
import { nowIso, stmt, type Db } from './db.ts'

/** How long each kind of row is kept past the moment it stopped being needed, in ms. */
export interface Retention {
  webhookAttemptsMs: number
  driverPositionsMs: number
  idempotencyMs: number
  sessionsMs: number
  otpMs: number
}

/** The least an idempotency key is kept: a client retrying within a day must get its order back. */
export const MIN_IDEMPOTENCY_MS = 24 * 3600_000

export type PruneReport = Record<string, number>

/** One pass over every rule at `now`, atomically; the rows deleted (or positions cleared) per rule. */
export function pruneExpired(db: Db, now: Date, r: Retention): PruneReport {
  const before = (ms: number) => nowIso(now.getTime() - ms)
  const webhooks = before(r.webhookAttemptsMs)
  const sessions = before(r.sessionsMs)
  const otp = before(r.otpMs)
  const rules: Array<[string, string, unknown[]]> = [
    // Finished deliveries (and, by cascade, their attempt log) past retention; a pending one is live.
    ['webhook_deliveries', "DELETE FROM webhook_deliveries WHERE status IN ('succeeded', 'failed') AND updated_at < ?", [webhooks]],
    ['webhook_attempts', `DELETE FROM webhook_attempts WHERE created_at < ?
      AND delivery_id IN (SELECT id FROM webhook_deliveries WHERE status <> 'pending')`, [webhooks]],
    ['driver_positions', `UPDATE drivers SET lat = NULL, lng = NULL, location_updated_at = NULL
      WHERE location_updated_at < ? AND on_shift = 0
      AND NOT EXISTS (SELECT 1 FROM orders o WHERE o.driver_id = drivers.id AND o.delivery_status IN ('assigned', 'picked_up', 'out_for_delivery'))`, [before(r.driverPositionsMs)]],
    ['idempotency_keys', 'DELETE FROM idempotency_keys WHERE created_at < ?', [before(Math.max(r.idempotencyMs, MIN_IDEMPOTENCY_MS))]],
    ['customer_otps', 'DELETE FROM customer_otps WHERE expires_at < ?', [otp]],
    ['driver_login_codes', 'DELETE FROM driver_login_codes WHERE expires_at < ?', [otp]],
    // Session-bound owner tokens cascade with their session.
    ['owner_sessions', 'DELETE FROM owner_sessions WHERE expires_at < ? OR revoked_at < ?', [sessions, sessions]],
    ['owner_tokens', 'DELETE FROM owner_tokens WHERE expires_at < ? OR revoked_at < ?', [sessions, sessions]],
    ['owner_email_tokens', 'DELETE FROM owner_email_tokens WHERE expires_at < ?', [sessions]],
    // Staff, customer and driver tokens do not expire by time; revoked ones go.
    ['staff_tokens', 'DELETE FROM staff_tokens WHERE revoked_at < ?', [sessions]],
    ['customer_tokens', 'DELETE FROM customer_tokens WHERE revoked_at < ?', [sessions]],
    ['driver_tokens', 'DELETE FROM driver_tokens WHERE revoked_at < ?', [sessions]],
    ['shell_tokens', 'DELETE FROM shell_tokens WHERE expires_at < ? OR revoked_at < ?', [sessions, sessions]],
    ['shell_handoffs', 'DELETE FROM shell_handoffs WHERE expires_at < ?', [sessions]],
    ['app_tokens', 'DELETE FROM app_tokens WHERE expires_at < ? OR revoked_at < ?', [sessions, sessions]],
    ['app_session_tokens', 'DELETE FROM app_session_tokens WHERE expires_at < ? OR revoked_at < ?', [sessions, sessions]],
    ['oauth_codes', 'DELETE FROM oauth_codes WHERE expires_at < ? AND NOT EXISTS (SELECT 1 FROM app_tokens t WHERE t.grant_id = oauth_codes.id)', [sessions]],
  ]
  const report: PruneReport = {}
  // All rules or none; inside the group committer's batch this is a savepoint.
  db.transaction(() => {
    for (const [name, sql, params] of rules) report[name] = stmt(db, sql).run(...params).changes
  })()
  return report
}
