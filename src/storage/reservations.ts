/**
 * Tables (rooms) and reservations: every SQL of the reservations feature (migration 018). Writes
 * are called by the store actor's shell only (actors/store-reservations.ts), inside the committer's
 * transaction; reads serve lists, availability and the actor's checks.
 */
import type { Db } from './db.ts'
import type { Hold } from '../domain/reservations.ts'

export interface TableRow {
  id: number; store_id: number; name: string; capacity: number; kind: 'table' | 'room'; active: number; created_at: string; updated_at: string
}

export interface ReservationRow {
  id: number; store_id: number; table_id: number | null; customer_id: number | null; name: string; phone: string | null; email: string | null
  party_size: number; starts_at: string; ends_at: string; status: 'booked' | 'seated' | 'completed' | 'cancelled' | 'no_show'; note: string | null
  source: 'owner' | 'staff' | 'customer'; order_id: number | null; cancel_reason: string | null; cancelled_at: string | null; seated_at: string | null
  created_at: string; updated_at: string
}

export interface TableFields { name: string; capacity: number; kind: 'table' | 'room'; active: boolean }

export const tableReads = {
  list: (db: Db, storeId: number): TableRow[] =>
    db.prepare('SELECT * FROM dining_tables WHERE store_id = ? ORDER BY name COLLATE NOCASE, id').all(storeId) as TableRow[],
  byId: (db: Db, storeId: number, id: number): TableRow | undefined =>
    db.prepare('SELECT * FROM dining_tables WHERE id = ? AND store_id = ?').get(id, storeId) as TableRow | undefined,
  /** Bookings still to come on a table (booked or seated, not yet over at `now`). */
  upcomingOn: (db: Db, tableId: number, now: string): number =>
    db.prepare("SELECT COUNT(*) FROM reservations WHERE table_id = ? AND status IN ('booked', 'seated') AND ends_at > ?").pluck().get(tableId, now) as number,
}

export const tableWrites = {
  insert: (db: Db, storeId: number, f: TableFields, now: string): TableRow =>
    db.prepare('INSERT INTO dining_tables (store_id, name, capacity, kind, active, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING *')
      .get(storeId, f.name, f.capacity, f.kind, f.active ? 1 : 0, now, now) as TableRow,
  update: (db: Db, storeId: number, id: number, f: TableFields, now: string): TableRow | undefined =>
    db.prepare('UPDATE dining_tables SET name = ?, capacity = ?, kind = ?, active = ?, updated_at = ? WHERE id = ? AND store_id = ? RETURNING *')
      .get(f.name, f.capacity, f.kind, f.active ? 1 : 0, now, id, storeId) as TableRow | undefined,
  remove: (db: Db, storeId: number, id: number): boolean =>
    db.prepare('DELETE FROM dining_tables WHERE id = ? AND store_id = ?').run(id, storeId).changes > 0,
}

/** SQLite's answer to a second table of the same name in a store (UNIQUE store_id, name NOCASE). */
export const isDuplicateTableName = (err: unknown): boolean =>
  err instanceof Error && (err as { code?: string }).code === 'SQLITE_CONSTRAINT_UNIQUE' && err.message.includes('dining_tables')

export interface ReservationFilter { from?: string; to?: string; status?: string; customerId?: number }

function where(storeId: number, f: ReservationFilter): { sql: string; args: unknown[] } {
  const parts = ['store_id = ?']
  const args: unknown[] = [storeId]
  if (f.from !== undefined) { parts.push('starts_at >= ?'); args.push(f.from) }
  if (f.to !== undefined) { parts.push('starts_at < ?'); args.push(f.to) }
  if (f.status !== undefined) { parts.push('status = ?'); args.push(f.status) }
  if (f.customerId !== undefined) { parts.push('customer_id = ?'); args.push(f.customerId) }
  return { sql: parts.join(' AND '), args }
}

export const reservationReads = {
  byId: (db: Db, storeId: number, id: number): ReservationRow | undefined =>
    db.prepare('SELECT * FROM reservations WHERE id = ? AND store_id = ?').get(id, storeId) as ReservationRow | undefined,
  /** A page in start order (the day's book reads top to bottom). */
  page(db: Db, storeId: number, f: ReservationFilter, page: number, perPage: number): { data: ReservationRow[]; total: number } {
    const w = where(storeId, f)
    const total = db.prepare(`SELECT COUNT(*) FROM reservations WHERE ${w.sql}`).pluck().get(...w.args) as number
    const data = db.prepare(`SELECT * FROM reservations WHERE ${w.sql} ORDER BY starts_at, id LIMIT ? OFFSET ?`).all(...w.args, perPage, (page - 1) * perPage) as ReservationRow[]
    return { data, total }
  },
  /** Bookings that hold a table at some point of `[from, to)`. */
  holds: (db: Db, storeId: number, from: string, to: string): Hold[] =>
    db.prepare("SELECT id, table_id, starts_at, ends_at FROM reservations WHERE store_id = ? AND status IN ('booked', 'seated') AND table_id IS NOT NULL AND starts_at < ? AND ends_at > ?")
      .all(storeId, to, from) as Hold[],
  /** A customer's bookings: those still to come first (soonest first), then past ones (latest first). */
  ofCustomer: (db: Db, storeId: number, customerId: number, now: string, limit: number): ReservationRow[] =>
    db.prepare(`SELECT * FROM reservations WHERE store_id = ? AND customer_id = ?
                ORDER BY (ends_at > ? AND status IN ('booked', 'seated')) DESC,
                         CASE WHEN ends_at > ? AND status IN ('booked', 'seated') THEN starts_at END ASC,
                         starts_at DESC, id DESC LIMIT ?`).all(storeId, customerId, now, now, limit) as ReservationRow[],
}

export type NewReservation = Omit<ReservationRow, 'id' | 'status' | 'order_id' | 'cancel_reason' | 'cancelled_at' | 'seated_at' | 'updated_at'>
/** What an edit may change. */
export type ReservationEdit = Pick<ReservationRow, 'table_id' | 'name' | 'phone' | 'email' | 'party_size' | 'starts_at' | 'ends_at' | 'note'>

export const reservationWrites = {
  insert: (db: Db, r: NewReservation): ReservationRow =>
    db.prepare(`INSERT INTO reservations (store_id, table_id, customer_id, name, phone, email, party_size, starts_at, ends_at, note, source, created_at, updated_at)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING *`)
      .get(r.store_id, r.table_id, r.customer_id, r.name, r.phone, r.email, r.party_size, r.starts_at, r.ends_at, r.note, r.source, r.created_at, r.created_at) as ReservationRow,
  edit: (db: Db, id: number, e: ReservationEdit, now: string): ReservationRow =>
    db.prepare(`UPDATE reservations SET table_id = ?, name = ?, phone = ?, email = ?, party_size = ?, starts_at = ?, ends_at = ?, note = ?, updated_at = ?
                WHERE id = ? RETURNING *`)
      .get(e.table_id, e.name, e.phone, e.email, e.party_size, e.starts_at, e.ends_at, e.note, now, id) as ReservationRow,
  status: (db: Db, id: number, s: { status: ReservationRow['status']; reason?: string | null; orderId?: number | null; tableId?: number | null }, now: string): ReservationRow =>
    db.prepare(`UPDATE reservations SET status = ?, updated_at = ?,
                  cancel_reason = CASE WHEN ? = 'cancelled' THEN ? ELSE cancel_reason END,
                  cancelled_at = CASE WHEN ? = 'cancelled' THEN ? ELSE cancelled_at END,
                  seated_at = CASE WHEN ? = 'seated' THEN ? ELSE seated_at END,
                  order_id = COALESCE(?, order_id), table_id = COALESCE(?, table_id)
                WHERE id = ? RETURNING *`)
      .get(s.status, now, s.status, s.reason ?? null, s.status, now, s.status, now, s.orderId ?? null, s.tableId ?? null, id) as ReservationRow,
}
