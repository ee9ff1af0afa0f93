/**
 * The checks of the chaos run (issue 21 item 3). `afterKill` reads the database file read-only
 * while no server runs: integrity, every acknowledged write there exactly once, no write twice.
 * `afterRestart` asks the restarted server and the receiver: idempotent retries answer the original
 * order, every event committed before the kill reaches the receiver under one webhook-id.
 */
import Database from 'better-sqlite3'
import { latOf, type Ledger, type SentOrder } from './chaos-ledger.ts'
import type { ChaosReceiver } from './chaos-receiver.ts'

export interface KillSnapshot {
  integrity: string
  /** Outbox events of the account (after the endpoint was registered) committed before the kill. */
  outboxIds: number[]
  /** Orders of this run in the file, by note. */
  byNote: Map<string, number>
  checkedWrites: number
}

const readOnly = <T>(dbPath: string, fn: (db: Database.Database) => T): T => {
  const db = new Database(dbPath, { readonly: true, fileMustExist: true })
  try { return fn(db) } finally { db.close() }
}

/**
 * Compare the database with the ledger; violations are pushed to `out`. Writes that were in flight
 * are resolved to what the file holds (they may or may not have happened; from now on they count
 * as done if they did), so later cycles check them too.
 */
export function afterKill(dbPath: string, ledger: Ledger, ownerId: number, outboxAfter: number, out: string[]): KillSnapshot {
  return readOnly(dbPath, (db) => {
    const integrity = (db.pragma('integrity_check', { simple: true }) as string)
    if (integrity !== 'ok') out.push(`PRAGMA integrity_check: ${integrity}`)
    const rows = db.prepare('SELECT id, note FROM orders WHERE note LIKE ?').all(`${ledger.prefix}-%`) as Array<{ id: number; note: string }>
    const byNote = new Map<string, number>()
    for (const r of rows) {
      if (byNote.has(r.note)) out.push(`order ${r.note} exists twice (ids ${byNote.get(r.note)} and ${r.id})`)
      byNote.set(r.note, r.id)
    }
    let checked = 0
    for (const o of ledger.orders) {
      const id = byNote.get(o.note)
      if (o.id !== null) {
        checked++
        if (id !== o.id) out.push(`acknowledged order ${o.id} (${o.note}) ${id === undefined ? 'is missing' : `is stored as ${id}`}`)
      } else if (id !== undefined && o.key === null) {
        o.id = id // an unacknowledged create that did commit: it must stay exactly once from now on
      }
    }
    const status = db.prepare('SELECT status FROM orders WHERE id = ?').pluck()
    for (const s of ledger.statuses) {
      checked++
      const now = status.get(s.orderId) as string | undefined
      if (now !== s.acked && now !== s.inFlight) out.push(`order ${s.orderId}: status ${now}, acknowledged ${s.acked}${s.inFlight ? ` (or in flight ${s.inFlight})` : ''}`)
      else if (now !== s.acked) { s.acked = now; ledger.statusEvents.add(`${s.orderId}:${now}`) }
      s.inFlight = null
    }
    const kds = db.prepare('SELECT kds_state FROM order_lines WHERE id = ?').pluck()
    for (const l of ledger.lines) {
      checked++
      const now = kds.get(l.id) as string | undefined
      if (now !== l.acked && now !== l.inFlight) out.push(`KDS line ${l.id}: ${now}, acknowledged ${l.acked}${l.inFlight ? ` (or in flight ${l.inFlight})` : ''}`)
      else l.acked = now
      l.inFlight = null
    }
    const lat = db.prepare('SELECT p.lat FROM drivers d LEFT JOIN driver_positions p ON p.driver_id = d.id WHERE d.id = ?').pluck()
    for (const d of ledger.drivers) {
      if (d.ackedSeq < 0) continue
      checked++
      const stored = lat.get(d.id) as number | null
      if (stored === null || stored < latOf(d.ackedSeq) - 1e-9) out.push(`driver ${d.id}: stored lat ${stored}, older than the acknowledged position ${latOf(d.ackedSeq)} (seq ${d.ackedSeq})`)
    }
    // Each acknowledged write committed its event with it (the transactional outbox).
    const created = new Set(db.prepare("SELECT json_extract(data, '$.order_id') FROM outbox WHERE owner_id = ? AND event = 'order.created'").pluck().all(ownerId) as number[])
    for (const o of ledger.orders) if (o.id !== null && !created.has(o.id)) out.push(`order ${o.id} has no order.created event in the outbox`)
    const changed = new Set((db.prepare("SELECT json_extract(data, '$.order_id') || ':' || json_extract(data, '$.status') FROM outbox WHERE owner_id = ? AND event = 'order.status_changed'").pluck().all(ownerId) as string[]))
    for (const k of ledger.statusEvents) if (!changed.has(k)) out.push(`acknowledged status change ${k} has no order.status_changed event in the outbox`)
    const outboxIds = db.prepare('SELECT id FROM outbox WHERE owner_id = ? AND id > ?').pluck().all(ownerId, outboxAfter) as number[]
    return { integrity, outboxIds, byNote, checkedWrites: checked }
  })
}

interface Post { status: number; replayed: string | undefined; id: number | undefined; body: string }
export type Poster = (path: string, body: string, key: string) => Promise<Post>

/**
 * Idempotent retries across the restart (docs/orders.md "Idempotency"): the same key and body
 * answer 200 with the original order and `Idempotent-Replayed: true` — for every create of this
 * cycle that was in flight at the kill and had committed, and for a sample of acknowledged ones. A
 * create that had not committed is made now (no replay header), once.
 */
export async function retryIdempotent(post: Poster, storeId: number, orders: SentOrder[], snap: KillSnapshot, out: string[]): Promise<number> {
  let n = 0
  for (const o of orders) {
    const stored = snap.byNote.get(o.note)
    const original = o.id ?? stored ?? null
    const r = await post(`/restaurants/${storeId}/orders`, o.body, o.key!)
    n++
    if (r.status !== 200) { out.push(`idempotent retry ${o.key}: ${r.status} ${r.body.slice(0, 200)}`); continue }
    if (original !== null) {
      if (r.replayed !== 'true' || r.id !== original) out.push(`idempotent retry ${o.key}: id ${r.id}, Idempotent-Replayed ${r.replayed}; the original is ${original}`)
    } else if (r.replayed === 'true') {
      out.push(`idempotent retry ${o.key}: replayed order ${r.id}, but no order with its note was in the file at the kill`)
    }
    o.id = r.id ?? null
  }
  return n
}

/**
 * Every event in `outboxIds` reaches the receiver (a 2xx answer) within `ms`, and no change ever
 * arrived under two webhook-ids. Returns how many events were confirmed.
 */
export async function webhooksDelivered(dbPath: string, endpointId: number, outboxIds: number[], rcv: ChaosReceiver, ms: number, out: string[]): Promise<number> {
  const deadline = Date.now() + ms
  let missing: number[] = outboxIds
  let msgOf = new Map<number, string>()
  for (;;) {
    msgOf = readOnly(dbPath, (db) => new Map((db.prepare('SELECT event_id, msg_id FROM webhook_deliveries WHERE endpoint_id = ? AND event_id IS NOT NULL').all(endpointId) as Array<{ event_id: number; msg_id: string }>).map((r) => [r.event_id, r.msg_id])))
    missing = missing.filter((id) => !rcv.byId.get(msgOf.get(id) ?? '')?.accepted)
    if (missing.length === 0 || Date.now() > deadline) break
    await new Promise((r) => setTimeout(r, 100))
  }
  if (missing.length) {
    // What the server's log says about them, to tell a lost event from one that is still retrying.
    const rows = readOnly(dbPath, (db) => missing.slice(0, 5).map((id) => (db.prepare('SELECT event_id, msg_id, event, status, attempts, next_attempt_at FROM webhook_deliveries WHERE endpoint_id = ? AND event_id = ?').get(endpointId, id) as Record<string, unknown> | undefined) ?? { event_id: id, delivery: 'none' }))
    const seen = rows.map((r) => ({ ...r, receiverRequests: typeof r.msg_id === 'string' ? rcv.byId.get(r.msg_id)?.requests ?? 0 : 0 }))
    out.push(`${missing.length} committed events never reached the receiver within ${ms} ms: ${JSON.stringify(seen)}`)
  }
  const known = new Set(msgOf.values())
  const phantom = [...rcv.byId.keys()].filter((id) => !known.has(id))
  if (phantom.length) out.push(`${phantom.length} webhook-ids reached the receiver that no delivery row names (${phantom.slice(0, 5).join(', ')})`)
  for (const ids of rcv.duplicates()) out.push(`one change arrived under ${ids.length} webhook-ids: ${ids.join(', ')}`)
  out.push(...rcv.problems.splice(0))
  return outboxIds.length - missing.length
}

/**
 * The restarted server serves what the file holds: a sample of acknowledged orders answer 200 from
 * `GET …/orders/{id}` with the acknowledged kitchen status (for the ones whose status was walked).
 */
export async function servedAfterRestart(url: string, token: string, storeId: number, ledger: Ledger, rand: () => number, n: number, out: string[]): Promise<number> {
  const acked = ledger.acknowledged()
  const statusOf = new Map(ledger.statuses.map((s) => [s.orderId, s.acked]))
  let checked = 0
  for (let i = 0; i < n && acked.length; i++) {
    const o = acked[Math.floor(rand() * acked.length)]!
    const r = await fetch(`${url}/api/v1/restaurants/${storeId}/orders/${o.id}`, { headers: { authorization: `Bearer ${token}` } })
    const body = (await r.json()) as { id?: number; note?: string; status?: string }
    checked++
    if (r.status !== 200 || body.id !== o.id || body.note !== o.note) out.push(`GET order ${o.id} after restart: ${r.status} ${JSON.stringify(body).slice(0, 160)}`)
    else if (statusOf.has(o.id!) && body.status !== statusOf.get(o.id!)) out.push(`GET order ${o.id} after restart: status ${body.status}, acknowledged ${statusOf.get(o.id!)}`)
  }
  return checked
}
