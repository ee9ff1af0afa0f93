/** The event outbox: events are inserted inside the same transaction as the change that caused them. */
import type { Db } from './db.ts'
import { nowIso } from './db.ts'

export interface OutboxEvent {
  id: number
  owner_id: number
  store_id: number | null
  event: string
  data: Record<string, unknown>
  created_at: string
}

export interface NewEvent { ownerId: number; storeId: number | null; event: string; data: Record<string, unknown> }

const stmts = new WeakMap<Db, import('better-sqlite3').Statement<unknown[]>>()

/** Insert an event row; call only inside a transaction that also writes the change. */
export function appendEvent(db: Db, e: NewEvent): OutboxEvent {
  let ins = stmts.get(db)
  if (!ins) stmts.set(db, (ins = db.prepare('INSERT INTO outbox (owner_id, store_id, event, data, created_at) VALUES (?, ?, ?, ?, ?)')))
  const created_at = nowIso()
  const r = ins.run(e.ownerId, e.storeId, e.event, JSON.stringify(e.data), created_at)
  return { id: Number(r.lastInsertRowid), owner_id: e.ownerId, store_id: e.storeId, event: e.event, data: e.data, created_at }
}
