/**
 * Online refunds left pending (docs/operations.md "Refunds"): the server can stop between reserving a
 * refund and settling it, or the provider can answer `pending`. The scheduled retry asks the provider
 * again under the refund's own key and settles it; a refund the provider had already made is settled
 * with that refund, never made twice; a refund reserved moments ago (its request still under way) is
 * left to its request.
 */
import t from 'tap'
import { startServer } from './helpers/server.ts'
import { createAccount, postOrder } from './helpers/fixtures.ts'
import { nowIso } from '../src/storage/db.ts'
import { loadConfig } from '../src/config.ts'
import { DevPaymentProvider } from '../src/providers/payments-dev.ts'
import { REFUND_RETRY_AFTER_MS } from '../src/ops/money/refunds.ts'

const s = await startServer({ RATE_LIMIT_PER_MINUTE: '100000', PAYMENT_PROVIDER: 'dev', REFUND_RETRY_CRON: 'off' })
t.teardown(() => s.close())
const db = s.app.svc.db
const a = createAccount(db)
const provider = s.app.svc.payments as DevPaymentProvider

/** A 12.00 order paid online in full; its payment row and provider reference. */
async function paidOnline() {
  const o = await postOrder(s, a.token, a.storeId, { type: 'takeaway', customer_name: 'Ada', items: [{ item_id: a.menu.fries, quantity: 4 }] })
  if (o.status !== 200) throw new Error(`order: ${o.status} ${o.text}`)
  const started = await s.req('POST', `/restaurants/${a.storeId}/orders/${o.body.id}/payments`, { token: a.token, body: { amount: 12, method: 'online' } })
  if (started.status !== 200) throw new Error(`pay: ${started.status} ${started.text}`)
  const done = await s.req('POST', '/payments/dev/complete', { body: { provider_ref: started.body.payment.provider_ref, client_secret: started.body.client_action.client_secret } })
  if (done.status !== 200) throw new Error(`complete: ${done.status} ${done.text}`)
  return { orderId: o.body.id as number, paymentId: started.body.payment.id as number, ref: started.body.payment.provider_ref as string }
}

/** A pending online refund row as the actor reserves it, `agoMs` in the past (the server then stopped). */
const reserved = (p: { orderId: number; paymentId: number }, cents: number, agoMs: number) => Number(db.prepare(
  "INSERT INTO refunds (order_id, store_id, payment_id, method, amount, status, created_at) VALUES (?, ?, ?, 'online', ?, 'pending', ?)",
).run(p.orderId, a.storeId, p.paymentId, cents, nowIso(Date.now() - agoMs)).lastInsertRowid)
const statusOf = (id: number) => db.prepare('SELECT status FROM refunds WHERE id = ?').pluck().get(id)
const refundedOf = async (orderId: number) => (await s.req('GET', `/restaurants/${a.storeId}/orders/${orderId}`, { token: a.token })).body.refunded

t.test('a refund left pending is asked for again and completed once', async (t) => {
  const p = await paidOnline()
  const id = reserved(p, 250, REFUND_RETRY_AFTER_MS + 60_000)
  t.equal(await refundedOf(p.orderId), 0, 'a pending refund does not count as refunded')
  t.match(await s.app.refundRetry.runNow(), { asked: 1, settled: 1 })
  t.equal(statusOf(id), 'completed')
  const sent = provider.refunds.filter((r) => r.key === `refund_${id}`)
  t.equal(sent.length, 1, 'the provider was asked under the refund\'s key')
  t.equal(sent[0]!.amount, 250)
  t.equal(await refundedOf(p.orderId), 2.5, 'and it counts now')
  t.match(await s.app.refundRetry.runNow(), { asked: 0 }, 'nothing left to retry')
  t.equal(provider.refunds.filter((r) => r.key === `refund_${id}`).length, 1, 'never given back twice')
})

t.test('a refund the provider made before the server stopped is settled with it, not repeated', async (t) => {
  const p = await paidOnline()
  const id = reserved(p, 300, REFUND_RETRY_AFTER_MS + 60_000)
  const before = await provider.refund(p.ref, 300, `refund_${id}`)
  t.match(await s.app.refundRetry.runNow(), { asked: 1, settled: 1 })
  t.equal(provider.refunds.filter((r) => r.key === `refund_${id}`).length, 1, 'one refund at the provider')
  t.equal(db.prepare('SELECT provider_ref FROM refunds WHERE id = ?').pluck().get(id), before.ref, 'the row names the provider\'s refund')
  t.equal(await refundedOf(p.orderId), 3)
})

t.test('a refund reserved moments ago is left to the request that reserved it', async (t) => {
  const p = await paidOnline()
  const id = reserved(p, 100, 1000)
  t.match(await s.app.refundRetry.runNow(), { asked: 0 })
  t.equal(statusOf(id), 'pending')
  t.equal(provider.refunds.filter((r) => r.key === `refund_${id}`).length, 0)
  t.match(await s.app.refundRetry.runNow(new Date(Date.now() + REFUND_RETRY_AFTER_MS)), { asked: 1, settled: 1 }, 'asked once it is old enough')
})

t.test('REFUND_RETRY_CRON is checked at start', async (t) => {
  t.equal(loadConfig({}).refundRetryCron, '*/5 * * * *', 'every 5 minutes by default')
  t.equal(loadConfig({ REFUND_RETRY_CRON: 'off' }).refundRetryCron, 'off')
  t.throws(() => loadConfig({ REFUND_RETRY_CRON: 'sometimes' }), /REFUND_RETRY_CRON is not a cron expression/)
})
