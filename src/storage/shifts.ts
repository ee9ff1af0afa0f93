/**
 * Cash shifts (issue 17 item 3; docs/operations.md "Cash shifts"; migration 017). SQL for shifts
 * lives here only.
 */
import { stmt, type Db } from './db.ts'
import type { ShiftFigures } from '../domain/shifts.ts'

/** The default register of a store that has one drawer. */
export const DEFAULT_REGISTER = 'main'

/**
 * The open shift of a store's register, if any. A cash payment or refund written in the same
 * transaction names it, so the shift's expected cash is a plain sum over its rows.
 */
export function openShiftId(db: Db, storeId: number, register: string = DEFAULT_REGISTER): number | null {
  const row = stmt<[number, string], { id: number }>(db, 'SELECT id FROM shifts WHERE store_id = ? AND register = ? AND closed_at IS NULL').get(storeId, register)
  return row?.id ?? null
}

export interface ShiftRow {
  id: number
  store_id: number
  register: string
  opened_by_staff_id: number | null
  closed_by_staff_id: number | null
  opening_float: number
  expected_cash: number | null
  counted_cash: number | null
  note: string | null
  opened_at: string
  closed_at: string | null
}

/** A shift with the sums of its payments and refunds (cents). */
export type ShiftWithFigures = ShiftRow & { cash_taken: number; card_taken: number; cash_refunded: number }

/** Sums over the rows that name the shift; only money that actually moved counts. */
const FIGURES = `
  (SELECT COALESCE(SUM(p.amount + p.tip_amount), 0) FROM payments p WHERE p.shift_id = s.id AND p.method = 'cash' AND p.status = 'succeeded') AS cash_taken,
  (SELECT COALESCE(SUM(p.amount + p.tip_amount), 0) FROM payments p WHERE p.shift_id = s.id AND p.method = 'card' AND p.status = 'succeeded') AS card_taken,
  (SELECT COALESCE(SUM(r.amount), 0) FROM refunds r WHERE r.shift_id = s.id AND r.method = 'cash' AND r.status = 'completed') AS cash_refunded`

export const figuresOf = (r: ShiftWithFigures): ShiftFigures => ({
  openingFloat: r.opening_float, cashTaken: r.cash_taken, cardTaken: r.card_taken, cashRefunded: r.cash_refunded,
})

/** One shift of a store, with its sums; another store's shift reads as none. */
export function shiftInStore(db: Db, storeId: number, shiftId: number): ShiftWithFigures | undefined {
  return stmt<[number, number], ShiftWithFigures>(db, `SELECT s.*, ${FIGURES} FROM shifts s WHERE s.id = ? AND s.store_id = ?`).get(shiftId, storeId)
}

export interface ShiftFilter { status?: 'open' | 'closed' | undefined; register?: string | undefined }

/** A page of a store's shifts, newest first, with their sums. */
export function shiftPage(db: Db, storeId: number, page: number, perPage: number, f: ShiftFilter): { data: ShiftWithFigures[]; total: number } {
  const where = ['s.store_id = ?']
  const args: unknown[] = [storeId]
  if (f.status === 'open') where.push('s.closed_at IS NULL')
  if (f.status === 'closed') where.push('s.closed_at IS NOT NULL')
  if (f.register !== undefined) { where.push('s.register = ?'); args.push(f.register) }
  const w = where.join(' AND ')
  const total = stmt(db, `SELECT COUNT(*) FROM shifts s WHERE ${w}`).pluck().get(...args) as number
  const data = stmt<unknown[], ShiftWithFigures>(db, `SELECT s.*, ${FIGURES} FROM shifts s WHERE ${w} ORDER BY s.id DESC LIMIT ? OFFSET ?`)
    .all(...args, perPage, (page - 1) * perPage)
  return { data, total }
}

export interface NewShift { storeId: number; register: string; staffId: number | null; openingFloat: number; now: string }

/** Insert an open shift; the partial unique index `shifts_one_open` refuses a second one per register. */
export function insertShift(db: Db, s: NewShift): number {
  return Number(stmt(db, 'INSERT INTO shifts (store_id, register, opened_by_staff_id, opening_float, opened_at) VALUES (?, ?, ?, ?, ?)')
    .run(s.storeId, s.register, s.staffId, s.openingFloat, s.now).lastInsertRowid)
}

export interface ShiftClose { staffId: number | null; expectedCash: number; countedCash: number; note: string | null; now: string }

/** Close an open shift; false when it was already closed. */
export function closeShift(db: Db, shiftId: number, c: ShiftClose): boolean {
  return stmt(db, 'UPDATE shifts SET closed_by_staff_id = ?, expected_cash = ?, counted_cash = ?, note = ?, closed_at = ? WHERE id = ? AND closed_at IS NULL')
    .run(c.staffId, c.expectedCash, c.countedCash, c.note, c.now, shiftId).changes === 1
}

/** Did this error come from the one-open-shift-per-register index? */
export const isOpenShiftConflict = (err: unknown): boolean =>
  err instanceof Error && (err as { code?: string }).code === 'SQLITE_CONSTRAINT_UNIQUE' && err.message.includes('shifts.')
