/**
 * The refund side of the order actor (issue 17 item 2; docs/operations.md "Refunds"). Refunds are
 * messages to the order's actor, like its payments (src/actors/order-payments.ts), so a refund and a
 * payment, or two refunds from two front doors, are decided one after the other against exact
 * figures: never more than was paid and not yet refunded. The books are read fresh in the actor's
 * turn (`RefundCtx`): every payment and refund row of the order is written by this actor and
 * awaited before its next message, so the read cannot be stale.
 *
 * The rows travel in the decision (`rows`, storage/refunds.ts `RefundWrite`) and are written with
 * the outbox events in one transaction. Online refunds are two messages: `refund` reserves the
 * amount (a `pending` row), the operation asks the payment provider, then `settle_refund` completes
 * or releases it; cash and card refunds complete in the first message.
 */
import type * as nact from 'nact'
import type { Result } from './system.ts'
import type { Decision, EventEffect, OrderState } from './order.ts'
import type { PaymentReply } from './order-payments.ts'
import type { RowWrite } from '../storage/payments.ts'
import type { RefundRow } from '../storage/refunds.ts'
import { ApiError } from '../errors.ts'
import { centsToDecimalString } from '../domain/money.ts'
import { planRefund, type RefundBook } from '../domain/refunds.ts'
import type { LinePick, PaymentBook, PaymentMethod } from '../domain/payments.ts'

type Reply = nact.Ref<Result<PaymentReply>>

/** A refund to decide; money in cents. No amount and no lines: everything still refundable. */
export interface RefundAsk {
  amount: number | null
  lines: LinePick[] | null
  /** Refund only through payments of this method. */
  method: PaymentMethod | null
  reason: string | null
  /** Cash: the register whose open shift pays it out. */
  register: string | null
  staffId: number | null
}

export type RefundMsg =
  | { type: 'refund'; refund: RefundAsk; replyTo: Reply }
  /** The provider answered an online refund that `refund` reserved. */
  | { type: 'settle_refund'; refundId: number; outcome: 'completed' | 'failed'; providerRef: string | null; replyTo: Reply }

export const REFUND_MSG_TYPES: ReadonlySet<string> = new Set(['refund', 'settle_refund'])

/** Read by the shell in the actor's turn: the order's books (refund) or the refund a settle names. */
export interface RefundCtx { paymentBook?: PaymentBook | null; refundBook?: RefundBook; refund?: RefundRow | null }

/** `refund.completed` (api-v1 §6); `refund_id` is filled from the row written at `row` when it is new. */
const completed = (s: OrderState, amount: number, method: PaymentMethod, reason: string | null, now: string, refundId: number, row?: number): EventEffect => ({
  event: 'refund.completed',
  data: { refund_id: refundId, order_id: s.id, restaurant_id: s.storeId, amount: centsToDecimalString(amount), method, reason, completed_at: now },
  ...(row === undefined ? {} : { rowId: { row, key: 'refund_id' } }),
})

/** Pure transitions of the refund messages; `reduceOrder` delegates here. */
export function reduceRefund(s: OrderState, msg: RefundMsg, now: string, ctx: RefundCtx): Decision {
  switch (msg.type) {
    case 'refund': {
      const book = ctx.paymentBook
      if (!book || !ctx.refundBook) return { ok: false, error: new ApiError('internal_error', 'Refund books not loaded.') }
      const r = msg.refund
      const plan = planRefund(book, ctx.refundBook, { amount: r.amount, lines: r.lines, method: r.method })
      if (!plan.ok) {
        return { ok: false, error: new ApiError(plan.code, plan.message, { [plan.field]: [plan.message] }, undefined, plan.code === 'refund_exceeds_paid' ? { field: plan.field, refundable: plan.refundable / 100 } : undefined) }
      }
      const rows: RowWrite[] = []
      const events: EventEffect[] = []
      for (const [i, part] of plan.parts.entries()) {
        const online = part.method === 'online'
        // The units refunded are recorded once, on the first row, so they are counted once.
        rows.push({ kind: 'refund.insert', refund: { paymentId: part.paymentId, method: part.method, amount: part.amount, lines: i === 0 ? r.lines : null, reason: r.reason, status: online ? 'pending' : 'completed', register: r.register, staffId: r.staffId } })
        if (!online) events.push(completed(s, part.amount, part.method, r.reason, now, 0, i))
      }
      return { ok: true, state: s, events, rows }
    }
    case 'settle_refund': {
      const row = ctx.refund
      if (!row || row.order_id !== s.id) return { ok: false, error: new ApiError('not_found', 'The refund does not exist.') }
      // Settled already (a retried answer): nothing changes.
      if (row.status !== 'pending') return { ok: true, state: s, events: [] }
      const rows: RowWrite[] = [{ kind: 'refund.settle', id: row.id, status: msg.outcome, providerRef: msg.providerRef }]
      const events = msg.outcome === 'completed' ? [completed(s, row.amount, row.method, row.reason, now, row.id)] : []
      return { ok: true, state: s, events, rows }
    }
    default: {
      const never: never = msg
      return never
    }
  }
}
