/** Pure money rules of payments and split bills (src/domain/payments.ts) and the payment reducer. */
import t from 'tap'
import { billLines, distribute, evenSplit, lineDues, linesAmount, unitsDue, type PaymentBook } from '../../src/domain/payments.ts'
import { reducePayment, type PayRequest } from '../../src/actors/order-payments.ts'
import { planRefund } from '../../src/domain/refunds.ts'
import type { OrderState } from '../../src/actors/order.ts'

const book = (over: Partial<PaymentBook> = {}): PaymentBook => ({
  total: 3400, paid: 0, excess: 0, pending: 0, tips: 0, methods: [], paidUnits: {},
  lines: [{ id: 1, quantity: 3, lineTotal: 3000 }, { id: 2, quantity: 1, lineTotal: 300 }], ...over,
})

t.test('distribute and even split add up exactly', async (t) => {
  t.same(distribute(1000, 3), [334, 333, 333])
  t.same(distribute(2, 4), [1, 1, 0, 0])
  for (const [amount, n] of [[1, 7], [3400, 3], [99_999, 13]] as const) t.equal(distribute(amount, n).reduce((s, x) => s + x, 0), amount)
  t.same(evenSplit(book({ paid: 400 }), 2), [1500, 1500], 'the balance, not the total')
})

t.test('line dues share the total in proportion and add up to it', async (t) => {
  t.same(lineDues(3400, book().lines), [3091, 309])
  t.same(lineDues(1000, [{ id: 1, quantity: 1, lineTotal: 0 }, { id: 2, quantity: 1, lineTotal: 0 }]), [500, 500], 'free lines share evenly')
  t.same(lineDues(0, []), [])
  t.equal(unitsDue(3091, 3, 0, 1), 1031)
  t.equal(unitsDue(3091, 3, 1, 2), 2060)
})

t.test('by-lines amounts: next unpaid units; unknown, repeated and taken lines refused', async (t) => {
  t.same(linesAmount(book(), [{ lineId: 1, quantity: 3 }, { lineId: 2, quantity: 1 }]), { ok: true, amount: 3400 })
  t.same(linesAmount(book({ paidUnits: { 1: 1 } }), [{ lineId: 1, quantity: 1 }]), { ok: true, amount: 1030 })
  t.match(linesAmount(book(), [{ lineId: 9, quantity: 1 }]), { ok: false, kind: 'unknown', field: 'lines.0.line_id' })
  t.match(linesAmount(book(), [{ lineId: 2, quantity: 1 }, { lineId: 2, quantity: 1 }]), { ok: false, kind: 'unknown', field: 'lines.1.line_id' })
  t.match(linesAmount(book({ paidUnits: { 1: 3 } }), [{ lineId: 1, quantity: 1 }]), { ok: false, kind: 'taken', field: 'lines.0.quantity' })
  t.match(billLines(book({ paidUnits: { 1: 2 } })), [{ line_id: 1, paid_quantity: 2, unpaid_quantity: 1, due: 3091, unpaid_due: 1030 }, { line_id: 2, unpaid_due: 309 }])
})

const state = (over: Partial<OrderState> = {}): OrderState => ({
  id: 7, storeId: 3, ownerId: 1, type: 'on-table', status: 'new', deliveryStatus: null, driverId: null, timeline: {}, isPaid: false, payments: book(), ...over,
})
const req = (over: Partial<PayRequest> = {}): PayRequest => ({ method: 'cash', amount: 1000, tip: 0, lines: null, register: 'main', staffId: null, provider: null, providerRef: null, ...over })
const pay = (s: OrderState, r: PayRequest) => reducePayment(s, { type: 'pay', payment: r, replyTo: null as never }, 'now', {})

t.test('the reducer: order.paid exactly when the total is first covered', async (t) => {
  const d1 = pay(state(), req())
  if (!d1.ok) throw d1.error
  t.same(d1.events, [])
  t.equal(d1.state.payments!.paid, 1000)
  t.equal(d1.rows![0]!.kind, 'payment.insert')
  const d2 = pay(d1.state, req({ amount: 2400, method: 'card', tip: 100 }))
  if (!d2.ok) throw d2.error
  t.equal(d2.state.isPaid, true)
  t.match(d2.events, [{ event: 'order.paid', data: { order_id: 7, total: '34.00', amount_paid: '34.00', tips: '1.00', methods: ['cash', 'card'] } }])
  t.match(pay(d2.state, req({ amount: 1 })), { ok: false, error: { code: 'order_already_paid' } })
  t.match(pay(state(), req({ amount: 3401 })), { ok: false, error: { code: 'overpayment' } })
  t.match(pay(state({ status: 'cancelled' }), req()), { ok: false, error: { code: 'order_cancelled' } })
  t.match(pay(state(), req({ amount: 5, lines: [{ lineId: 2, quantity: 1 }] })), { ok: false, error: { code: 'validation_failed' } })
})

t.test('online payments are pending until settled; a settle is idempotent', async (t) => {
  const d = pay(state(), req({ method: 'online', amount: 3400, provider: 'dev', providerRef: 'r1' }))
  if (!d.ok) throw d.error
  t.equal(d.state.payments!.paid, 0, 'pending pays nothing yet')
  t.same(d.events, [])
  const row = { id: 5, order_id: 7, store_id: 3, method: 'online' as const, amount: 3400, tip_amount: 0, status: 'pending' as const, lines: null, provider: 'dev', provider_ref: 'r1', shift_id: null, staff_id: null, created_at: 'x', completed_at: null, excess: 0 }
  const settle = (s: OrderState, status: 'pending' | 'succeeded') => reducePayment(s, { type: 'settle_payment', paymentId: 5, outcome: 'succeeded', replyTo: null as never }, 'now', { payment: { ...row, status } })
  const ok = settle(d.state, 'pending')
  if (!ok.ok) throw ok.error
  t.equal(ok.events.length, 1)
  const again = settle(ok.state, 'succeeded')
  t.match(again, { ok: true, events: [] })
  t.equal(again.ok && again.state, ok.state, 'nothing changes')
})

t.test('paying or refunding by lines refuses a line not on the order and a line named twice, at that pick', async (t) => {
  const paid = book({ paid: 3400, methods: ['cash'] })
  const rb = { payments: [{ id: 9, method: 'cash' as const, amount: 3400, refunded: 0 }], refundedUnits: {} }
  const unknown = [{ lineId: 2, quantity: 1 }, { lineId: 7, quantity: 1 }]
  const twice = [{ lineId: 1, quantity: 1 }, { lineId: 1, quantity: 1 }]
  t.same(linesAmount(book(), unknown), { ok: false, kind: 'unknown', field: 'lines.1.line_id', message: 'Line 7 is not on this order.' })
  t.same(linesAmount(book(), twice), { ok: false, kind: 'unknown', field: 'lines.1.line_id', message: 'Line 1 is listed twice.' })
  t.match(planRefund(paid, rb, { amount: null, lines: unknown, method: null }), { ok: false, code: 'validation_failed', field: 'lines.1.line_id', message: 'Line 7 is not on this order.' })
  t.match(planRefund(paid, rb, { amount: null, lines: twice, method: null }), { ok: false, code: 'validation_failed', field: 'lines.1.line_id', message: 'Line 1 is listed twice.' })
  t.match(planRefund(paid, rb, { amount: null, lines: [{ lineId: 1, quantity: 3 }], method: null }), { ok: true }, 'a paid order refunds every unit of a line')
})
