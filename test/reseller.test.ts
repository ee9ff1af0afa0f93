/**
 * The reseller area through the API (api-v1 §4.8, docs/billing.md "Resellers"): only reseller
 * accounts get in; a reseller sees and acts on its own customers only (another reseller's are 404);
 * a new customer's token is shown once; suspending through the API locks the customer's tokens out
 * and unsuspending lets them back; a plan's retail price never goes below the wholesale price; stats
 * carry counts and totals, never a customer's personal data.
 */
import t from 'tap'
import { startServer } from './helpers/server.ts'
import { createAccount, createMenu, envelopeProblem, postOrder } from './helpers/fixtures.ts'
import { grantReseller } from '../src/storage/reseller.ts'
import { sha256Hex } from '../src/auth/tokens.ts'

const s = await startServer({ RATE_LIMIT_PER_MINUTE: '1000000' })
t.teardown(() => s.close())
const db = s.app.svc.db

const r1 = createAccount(db)
const r2 = createAccount(db)
const plain = createAccount(db)
grantReseller(db, r1.ownerId)
grantReseller(db, r2.ownerId)

const ok = async (method: string, path: string, token: string, body?: unknown) => {
  const r = await s.req(method, path, { token, body })
  if (r.status !== 200) throw new Error(`${method} ${path}: ${r.status} ${r.text}`)
  return r.body
}

t.test('an account without the reseller role gets 403 forbidden on every reseller route', async (t) => {
  for (const [method, path] of [['GET', '/reseller/customers'], ['POST', '/reseller/customers'], ['GET', '/reseller/plans'], ['POST', '/reseller/plans'],
    ['GET', '/reseller/subscriptions'], ['GET', '/reseller/invoices'], ['GET', '/reseller/customer-invoices'], ['GET', '/reseller/stats'], ['GET', '/reseller/tier']] as const) {
    const r = await s.req(method, path, { token: plain.token, body: method === 'POST' ? { name: 'x' } : undefined })
    t.equal(r.status, 403, `${method} ${path} → 403`)
    t.equal(envelopeProblem(r.body, 'forbidden'), null, 'forbidden envelope')
  }
})

let plan1: { id: number; key: string }
t.test('a plan of its own: never below the wholesale price, features a subset of the base plan', async (t) => {
  const low = await s.req('POST', '/reseller/plans', { token: r1.token, body: { name: 'Cheap', base_plan: 'growth', price: 14.99 } })
  t.equal(low.status, 422, 'below the Growth wholesale price (15.00) → 422')
  t.equal(low.body.code, 'validation_failed')
  t.ok(low.body.errors.price, 'names the price')
  t.same(low.body.details, { wholesale_price: 15, base_plan: 'growth' })
  const extra = await s.req('POST', '/reseller/plans', { token: r1.token, body: { name: 'Extra', base_plan: 'free', price: 5, features: ['kds', 'crm'] } })
  t.equal(extra.status, 422, 'a feature the base plan lacks → 422')
  t.ok(extra.body.errors.features)
  const bad = await s.req('POST', '/reseller/plans', { token: r1.token, body: { name: 'X', base_plan: 'nope', price: 50 } })
  t.equal(bad.status, 422, 'unknown base plan → 422')
  t.equal(db.prepare('SELECT COUNT(*) FROM plans WHERE reseller_id IS NOT NULL').pluck().get(), 0, 'nothing written by the refusals')

  const at = await ok('POST', '/reseller/plans', r1.token, { name: 'Gold', base_plan: 'growth', price: 15, features: ['kds', 'crm'] })
  t.match(at, { name: 'Gold', price: 15, base_plan: { key: 'growth', wholesale_price: 15 }, features: ['kds', 'crm'], period_days: 30 })
  plan1 = at
  const list = await ok('GET', '/reseller/plans', r1.token)
  t.same(list.data.map((p: { id: number }) => p.id), [at.id])
  t.same((await ok('GET', '/reseller/plans', r2.token)).data, [], "another reseller does not see it")
})

let c1: { customer: { id: number; subscription: { id: number } }; token: string; store: { id: number } }
t.test('creating a customer: an account on the plan, managed by the reseller; its token is shown once', async (t) => {
  c1 = await ok('POST', '/reseller/customers', r1.token, { name: 'Cafe One', email: 'one@example.com', plan_id: plan1.id, store: { title: 'Cafe One' } })
  t.match(c1, { customer: { name: 'Cafe One', email: 'one@example.com', status: 'active', plan: { id: plan1.id, key: plan1.key }, subscription: { status: 'active' }, wallet_balance: 0, store_count: 1 }, token: /^dso_/, store: { id: Number } })
  const me = await s.req('GET', '/me', { token: c1.token })
  t.equal(me.status, 200, 'the token works at once')
  t.same(me.body.token.capabilities, ['*'])
  t.equal((await s.req('GET', `/restaurants/${c1.store.id}`, { token: c1.token })).status, 200, 'the store is the customer\'s')
  const list = await s.req('GET', '/reseller/customers', { token: r1.token })
  t.equal(list.body.total, 1)
  t.notOk(list.text.includes(c1.token), 'the list never shows the token again')
  t.equal(db.prepare('SELECT COUNT(*) FROM owner_tokens WHERE token_hash = ?').pluck().get(sha256Hex(c1.token)), 1, 'stored hashed')
  t.equal(db.prepare('SELECT COUNT(*) FROM owner_tokens WHERE token_hash = ?').pluck().get(c1.token), 0, 'never stored raw')
  const entitled = db.prepare('SELECT feature_key FROM entitlements WHERE owner_id = ? AND revoked_at IS NULL ORDER BY feature_key').pluck().all(c1.customer.id)
  t.same(entitled, ['crm', 'kds'], "the customer holds its plan's features")

  const foreignPlan = await s.req('POST', '/reseller/customers', { token: r2.token, body: { name: 'X', email: 'x@example.com', plan_id: plan1.id } })
  t.equal(foreignPlan.status, 422, "another reseller's plan cannot be used")
  const bad = await s.req('POST', '/reseller/customers', { token: r1.token, body: { name: 'X', email: 'not-an-email', plan_id: plan1.id } })
  t.equal(bad.status, 422)
})

t.test("a reseller sees only its own customers: another reseller's are 404", async (t) => {
  const other = await ok('GET', '/reseller/customers', r2.token)
  t.equal(other.total, 0, "r2 lists none of r1's customers")
  const before = db.prepare('SELECT suspended_at FROM owners WHERE id = ?').pluck().get(c1.customer.id)
  for (const path of [`/reseller/customers/${c1.customer.id}/suspend`, `/reseller/customers/${c1.customer.id}/unsuspend`, `/reseller/customers/${c1.customer.id}/wallet/top-up`, `/reseller/subscriptions/${c1.customer.subscription.id}/cancel`]) {
    const r = await s.req('POST', path, { token: r2.token, body: { amount: 5 } })
    t.equal(r.status, 404, `${path} by another reseller → 404`)
    t.equal(envelopeProblem(r.body, 'not_found'), null)
  }
  // A plain account (not managed by anyone) is no reseller's customer either.
  t.equal((await s.req('POST', `/reseller/customers/${plain.ownerId}/suspend`, { token: r1.token })).status, 404)
  t.equal(db.prepare('SELECT suspended_at FROM owners WHERE id = ?').pluck().get(c1.customer.id), before, 'not suspended')
  t.equal(db.prepare('SELECT COUNT(*) FROM wallet_entries WHERE owner_id = ?').pluck().get(c1.customer.id), 0, 'not credited')
  t.same((await ok('GET', '/reseller/subscriptions', r2.token)).data, [])
})

t.test("suspend and unsuspend through the API switch the customer's tokens off and back on", async (t) => {
  const sus = await ok('POST', `/reseller/customers/${c1.customer.id}/suspend`, r1.token, { reason: 'unpaid' })
  t.match(sus, { id: c1.customer.id, status: 'suspended', suspended_at: String })
  const locked = await s.req('GET', '/me', { token: c1.token })
  t.equal(locked.status, 403)
  t.equal(envelopeProblem(locked.body, 'account_suspended'), null, 'account_suspended')
  t.equal((await s.req('GET', `/restaurants/${c1.store.id}`, { token: c1.token })).status, 403, 'on every route')
  const back = await ok('POST', `/reseller/customers/${c1.customer.id}/unsuspend`, r1.token)
  t.match(back, { status: 'active', suspended_at: null })
  t.equal((await s.req('GET', '/me', { token: c1.token })).status, 200, 'works again at once')
})

t.test("wallet top-up by the reseller: credited to the customer, once per reference", async (t) => {
  const a = await ok('POST', `/reseller/customers/${c1.customer.id}/wallet/top-up`, r1.token, { amount: 25, reference: 'inv-1' })
  t.match(a, { customer_id: c1.customer.id, balance: 25, repeated: false, entry: { amount: 25, reason: 'top_up', created_by: `reseller:${r1.ownerId}` } })
  const again = await ok('POST', `/reseller/customers/${c1.customer.id}/wallet/top-up`, r1.token, { amount: 25, reference: 'inv-1' })
  t.match(again, { balance: 25, repeated: true }, 'the same reference credits once')
  t.equal((await s.req('POST', `/reseller/customers/${c1.customer.id}/wallet/top-up`, { token: r1.token, body: { amount: 0 } })).status, 422, 'zero → 422')
  const list = await ok('GET', '/reseller/customers', r1.token)
  t.equal(list.data[0].wallet_balance, 25, 'the list shows the balance')
})

t.test('stats: counts and totals across its customers, never personal data', async (t) => {
  const menu = createMenu(db, c1.store.id)
  const personal = { customer_name: 'Zelda Secretname', phone: '+15550009999', address: '42 Hidden Lane' }
  for (let i = 0; i < 3; i++) {
    const o = await postOrder(s, c1.token, c1.store.id, { type: 'delivery', ...personal, items: [{ item_id: menu.fries, quantity: 2 }] })
    t.equal(o.status, 200)
  }
  const stats = await s.req('GET', '/reseller/stats?days=7', { token: r1.token })
  t.equal(stats.status, 200)
  t.match(stats.body, { window_days: 7, customers: { total: 1, active: 1, suspended: 0 }, mrr: 15, currency: 'USD', churn: { active_at_start: 0, lost: 0, rate: 0 }, orders: { count: 3 } })
  t.ok(stats.body.orders.total >= 18, 'order totals are summed')
  for (const secret of [personal.customer_name, personal.phone, personal.address, 'one@example.com', 'Cafe One']) {
    t.notOk(stats.text.includes(secret), `stats do not contain ${secret}`)
  }
  t.equal((await s.req('GET', '/reseller/stats?days=0', { token: r1.token })).status, 422, 'days out of range → 422')
  t.equal((await ok('GET', '/reseller/stats', r2.token)).orders.count, 0, "another reseller's stats see none of it")
})

t.test('tier: active customers, the discount and the distance to the next tier', async (t) => {
  const tier = await ok('GET', '/reseller/tier', r1.token)
  t.match(tier, { active_customers: 1, tier: { key: 'starter', discount_percent: 0 }, next: { tier: { key: 'silver', discount_percent: 10, min_customers: 10 }, customers_needed: 9 } })
  t.equal(tier.tiers.length, 4)
})

t.test('subscriptions: listed, and cancelled at the period end', async (t) => {
  const subs = await ok('GET', '/reseller/subscriptions?status=active', r1.token)
  t.equal(subs.total, 1)
  t.match(subs.data[0], { id: c1.customer.subscription.id, customer_id: c1.customer.id, status: 'active', cancel_at_period_end: false, plan: { id: plan1.id } })
  const c = await ok('POST', `/reseller/subscriptions/${c1.customer.subscription.id}/cancel`, r1.token)
  t.match(c, { status: 'active', cancel_at_period_end: true }, 'runs to its period end')
  t.equal((await s.req('GET', '/me', { token: c1.token })).status, 200, 'the customer keeps working until then')
})
