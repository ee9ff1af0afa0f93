/**
 * Refund limits (issue 17 item 2; docs/operations.md "Refunds"): pure, integer cents. A refund is
 * never more than the order's succeeded payments took (amounts; tips stay with whoever earned them)
 * minus what earlier refunds gave back or are giving back (pending online ones count). By lines, a
 * line's units are refundable only as far as they were paid: every unit once the order is paid in
 * full, else the units that line payments took (src/domain/payments.ts).
 */
import { isCovered, lineDues, pickedLine, unitsDue, type LinePick, type PaymentBook, type PaymentMethod } from './payments.ts'

/** A succeeded payment as a refund sees it: what it took and what is already going back through it. */
export interface RefundablePayment { id: number; method: PaymentMethod; amount: number; refunded: number }

/** What earlier refunds of the order took (completed and pending; failed ones gave nothing back). */
export interface RefundBook {
  payments: RefundablePayment[]
  /** Units already refunded by line refunds, by line id. */
  refundedUnits: Record<number, number>
}

/**
 * `paymentId`: only through that payment (the excess of an online payment that could not count in
 * full goes back through the payment that took it, src/actors/order-payments.ts), else newest first.
 */
export interface RefundRequest { amount: number | null; lines: LinePick[] | null; method: PaymentMethod | null; paymentId?: number | null }
/** One refund row: `amount` of it goes back through payment `paymentId`. */
export interface RefundPart { paymentId: number; method: PaymentMethod; amount: number }

export type RefundPlan =
  | { ok: true; amount: number; parts: RefundPart[] }
  | { ok: false; code: 'refund_exceeds_paid' | 'validation_failed'; field: string; message: string; refundable: number }

const remaining = (p: RefundablePayment) => Math.max(0, p.amount - p.refunded)
/** Everything still refundable, optionally only through payments of one method. */
export const refundable = (rb: RefundBook, method: PaymentMethod | null = null): number =>
  rb.payments.filter((p) => method === null || p.method === method).reduce((s, p) => s + remaining(p), 0)

/** Units of each line that were paid for (see the module comment). */
export function paidUnits(book: PaymentBook): Record<number, number> {
  const covered = isCovered(book)
  return Object.fromEntries(book.lines.map((l) => [l.id, covered ? l.quantity : Math.min(l.quantity, book.paidUnits[l.id] ?? 0)]))
}

/** A line as a refund by lines sees it: its units still refundable and what each gives back (cents). */
export interface RefundableLine { lineId: number; quantity: number; refundable: number; unitAmounts: number[] }

/**
 * Each line's units still refundable — paid (see `paidUnits`) and not refunded by an earlier refund
 * by lines — with what each of them gives back, in the order a refund takes them (the same cents
 * `planRefund` adds up), so a page can show what refunding some units gives back. The refund is
 * still bounded by `refundable` (an earlier refund by amount lowers it, not the units).
 */
export function refundableLines(book: PaymentBook, rb: RefundBook): RefundableLine[] {
  const dues = lineDues(book.total, book.lines)
  const paid = paidUnits(book)
  return book.lines.map((l, i) => {
    const done = rb.refundedUnits[l.id] ?? 0
    const left = Math.max(0, (paid[l.id] ?? 0) - done)
    return { lineId: l.id, quantity: l.quantity, refundable: left, unitAmounts: Array.from({ length: left }, (_, k) => unitsDue(dues[i]!, l.quantity, done + k, 1)) }
  })
}

/**
 * The refund a request asks for, split over the payments it goes back through (newest first), or
 * why not. No amount and no lines: everything still refundable (a full refund).
 */
export function planRefund(book: PaymentBook, rb0: RefundBook, req: RefundRequest): RefundPlan {
  const rb = req.paymentId == null ? rb0 : { ...rb0, payments: rb0.payments.filter((p) => p.id === req.paymentId) }
  const limit = refundable(rb, req.method)
  const refuse = (code: 'refund_exceeds_paid' | 'validation_failed', field: string, message: string): RefundPlan => ({ ok: false, code, field, message, refundable: limit })
  let amount: number
  if (req.lines && req.lines.length > 0) {
    if (req.amount !== null) return refuse('validation_failed', 'amount', 'Send amount or lines, not both.')
    const dues = lineDues(book.total, book.lines)
    const paid = paidUnits(book)
    const seen = new Set<number>()
    amount = 0
    for (const [i, pick] of req.lines.entries()) {
      const idx = pickedLine(book.lines, pick, i, seen)
      if (typeof idx !== 'number') return refuse('validation_failed', idx.field, idx.message)
      const line = book.lines[idx]!
      const done = rb.refundedUnits[line.id] ?? 0
      const left = (paid[line.id] ?? 0) - done
      if (pick.quantity > left) return refuse('refund_exceeds_paid', `lines.${i}.quantity`, `Only ${Math.max(0, left)} unit(s) of line ${line.id} are paid and not yet refunded.`)
      amount += unitsDue(dues[idx]!, line.quantity, done, pick.quantity)
    }
  } else {
    amount = req.amount ?? limit
  }
  if (amount <= 0) return refuse('refund_exceeds_paid', 'amount', limit === 0 ? 'Nothing paid is left to refund.' : 'The refund must be more than zero.')
  if (amount > limit) return refuse('refund_exceeds_paid', 'amount', `At most ${(limit / 100).toFixed(2)} can be refunded${req.method ? ` by ${req.method}` : ''}.`)
  const parts: RefundPart[] = []
  let left = amount
  for (const p of [...rb.payments].reverse()) {
    if (left === 0) break
    if (req.method !== null && p.method !== req.method) continue
    const take = Math.min(left, remaining(p))
    if (take > 0) parts.push({ paymentId: p.id, method: p.method, amount: take })
    left -= take
  }
  return { ok: true, amount, parts }
}
