/**
 * Payments (issue 17 item 1; docs/operations.md "Payments"): cash and card through the owner and
 * staff routes, the balance, `order.paid` exactly once at a real webhook receiver even when two
 * partial payments from two front doors arrive at once, refusals with nothing written, shifts,
 * tenancy and permissions.
 */
import t from 'tap'
import { startServer } from './helpers/server.ts'
import { createAccount, createStaff, createStore, isError, outbox, postOrder, type Account } from './helpers/fixtures.ts'
import { createEndpoint, startReceiver } from './helpers/webhook-receiver.ts'
import { nowIso } from '../src/storage/db.ts'

const s = await startServer({ WEBHOOK_ALLOW_LOOPBACK: '1', RATE_LIMIT_PER_MINUTE: '100000' })
const rcv = await startReceiver()
t.teardown(async () => { await s.close(); await rcv.close() })
const db = s.app.svc.db
const a = createAccount(db)
const b = createAccount(db)
const staff = createStaff(db, a.storeId, { role: 'cashier' })
const noOrders = createStaff(db, a.storeId, { role: 'cashier', permissions: { revoke: ['orders'] } })
const ep = await createEndpoint(s.base, a.token, `${rcv.url}/paid`, ['order.paid'])

/** A dine-in order of 2 burgers (10.00) + 1 fries (3.00) = 23.00. */
async function order(acc: Account = a) {
  const r = await postOrder(s, acc.token, acc.storeId, { type: 'on-table', table_number: '4', items: [{ item_id: acc.menu.burger.id, quantity: 2 }, { item_id: acc.menu.fries, quantity: 1 }] })
  if (r.status !== 200) throw new Error(`order: ${r.status} ${r.text}`)
  return r.body as { id: number; total: number; items: Array<{ id: number }> }
}
const ownerPay = (id: number, body: unknown, acc: Account = a) => s.req('POST', `/restaurants/${acc.storeId}/orders/${id}/payments`, { token: acc.token, body })
const staffPay = (id: number, body: unknown, token = staff.token) => s.req('POST', `/staff/orders/${id}/payments`, { token, body })
const paymentRows = (orderId: number) => db.prepare('SELECT * FROM payments WHERE order_id = ? ORDER BY id').all(orderId) as Array<Record<string, any>>
const isPaid = (orderId: number) => (db.prepare('SELECT is_paid FROM orders WHERE id = ?').pluck().get(orderId) as number) === 1

t.test('cash and card succeed at once; the balance follows; order.paid fires when the total is covered', async (t) => {
  const o = await order()
  t.equal(o.total, 23)
  const first = await ownerPay(o.id, { amount: 10, method: 'cash', tip_amount: 1.5 })
  t.equal(first.status, 200, first.text)
  t.match(first.body.payment, { method: 'cash', amount: 10, tip_amount: 1.5, status: 'succeeded', staff_id: null })
  t.same(first.body.balance, { total: 23, paid: 10, balance_due: 13, tips: 1.5, is_paid: false })
  t.notOk(isPaid(o.id))
  t.equal(outbox(db, 'order.paid').filter((e) => e.data.order_id === o.id).length, 0, 'no order.paid while a balance is due')

  const second = await staffPay(o.id, { amount: 13, method: 'card' })
  t.equal(second.status, 200, second.text)
  t.match(second.body.payment, { method: 'card', status: 'succeeded', staff_id: staff.id })
  t.same(second.body.balance, { total: 23, paid: 23, balance_due: 0, tips: 1.5, is_paid: true })
  t.ok(isPaid(o.id), 'is_paid written')

  const view = await s.req('GET', `/restaurants/${a.storeId}/orders/${o.id}`, { token: a.token })
  t.equal(view.body.is_paid, true, 'the order view says paid')
  const list = await s.req('GET', `/staff/orders/${o.id}/payments`, { token: staff.token })
  t.equal(list.status, 200)
  t.equal(list.body.data.length, 2)
  t.same(list.body.balance, second.body.balance)
  t.same((await s.req('GET', `/staff/orders/${o.id}/bill`, { token: staff.token })).body.balance, second.body.balance, 'the bill says paid too')

  await rcv.until((all) => all.some((r) => r.body.data.order_id === o.id), 5000, 'order.paid')
  const paid = rcv.of('order.paid').filter((r) => r.body.data.order_id === o.id)
  t.equal(paid.length, 1)
  t.match(paid[0]!.body.data, { order_id: o.id, restaurant_id: a.storeId, total: '23.00', amount_paid: '23.00', tips: '1.50', methods: ['cash', 'card'] })
})

t.test('two partial payments from owner and staff at once: exactly one order.paid', async (t) => {
  for (let round = 0; round < 5; round++) {
    const o = await order()
    // 11.50 + 11.50 = 23.00: whichever lands second covers the total.
    const [x, y] = await Promise.all([ownerPay(o.id, { amount: 11.5, method: 'card' }), staffPay(o.id, { amount: 11.5, method: 'cash' })])
    t.equal(x.status, 200, x.text)
    t.equal(y.status, 200, y.text)
    t.ok(isPaid(o.id))
    t.equal(outbox(db, 'order.paid').filter((e) => e.data.order_id === o.id).length, 1, `round ${round}: one order.paid in the outbox`)
    await rcv.until((all) => all.some((r) => r.body.data.order_id === o.id), 5000, 'order.paid')
  }
  // Overlapping full payments: one wins, the other is refused as already paid.
  const o = await order()
  const both = await Promise.all([ownerPay(o.id, { amount: 23, method: 'card' }), staffPay(o.id, { amount: 23, method: 'cash' })])
  t.same(both.map((r) => r.status).sort(), [200, 409])
  t.equal(paymentRows(o.id).length, 1, 'one payment written')
  await rcv.until((all) => all.some((r) => r.body.data.order_id === o.id), 5000, 'order.paid')
  t.equal(rcv.of('order.paid').filter((r) => r.body.data.order_id === o.id).length, 1, 'one delivery at the receiver')
  t.ok(ep.id)
})

t.test('refusals: overpayment, cancelled, already paid, bad amounts — nothing written', async (t) => {
  const o = await order()
  const over = await ownerPay(o.id, { amount: 23.01, method: 'cash' })
  isError(t, over, 422, 'overpayment', 'overpayment')
  t.ok(over.body.errors?.amount, 'names the amount')
  for (const amount of [0, -1, 1.234, '5']) {
    isError(t, await ownerPay(o.id, { amount, method: 'cash' }), 422, 'validation_failed', `amount ${JSON.stringify(amount)}`)
  }
  isError(t, await ownerPay(o.id, { amount: 1, method: 'cheque' }), 422, 'validation_failed', 'unknown method')
  isError(t, await ownerPay(o.id, { method: 'cash' }), 422, 'validation_failed', 'neither amount nor lines')
  t.equal(paymentRows(o.id).length, 0, 'nothing written')

  t.equal((await ownerPay(o.id, { amount: 23, method: 'card' })).status, 200)
  isError(t, await staffPay(o.id, { amount: 1, method: 'cash' }), 409, 'order_already_paid', 'already paid')
  t.equal(paymentRows(o.id).length, 1)

  const c = await order()
  t.equal((await s.req('PUT', `/restaurants/${a.storeId}/orders/${c.id}/status`, { token: a.token, body: { status: 'cancelled' } })).status, 200)
  isError(t, await ownerPay(c.id, { amount: 5, method: 'cash' }), 409, 'order_cancelled', 'cancelled')
  t.equal(paymentRows(c.id).length, 0)
})

t.test('a cash payment while the register has an open shift names the shift', async (t) => {
  const shift = Number(db.prepare("INSERT INTO shifts (store_id, register, opening_float, opened_at) VALUES (?, 'bar', 10000, ?)").run(a.storeId, nowIso()).lastInsertRowid)
  const o = await order()
  const atBar = await staffPay(o.id, { amount: 5, method: 'cash', register: 'bar' })
  t.equal(atBar.body.payment.shift_id, shift)
  const elsewhere = await staffPay(o.id, { amount: 5, method: 'cash' })
  t.equal(elsewhere.body.payment.shift_id, null, 'register main has no open shift')
})

t.test('tenancy and permissions', async (t) => {
  const o = await order()
  const theirs = await order(b)
  isError(t, await ownerPay(theirs.id, { amount: 1, method: 'cash' }), 404, 'not_found', 'another owner\'s order under my store')
  isError(t, await s.req('POST', `/restaurants/${b.storeId}/orders/${theirs.id}/payments`, { token: a.token, body: { amount: 1, method: 'cash' } }), 404, 'not_found', 'another owner\'s store')
  isError(t, await s.req('GET', `/restaurants/${b.storeId}/orders/${theirs.id}/payments`, { token: a.token }), 404, 'not_found', 'reading another owner\'s payments')
  isError(t, await staffPay(theirs.id, { amount: 1, method: 'cash' }), 404, 'not_found', 'staff: another store\'s order')
  // Another store of the same owner: the order is not in it.
  const other = createStore(db, a.ownerId)
  isError(t, await s.req('POST', `/restaurants/${other.id}/orders/${o.id}/payments`, { token: a.token, body: { amount: 1, method: 'cash' } }), 404, 'not_found', 'cross-store')
  isError(t, await staffPay(o.id, { amount: 1, method: 'cash' }, noOrders.token), 403, 'forbidden', 'staff without orders')
  isError(t, await s.req('GET', `/staff/orders/${o.id}/bill`, { token: noOrders.token }), 403, 'forbidden', 'bill without orders')
  t.equal(paymentRows(o.id).length + paymentRows(theirs.id).length, 0, 'nothing written')
})

t.test('without a payment provider (the default) online payments are refused and the dev checkout does not exist', async (t) => {
  const o = await order()
  const before = paymentRows(o.id).length
  const r = await ownerPay(o.id, { amount: 5, method: 'online' })
  isError(t, r, 422, 'online_payments_unavailable')
  t.ok(r.body.errors?.method, 'the method field says why')
  t.equal(paymentRows(o.id).length, before, 'nothing written')
  const dev = await s.req('POST', '/payments/dev/complete', { body: { provider_ref: 'devpay_x', client_secret: 'x' } })
  t.equal(dev.status, 404, 'no dev checkout on a server that did not ask for the dev provider')
  const hook = await s.req('POST', '/payments/webhooks/none', { body: {} })
  t.equal(hook.status, 404, 'no webhook address for the absent provider')
})
