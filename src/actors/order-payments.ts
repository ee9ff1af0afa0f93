/**
 * The payment side of the order actor (ARCHITECTURE "Actors": an order actor owns its payments;
 * issue 17 item 1; docs/operations.md "Payments"). Every payment of an order, from any front door,
 * is a message to that order's actor, handled one at a time: two partial payments arriving at once
 * are two messages in a row, so the balance each is checked against is exact and `order.paid` is
 * emitted once, by the message whose payment first covers the total.
 *
 * The reducer decides; the rows it wants written travel in the decision (`rows`, src/storage/
 * payments.ts `RowWrite`) and the shell writes them in the same transaction as `is_paid` and the
 * outbox event.
 */
import type * as nact from 'nact'
import type { Result } from './system.ts'
import type { OrderView } from '../storage/orders.ts'
import type { PaymentRow, RowWrite } from '../storage/payments.ts'
import type { Decision, OrderState } from './order.ts'
import { linesOf } from '../storage/payments.ts'
import { ApiError } from '../errors.ts'
import { centsToDecimalString } from '../domain/money.ts'
import { balanceOf, countedOf, excessOf, isCovered, linesAmount, onlineBalanceOf, takeUnits, type LinePick, type PaymentBook, type PaymentMethod } from '../domain/payments.ts'
import { planRefund } from '../domain/refunds.ts'

/** The reply of a payment message: the order after it, and the ids of the rows the decision wrote. */
export interface PaymentReply { order: OrderView; written: number[] }
type Reply = nact.Ref<Result<PaymentReply>>

/** A payment to record; money in cents. `amount` null: computed from `lines`. */
export interface PayRequest {
  method: PaymentMethod
  amount: number | null
  tip: number
  lines: LinePick[] | null
  /** Cash and card: the register whose open shift it accrues to. */
  register: string | null
  staffId: number | null
  /** Online: the provider and its id of the payment, started before this message (it is recorded `pending`). */
  provider: string | null
  providerRef: string | null
}

export type PaymentMsg =
  | { type: 'pay'; payment: PayRequest; replyTo: Reply }
  /**
   * The provider says a pending payment succeeded or failed (its signed webhook); or, with `cancel`,
   * the store cancels a pending one (recorded `failed`; anything but pending is refused). Both are
   * one message type so the shell reads the payment fresh for either.
   */
  | { type: 'settle_payment'; paymentId: number; outcome: 'succeeded' | 'failed'; cancel?: boolean; replyTo: Reply }

export const PAYMENT_MSG_TYPES: ReadonlySet<string> = new Set(['pay', 'settle_payment'])

/** What the shell reads for a payment message: the payment a settle names, read fresh in the actor's turn. */
export interface PaymentCtx { payment?: PaymentRow | null }

const conflict = (code: 'order_cancelled' | 'order_already_paid' | 'payment_pending') => ({ ok: false as const, error: new ApiError(code) })
const field = (f: string, message: string, code: 'validation_failed' | 'overpayment' | 'lines_already_paid' = 'validation_failed') =>
  ({ ok: false as const, error: new ApiError(code, message, { [f]: [message] }) })

/** Pure transitions of the payment messages; `reduceOrder` delegates here. `s.payments` is loaded. */
export function reducePayment(s: OrderState, msg: PaymentMsg, now: string, ctx: PaymentCtx): Decision {
  const book = s.payments
  if (!book) return { ok: false, error: new ApiError('internal_error', 'Payment book not loaded.') }
  switch (msg.type) {
    case 'pay': {
      const p = msg.payment
      if (s.status === 'cancelled') return conflict('order_cancelled')
      if (s.isPaid === true || isCovered(book)) return conflict('order_already_paid')
      // An online checkout never asks for money other open checkouts already ask for (a double tap).
      if (p.method === 'online' && onlineBalanceOf(book) === 0) return conflict('payment_pending')
      let amount = p.amount
      if (p.lines) {
        const r = linesAmount(book, p.lines)
        if (!r.ok) return r.kind === 'taken' ? field(r.field, r.message, 'lines_already_paid') : field(r.field, r.message)
        // Paying by lines: the lines' dues are the amount; a stated amount must agree (docs/operations.md "Split bills").
        if (amount !== null && amount !== r.amount) return field('amount', `The lines come to ${centsToDecimalString(r.amount)}; omit amount or send that.`)
        amount = r.amount
      }
      if (amount === null || amount <= 0) return field('amount', 'Send amount, or lines to pay.')
      const balance = balanceOf(book)
      if (amount > balance) return field('amount', `The balance due is ${centsToDecimalString(balance)}.`, 'overpayment')
      const pending = p.method === 'online'
      if (pending && amount > onlineBalanceOf(book)) {
        return field('amount', `The balance due is ${centsToDecimalString(balance)}, of which ${centsToDecimalString(book.pending)} is in open online checkouts.`, 'overpayment')
      }
      const rows: RowWrite[] = [{
        kind: 'payment.insert',
        payment: {
          method: p.method, amount, tip: p.tip, status: pending ? 'pending' : 'succeeded', lines: p.lines,
          provider: p.provider, providerRef: p.providerRef, register: pending ? null : p.register, staffId: p.staffId,
        },
      }]
      const taken = p.lines ? { ...book, paidUnits: takeUnits(book.paidUnits, p.lines, 1) } : book
      if (pending) return { ok: true, state: { ...s, payments: { ...taken, pending: taken.pending + amount } }, events: [], rows }
      return settled(s, credit(taken, amount, p.tip, p.method), now, rows)
    }
    case 'settle_payment': {
      const row = ctx.payment
      if (!row || row.order_id !== s.id) return { ok: false, error: new ApiError('not_found', 'The payment does not exist.') }
      if (msg.cancel && row.status !== 'pending') return { ok: false, error: new ApiError('invalid_transition', `A ${row.status} payment cannot be cancelled.`, { status: ['Only a pending payment can be cancelled.'] }) }
      // The provider took the money of a payment cancelled (or failed) meanwhile: recorded and given back below.
      const late = row.status === 'failed' && msg.outcome === 'succeeded' && !msg.cancel
      // Otherwise the same provider event twice (or a late one after the first) changes nothing.
      if (row.status !== 'pending' && !late) return { ok: true, state: s, events: [] }
      if (msg.outcome === 'failed') {
        const lines = linesOf(row)
        const next = { ...book, pending: book.pending - row.amount, paidUnits: lines.length ? takeUnits(book.paidUnits, lines, -1) : book.paidUnits }
        return { ok: true, state: { ...s, payments: next }, events: [], rows: [{ kind: 'payment.settle', id: row.id, status: 'failed' }] }
      }
      return succeeded(s, book, row, late, now)
    }
    default: {
      const never: never = msg
      return never
    }
  }
}

/**
 * A provider success: the money was taken, so the payment is recorded `succeeded` whatever happened
 * meanwhile. What cannot count toward the total — all of it when the order or the payment was
 * cancelled, else what goes beyond the balance — is its `excess`, given straight back by a pending
 * online refund through this payment in the same transaction; the operation then asks the provider
 * exactly as a refund does (src/ops/money/refunds.ts `sendOnlineRefunds`). A cancelled order is never paid.
 */
function succeeded(s: OrderState, book: PaymentBook, row: PaymentRow, late: boolean, now: string): Decision {
  const lines = linesOf(row)
  // A cancelled payment gave its lines back already; a pending one stops holding the balance.
  const open = late ? book : { ...book, pending: book.pending - row.amount }
  const cancelledOrder = s.status === 'cancelled'
  const excess = excessOf(open, row.amount, !late && !cancelledOrder)
  // Given back in full, it holds no lines (as storage/payments.ts `paymentBook` reads it back).
  const released = excess === row.amount && lines.length && !late ? { ...open, paidUnits: takeUnits(open.paidUnits, lines, -1) } : open
  const rows: RowWrite[] = [{ kind: 'payment.settle', id: row.id, status: 'succeeded', excess }]
  if (excess > 0) {
    const plan = planRefund(released, { payments: [{ id: row.id, method: row.method, amount: row.amount, refunded: 0 }], refundedUnits: {} }, { amount: excess, lines: null, method: null, paymentId: row.id })
    if (!plan.ok) return { ok: false, error: new ApiError('internal_error', plan.message) }
    const reason = cancelledOrder ? 'order cancelled' : late ? 'payment cancelled' : 'overpayment'
    for (const part of plan.parts) {
      rows.push({ kind: 'refund.insert', refund: { paymentId: part.paymentId, method: part.method, amount: part.amount, lines: null, reason, status: 'pending', register: null, staffId: null } })
    }
  }
  return settled(s, { ...credit(released, row.amount, row.tip_amount, row.method), excess: released.excess + excess }, now, rows)
}

const credit = (b: PaymentBook, amount: number, tip: number, method: PaymentMethod): PaymentBook =>
  ({ ...b, paid: b.paid + amount, tips: b.tips + tip, methods: b.methods.includes(method) ? b.methods : [...b.methods, method] })

/** A succeeded payment: the order becomes paid, and `order.paid` fires, exactly when the total is first covered. */
function settled(s: OrderState, book: PaymentBook, now: string, rows: RowWrite[]): Decision {
  // A cancelled order never becomes paid (its late payments are refunded in full).
  const paidNow = s.isPaid !== true && s.status !== 'cancelled' && isCovered(book)
  return {
    ok: true,
    state: { ...s, payments: book, isPaid: s.isPaid === true || paidNow },
    events: paidNow ? [{
      event: 'order.paid',
      data: {
        order_id: s.id, restaurant_id: s.storeId, total: centsToDecimalString(book.total), paid_at: now,
        amount_paid: centsToDecimalString(countedOf(book)), tips: centsToDecimalString(book.tips), methods: book.methods,
      },
    }] : [],
    rows,
  }
}
