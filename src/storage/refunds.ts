/**
 * Refunds (issue 17 item 2; migration 017; docs/operations.md "Refunds"). All SQL of refunds lives
 * here: the rows an order-actor refund decision writes (through storage/payments.ts `writeRows`),
 * the refund book the decision is checked against, and the reads behind the refund views.
 */
import { stmt, type Db } from './db.ts'
import { openShiftId } from './shifts.ts'
import type { LinePick, PaymentMethod } from '../domain/payments.ts'
import type { RefundBook } from '../domain/refunds.ts'

export type RefundStatus = 'pending' | 'completed' | 'failed'

export interface RefundRow {
  id: number
  order_id: number
  store_id: number
  payment_id: number | null
  method: PaymentMethod
  amount: number
  lines: string | null
  reason: string | null
  status: RefundStatus
  provider_ref: string | null
  shift_id: number | null
  staff_id: number | null
  created_at: string
  completed_at: string | null
}

export interface NewRefund {
  paymentId: number
  method: PaymentMethod
  amount: number
  lines: LinePick[] | null
  reason: string | null
  /** Online refunds start pending (the provider is asked after the row reserves the amount). */
  status: 'pending' | 'completed'
  /** Cash: the register whose open shift (if any) pays it out. */
  register: string | null
  staffId: number | null
}

/** Rows a refund decision writes (members of storage/payments.ts `RowWrite`). */
export type RefundWrite =
  | { kind: 'refund.insert'; refund: NewRefund }
  | { kind: 'refund.settle'; id: number; status: 'completed' | 'failed'; providerRef: string | null }

/** Write one refund row inside the order actor's transaction; returns its id. */
export function writeRefund(db: Db, orderId: number, storeId: number, r: RefundWrite, now: string): number {
  if (r.kind === 'refund.settle') {
    // RETURNING: the amount of the row this settle changed (none when it was settled already), without reading it again.
    const amount = stmt<unknown[], number>(db, "UPDATE refunds SET status = ?, provider_ref = COALESCE(?, provider_ref), completed_at = ? WHERE id = ? AND order_id = ? AND status = 'pending' RETURNING amount")
      .pluck().get(r.status, r.providerRef, now, r.id, orderId)
    if (amount !== undefined && r.status === 'completed') addRefunded(db, orderId, amount)
    return r.id
  }
  const f = r.refund
  // Looked up in the refund's own transaction, like a payment's: a shift closing meanwhile cannot miss it.
  const shiftId = f.method === 'cash' && f.register !== null ? openShiftId(db, storeId, f.register) : null
  const lines = f.lines ? JSON.stringify(f.lines.map((l) => ({ line_id: l.lineId, quantity: l.quantity }))) : null
  const id = Number(stmt(db, `INSERT INTO refunds (order_id, store_id, payment_id, method, amount, lines, reason, status, shift_id, staff_id, created_at, completed_at)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`)
    .run(orderId, storeId, f.paymentId, f.method, f.amount, lines, f.reason, f.status, shiftId, f.staffId, now, f.status === 'completed' ? now : null).lastInsertRowid)
  if (f.status === 'completed') addRefunded(db, orderId, f.amount)
  return id
}

/** The order row's `refunded` (migration 023) follows its completed refunds, in their transaction. */
function addRefunded(db: Db, orderId: number, cents: number): void {
  stmt(db, 'UPDATE orders SET refunded = refunded + ? WHERE id = ?').run(cents, orderId)
}

/** What the order's succeeded payments took and what its refunds (completed or pending) gave back. */
export function refundBook(db: Db, orderId: number): RefundBook {
  const payments = stmt<[number], { id: number; method: PaymentMethod; amount: number; refunded: number }>(db, `
    SELECT p.id, p.method, p.amount,
      (SELECT COALESCE(SUM(r.amount), 0) FROM refunds r WHERE r.payment_id = p.id AND r.status != 'failed') AS refunded
    FROM payments p WHERE p.order_id = ? AND p.status = 'succeeded' ORDER BY p.id`).all(orderId)
  const refundedUnits: Record<number, number> = {}
  for (const r of stmt<[number], { lines: string }>(db, "SELECT lines FROM refunds WHERE order_id = ? AND status != 'failed' AND lines IS NOT NULL").all(orderId)) {
    for (const l of JSON.parse(r.lines) as Array<{ line_id: number; quantity: number }>) refundedUnits[l.line_id] = (refundedUnits[l.line_id] ?? 0) + l.quantity
  }
  return { payments, refundedUnits }
}

/** Online refunds still pending that were reserved before `createdBefore`, oldest first (index: migration 029). */
export function staleOnlineRefunds(db: Db, createdBefore: string, limit: number): Array<{ id: number; order_id: number }> {
  return stmt<[string, number], { id: number; order_id: number }>(db, "SELECT id, order_id FROM refunds WHERE status = 'pending' AND method = 'online' AND created_at < ? ORDER BY id LIMIT ?")
    .all(createdBefore, limit)
}

export function refundsOf(db: Db, orderId: number): RefundRow[] {
  return stmt<[number], RefundRow>(db, 'SELECT * FROM refunds WHERE order_id = ? ORDER BY id').all(orderId)
}

export function refundOf(db: Db, orderId: number, id: number): RefundRow | undefined {
  return stmt<[number, number], RefundRow>(db, 'SELECT * FROM refunds WHERE id = ? AND order_id = ?').get(id, orderId)
}
