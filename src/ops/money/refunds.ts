/**
 * Refunds (issue 17 item 2; docs/operations.md "Refunds"): full, or partial by amount or by lines,
 * never more than was paid and not yet refunded, decided by the order's actor (serialised with its
 * payments, src/actors/order-refunds.ts). Online parts go back through the payment provider.
 *
 * Who: the owner with `orders:write` (reading: `orders:read`); staff need the `orders` permission
 * AND the manager role to refund, because refunds move money out of the store (a cashier takes
 * payments, a manager gives money back; docs/operations.md "Refunds"). Reading needs `orders`.
 */
import * as v from 'valibot'
import { defineOp, type OpCtx } from '../op.ts'
import { orderOf } from '../scope.ts'
import { Id, Money } from '../schemas/common.ts'
import { named } from '../schemas/named.ts'
import { Register, staffIdOf } from './shifts.ts'
import { ApiError } from '../../errors.ts'
import { fromCents, toCents } from '../../domain/money.ts'
import { PAYMENT_METHODS } from '../../domain/payments.ts'
import { refundable, refundableLines } from '../../domain/refunds.ts'
import { DEFAULT_REGISTER } from '../../storage/shifts.ts'
import { paymentBook, paymentOf } from '../../storage/payments.ts'
import { refundBook, refundOf, refundsOf, staleOnlineRefunds, type RefundRow } from '../../storage/refunds.ts'
import { nowIso } from '../../storage/db.ts'
import type { PaymentReply } from '../../actors/order-payments.ts'

const tag = 'Refunds'

export const RefundSchema = named('Refund', {
  type: 'object',
  required: ['id', 'order_id', 'payment_id', 'method', 'amount', 'status', 'created_at'],
  properties: {
    id: { type: 'integer' }, order_id: { type: 'integer' }, payment_id: { type: ['integer', 'null'] },
    method: { type: 'string', enum: [...PAYMENT_METHODS] }, amount: { type: 'number' },
    lines: { type: ['array', 'null'], items: { type: 'object', properties: { line_id: { type: 'integer' }, quantity: { type: 'integer' } } } },
    reason: { type: ['string', 'null'] }, status: { type: 'string', enum: ['pending', 'completed', 'failed'] },
    shift_id: { type: ['integer', 'null'] }, staff_id: { type: ['integer', 'null'] },
    created_at: { type: 'string', format: 'date-time' }, completed_at: { type: ['string', 'null'], format: 'date-time' },
  },
})
const RefundsSchema = named('OrderRefunds', {
  type: 'object', required: ['data', 'refunded', 'refundable'],
  properties: {
    data: { type: 'array', items: RefundSchema },
    refunded: { type: 'number', description: 'completed refunds of the order' },
    refundable: { type: 'number', description: 'paid (amounts, not tips) and not yet refunded or being refunded' },
    lines: {
      type: 'array', description: 'The order\'s lines as a refund by lines sees them (an addition to the spec, docs/operations.md "Refunds")',
      items: {
        type: 'object', required: ['line_id', 'name', 'quantity', 'refundable_quantity', 'unit_amounts'],
        properties: {
          line_id: { type: 'integer' }, name: { type: 'string' }, quantity: { type: 'integer' },
          refundable_quantity: { type: 'integer', description: 'units paid and not yet refunded by line' },
          unit_amounts: { type: 'array', items: { type: 'number' }, description: 'what each of those units gives back, in the order a refund takes them: refunding `n` units gives back the sum of the first `n`' },
        },
      },
    },
  },
})

export const refundView = (r: RefundRow) => ({
  id: r.id, order_id: r.order_id, payment_id: r.payment_id, method: r.method, amount: fromCents(r.amount),
  lines: r.lines ? (JSON.parse(r.lines) as Array<{ line_id: number; quantity: number }>) : null,
  reason: r.reason, status: r.status, shift_id: r.shift_id, staff_id: r.staff_id, created_at: r.created_at, completed_at: r.completed_at,
})

/** The order's refunds with its refunded and still refundable figures, and its lines as a refund by lines sees them. */
function refundsOut(ctx: OpCtx, orderId: number, only?: readonly number[]) {
  const db = ctx.svc.db
  const rows = refundsOf(db, orderId)
  const rb = refundBook(db, orderId)
  const book = paymentBook(db, orderId)
  const names = new Map(ctx.svc.orders.lines(orderId).map((l) => [l.id, l.name]))
  return {
    data: (only ? rows.filter((r) => only.includes(r.id)) : rows).map(refundView),
    // The order's completed refunds: summed from the rows just read, not read again.
    refunded: fromCents(rows.reduce((sum, r) => sum + (r.status === 'completed' ? r.amount : 0), 0)),
    refundable: fromCents(refundable(rb)),
    lines: book ? refundableLines(book, rb).map((l) => ({
      line_id: l.lineId, name: names.get(l.lineId) ?? '', quantity: l.quantity, refundable_quantity: l.refundable, unit_amounts: l.unitAmounts.map(fromCents),
    })) : [],
  }
}

export const listRefunds = defineOp({
  id: 'refunds.list', tag, summary: 'An order\'s refunds, with what was refunded and what is still refundable',
  access: { owner: 'orders:read', staff: 'orders' }, scope: ['store', 'order'], output: RefundsSchema,
  run: (ctx) => refundsOut(ctx, orderOf(ctx).id),
})

const Line = v.object({ line_id: Id, quantity: v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(10_000)) })

export const createRefund = defineOp({
  id: 'refunds.create', tag, summary: 'Refund an order: in full, or partly by amount or by lines',
  description: 'Body `{amount?, lines?: [{line_id, quantity}], reason?, method?, register?}`. No amount and no lines: everything paid and not yet refunded. Never more than the payments took (tips excluded) minus earlier refunds: 422 `refund_exceeds_paid`. Online payments are refunded through the payment provider (502 `refund_failed` when it refuses). Cash refunds are paid out of the register\'s open shift (default `main`). Staff: managers with `orders` only. Answers the refunds this request made. Emits `refund.completed` per refund.',
  access: { owner: 'orders:write', staff: 'orders' }, scope: ['store', 'order'],
  input: v.object({
    amount: v.optional(v.pipe(Money, v.minValue(0.01))),
    lines: v.optional(v.pipe(v.array(Line), v.minLength(1), v.maxLength(100))),
    reason: v.optional(v.nullable(v.pipe(v.string(), v.trim(), v.maxLength(500)))),
    method: v.optional(v.picklist(PAYMENT_METHODS)),
    register: v.optional(Register),
  }),
  output: RefundsSchema,
  run: async (ctx, input) => {
    // Refunds move money out: among staff, managers only (see the header).
    if (ctx.principal?.kind === 'staff' && ctx.principal.role !== 'manager') throw new ApiError('forbidden', 'Only a manager can refund.')
    const order = orderOf(ctx)
    const reply = await ctx.svc.actors.orders.ask<PaymentReply>(order.id, (replyTo) => ({
      type: 'refund', replyTo,
      refund: {
        amount: input.amount === undefined ? null : toCents(input.amount),
        lines: input.lines ? input.lines.map((l) => ({ lineId: l.line_id, quantity: l.quantity })) : null,
        method: input.method ?? null, reason: input.reason ?? null, register: input.register ?? DEFAULT_REGISTER, staffId: staffIdOf(ctx),
      },
    }))
    const failed = await sendOnlineRefunds(ctx, order.id, reply.written)
    if (failed !== null) throw new ApiError('refund_failed', undefined, undefined, undefined, { refund_id: failed, ...refundsOut(ctx, order.id, reply.written) })
    return refundsOut(ctx, order.id, reply.written)
  },
})

/**
 * Ask the payment provider for the online refunds `ids` that the order's actor reserved `pending`,
 * outside the actor (it is I/O), and settle each through the actor: completed, or failed and
 * released. Rows not pending are skipped. Returns the id of the last refund that failed, or null.
 * Used by refunds here, by the excess of an online payment that could not count in full
 * (src/ops/money/payments.ts), and by the retry of refunds left pending (`retryPendingRefunds`).
 * The provider is asked with the refund's own key, so asking again never refunds twice.
 */
export async function sendOnlineRefunds(ctx: Pick<OpCtx, 'svc'>, orderId: number, ids: readonly number[]): Promise<number | null> {
  const { svc } = ctx
  let failed: number | null = null
  for (const id of ids) {
    const row = refundOf(svc.db, orderId, id)
    if (!row || row.status !== 'pending') continue
    const payment = row.payment_id === null ? undefined : paymentOf(svc.db, orderId, row.payment_id)
    let outcome: 'completed' | 'failed' = 'failed'
    let providerRef: string | null = null
    try {
      if (!payment?.provider_ref) throw new Error('online payment without a provider reference')
      const r = await svc.payments.refund(payment.provider_ref, row.amount, `refund_${id}`)
      providerRef = r.ref
      // A provider that answers `pending` settles later; this server records it completed only when it says so.
      if (r.status === 'pending') continue
      outcome = 'completed'
    } catch (err) {
      svc.log.warn({ err, orderId, refundId: id }, 'provider refund failed')
    }
    await svc.actors.orders.ask<PaymentReply>(orderId, (replyTo) => ({ type: 'settle_refund', refundId: id, outcome, providerRef, replyTo }))
    if (outcome === 'failed') failed = id
  }
  return failed
}

/** How long an online refund may stay pending before the retry asks the provider again. */
export const REFUND_RETRY_AFTER_MS = 5 * 60_000
const RETRY_BATCH = 500

/**
 * Online refunds still `pending` after `REFUND_RETRY_AFTER_MS`: the server stopped between reserving
 * one and settling it (a crash, a restart), or the provider answered `pending`. Each is asked again
 * under its own key (the provider answers the first request's refund if there was one) and settled
 * like the first attempt. Scheduled by src/maintenance/refund-retry.ts; returns how many it settled.
 */
export async function retryPendingRefunds(svc: OpCtx['svc'], now: Date): Promise<{ asked: number; settled: number }> {
  const stale = staleOnlineRefunds(svc.db, nowIso(now.getTime() - REFUND_RETRY_AFTER_MS), RETRY_BATCH)
  let settled = 0
  for (const r of stale) {
    await sendOnlineRefunds({ svc }, r.order_id, [r.id])
    if (refundOf(svc.db, r.order_id, r.id)?.status !== 'pending') settled++
  }
  return { asked: stale.length, settled }
}

export const refundOps = [listRefunds, createRefund]
