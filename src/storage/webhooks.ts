/**
 * Webhook endpoints, deliveries and attempts in SQLite (003_webhooks.sql). Reads run directly;
 * the write methods are meant to run inside `committer.write` (one group-committed transaction).
 */
import type { Statement } from 'better-sqlite3'
import type { Db } from './db.ts'
import { nowIso } from './db.ts'
import { randomBytes } from 'node:crypto'
import { subscribes } from '../domain/webhook-events.ts'
import { appsRefusal } from '../auth/account-gate.ts'

/** A delivery waiting to be sent, as an endpoint actor holds it. */
export interface Pending {
  /** webhook_deliveries.id */
  id: number
  /** `msg_…`: the body's `id` and the `webhook-id` header, the same on every attempt. */
  msgId: string
  event: string
  body: string
  /** Attempts already made. */
  attempts: number
  /** When it may be sent next (ms since the epoch). */
  dueAt: number
}

let pool = Buffer.alloc(0)
let offset = 0

/** A new delivery id: `msg_` + 128 random bits (base64url). Fixed at creation, reused by retries. */
export function newMessageId(): string {
  // Random bytes are drawn 4 KiB at a time: one call per 256 ids instead of one per id.
  if (offset + 16 > pool.length) {
    pool = randomBytes(4096)
    offset = 0
  }
  offset += 16
  return `msg_${pool.toString('base64url', offset - 16, offset)}`
}

export interface EndpointRow {
  id: number
  owner_id: number
  url: string
  events: string
  secret: string
  from_event_id: number
  paused_at: string | null
  created_at: string
  /** Health (008_webhook_health.sql), kept by the endpoint actor's circuit breaker. */
  consecutive_failures: number
  failing_since: string | null
  circuit_open_until: number | null
  disabled_at: string | null
  disabled_reason: string | null
}

/** What the circuit breaker persists about an endpoint (written in batches with the attempt records). */
export interface EndpointHealth {
  consecutiveFailures: number
  failingSince: number | null
  openUntil: number | null
  disabledAt: number | null
  disabledReason: string | null
}

export type DeliveryStatus = 'pending' | 'succeeded' | 'failed'

export interface DeliveryRow {
  id: number
  endpoint_id: number
  msg_id: string
  event_id: number | null
  event: string
  body: string
  status: DeliveryStatus
  attempts: number
  next_attempt_at: number | null
  requeued_from: number | null
  created_at: string
  updated_at: string
}

export interface AttemptRow {
  delivery_id: number
  attempt: number
  http_status: number | null
  error: string | null
  response_excerpt: string
  duration_ms: number
  created_at: string
}

export interface AttemptRecord {
  deliveryId: number
  attempt: number
  httpStatus: number | null
  error: string | null
  excerpt: string
  durationMs: number
  status: DeliveryStatus
  nextAttemptAt: number | null
}

/**
 * The JSON body of a delivery (api-v1 §6): `{id, event, created_at, data}`; `data` is spliced in as stored.
 * App deliveries (an endpoint with `app_id`, 015_apps.sql) carry `type` in place of `event` (api-v1 §6).
 */
export const deliveryBody = (msgId: string, event: string, createdAt: string, dataJson: string, key: 'event' | 'type' = 'event'): string =>
  `{"id":${JSON.stringify(msgId)},"${key}":${JSON.stringify(event)},"created_at":${JSON.stringify(createdAt)},"data":${dataJson}}`

/** The actor's view of a delivery row. */
export const pendingOf = (r: Pick<DeliveryRow, 'id' | 'msg_id' | 'event' | 'body' | 'attempts' | 'next_attempt_at'>): Pending =>
  ({ id: r.id, msgId: r.msg_id, event: r.event, body: r.body, attempts: r.attempts, dueAt: r.next_attempt_at ?? 0 })

interface OutboxRow { id: number; owner_id: number; event: string; data: string; created_at: string }

/** Outbox rows read per query by the fan-out. */
const OUTBOX_PAGE = 32

export class WebhookStore {
  private readonly s: Record<string, Statement<unknown[]>>

  constructor(private readonly db: Db) {
    const p = (sql: string) => db.prepare(sql) as Statement<unknown[]>
    this.s = {
      endpoint: p('SELECT * FROM webhook_endpoints WHERE id = ?'),
      // Apps' delivery endpoints (app_id set, 015_apps.sql) are not the developer's own endpoints.
      owned: p('SELECT * FROM webhook_endpoints WHERE id = ? AND owner_id = ? AND app_id IS NULL'),
      page: p('SELECT * FROM webhook_endpoints WHERE owner_id = ? AND app_id IS NULL ORDER BY id LIMIT ? OFFSET ?'),
      count: p('SELECT COUNT(*) FROM webhook_endpoints WHERE owner_id = ? AND app_id IS NULL').pluck(),
      // A disabled endpoint gets no new deliveries until it is resumed (docs/webhooks.md "Circuit breaker").
      // Plus the delivery endpoints of the apps the account has installed (api-v1 §6 app deliveries).
      byOwner: p(`SELECT id, events, from_event_id, 0 AS app FROM webhook_endpoints WHERE owner_id = ? AND disabled_at IS NULL AND app_id IS NULL
        UNION ALL SELECT e.id, e.events, e.from_event_id, 1 AS app FROM app_installations i JOIN webhook_endpoints e ON e.app_id = i.app_id
        WHERE i.owner_id = ? AND i.status = 'active' AND e.disabled_at IS NULL`),
      insertEndpoint: p('INSERT INTO webhook_endpoints (owner_id, url, events, secret, from_event_id, paused_at, created_at) VALUES (?, ?, ?, ?, (SELECT COALESCE(MAX(id), 0) FROM outbox), NULL, ?)'),
      deleteEndpoint: p('DELETE FROM webhook_endpoints WHERE id = ?'),
      pause: p('UPDATE webhook_endpoints SET paused_at = ? WHERE id = ?'),
      // Resume also re-enables: the owner says the receiver works again (docs/webhooks.md).
      resume: p('UPDATE webhook_endpoints SET paused_at = NULL, consecutive_failures = 0, failing_since = NULL, circuit_open_until = NULL, disabled_at = NULL, disabled_reason = NULL WHERE id = ?'),
      setHealth: p('UPDATE webhook_endpoints SET consecutive_failures = ?, failing_since = ?, circuit_open_until = ?, disabled_at = ?, disabled_reason = ? WHERE id = ?'),
      pending: p("SELECT id, msg_id, event, body, attempts, next_attempt_at FROM webhook_deliveries WHERE endpoint_id = ? AND status = 'pending' AND next_attempt_at <= ? ORDER BY next_attempt_at LIMIT ?"),
      nextDueAfter: p("SELECT MIN(next_attempt_at) FROM webhook_deliveries WHERE endpoint_id = ? AND status = 'pending' AND next_attempt_at > ?").pluck(),
      pendingEndpoints: p("SELECT DISTINCT endpoint_id FROM webhook_deliveries WHERE status = 'pending'").pluck(),
      delivery: p('SELECT * FROM webhook_deliveries WHERE id = ? AND endpoint_id = ?'),
      insertDelivery: p("INSERT INTO webhook_deliveries (endpoint_id, msg_id, event_id, event, body, status, attempts, next_attempt_at, requeued_from, created_at, updated_at) VALUES (?, ?, ?, ?, ?, 'pending', 0, ?, ?, ?, ?)"),
      insertAttempt: p('INSERT INTO webhook_attempts (delivery_id, attempt, http_status, error, response_excerpt, duration_ms, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)'),
      updateDelivery: p('UPDATE webhook_deliveries SET status = ?, attempts = ?, next_attempt_at = ?, updated_at = ? WHERE id = ?'),
      cursor: p('SELECT last_event_id FROM webhook_cursor WHERE id = 1').pluck(),
      setCursor: p('UPDATE webhook_cursor SET last_event_id = ? WHERE id = 1'),
      outboxAfter: p('SELECT id, owner_id, event, data, created_at FROM outbox WHERE id > ? ORDER BY id LIMIT ?'),
      maxOutbox: p('SELECT COALESCE(MAX(id), 0) FROM outbox').pluck(),
    }
  }

  endpoint(id: number): EndpointRow | undefined {
    return this.s.endpoint!.get(id) as EndpointRow | undefined
  }

  ownedEndpoint(id: number, ownerId: number): EndpointRow | undefined {
    return this.s.owned!.get(id, ownerId) as EndpointRow | undefined
  }

  endpointsPage(ownerId: number, page: number, perPage: number): { rows: EndpointRow[]; total: number } {
    return { rows: this.s.page!.all(ownerId, perPage, (page - 1) * perPage) as EndpointRow[], total: this.s.count!.get(ownerId) as number }
  }

  /** Deliveries of an endpoint, newest first, optionally filtered. */
  deliveriesPage(db: Db, endpointId: number, page: number, perPage: number, filter: { status?: string; event?: string }): { rows: DeliveryRow[]; total: number } {
    const where = ['endpoint_id = ?']
    const args: unknown[] = [endpointId]
    if (filter.status) { where.push('status = ?'); args.push(filter.status) }
    if (filter.event) { where.push('event = ?'); args.push(filter.event) }
    const w = where.join(' AND ')
    const rows = db.prepare(`SELECT * FROM webhook_deliveries WHERE ${w} ORDER BY id DESC LIMIT ? OFFSET ?`).all(...args, perPage, (page - 1) * perPage) as DeliveryRow[]
    const total = db.prepare(`SELECT COUNT(*) FROM webhook_deliveries WHERE ${w}`).pluck().get(...args) as number
    return { rows, total }
  }

  attemptsFor(db: Db, deliveryIds: number[]): Map<number, AttemptRow[]> {
    const out = new Map<number, AttemptRow[]>()
    if (deliveryIds.length === 0) return out
    const rows = db.prepare(`SELECT delivery_id, attempt, http_status, error, response_excerpt, duration_ms, created_at FROM webhook_attempts
      WHERE delivery_id IN (${deliveryIds.map(() => '?').join(',')}) ORDER BY delivery_id, attempt, id`).all(...deliveryIds) as AttemptRow[]
    for (const r of rows) {
      let list = out.get(r.delivery_id)
      if (!list) out.set(r.delivery_id, (list = []))
      list.push(r)
    }
    return out
  }

  delivery(endpointId: number, deliveryId: number): DeliveryRow | undefined {
    return this.s.delivery!.get(deliveryId, endpointId) as DeliveryRow | undefined
  }

  /** The earliest-due pending deliveries of an endpoint due by `dueBy` (ms), at most `limit`. */
  pending(endpointId: number, limit: number, dueBy = Number.MAX_SAFE_INTEGER): Pending[] {
    return (this.s.pending!.all(endpointId, dueBy, limit) as DeliveryRow[]).map(pendingOf)
  }

  /** When the first pending delivery due after `t` is due, or null. */
  nextDueAfter(endpointId: number, t: number): number | null {
    return (this.s.nextDueAfter!.get(endpointId, t) as number | null) ?? null
  }

  /** Endpoints that still have something to deliver (woken at start). */
  pendingEndpointIds(): number[] {
    return this.s.pendingEndpoints!.all() as number[]
  }

  maxOutboxId(): number {
    return this.s.maxOutbox!.get() as number
  }

  cursor(): number {
    return this.s.cursor!.get() as number
  }

  // ---- writes: call inside committer.write ----

  endpointCount(ownerId: number): number {
    return this.s.count!.get(ownerId) as number
  }

  insertEndpoint(ownerId: number, url: string, events: string[], secret: string): number {
    return Number(this.s.insertEndpoint!.run(ownerId, url, JSON.stringify(events), secret, nowIso()).lastInsertRowid)
  }

  deleteEndpoint(id: number): void {
    this.s.deleteEndpoint!.run(id)
  }

  /** Pause, or resume — which also closes the circuit and re-enables a disabled endpoint. */
  setPaused(id: number, paused: boolean): void {
    if (paused) this.s.pause!.run(nowIso(), id)
    else this.s.resume!.run(id)
  }

  setHealth(id: number, h: EndpointHealth): void {
    const iso = (ms: number | null) => (ms === null ? null : nowIso(ms))
    this.s.setHealth!.run(h.consecutiveFailures, iso(h.failingSince), h.openUntil, iso(h.disabledAt), h.disabledReason, id)
  }

  /** A new pending delivery, due now; `createdAt` is the event's time (body `created_at`). */
  insertDelivery(endpointId: number, event: string, createdAt: string, dataJson: string, opts: { eventId?: number | null; requeuedFrom?: number | null; now?: number; nowIso?: string; app?: boolean } = {}): Pending {
    const now = opts.now ?? Date.now()
    const msgId = newMessageId()
    const body = deliveryBody(msgId, event, createdAt, dataJson, opts.app ? 'type' : 'event')
    const iso = opts.nowIso ?? nowIso(now)
    const id = Number(this.s.insertDelivery!.run(endpointId, msgId, opts.eventId ?? null, event, body, now, opts.requeuedFrom ?? null, iso, iso).lastInsertRowid)
    return { id, msgId, event, body, attempts: 0, dueAt: now }
  }

  recordAttempt(r: AttemptRecord): void {
    const now = nowIso()
    this.s.insertAttempt!.run(r.deliveryId, r.attempt, r.httpStatus, r.error, r.excerpt, r.durationMs, now)
    this.s.updateDelivery!.run(r.status, r.attempt, r.nextAttemptAt, now, r.deliveryId)
  }

  /**
   * Fan-out step: turn up to `limit` outbox rows after the cursor into delivery rows for every
   * matching endpoint of their owner, and advance the cursor — all in the caller's transaction.
   * Stops after the event that brings the delivery rows written to `maxRows` (at least one event
   * is done, whole: the cursor moves over complete events only), so one account's burst of events
   * × endpoints is spread over several transactions instead of holding up one (docs/webhooks.md).
   */
  fanout(limit: number, maxRows = Number.POSITIVE_INFINITY, now = Date.now()): { byEndpoint: Map<number, Pending[]>; more: boolean; cursor: number } {
    const cursor = this.cursor()
    const byEndpoint = new Map<number, Pending[]>()
    const endpointsOf = new Map<number, Array<{ id: number; patterns: Set<string>; from: number; app: boolean }>>()
    const iso = nowIso(now)
    let written = 0
    let read = 0
    let last = cursor
    let more = false
    // In pages: a slice that stops after a few events must not read (and parse) hundreds.
    pages: for (;;) {
      const page = Math.min(OUTBOX_PAGE, limit - read)
      const rows = this.s.outboxAfter!.all(last, page) as OutboxRow[]
      for (const e of rows) {
        if (written >= maxRows) { more = true; break pages }
        last = e.id
        read++
        let eps = endpointsOf.get(e.owner_id)
        if (!eps) {
          const rows = this.s.byOwner!.all(e.owner_id, e.owner_id) as Array<{ id: number; events: string; from_event_id: number; app: number }>
          // While the account's plan lacks `apps`, its events are not addressed to its apps at all:
          // dropped, not held (docs/apps.md "When the plan lacks apps"); deliveries already queued
          // carry events from before and finish as usual.
          const apps = rows.some((r) => r.app === 1) && appsRefusal(this.db, e.owner_id) === null
          eps = rows.filter((r) => r.app === 0 || apps)
            .map((r) => ({ id: r.id, patterns: new Set(JSON.parse(r.events) as string[]), from: r.from_event_id, app: r.app === 1 }))
          endpointsOf.set(e.owner_id, eps)
        }
        for (const ep of eps) {
          if (e.id <= ep.from || !subscribes(ep.patterns, e.event)) continue
          const p = this.insertDelivery(ep.id, e.event, e.created_at, e.data, { eventId: e.id, now, nowIso: iso, app: ep.app })
          written++
          let list = byEndpoint.get(ep.id)
          if (!list) byEndpoint.set(ep.id, (list = []))
          list.push(p)
        }
      }
      if (rows.length < page) break
      if (read >= limit) { more = true; break }
    }
    if (last !== cursor) this.s.setCursor!.run(last)
    return { byEndpoint, more, cursor: last }
  }

}
