/**
 * A reseller cancelling a customer's subscription (api-v1 §4.8, docs/billing.md "Resellers"): a
 * paused (or past-due) one has no paid time left and ends now, with its `subscription.expired` and
 * `entitlement.changed` events handed to the event router once durable, as the account's own cancel
 * does; an ended one is 422 `invalid_transition`.
 */
import t from 'tap'
import { startServer } from './helpers/server.ts'
import { createAccount } from './helpers/fixtures.ts'
import { grantReseller } from '../src/storage/reseller.ts'
import type { OutboxEvent } from '../src/storage/outbox.ts'

const s = await startServer({ RATE_LIMIT_PER_MINUTE: '1000000' })
t.teardown(() => s.close())
const db = s.app.svc.db

const reseller = createAccount(db)
grantReseller(db, reseller.ownerId)

const ok = async (method: string, path: string, token: string, body?: unknown) => {
  const r = await s.req(method, path, { token, body })
  if (r.status !== 200) throw new Error(`${method} ${path}: ${r.status} ${r.text}`)
  return r.body
}

t.test('a paused subscription ends now; its events are published; cancelling it again is 422', async (t) => {
  const plan = await ok('POST', '/reseller/plans', reseller.token, { name: 'Gold', base_plan: 'growth', price: 15, features: ['kds', 'crm'] })
  const c = await ok('POST', '/reseller/customers', reseller.token, { name: 'Cafe', email: 'cafe@example.com', plan_id: plan.id })
  const subId: number = c.customer.subscription.id
  t.match(await ok('POST', '/subscription/pause', c.token), { id: subId, status: 'paused' }, 'the customer pauses')

  const published: OutboxEvent[] = []
  const unsubscribe = s.app.svc.events.subscribe((e) => { if (e.owner_id === c.customer.id) published.push(e) })
  t.teardown(unsubscribe)
  const cancelled = await ok('POST', `/reseller/subscriptions/${subId}/cancel`, reseller.token)
  t.match(cancelled, { id: subId, status: 'cancelled', ended_at: String, cancel_at_period_end: false }, 'no paid time left: it ends now')

  const names = published.map((e) => e.event)
  t.ok(names.includes('subscription.expired'), 'subscription.expired reached the event router')
  t.match(published.find((e) => e.event === 'subscription.expired')?.data, { subscription_id: subId, user_id: c.customer.id, status: 'cancelled' })
  const stored = db.prepare<[number], string>("SELECT event FROM outbox WHERE owner_id = ? AND event LIKE 'subscription.%' ORDER BY id").pluck().all(c.customer.id)
  t.same(stored.filter((e) => e === 'subscription.expired'), ['subscription.expired'], 'and it is in the outbox once')

  const again = await s.req('POST', `/reseller/subscriptions/${subId}/cancel`, { token: reseller.token })
  t.equal(again.status, 422)
  t.match(again.body, { code: 'validation_failed', reason: 'invalid_transition' }, 'an ended subscription cannot be cancelled')
})
