/**
 * An app's delivery endpoint (015_apps.sql `webhook_endpoints.app_id`; docs/apps.md "Uninstall and
 * webhooks"): the webhook_endpoints row through which the webhook machinery delivers to the app's
 * webhook URL, signed with the app's `whsec_` secret. Created when the app is first installed and
 * brought up to date (url, events, secret) whenever it is used here. Call inside a transaction.
 */
import { nowIso, stmt, type Db } from './db.ts'
import type { AppRow } from './apps.ts'

interface Row { id: number; url: string; events: string; secret: string }

type AppWebhook = Pick<AppRow, 'id' | 'developer_id' | 'webhook_url' | 'webhook_events' | 'webhook_secret'>

/** The app's endpoint id, or null when the app has no webhook URL. */
export const ensureAppEndpoint = (db: Db, app: AppWebhook): number | null => syncAppEndpointRow(db, app).id

/**
 * Create or update the app's endpoint row; `changed` when an existing row took a new url, events or
 * secret (its actor, which holds them in memory, must then be retired: src/ops/apps/app-deliveries.ts).
 * An app without a webhook URL keeps its row, disabled, so nothing more is sent.
 */
export function syncAppEndpointRow(db: Db, app: AppWebhook): { id: number | null; changed: boolean } {
  if (!app.webhook_url) {
    const n = stmt(db, "UPDATE webhook_endpoints SET disabled_at = ?, disabled_reason = 'the app has no webhook URL' WHERE app_id = ? AND disabled_at IS NULL").run(nowIso(), app.id).changes
    return { id: null, changed: n > 0 }
  }
  const events = JSON.stringify(app.webhook_events)
  const cur = stmt<[number], Row>(db, 'SELECT id, url, events, secret FROM webhook_endpoints WHERE app_id = ?').get(app.id)
  if (!cur) {
    return { changed: false, id: Number(stmt(db, `INSERT INTO webhook_endpoints (owner_id, url, events, secret, from_event_id, paused_at, created_at, app_id)
      VALUES (?, ?, ?, ?, (SELECT COALESCE(MAX(id), 0) FROM outbox), NULL, ?, ?)`)
      .run(app.developer_id, app.webhook_url, events, app.webhook_secret, nowIso(), app.id).lastInsertRowid) }
  }
  if (cur.url === app.webhook_url && cur.events === events && cur.secret === app.webhook_secret) return { id: cur.id, changed: false }
  // A new URL re-enables a row disabled for having none; the circuit breaker's own state is kept otherwise.
  stmt(db, `UPDATE webhook_endpoints SET url = ?, events = ?, secret = ?,
    disabled_at = CASE WHEN disabled_reason = 'the app has no webhook URL' THEN NULL ELSE disabled_at END,
    disabled_reason = CASE WHEN disabled_reason = 'the app has no webhook URL' THEN NULL ELSE disabled_reason END WHERE id = ?`)
    .run(app.webhook_url, events, app.webhook_secret, cur.id)
  return { id: cur.id, changed: true }
}

/** The app's endpoint row id, if it has one. */
export const appEndpointId = (db: Db, appId: number): number | undefined =>
  stmt<[number], number>(db, 'SELECT id FROM webhook_endpoints WHERE app_id = ?').pluck().get(appId)
