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
 *
 * The tables that grow with traffic (outbox, webhook deliveries and attempts, idempotency keys) are
 * never scanned whole: their rows get increasing ids as they are written, so the rows created before
 * a cut-off are a prefix of the id order, found by a binary search over the primary key
 * (`lastIdBefore`), and each rule reads only that prefix. After the first pass the prefix holds just
 * what is still kept (pending deliveries, recent updates), so an hourly pass costs what it deletes,
 * not what the table holds. (Were the clock ever stepped back, rows written meanwhile are merely
 * pruned a pass or so later: every rule still checks its own time column.)
 */
import { nowIso, stmt, type Db } from './db.ts'

/** How long each kind of row is kept past the moment it stopped being needed, in ms. */
export interface Retention {
  webhookAttemptsMs: number
  driverPositionsMs: number
  idempotencyMs: number
  sessionsMs: number
  otpMs: number
  /** Outbox events already fanned out to the webhook deliveries (the newest one always stays). */
  eventsMs: number
}

/** Tables pruned by id prefix; each has an integer primary key (or rowid) and `created_at`. */
type Grown = 'outbox' | 'webhook_deliveries' | 'webhook_attempts' | 'idempotency_keys'

/**
 * The largest id of `table` whose row was created before `cutoff` (0 if none), assuming ids grow
 * with `created_at`: a binary search over the primary key, ~30 indexed reads however big the table.
 */
export function lastIdBefore(db: Db, table: Grown, cutoff: string): number {
  const bounds = stmt<[], { lo: number | null; hi: number | null }>(db, `SELECT MIN(rowid) AS lo, MAX(rowid) AS hi FROM ${table}`).get()
  const firstFrom = stmt<[number], { id: number; created_at: string }>(db, `SELECT rowid AS id, created_at FROM ${table} WHERE rowid >= ? ORDER BY rowid LIMIT 1`)
  if (!bounds || bounds.lo === null || bounds.hi === null) return 0
  let found = 0
  let lo = bounds.lo
  let hi = bounds.hi
  while (lo <= hi) {
    const mid = lo + Math.floor((hi - lo) / 2)
    const row = firstFrom.get(mid)
    if (row && row.created_at < cutoff) {
      found = row.id
      lo = row.id + 1
    } else {
      hi = mid - 1
    }
  }
  return found
}

/** A stored POD photo no delivery names is an orphan once this old (its upload is long over)… */
export const POD_ORPHAN_GRACE_MS = 3600_000
/** …and is looked for among the uploads of this long before a pass (a pass runs every hour). */
export const POD_ORPHAN_LOOKBACK_MS = 48 * 3600_000

/** The least an idempotency key is kept: a client retrying within a day must get its order back. */
export const MIN_IDEMPOTENCY_MS = 24 * 3600_000

export type PruneReport = Record<string, number>

/**
 * Rows of a grown table deleted by one step at most. A backlog (the first prune after an upgrade, a
 * server that was down for weeks) is deleted in steps, each its own short transaction, so the writes
 * of everyone else interleave instead of waiting seconds behind one huge delete.
 */
export const PRUNE_CHUNK = 5000

/**
 * One step over every rule at `now`, atomically: the rows deleted (or positions cleared) per rule, and
 * whether a grown table had more past its retention than one step deletes (`more`: run another step).
 */
export function pruneStep(db: Db, now: Date, r: Retention, chunk = PRUNE_CHUNK): { report: PruneReport; more: boolean } {
  const report: PruneReport = {}
  let more = false
  // All rules or none; inside the group committer's batch this is a savepoint.
  db.transaction(() => {
    for (const [name, sql, params, chunked] of pruneRules(db, now, r, chunk)) {
      const n = stmt(db, sql).run(...params).changes
      report[name] = n
      if (chunked && n >= chunk) more = true
    }
  })()
  return { report, more }
}

/** Add one step's counts into a running total. */
export function addReport(total: PruneReport, step: PruneReport): void {
  for (const [k, n] of Object.entries(step)) total[k] = (total[k] ?? 0) + n
}

/** `DELETE` of at most `?` rows of `table` matching `where`, oldest first (the last parameter is the chunk). */
const chunkedDelete = (table: Grown, where: string): string =>
  `DELETE FROM ${table} WHERE rowid IN (SELECT rowid FROM ${table} WHERE ${where} ORDER BY rowid LIMIT ?)`

/** Each rule as [name, statement, parameters, chunked] (exported for the query-plan test). */
export function pruneRules(db: Db, now: Date, r: Retention, chunk = PRUNE_CHUNK): Array<[string, string, unknown[], boolean?]> {
  const before = (ms: number) => nowIso(now.getTime() - ms)
  const webhooks = before(r.webhookAttemptsMs)
  const sessions = before(r.sessionsMs)
  const otp = before(r.otpMs)
  const events = before(r.eventsMs)
  const idempotency = before(Math.max(r.idempotencyMs, MIN_IDEMPOTENCY_MS))
  const rules: Array<[string, string, unknown[], boolean?]> = [
    // Finished deliveries (and, by cascade, their attempt log) past retention; a pending one is live.
    // Last changed before the cut-off implies created before it: the id prefix holds them all.
    ['webhook_deliveries', chunkedDelete('webhook_deliveries', "id <= ? AND status IN ('succeeded', 'failed') AND updated_at < ?"),
      [lastIdBefore(db, 'webhook_deliveries', webhooks), webhooks, chunk], true],
    ['webhook_attempts', chunkedDelete('webhook_attempts', `id <= ? AND created_at < ?
      AND EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.id = webhook_attempts.delivery_id AND d.status <> 'pending')`),
    [lastIdBefore(db, 'webhook_attempts', webhooks), webhooks, chunk], true],
    // Events the webhook fan-out has passed (its cursor) and that are past retention. Nothing else
    // reads the outbox behind the cursor; the newest event stays (new endpoints start after it).
    ['outbox', chunkedDelete('outbox', `id <= ? AND created_at < ?
      AND id <= (SELECT last_event_id FROM webhook_cursor WHERE id = 1) AND id < (SELECT MAX(id) FROM outbox)`),
    [lastIdBefore(db, 'outbox', events), events, chunk], true],
    ['driver_positions', `DELETE FROM driver_positions WHERE location_updated_at < ?
      AND EXISTS (SELECT 1 FROM drivers d WHERE d.id = driver_positions.driver_id AND d.on_shift = 0)
      AND NOT EXISTS (SELECT 1 FROM orders o WHERE o.driver_id = driver_positions.driver_id AND o.delivery_status IN ('assigned', 'picked_up', 'out_for_delivery'))`, [before(r.driverPositionsMs)]],
    ['idempotency_keys', chunkedDelete('idempotency_keys', 'rowid <= ? AND created_at < ?'), [lastIdBefore(db, 'idempotency_keys', idempotency), idempotency, chunk], true],
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
    // Agent clients that registered themselves (RFC 7591) and were never consented to by anyone
    // (issue 36): registration is open, so what no owner took up goes after the session retention.
    ['apps', `DELETE FROM apps WHERE kind = 'agent' AND updated_at < ?
      AND NOT EXISTS (SELECT 1 FROM app_installations i WHERE i.app_id = apps.id)`, [sessions]],
    // Proof-of-delivery photos no delivery names, an hour after they were stored: an upload whose
    // order write never came (a crash between the two; src/ops/delivery/driver-app.ts). Only the last
    // two days' uploads are looked at (by index), so a pass costs a day or two of uploads, not every photo kept.
    ['pod_photos', `DELETE FROM pod_photos WHERE created_at >= ? AND created_at < ?
      AND NOT EXISTS (SELECT 1 FROM deliveries d WHERE d.order_id = pod_photos.order_id AND d.photo_path = pod_photos.path)`,
    [before(POD_ORPHAN_LOOKBACK_MS), before(POD_ORPHAN_GRACE_MS)]],
  ]
  return rules
}
