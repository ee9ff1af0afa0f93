/**
 * Payments, split bills and online payments (issue 17 item 1; docs/operations.md "Payments",
 * "Split bills", "Online payments and the payment provider"). Every payment goes through the
 * order's actor (src/actors/order-payments.ts), which serialises them and writes `is_paid` and
 * `order.paid`; the owner and staff addresses bind the same operations. Reads come from SQLite.
 */
import * as v from 'valibot'
import { Register, staffIdOf } from './shifts.ts'
import { defineOp, type OpCtx } from '../op.ts'
import { int, nullable, num } from '../schemas/named.ts'
import { orderOf, storeOf } from '../scope.ts'
import { Id, Money } from '../schemas/common.ts'
import { ApiError, notFound } from '../../errors.ts'
import { fromCents, hasAtMostTwoDecimals, toCents } from '../../domain/money.ts'
import { balanceOf, billLines, evenSplit, onlineBalanceOf, PAYMENT_METHODS, type PaymentBook } from '../../domain/payments.ts'
import { linesOf, paymentBook, paymentByRef, paymentOf, paymentsOf, type PaymentRow } from '../../storage/payments.ts'
import { sendOnlineRefunds } from './refunds.ts'
import { orderStateOf } from '../../actors/order.ts'
import { reducePayment, type PaymentReply, type PayRequest } from '../../actors/order-payments.ts'
import { nowIso } from '../../storage/db.ts'
import { DevPaymentProvider } from '../../providers/payments-dev.ts'
import { NoPaymentProvider, type ClientAction } from '../../providers/payments.ts'
import type { OrderRow } from '../../storage/orders.ts'

const tag = 'Payments'
const write = { owner: 'orders:write', staff: 'orders' } as const
const read = { owner: 'orders:read', staff: 'orders' } as const

// ---- views ----

const paymentView = (p: PaymentRow) => ({
  id: p.id, order_id: p.order_id, method: p.method, amount: fromCents(p.amount), tip_amount: fromCents(p.tip_amount), status: p.status,
  lines: p.lines ? linesOf(p).map((l) => ({ line_id: l.lineId, quantity: l.quantity })) : null,
  provider: p.provider, provider_ref: p.provider_ref, shift_id: p.shift_id, staff_id: p.staff_id, created_at: p.created_at, completed_at: p.completed_at,
  excess: fromCents(p.excess),
})
const balanceView = (b: PaymentBook, isPaid: boolean) => ({
  total: fromCents(b.total), paid: fromCents(b.paid), balance_due: fromCents(balanceOf(b)), tips: fromCents(b.tips), is_paid: isPaid,
})

const PaymentSchema = {
  type: 'object', required: ['id', 'order_id', 'method', 'amount', 'tip_amount', 'status', 'created_at'],
  properties: {
    id: int, order_id: int, method: { type: 'string', enum: [...PAYMENT_METHODS] }, amount: num, tip_amount: num,
    status: { type: 'string', enum: ['pending', 'succeeded', 'failed'] },
    lines: nullable({ type: 'array', items: { type: 'object', properties: { line_id: int, quantity: int } } }),
    provider: nullable({ type: 'string' }), provider_ref: nullable({ type: 'string' }), shift_id: nullable(int), staff_id: nullable(int),
    created_at: { type: 'string', format: 'date-time' }, completed_at: nullable({ type: 'string', format: 'date-time' }),
    excess: { ...num, description: 'what of `amount` could not count toward the total (the order or the payment was cancelled, or it went beyond the total) and was given straight back by a refund through this payment' },
  },
}
const BalanceSchema = { type: 'object', required: ['total', 'paid', 'balance_due', 'tips', 'is_paid'], properties: { total: num, paid: num, balance_due: num, tips: num, is_paid: { type: 'boolean' } } }
const ActionSchema = { type: 'object', required: ['checkout_url', 'client_secret'], properties: { checkout_url: { type: 'string' }, client_secret: { type: 'string' } } }
const PaidSchema = { type: 'object', required: ['payment', 'balance'], properties: { payment: PaymentSchema, balance: BalanceSchema, client_action: ActionSchema } }

// ---- input ----

/** More than zero, at most two decimals (422 otherwise). */
const Amount = v.pipe(v.number(), v.check((n) => n > 0, 'Must be more than 0.'), v.maxValue(1_000_000), v.check(hasAtMostTwoDecimals, 'Use at most two decimals.'))
const Lines = v.pipe(v.array(v.object({ line_id: Id, quantity: v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(999)) })), v.minLength(1), v.maxLength(200))

const PayInput = v.object({
  amount: v.optional(Amount),
  method: v.picklist(PAYMENT_METHODS, 'Use cash, card or online.'),
  tip_amount: v.optional(Money),
  register: v.optional(Register),
  lines: v.optional(Lines),
})

// ---- running ----

/** The book as the actor would see it, for a check before an outside call and for the reads. */
function bookOf(ctx: OpCtx, order: OrderRow): PaymentBook {
  const book = paymentBook(ctx.svc.db, order.id)
  if (!book) throw notFound('order')
  return book
}

/**
 * Record a payment through the order's actor. Online payments are first created at the provider,
 * after the same check the actor makes (so a refused payment starts nothing there); the actor
 * checks again, in order, when it records it.
 */
async function pay(ctx: OpCtx, order: OrderRow, req: PayRequest, known?: PaymentBook) {
  let action: ClientAction | undefined
  if (req.method === 'online') {
    const book = known ?? bookOf(ctx, order)
    const dry = reducePayment({ ...orderStateOf(order, storeOf(ctx).owner_id), payments: book }, { type: 'pay', payment: req, replyTo: null as never }, nowIso(), {})
    if (!dry.ok) throw dry.error
    const first = dry.rows?.[0]
    const amount = first?.kind === 'payment.insert' ? first.payment.amount : 0
    const started = await ctx.svc.payments.create({ orderId: order.id, storeId: order.store_id, amount, tip: req.tip, currency: storeOf(ctx).currency })
    action = started.action
    req = { ...req, amount, provider: ctx.svc.payments.name, providerRef: started.ref }
  }
  const r = await ctx.svc.actors.orders.ask<PaymentReply>(order.id, (replyTo) => ({ type: 'pay', payment: req, replyTo })).catch(async (err: unknown) => {
    // Refused in order (e.g. a second checkout won the race): close the checkout just started, so it cannot be paid.
    if (req.providerRef) await closeCheckout(ctx, req.providerRef)
    throw err
  })
  const row = paymentOf(ctx.svc.db, order.id, r.written[0]!)
  if (!row) throw new ApiError('internal_error', 'The payment was not recorded.')
  return { payment: paymentView(row), balance: balanceView(bookOf(ctx, order), r.order.is_paid), ...(action ? { client_action: action } : {}) }
}

export const createPayment = defineOp({
  id: 'orders.payments.create', tag, summary: 'Take a payment (cash, card or online; by amount or by lines)',
  description: 'Money as JSON numbers (two decimals at most). `amount` counts toward the order total; `tip_amount` is on top. Pay by lines with `lines: [{line_id, quantity}]`: the amount is what those units owe (docs/operations.md "Split bills"), and `amount` may be omitted or must equal it. Cash and card succeed at once and accrue to the open shift of `register` (default `main`); `online` starts a provider payment, answered `pending` with `client_action`. The payment that first covers the total marks the order paid and emits `order.paid` once. Refusals: 422 `overpayment`, 409 `order_cancelled`, `order_already_paid`, `lines_already_paid`.',
  access: write, scope: ['store', 'order'], input: PayInput, output: PaidSchema,
  run: (ctx, input) => pay(ctx, orderOf(ctx), {
    method: input.method, amount: input.amount === undefined ? null : toCents(input.amount), tip: toCents(input.tip_amount ?? 0),
    lines: input.lines ? input.lines.map((l) => ({ lineId: l.line_id, quantity: l.quantity })) : null,
    register: input.register ?? 'main', staffId: staffIdOf(ctx), provider: null, providerRef: null,
  }),
})

export const listPayments = defineOp({
  id: 'orders.payments.list', tag, summary: 'An order\'s payments and its balance',
  access: read, scope: ['store', 'order'],
  output: { type: 'object', required: ['data', 'balance'], properties: { data: { type: 'array', items: PaymentSchema }, balance: BalanceSchema } },
  run: (ctx) => {
    const order = orderOf(ctx)
    return { data: paymentsOf(ctx.svc.db, order.id).map(paymentView), balance: balanceView(bookOf(ctx, order), order.is_paid === 1) }
  },
})

export const getBill = defineOp({
  id: 'orders.bill.get', tag, summary: 'The bill for split checkout: lines with paid and unpaid units; `split=N` shares the balance in N parts',
  description: 'Each line owes its share of the order total (after discount, with the order\'s tip and fees), in proportion to its price; `unpaid_due` is what its unpaid units owe. `split=N` (1-50) divides the balance due into N parts whose cents add up exactly; each part is paid as its own payment with its own tip.',
  access: read, scope: ['store', 'order'],
  input: v.object({ split: v.optional(v.pipe(v.string(), v.regex(/^[1-9]\d?$/, 'split must be a whole number from 1 to 50'), v.transform(Number), v.maxValue(50, 'split must be at most 50'))) }),
  output: {
    type: 'object', required: ['order_id', 'lines', 'balance'],
    properties: {
      order_id: int, balance: BalanceSchema,
      lines: { type: 'array', items: { type: 'object', properties: { line_id: int, name: { type: 'string' }, quantity: int, paid_quantity: int, unpaid_quantity: int, due: num, unpaid_due: num } } },
      split: { type: 'array', items: { type: 'object', properties: { part: int, amount: num } } },
    },
  },
  run: (ctx, { split }) => {
    const order = orderOf(ctx)
    const book = bookOf(ctx, order)
    const names = new Map(ctx.svc.orders.lines(order.id).map((l) => [l.id, l.name]))
    return {
      order_id: order.id,
      lines: billLines(book).map((l) => ({ ...l, name: names.get(l.line_id) ?? '', due: fromCents(l.due), unpaid_due: fromCents(l.unpaid_due) })),
      balance: balanceView(book, order.is_paid === 1),
      ...(split ? { split: evenSplit(book, split).map((c, i) => ({ part: i + 1, amount: fromCents(c) })) } : {}),
    }
  },
})

export const customerPay = defineOp({
  id: 'customer.orders.pay', tag, summary: 'Pay the balance of an own order online',
  description: 'Starts an online payment at the payment provider for the balance due (plus an optional `tip_amount`) and answers it `pending` with `client_action`: send the payer to `checkout_url`, or confirm with `client_secret` in the provider\'s SDK. The order becomes paid when the provider\'s signed webhook confirms it. Another customer\'s order: 404.',
  access: { customer: true }, scope: ['store', 'order'],
  input: v.object({ tip_amount: v.optional(Money) }), output: PaidSchema,
  run: (ctx, { tip_amount }) => {
    const order = orderOf(ctx)
    const book = bookOf(ctx, order)
    return pay(ctx, order, {
      // The balance less open checkouts; none left answers 409 `payment_pending` (a double tap).
      method: 'online', amount: onlineBalanceOf(book) || null, tip: toCents(tip_amount ?? 0), lines: null, register: null, staffId: null, provider: null, providerRef: null,
    }, book)
  },
})

/** Settle a provider event through the order's actor; a repeat of the same event changes nothing. */
async function settle(ctx: OpCtx, provider: string, raw: string, headers: Readonly<Record<string, string>>) {
  const p = ctx.svc.payments
  if (provider !== p.name || p instanceof NoPaymentProvider) throw notFound('payment provider')
  const event = p.verify(raw, headers)
  if (event === null) throw new ApiError('payment_signature_invalid')
  if (event === 'ignored') return { received: true, payment_id: null, status: null }
  const row = paymentByRef(ctx.svc.db, p.name, event.ref)
  // Not recorded (yet): a 404 makes the provider retry later.
  if (!row) throw notFound('payment')
  const r = await ctx.svc.actors.orders.ask<PaymentReply>(row.order_id, (replyTo) => ({ type: 'settle_payment', paymentId: row.id, outcome: event.outcome, replyTo }))
  // A success that could not count in full reserved a refund of its excess (the rows after the
  // payment's own, src/actors/order-payments.ts `succeeded`): the provider gives it back now. A failed
  // refund is released and stays refundable by hand (docs/operations.md "Refunds"); the event is still received.
  if (r.written.length > 1) await sendOnlineRefunds(ctx, row.order_id, r.written.slice(1))
  const now = paymentOf(ctx.svc.db, row.order_id, row.id)
  return { received: true, payment_id: row.id, status: now?.status ?? row.status }
}

/** Tell the provider (if it can be told) that a checkout is closed; a failure only leaves it to be refunded if paid. */
async function closeCheckout(ctx: OpCtx, ref: string): Promise<void> {
  try {
    await ctx.svc.payments.cancel?.(ref)
  } catch (err) {
    ctx.svc.log.warn({ err, ref }, 'provider checkout cancel failed')
  }
}

export const cancelPayment = defineOp({
  id: 'orders.payments.cancel', tag, summary: 'Cancel a pending online payment',
  description: 'Closes an online checkout the payer abandoned (or a double one), so its amount no longer holds the balance: the payment becomes `failed` (cancelled), its lines are free again, and the provider is told to close the checkout. Only a `pending` payment: 422 `invalid_transition` otherwise. A payment of another order or store: 404. If the provider still takes the money later, the payment is recorded and refunded in full (docs/operations.md "Online payments and the payment provider").',
  access: write, scope: ['store', 'order'],
  input: v.object({ payment_id: Id }),
  output: { type: 'object', required: ['payment', 'balance'], properties: { payment: PaymentSchema, balance: BalanceSchema } },
  run: async (ctx, { payment_id }) => {
    const order = orderOf(ctx)
    const row = paymentOf(ctx.svc.db, order.id, payment_id)
    if (!row) throw notFound('payment')
    const r = await ctx.svc.actors.orders.ask<PaymentReply>(order.id, (replyTo) => ({ type: 'settle_payment', paymentId: row.id, outcome: 'failed', cancel: true, replyTo }))
    if (row.provider === ctx.svc.payments.name && row.provider_ref) await closeCheckout(ctx, row.provider_ref)
    return { payment: paymentView(paymentOf(ctx.svc.db, order.id, row.id)!), balance: balanceView(bookOf(ctx, order), r.order.is_paid) }
  },
})

const WebhookOut = { type: 'object', required: ['received'], properties: { received: { type: 'boolean' }, payment_id: nullable(int), status: nullable({ type: 'string' }) } }

export const providerWebhook = defineOp({
  id: 'payments.webhooks.receive', tag, summary: 'The payment provider\'s signed webhook: settles a pending online payment',
  description: 'Called by the payment provider, not by clients. The signature over the raw body is checked (400 `payment_signature_invalid`); the same event twice changes nothing. Unknown payment: 404, so the provider retries.',
  access: { public: true }, scope: [],
  input: v.object({ provider: v.pipe(v.string(), v.maxLength(40)), raw: v.string(), headers: v.record(v.string(), v.string()) }),
  output: WebhookOut,
  run: (ctx, { provider, raw, headers }) => settle(ctx, provider, raw, headers),
})

export const devComplete = defineOp({
  id: 'payments.dev.complete', tag, summary: 'Development provider only: complete or fail a pending online payment',
  description: 'Only with PAYMENT_PROVIDER=dev (else 404). The holder of the payment\'s `client_secret` decides its outcome; the dev provider then signs a webhook event and it is settled exactly as the provider webhook would (docs/providers.md "Payments").',
  access: { public: true }, scope: [],
  input: v.object({ provider_ref: v.pipe(v.string(), v.maxLength(100)), client_secret: v.pipe(v.string(), v.maxLength(200)), outcome: v.optional(v.picklist(['succeeded', 'failed']), 'succeeded') }),
  output: WebhookOut,
  run: (ctx, { provider_ref, client_secret, outcome }) => {
    const p = ctx.svc.payments
    if (!(p instanceof DevPaymentProvider)) throw new ApiError('route_not_found')
    const signed = p.complete(provider_ref, client_secret, outcome)
    if (!signed) throw notFound('checkout')
    return settle(ctx, p.name, signed.raw, signed.headers)
  },
})

export const paymentOps = [createPayment, listPayments, getBill, customerPay, cancelPayment, providerWebhook, devComplete]
