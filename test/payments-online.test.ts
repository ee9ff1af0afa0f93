/**
 * Online payments through the development provider (issue 17 item 1; docs/operations.md "Online
 * payments and the payment provider", docs/providers.md "Payments"): the customer pays its own
 * order, the provider's signed webhook settles it through the order actor (bad signature refused,
 * replay idempotent), a failure gives lines back, and the tracking socket sees the order paid.
 */
import t from 'tap'
import { startServer } from './helpers/server.ts'
import { createAccount, createCustomer, createStaff, isError, outbox } from './helpers/fixtures.ts'
import { WsClient, wsBase } from './helpers/ws-client.ts'
import { signDevEvent } from '../src/providers/payments-dev.ts'
import type { DevPaymentProvider } from '../src/providers/payments-dev.ts'

const SECRET = 'test-payment-webhook-secret-0123456789'
const s = await startServer({ RATE_LIMIT_PER_MINUTE: '100000', PAYMENT_PROVIDER: 'dev', PAYMENT_WEBHOOK_SECRET: SECRET })
t.teardown(() => s.close())
const db = s.app.svc.db
const a = createAccount(db)
const me = createCustomer(db, a.storeId)
const other = createCustomer(db, a.storeId)
const staff = createStaff(db, a.storeId, { role: 'cashier' })

async function customerOrder(token = me.token) {
  const r = await s.req('POST', '/customer/orders', { token, body: { type: 'takeaway', items: [{ item_id: a.menu.burger.id, quantity: 1 }, { item_id: a.menu.fries, quantity: 2 }] } })
  if (r.status !== 200) throw new Error(r.text)
  return r.body as { id: number; total: number; is_paid: boolean; track_token: string; items: Array<{ id: number }> }
}
const payment = (id: number) => db.prepare('SELECT * FROM payments WHERE id = ?').get(id) as Record<string, any>
const webhook = (raw: string, headers: Record<string, string>) => s.req('POST', '/payments/webhooks/dev', { raw, headers: { 'content-type': 'application/json', ...headers } })
const paidEvents = (orderId: number) => outbox(db, 'order.paid').filter((e) => e.data.order_id === orderId).length
const dev = () => s.app.svc.payments as DevPaymentProvider
const refunded = (orderId: number) => db.prepare("SELECT COALESCE(SUM(amount), 0) FROM refunds WHERE order_id = ? AND status = 'completed'").pluck().get(orderId) as number
const refundEvents = (orderId: number) => outbox(db, 'refund.completed').filter((e) => e.data.order_id === orderId)
const complete = (start: { body: any }) => s.req('POST', '/payments/dev/complete', { body: { provider_ref: start.body.payment.provider_ref, client_secret: start.body.client_action.client_secret } })
const ownerPay = (orderId: number, body: unknown) => s.req('POST', `/restaurants/${a.storeId}/orders/${orderId}/payments`, { token: a.token, body })
/** The money kept (cents): what succeeded payments took minus completed refunds. */
const kept = (orderId: number) => (db.prepare("SELECT COALESCE(SUM(amount), 0) FROM payments WHERE order_id = ? AND status = 'succeeded'").pluck().get(orderId) as number) - refunded(orderId)

t.test('a customer pays its own order online: pending, then paid by the signed webhook, once', async (t) => {
  const o = await customerOrder()
  t.equal(o.total, 16)
  t.equal(o.is_paid, false, 'customer-app orders start unpaid')
  const watcher = await WsClient.open(`${wsBase(s)}/ws/track/${o.track_token}`)
  t.match(await watcher.next(), { is_paid: false }, 'the snapshot')

  const start = await s.req('POST', `/customer/orders/${o.id}/pay`, { token: me.token, body: { tip_amount: 2 } })
  t.equal(start.status, 200, start.text)
  t.match(start.body.payment, { method: 'online', amount: 16, tip_amount: 2, status: 'pending', provider: 'dev', provider_ref: /^devpay_/ })
  t.match(start.body.client_action, { checkout_url: `${s.base}/payments/dev/complete`, client_secret: /_secret_/ })
  t.equal(start.body.balance.balance_due, 16, 'a pending payment does not pay yet')

  // The dev provider signs the event as a real provider would; the test replays it twice.
  const ref = start.body.payment.provider_ref as string
  const body = JSON.stringify({ id: 'evt_1', type: 'payment.succeeded', data: { ref, amount: 1800 } })
  const headers = signDevEvent(SECRET, 'evt_1', Math.floor(Date.now() / 1000), body)
  isError(t, await webhook(body, { ...headers, 'webhook-signature': 'v1,AAAA' }), 400, 'payment_signature_invalid', 'wrong signature')
  isError(t, await webhook(body.replace('succeeded', 'failed'), headers), 400, 'payment_signature_invalid', 'tampered body')
  const stale = signDevEvent(SECRET, 'evt_1', Math.floor(Date.now() / 1000) - 3600, body)
  isError(t, await webhook(body, stale), 400, 'payment_signature_invalid', 'an hour-old signature')
  isError(t, await webhook(body, {}), 400, 'payment_signature_invalid', 'unsigned')
  t.equal(payment(start.body.payment.id).status, 'pending', 'refused webhooks changed nothing')

  const first = await webhook(body, headers)
  t.equal(first.status, 200, first.text)
  t.match(first.body, { received: true, payment_id: start.body.payment.id, status: 'succeeded' })
  const replay = await webhook(body, headers)
  t.equal(replay.status, 200, 'a replay is acknowledged')
  t.equal(paidEvents(o.id), 1, 'order.paid once')
  t.match(await watcher.next((f) => f.is_paid === true), { id: o.id, is_paid: true }, 'the tracking socket sees the order paid')
  await watcher.close()
  t.equal((await s.req('GET', `/track/${o.track_token}`)).body.is_paid, true, 'public tracking view')
  isError(t, await s.req('POST', `/customer/orders/${o.id}/pay`, { token: me.token, body: {} }), 409, 'order_already_paid', 'paying again')
  isError(t, await s.req('POST', '/payments/webhooks/other', { raw: body, headers: { 'content-type': 'application/json', ...headers } }), 404, 'not_found', 'unknown provider')
})

t.test('the dev checkout completes or fails with the client secret; a failure pays nothing and frees its lines', async (t) => {
  const o = await customerOrder()
  const start = await s.req('POST', `/staff/orders/${o.id}/payments`, { token: staff.token, body: { method: 'online', lines: [{ line_id: o.items[0]!.id, quantity: 1 }] } })
  t.equal(start.status, 200, start.text)
  t.match(start.body.payment, { status: 'pending', amount: 10, shift_id: null })
  const { provider_ref } = start.body.payment
  isError(t, await s.req('POST', `/staff/orders/${o.id}/payments`, { token: staff.token, body: { method: 'cash', lines: [{ line_id: o.items[0]!.id, quantity: 1 }] } }), 409, 'lines_already_paid', 'lines of a pending payment are taken')
  isError(t, await s.req('POST', '/payments/dev/complete', { body: { provider_ref, client_secret: 'nope', outcome: 'failed' } }), 404, 'not_found', 'wrong client secret')
  const failed = await s.req('POST', '/payments/dev/complete', { body: { provider_ref, client_secret: start.body.client_action.client_secret, outcome: 'failed' } })
  t.match(failed.body, { status: 'failed' })
  const cash = await s.req('POST', `/staff/orders/${o.id}/payments`, { token: staff.token, body: { method: 'cash', lines: [{ line_id: o.items[0]!.id, quantity: 1 }] } })
  t.equal(cash.status, 200, 'the failed payment gave its lines back')
  t.same(cash.body.balance, { total: 16, paid: 10, balance_due: 6, tips: 0, is_paid: false })
  // A late "succeeded" for the failed payment: the money was taken, so it is recorded and given back in full.
  const late = await s.req('POST', '/payments/dev/complete', { body: { provider_ref, client_secret: start.body.client_action.client_secret } })
  t.match(late.body, { status: 'succeeded' })
  t.match(payment(start.body.payment.id), { status: 'succeeded', excess: 1000 })
  t.same((await s.req('GET', `/staff/orders/${o.id}/payments`, { token: staff.token })).body.balance, { total: 16, paid: 20, balance_due: 6, tips: 0, is_paid: false }, 'it does not count: 6 still due')
  t.equal(refunded(o.id), 1000)

  const rest = await s.req('POST', `/customer/orders/${o.id}/pay`, { token: me.token, body: {} })
  t.equal(rest.body.payment.amount, 6, 'the customer pays the balance')
  const done = await s.req('POST', '/payments/dev/complete', { body: { provider_ref: rest.body.payment.provider_ref, client_secret: rest.body.client_action.client_secret } })
  t.match(done.body, { status: 'succeeded' })
  t.equal(paidEvents(o.id), 1)
  t.same(dev().refunds.filter((r) => r.payment_ref === provider_ref).map((r) => r.amount), [1000], 'the provider refunded the late payment in full')
  t.equal(dev().refunds.filter((r) => r.payment_ref === rest.body.payment.provider_ref).length, 0)
})

t.test('a customer cannot pay another customer\'s order', async (t) => {
  const o = await customerOrder(other.token)
  isError(t, await s.req('POST', `/customer/orders/${o.id}/pay`, { token: me.token, body: {} }), 404, 'not_found', 'another customer\'s order')
  t.equal(db.prepare('SELECT COUNT(*) FROM payments WHERE order_id = ?').pluck().get(o.id), 0)
})

t.test('issue 17 review (a): cash for the full amount while an online payment is pending; the late success is refunded', async (t) => {
  const o = await customerOrder()
  const online = await s.req('POST', `/customer/orders/${o.id}/pay`, { token: me.token, body: {} })
  t.match(online.body.payment, { status: 'pending', amount: 16 })
  const cash = await ownerPay(o.id, { method: 'cash', amount: 16 })
  t.equal(cash.status, 200, 'a pending checkout does not block the till')
  t.equal(cash.body.balance.is_paid, true)
  const late = await complete(online)
  t.match(late.body, { status: 'succeeded' })
  t.match(payment(online.body.payment.id), { status: 'succeeded', excess: 1600 })
  t.equal(kept(o.id), 1600, 'paid − refunded == total')
  const bal = (await s.req('GET', `/restaurants/${a.storeId}/orders/${o.id}/payments`, { token: a.token })).body.balance
  t.equal(bal.paid - refunded(o.id) / 100, bal.total, 'balance paid − refunded == total')
  t.same(dev().refunds.filter((r) => r.payment_ref === online.body.payment.provider_ref).map((r) => r.amount), [1600], 'the provider gave the excess back')
  t.match(refundEvents(o.id), [{ data: { amount: '16.00', method: 'online', reason: 'overpayment' } }])
  t.equal(paidEvents(o.id), 1, 'order.paid once')
  const list = await s.req('GET', `/restaurants/${a.storeId}/orders/${o.id}/refunds`, { token: a.token })
  t.match(list.body, { refunded: 16, refundable: 16 }, 'the cash is still refundable, the excess is not')
})

t.test('an online payment partly beyond the total: only the excess goes back', async (t) => {
  const o = await customerOrder()
  const online = await ownerPay(o.id, { method: 'online', amount: 16 })
  t.equal(online.status, 200, online.text)
  isError(t, await ownerPay(o.id, { method: 'online', amount: 1 }), 409, 'payment_pending', 'open checkouts already ask for the balance')
  t.equal((await ownerPay(o.id, { method: 'cash', amount: 10 })).status, 200)
  t.match((await complete(online)).body, { status: 'succeeded' })
  t.match(payment(online.body.payment.id), { excess: 1000 })
  t.equal(kept(o.id), 1600, 'paid − refunded == total')
  t.equal(refunded(o.id), 1000)
  t.equal(paidEvents(o.id), 1, 'the online payment covered the total: paid once')
  t.equal((await s.req('GET', `/track/${o.track_token}`)).body.is_paid, true)
})

t.test('issue 17 review (a): a double tap opens one checkout; the second is 409 payment_pending', async (t) => {
  const o = await customerOrder()
  const [x, y] = await Promise.all([0, 1].map(() => s.req('POST', `/customer/orders/${o.id}/pay`, { token: me.token, body: {} })))
  const statuses = [x!.status, y!.status].sort()
  t.same(statuses, [200, 409], 'one checkout, one refusal')
  const refused = x!.status === 409 ? x! : y!
  t.equal(refused.body.code, 'payment_pending')
  t.equal(db.prepare('SELECT COUNT(*) FROM payments WHERE order_id = ?').pluck().get(o.id), 1, 'one payment recorded')
  // Partial pending: an online amount above balance − pending is an overpayment; cash is not held back.
  const p = await customerOrder()
  const part = await ownerPay(p.id, { method: 'online', amount: 10 })
  isError(t, await ownerPay(p.id, { method: 'online', amount: 7 }), 422, 'overpayment', 'more than balance − pending')
  const rest = await s.req('POST', `/customer/orders/${p.id}/pay`, { token: me.token, body: {} })
  t.equal(rest.body.payment.amount, 6, 'the customer checkout asks for balance − pending')
  t.equal((await ownerPay(p.id, { method: 'card', amount: 16 })).status, 200, 'the till is not blocked')
  await complete(part)
  await complete(rest)
  t.equal(kept(p.id), 1600, 'paid − refunded == total')
  t.equal(paidEvents(p.id), 1)
})

t.test('issue 17 review (b): a payment started before the order was cancelled and completed after is refunded in full', async (t) => {
  const o = await customerOrder()
  const online = await s.req('POST', `/customer/orders/${o.id}/pay`, { token: me.token, body: {} })
  t.equal((await s.req('PUT', `/restaurants/${a.storeId}/orders/${o.id}/status`, { token: a.token, body: { status: 'cancelled' } })).status, 200)
  t.match((await complete(online)).body, { status: 'succeeded' })
  t.match(payment(online.body.payment.id), { status: 'succeeded', excess: 1600 })
  t.equal(kept(o.id), 0, 'paid − refunded == total')
  t.equal(paidEvents(o.id), 0, 'no order.paid for a cancelled order')
  t.equal(db.prepare('SELECT is_paid FROM orders WHERE id = ?').pluck().get(o.id), 0, 'never is_paid')
  t.equal((await s.req('GET', `/track/${o.track_token}`)).body.is_paid, false)
  t.match(refundEvents(o.id), [{ data: { amount: '16.00', reason: 'order cancelled' } }])
  t.same(dev().refunds.filter((r) => r.payment_ref === online.body.payment.provider_ref).map((r) => r.amount), [1600])
})

t.test('cancelling a pending payment: owner and staff, 404 elsewhere, 422 when not pending, a late success refunded', async (t) => {
  const o = await customerOrder()
  const first = await s.req('POST', `/customer/orders/${o.id}/pay`, { token: me.token, body: {} })
  const id = first.body.payment.id as number
  const b = createAccount(db)
  const bOrder = await s.req('POST', `/restaurants/${b.storeId}/orders`, { token: b.token, body: { type: 'takeaway', customer_name: 'B', phone: '+15550001111', items: [{ item_id: b.menu.fries, quantity: 1 }] } })
  isError(t, await s.req('POST', `/restaurants/${b.storeId}/orders/${bOrder.body.id}/payments/${id}/cancel`, { token: b.token }), 404, 'not_found', 'another store\'s payment through its own order')
  isError(t, await s.req('POST', `/restaurants/${a.storeId}/orders/${o.id}/payments/${id}/cancel`, { token: b.token }), 404, 'not_found', 'another owner')
  const otherOrder = await customerOrder()
  isError(t, await s.req('POST', `/restaurants/${a.storeId}/orders/${otherOrder.id}/payments/${id}/cancel`, { token: a.token }), 404, 'not_found', 'a payment of another order')

  const cancelled = await s.req('POST', `/restaurants/${a.storeId}/orders/${o.id}/payments/${id}/cancel`, { token: a.token })
  t.equal(cancelled.status, 200, cancelled.text)
  t.match(cancelled.body, { payment: { id, status: 'failed' }, balance: { balance_due: 16, is_paid: false } })
  isError(t, await s.req('POST', `/staff/orders/${o.id}/payments/${id}/cancel`, { token: staff.token }), 422, 'invalid_transition', 'not pending any more')
  isError(t, await complete(first), 404, 'not_found', 'the dev provider forgot the cancelled checkout')

  // Staff cancel the next one; its payer completes it anyway (a provider without cancel): refunded in full.
  const second = await s.req('POST', `/customer/orders/${o.id}/pay`, { token: me.token, body: {} })
  t.equal(second.status, 200, 'the balance is free again after the cancel')
  const signed = dev().complete(second.body.payment.provider_ref, second.body.client_action.client_secret, 'succeeded')!
  const byStaff = await s.req('POST', `/staff/orders/${o.id}/payments/${second.body.payment.id}/cancel`, { token: staff.token })
  t.match(byStaff.body, { payment: { status: 'failed' } })
  const late = await webhook(signed.raw, signed.headers)
  t.match(late.body, { status: 'succeeded' })
  t.match(payment(second.body.payment.id), { status: 'succeeded', excess: 1600 })
  t.match(refundEvents(o.id), [{ data: { amount: '16.00', reason: 'payment cancelled' } }])
  t.equal(refunded(o.id), 1600)
  t.same((await s.req('GET', `/staff/orders/${o.id}/payments`, { token: staff.token })).body.balance, { total: 16, paid: 16, balance_due: 16, tips: 0, is_paid: false }, 'nothing counts')
  isError(t, await s.req('POST', `/staff/orders/${o.id}/payments/${second.body.payment.id}/cancel`, { token: staff.token }), 422, 'invalid_transition', 'a succeeded payment')
  t.equal(paidEvents(o.id), 0)
  // A cashier without `orders` cannot cancel.
  const noPerm = createStaff(db, a.storeId, { role: 'cashier', permissions: { revoke: ['orders'] } })
  const third = await s.req('POST', `/customer/orders/${o.id}/pay`, { token: me.token, body: {} })
  t.equal((await s.req('POST', `/staff/orders/${o.id}/payments/${third.body.payment.id}/cancel`, { token: noPerm.token })).status, 403)
})
