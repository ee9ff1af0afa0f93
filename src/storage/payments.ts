/**
 * Payments (issue 17 item 1; migration 017; docs/operations.md "Payments"). All SQL of payments
 * lives here: the reads behind the payment and bill views, the order actor's payment book, and the
 * writer of the rows an order-actor decision carries (`RowWrite`).
 *
 * `RowWrite` is the order actor's generic way to write rows of its own in the same transaction as
 * the order update: a decision lists them as data (`Decision.rows`), the shell hands them to
 * `writeRows` inside its committer write, and the ids written come back in the reply. A new kind of
 * row an order owns (refunds, …) is one more member of the union and one more case below.
 */
import { stmt, type Db } from './db.ts'
import { openShiftId } from './shifts.ts'
import { writeRefund, type RefundWrite } from './refunds.ts'
import type { BillLine, LinePick, PaymentBook, PaymentMethod, PaymentStatus } from '../domain/payments.ts'

export interface PaymentRow {
  id: number
  order_id: number
  store_id: number
  method: PaymentMethod
  amount: number
  tip_amount: number
  status: PaymentStatus
  lines: string | null
  provider: string | null
  provider_ref: string | null
  shift_id: number | null
  staff_id: number | null
  created_at: string
  completed_at: string | null
  /** Cents of `amount` given straight back because they could not count (migration 024). */
  excess: number
}

export interface NewPayment {
  method: PaymentMethod
  amount: number
  tip: number
  status: PaymentStatus
  lines: LinePick[] | null
  provider: string | null
  providerRef: string | null
  /** Cash and card: the register whose open shift (if any) the payment accrues to. */
  register: string | null
  staffId: number | null
}

/** Rows an order-actor decision writes with the order (see the module comment). */
export type RowWrite =
  | { kind: 'payment.insert'; payment: NewPayment }
  /**
   * A pending payment settles (or is cancelled: `failed`); a succeeded one may also settle a cancelled
   * (`failed`) one whose money the provider took after all, with `excess` cents of it going back.
   */
  | { kind: 'payment.settle'; id: number; status: 'succeeded' | 'failed'; excess?: number }
  | RefundWrite

export const linesOf = (row: Pick<PaymentRow, 'lines'>): LinePick[] =>
  row.lines ? (JSON.parse(row.lines) as Array<{ line_id: number; quantity: number }>).map((l) => ({ lineId: l.line_id, quantity: l.quantity })) : []

/**
 * Write `rows` for order `orderId` of store `storeId`; call inside the order actor's committer
 * write. Returns, per row, the id it wrote or touched.
 */
export function writeRows(db: Db, orderId: number, storeId: number, rows: readonly RowWrite[], now: string): number[] {
  return rows.map((r) => {
    switch (r.kind) {
      case 'payment.insert': {
        const p = r.payment
        // The shift is looked up in the payment's own transaction: a shift closing meanwhile cannot miss it.
        const shiftId = p.register !== null && p.method !== 'online' ? openShiftId(db, storeId, p.register) : null
        const lines = p.lines ? JSON.stringify(p.lines.map((l) => ({ line_id: l.lineId, quantity: l.quantity }))) : null
        return Number(stmt(db, `INSERT INTO payments (order_id, store_id, method, amount, tip_amount, status, lines, provider, provider_ref, shift_id, staff_id, created_at, completed_at)
          VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`)
          .run(orderId, storeId, p.method, p.amount, p.tip, p.status, lines, p.provider, p.providerRef, shiftId, p.staffId, now, p.status === 'pending' ? null : now).lastInsertRowid)
      }
      case 'payment.settle':
        stmt(db, "UPDATE payments SET status = ?, excess = ?, completed_at = ? WHERE id = ? AND order_id = ? AND status != 'succeeded'").run(r.status, r.excess ?? 0, now, r.id, orderId)
        return r.id
      case 'refund.insert':
      case 'refund.settle':
        return writeRefund(db, orderId, storeId, r, now)
      default: {
        const never: never = r
        return never
      }
    }
  })
}

export function paymentsOf(db: Db, orderId: number): PaymentRow[] {
  return stmt<[number], PaymentRow>(db, 'SELECT * FROM payments WHERE order_id = ? ORDER BY id').all(orderId)
}

export function paymentOf(db: Db, orderId: number, id: number): PaymentRow | undefined {
  return stmt<[number, number], PaymentRow>(db, 'SELECT * FROM payments WHERE id = ? AND order_id = ?').get(id, orderId)
}

export function paymentByRef(db: Db, provider: string, ref: string): PaymentRow | undefined {
  return stmt<[string, string], PaymentRow>(db, 'SELECT * FROM payments WHERE provider = ? AND provider_ref = ?').get(provider, ref)
}

/** The payment book of an order (src/domain/payments.ts): its total, lines and what its payments took. */
export function paymentBook(db: Db, orderId: number): PaymentBook | null {
  const order = stmt<[number], { total: number }>(db, 'SELECT total FROM orders WHERE id = ?').get(orderId)
  if (!order) return null
  const lines = stmt<[number], BillLine>(db, 'SELECT id, quantity, line_total AS lineTotal FROM order_lines WHERE order_id = ? ORDER BY id').all(orderId)
  const book: PaymentBook = { total: order.total, paid: 0, excess: 0, pending: 0, tips: 0, methods: [], lines, paidUnits: {} }
  for (const p of paymentsOf(db, orderId)) {
    if (p.status === 'pending') book.pending += p.amount
    if (p.status === 'succeeded') {
      book.paid += p.amount
      book.excess += p.excess
      book.tips += p.tip_amount
      if (!book.methods.includes(p.method)) book.methods.push(p.method)
    }
    // A failed (or cancelled) payment holds no lines, nor one whose money all went back as excess.
    if (p.status === 'pending' || (p.status === 'succeeded' && p.excess < p.amount)) for (const l of linesOf(p)) book.paidUnits[l.lineId] = (book.paidUnits[l.lineId] ?? 0) + l.quantity
  }
  return book
}
