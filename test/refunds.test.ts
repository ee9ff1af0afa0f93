/**
 * Refunds (issue 17 item 2; docs/operations.md "Refunds"): full and partial (amount, lines), never
 * more than paid minus refunded (also when two refunds race), online payments refunded through the
 * provider, cash refunds paid out of the open shift (over/short), analytics `refunded`/`net`,
 * `refund.completed` at a real webhook receiver, cross-owner/cross-store 404s, staff 403s.
 */
import t, { type Test } from 'tap'
import { startServer } from './helpers/server.ts'
import { createAccount, createStaff, createStore, isError, postOrder } from './helpers/fixtures.ts'
import { conformsToCatalog, createEndpoint, startReceiver, type Received } from './helpers/webhook-receiver.ts'
import { DevPaymentProvider } from '../src/providers/payments-dev.ts'

const s = await startServer({ WEBHOOK_ALLOW_LOOPBACK: '1', RATE_LIMIT_PER_MINUTE: '100000', PAYMENT_PROVIDER: 'dev' })
const rcv = await startReceiver()
t.teardown(async () => { await s.close(); await rcv.close() })
const db = s.app.svc.db

const a = createAccount(db)
const b = createAccount(db)
const manager = createStaff(db, a.storeId, { role: 'manager' })
const cashier = createStaff(db, a.storeId, { role: 'cashier' })
const kitchen = createStaff(db, a.storeId, { role: 'kitchen' })
const other = createStore(db, a.ownerId)
const otherManager = createStaff(db, other.id, { role: 'manager' })
const ep = await createEndpoint(s.base, a.token, `${rcv.url}/refunds`, ['refund.*', 'shift.*'])

const refundCount = () => db.prepare('SELECT COUNT(*) FROM refunds').pluck().get() as number
const base = (orderId: number) => `/restaurants/${a.storeId}/orders/${orderId}`

/** A takeaway order of 4 × fries (3.00): total 12.00, one line. */
async function order(): Promise<{ id: number; lineId: number; total: number }> {
  const r = await postOrder(s, a.token, a.storeId, { type: 'takeaway', customer_name: 'Ada', phone: '+15550001111', items: [{ item_id: a.menu.fries, quantity: 4 }] })
  if (r.status !== 200) throw new Error(`order: ${r.status} ${r.text}`)
  const lineId = db.prepare('SELECT id FROM order_lines WHERE order_id = ?').pluck().get(r.body.id) as number
  return { id: r.body.id, lineId, total: r.body.total }
}
async function pay(orderId: number, body: Record<string, unknown>) {
  const r = await s.req('POST', `${base(orderId)}/payments`, { token: a.token, body })
  if (r.status !== 200) throw new Error(`pay: ${r.status} ${r.text}`)
  return r.body
}
const refund = (orderId: number, body: Record<string, unknown> = {}) => s.req('POST', `${base(orderId)}/refunds`, { token: a.token, body })

async function completedEvent(refundId: number): Promise<Received> {
  const match = (r: Received) => r.body.event === 'refund.completed' && r.body.data.refund_id === refundId
  await rcv.until((all) => all.some(match), 5000, `refund.completed ${refundId}`)
  return rcv.received.find(match)!
}
const conforms = (t: Test, r: Received) => conformsToCatalog(t, r, ep.secret)

t.test('a full cash refund is paid out of the open shift; over/short counts it; refund.completed fires', async (t) => {
  const shift = await s.req('POST', '/staff/shifts', { token: cashier.token, body: { opening_float: 100 } })
  t.equal(shift.status, 200)
  const o = await order()
  t.equal(o.total, 12)
  await pay(o.id, { amount: 12, method: 'cash', tip_amount: 1 })
  const r = await s.req('POST', `/staff/orders/${o.id}/refunds`, { token: manager.token, body: { reason: 'cold fries' } })
  t.equal(r.status, 200, 'a manager refunds')
  t.equal(r.body.data.length, 1)
  t.match(r.body.data[0], { order_id: o.id, method: 'cash', amount: 12, status: 'completed', reason: 'cold fries', shift_id: shift.body.id, staff_id: manager.id })
  t.equal(r.body.refunded, 12)
  t.equal(r.body.refundable, 0, 'the tip is not refundable, the amount is all gone')
  isError(t, await refund(o.id), 422, 'refund_exceeds_paid', 'a second full refund')
  isError(t, await refund(o.id, { amount: 0.01 }), 422, 'refund_exceeds_paid', 'even one cent')

  const ev = await completedEvent(r.body.data[0].id)
  t.same(ev.body.data, { refund_id: r.body.data[0].id, order_id: o.id, restaurant_id: a.storeId, amount: '12.00', method: 'cash', reason: 'cold fries', completed_at: r.body.data[0].completed_at })
  conforms(t, ev)

  const totals = (await s.req('GET', `/staff/shifts/${shift.body.id}`, { token: cashier.token })).body.totals
  t.same(totals, { opening_float: 100, cash_taken: 13, card_taken: 0, cash_refunded: 12, expected_cash: 101, counted_cash: null, over_short: null }, 'float + 13 taken (tip incl.) − 12 refunded')
  const closed = await s.req('POST', `/staff/shifts/${shift.body.id}/close`, { token: cashier.token, body: { counted_cash: 100.5 } })
  t.same(closed.body.totals, { ...totals, counted_cash: 100.5, over_short: -0.5 }, 'short 0.50')
})

t.test('partial refunds by amount and by lines stay within what was paid', async (t) => {
  const o = await order()
  await pay(o.id, { amount: 12, method: 'card' })
  const five = await refund(o.id, { amount: 5 })
  t.equal(five.status, 200)
  t.match(five.body, { refunded: 5, refundable: 7 })
  t.equal(five.body.data[0].shift_id, null, 'a card refund is not in the drawer')
  const over = await refund(o.id, { amount: 8 })
  isError(t, over, 422, 'refund_exceeds_paid', 'more than the 7.00 left')
  t.equal(over.body.details.refundable, 7, 'details say what is left')
  const oneUnit = await refund(o.id, { lines: [{ line_id: o.lineId, quantity: 1 }] })
  t.equal(oneUnit.status, 200)
  t.match(oneUnit.body, { refunded: 8, refundable: 4 })
  t.same(oneUnit.body.data[0].lines, [{ line_id: o.lineId, quantity: 1 }])
  t.equal(oneUnit.body.data[0].amount, 3, 'one unit of 3.00')
  t.same(oneUnit.body.lines, [{ line_id: o.lineId, name: 'Fries', quantity: 4, refundable_quantity: 3, unit_amounts: [3, 3, 3] }], 'lines: three units left, what each gives back')
  isError(t, await refund(o.id, { lines: [{ line_id: o.lineId, quantity: 4 }] }), 422, 'refund_exceeds_paid', 'four units when three are left')
  isError(t, await refund(o.id, { lines: [{ line_id: 999999, quantity: 1 }] }), 422, 'validation_failed', 'a line of no order')
  isError(t, await refund(o.id, { amount: 1, lines: [{ line_id: o.lineId, quantity: 1 }] }), 422, 'validation_failed', 'amount and lines')
  const rest = await refund(o.id)
  t.match(rest.body, { refunded: 12, refundable: 0 })
  t.equal(rest.body.data[0].amount, 4, 'the full refund takes what is left')
  const list = await s.req('GET', `${base(o.id)}/refunds`, { token: a.token })
  t.same(list.body.data.map((r: { amount: number }) => r.amount), [5, 3, 4])
  const view = await s.req('GET', `/restaurants/${a.storeId}/orders/${o.id}`, { token: a.token })
  t.equal(view.body.refunded, 12, 'the order view counts what its refunds gave back')
})

t.test('unpaid and partly paid orders: nothing beyond what was paid, by amount or by lines', async (t) => {
  const unpaid = await order()
  const before = refundCount()
  isError(t, await refund(unpaid.id), 422, 'refund_exceeds_paid', 'nothing paid')
  const part = await order()
  await pay(part.id, { method: 'cash', lines: [{ line_id: part.lineId, quantity: 1 }] })
  isError(t, await refund(part.id, { lines: [{ line_id: part.lineId, quantity: 2 }] }), 422, 'refund_exceeds_paid', 'two units when one was paid')
  isError(t, await refund(part.id, { amount: 3.01 }), 422, 'refund_exceeds_paid', 'more than the 3.00 paid')
  t.match((await s.req('GET', `${base(unpaid.id)}/refunds`, { token: a.token })).body.lines, [{ line_id: unpaid.lineId, refundable_quantity: 0, unit_amounts: [] }], 'unpaid: no unit refundable')
  t.match((await s.req('GET', `${base(part.id)}/refunds`, { token: a.token })).body.lines, [{ line_id: part.lineId, quantity: 4, refundable_quantity: 1, unit_amounts: [3] }], 'one unit paid by line: that unit refundable')
  t.equal(refundCount(), before, 'nothing written')
  t.equal((await refund(part.id, { lines: [{ line_id: part.lineId, quantity: 1 }] })).status, 200, 'the paid unit')
})

t.test('two refunds racing from two front doors: the second sees the first', async (t) => {
  const o = await order()
  await pay(o.id, { amount: 12, method: 'card' })
  const res = await Promise.all([refund(o.id, { amount: 8 }), s.req('POST', `/staff/orders/${o.id}/refunds`, { token: manager.token, body: { amount: 8 } })])
  t.same(res.map((r) => r.status).sort(), [200, 422], 'one refunds, one is refused')
  t.equal(db.prepare("SELECT SUM(amount) FROM refunds WHERE order_id = ? AND status = 'completed'").pluck().get(o.id), 800)
})

t.test('an online payment is refunded through the payment provider', async (t) => {
  const provider = s.app.svc.payments as DevPaymentProvider
  const o = await order()
  const started = await pay(o.id, { amount: 12, method: 'online' })
  const done = await s.req('POST', '/payments/dev/complete', { body: { provider_ref: started.payment.provider_ref, client_secret: started.client_action.client_secret } })
  t.equal(done.status, 200)
  const r = await refund(o.id, { amount: 4.5, reason: 'late' })
  t.equal(r.status, 200)
  t.match(r.body.data[0], { method: 'online', amount: 4.5, status: 'completed' })
  const sent = provider.refunds.filter((x) => x.payment_ref === started.payment.provider_ref)
  t.equal(sent.length, 1, 'one provider refund')
  t.equal(sent[0]!.amount, 450, 'of the refunded cents')
  const view = await s.req('GET', `/restaurants/${a.storeId}/orders/${o.id}`, { token: a.token })
  t.equal(view.body.refunded, 4.5, 'an online refund counts once the provider completed it')
  const ev = await completedEvent(r.body.data[0].id)
  t.match(ev.body.data, { order_id: o.id, amount: '4.50', method: 'online', reason: 'late' })
  conforms(t, ev)
})

t.test('analytics show refunds: gross and paid keep their meaning, refunded and net are added', async (t) => {
  const today = new Date().toISOString().slice(0, 10)
  const r = await s.req('GET', `/restaurants/${a.storeId}/analytics?from=${today}&to=${today}`, { token: a.token })
  t.equal(r.status, 200)
  const refunded = db.prepare("SELECT SUM(amount) FROM refunds WHERE store_id = ? AND status = 'completed'").pluck().get(a.storeId) as number
  t.ok(refunded > 0)
  t.equal(r.body.revenue.refunded, refunded / 100)
  t.equal(Math.round(r.body.revenue.net * 100), Math.round(r.body.revenue.paid * 100) - refunded, 'net = paid − refunded')
})

t.test('other owners and other stores get 404; staff need orders and the manager role', async (t) => {
  const o = await order()
  await pay(o.id, { amount: 12, method: 'card' })
  const before = refundCount()
  isError(t, await s.req('POST', `${base(o.id)}/refunds`, { token: b.token, body: {} }), 404, 'not_found', "B refunding A's order")
  isError(t, await s.req('POST', `${base(o.id)}/refunds`, { token: b.token, body: [0] }), 404, 'not_found', '404 before 422')
  isError(t, await s.req('GET', `/restaurants/${b.storeId}/orders/${o.id}/refunds`, { token: b.token }), 404, 'not_found', "A's order under B's store")
  isError(t, await s.req('POST', `/staff/orders/${o.id}/refunds`, { token: otherManager.token, body: {} }), 404, 'not_found', "the owner's other store")
  isError(t, await s.req('POST', `/staff/orders/${o.id}/refunds`, { token: cashier.token, body: {} }), 403, 'forbidden', 'a cashier cannot refund')
  isError(t, await s.req('POST', `/staff/orders/${o.id}/refunds`, { token: kitchen.token, body: {} }), 403, 'forbidden', 'kitchen staff')
  isError(t, await s.req('GET', `/staff/orders/${o.id}/refunds`, { token: kitchen.token }), 403, 'forbidden', 'kitchen staff cannot read')
  t.equal((await s.req('GET', `/staff/orders/${o.id}/refunds`, { token: cashier.token })).status, 200, 'a cashier may read')
  t.equal(refundCount(), before, 'nothing written')
})
