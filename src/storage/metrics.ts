/**
 * Reads for `/metrics` (src/metrics/registry.ts), run on scrape only, never on a request's path.
 */
import { stmt, type Db } from './db.ts'

/**
 * The durable webhook queue (docs/metrics.md `dispatch_webhook_queue_depth`): pending deliveries
 * due now (being sent or waiting for a permit) and those waiting for a retry time. One pass over
 * the partial index of pending rows (migration 003), so its cost follows the backlog, not history.
 */
export function webhookQueueDepth(db: Db, now: number): { due: number; scheduled: number } {
  const r = stmt<[number], { due: number | null; total: number }>(db,
    `SELECT SUM(CASE WHEN next_attempt_at IS NULL OR next_attempt_at <= ? THEN 1 ELSE 0 END) AS due, COUNT(*) AS total
       FROM webhook_deliveries INDEXED BY webhook_deliveries_pending WHERE status = 'pending'`).get(now)!
  const due = r.due ?? 0
  return { due, scheduled: r.total - due }
}
