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
  // A late "succeeded" for the failed payment changes nothing.
  const late = await s.req('POST', '/payments/dev/complete', { body: { provider_ref, client_secret: start.body.client_action.client_secret } })
  t.match(late.body, { status: 'failed' })
  t.same(cash.body.balance, { total: 16, paid: 10, balance_due: 6, tips: 0, is_paid: false })

  const rest = await s.req('POST', `/customer/orders/${o.id}/pay`, { token: me.token, body: {} })
  t.equal(rest.body.payment.amount, 6, 'the customer pays the balance')
  const done = await s.req('POST', '/payments/dev/complete', { body: { provider_ref: rest.body.payment.provider_ref, client_secret: rest.body.client_action.client_secret } })
  t.match(done.body, { status: 'succeeded' })
  t.equal(paidEvents(o.id), 1)
  t.equal((s.app.svc.payments as DevPaymentProvider).refunds.length, 0)
})

t.test('a customer cannot pay another customer\'s order', async (t) => {
  const o = await customerOrder(other.token)
  isError(t, await s.req('POST', `/customer/orders/${o.id}/pay`, { token: me.token, body: {} }), 404, 'not_found', 'another customer\'s order')
  t.equal(db.prepare('SELECT COUNT(*) FROM payments WHERE order_id = ?').pluck().get(o.id), 0)
})
