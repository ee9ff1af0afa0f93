/**
 * Plans limit what an account may create and use (docs/billing.md "Plans and entitlements"): each
 * quota refuses with 403 `plan_limit_reached` naming the limit on every front door that creates the
 * thing (owner REST, staff app, CLI), inside the inserting transaction (concurrent creates cannot
 * pass it together), writing nothing; features refuse with 403 `feature_not_in_plan` on each route
 * and socket that uses them. An account without a chosen plan is on the documented default (Free).
 */
import t from 'tap'
import { startServer } from './helpers/server.ts'
import {
  counts, createAccount, createCategory, createDriver, createItem, createOwner, createPlan, createStaff, createStore, isError, tokenFor,
} from './helpers/fixtures.ts'
import { WsClient, wsBase } from './helpers/ws-client.ts'
import { refusal } from './helpers/server.ts'
import { runCli } from '../src/cli.ts'
import { setAccountPlan } from '../src/storage/plans.ts'
import { PLATFORM_PLANS } from '../src/domain/plans.ts'

const s = await startServer({ RATE_LIMIT_PER_MINUTE: '100000', WEBHOOK_ALLOW_LOOPBACK: '1' })
t.teardown(() => s.close())
const db = s.app.svc.db
const free = PLATFORM_PLANS.find((p) => p.key === 'free')!

t.test('an account that never chose a plan is on the default plan, shown with usage', async (t) => {
  const ownerId = createOwner(db, 'Plain', null)
  const token = tokenFor(db, ownerId, ['*'])
  const r = await s.req('GET', '/account/plan', { token })
  t.equal(r.status, 200)
  t.match(r.body, { plan: { key: 'free', is_default: true }, status: 'active', suspended: false })
  t.same(r.body.features.filter((f: { included: boolean }) => f.included).map((f: { key: string }) => f.key).sort(), [...free.features].sort())
  t.match(r.body.quotas.find((q: { kind: string }) => q.kind === 'api_tokens'), { limit: free.quotas.api_tokens, used: 1 })
  const plans = await s.req('GET', '/plans')
  t.same(plans.body.data.map((p: { key: string }) => p.key), ['free', 'growth', 'pro'], 'the public catalog')
})

t.test('menu items: owner and staff refused at the limit; concurrent creates never exceed it', async (t) => {
  const a = createAccount(db, { plan: 'free' })
  const cat = createCategory(db, a.storeId, 'Bulk')
  for (let i = 3; i < free.quotas.menu_items! - 1; i++) createItem(db, a.storeId, cat, `Item ${i}`, 100)
  const staff = createStaff(db, a.storeId, { role: 'manager' })
  const body = (n: number) => ({ category_id: cat, name: `Race ${n}`, price: 1 })
  const race = await Promise.all([1, 2, 3, 4, 5].map((n) => s.req('POST', `/restaurants/${a.storeId}/menu/items`, { token: a.token, body: body(n) })))
  t.equal(race.filter((r) => r.status === 200).length, 1, 'exactly one of five concurrent creates fits the last place')
  const refused = race.find((r) => r.status !== 200)!
  isError(t, refused, 403, 'plan_limit_reached')
  t.match(refused.body.details, { limit: 'menu_items', max: free.quotas.menu_items, used: free.quotas.menu_items, plan: 'free' })
  const before = counts(db)
  isError(t, await s.req('POST', '/staff/menu/items', { token: staff.token, body: body(9) }), 403, 'plan_limit_reached', 'staff app')
  t.same(counts(db), before, 'nothing written')
  setAccountPlan(db, a.ownerId, 'growth')
  t.equal((await s.req('POST', '/staff/menu/items', { token: staff.token, body: body(10) })).status, 200, 'an upgrade lifts the limit at once')
})

t.test('staff, drivers, webhook endpoints: refused at the plan limit', async (t) => {
  const a = createAccount(db, { plan: 'free' })
  for (let i = 0; i < free.quotas.staff!; i++) createStaff(db, a.storeId, { role: 'cashier' })
  const r = await s.req('POST', `/restaurants/${a.storeId}/staff`, { token: a.token, body: { name: 'One more', email: 'more@staff.test', role: 'cashier', password: 'long-password' } })
  isError(t, r, 403, 'plan_limit_reached')
  t.match(r.body.details, { limit: 'staff', max: free.quotas.staff })

  for (let i = 0; i < free.quotas.drivers!; i++) createDriver(db, a.ownerId, a.storeId)
  const d = await s.req('POST', '/drivers', { token: a.token, body: { name: 'Extra', phone: '+15550109999' } })
  isError(t, d, 403, 'plan_limit_reached')
  t.match(d.body.details, { limit: 'drivers', max: free.quotas.drivers })

  for (let i = 0; i < free.quotas.webhook_endpoints!; i++) {
    t.equal((await s.req('POST', '/webhook-endpoints', { token: a.token, body: { url: `http://127.0.0.1:9/hook${i}`, events: ['*'] } })).status, 201)
  }
  const w = await s.req('POST', '/webhook-endpoints', { token: a.token, body: { url: 'http://127.0.0.1:9/more', events: ['*'] } })
  isError(t, w, 403, 'plan_limit_reached')
  t.match(w.body.details, { limit: 'webhook_endpoints', max: free.quotas.webhook_endpoints })
})

t.test('API tokens: the CLI refuses with the code at the limit', async (t) => {
  const ownerId = createOwner(db, 'Tokens', 'free')
  for (let i = 0; i < free.quotas.api_tokens!; i++) tokenFor(db, ownerId, ['read'])
  const env = { DB_PATH: s.dbPath, LOG_LEVEL: 'silent' }
  t.throws(() => runCli(['token', 'create', '--owner', String(ownerId), '--scopes', 'read', '--json'], env), { code: 'plan_limit_reached', details: { limit: 'api_tokens', max: free.quotas.api_tokens } }, 'the ApiError the CLI prints as code forbidden, reason plan_limit_reached (test/cli-help.test.ts)')
  setAccountPlan(db, ownerId, 'growth')
  t.equal(runCli(['token', 'create', '--owner', String(ownerId), '--scopes', 'read', '--json'], env).code, 0, 'room again on a bigger plan')
})

t.test('stores: POST /restaurants within the quota; a second store needs multi_store', async (t) => {
  const ownerId = createOwner(db, 'Stores', 'free')
  const token = tokenFor(db, ownerId, ['*'])
  const first = await s.req('POST', '/restaurants', { token, body: { title: 'First Shop', store_type: 'retail', currency: 'EUR', city: 'Lyon' } })
  t.equal(first.status, 200)
  t.match(first.body, { id: Number, title: 'First Shop', slug: 'first-shop', store_type: 'retail', currency: 'EUR', city: 'Lyon' })
  const second = await s.req('POST', '/restaurants', { token, body: { title: 'Second' } })
  isError(t, second, 403, 'feature_not_in_plan')
  t.match(second.body.details, { feature: 'multi_store', plan: 'free' })
  isError(t, await s.req('POST', '/restaurants', { token, body: { title: '' } }), 422, 'validation_failed')

  setAccountPlan(db, ownerId, 'growth')
  createStore(db, ownerId)
  t.equal((await s.req('POST', '/restaurants', { token, body: { title: 'Third', slug: 'first-shop' } })).status, 409, 'a taken slug')
  t.equal((await s.req('POST', '/restaurants', { token, body: { title: 'Third' } })).status, 200)
  const fourth = await s.req('POST', '/restaurants', { token, body: { title: 'Fourth' } })
  isError(t, fourth, 403, 'plan_limit_reached')
  t.match(fourth.body.details, { limit: 'stores', max: 3, used: 3, plan: 'growth' })
  isError(t, await s.req('POST', '/restaurants', { token: tokenFor(db, ownerId, ['restaurants:read']), body: { title: 'Nope' } }), 403, 'forbidden')
})

t.test('features: analytics, kds (routes and socket), delivery, webhooks refuse without them', async (t) => {
  const bare = createPlan(db, [])
  const a = createAccount(db, { plan: bare })
  const cook = createStaff(db, a.storeId, { role: 'manager' })
  const driver = createDriver(db, a.ownerId, a.storeId)
  const need = async (res: Promise<import('./helpers/server.ts').Res>, feature: string, what: string) => {
    const r = await res
    isError(t, r, 403, 'feature_not_in_plan', what)
    t.match(r.body.details, { feature, plan: bare }, what)
  }
  await need(s.req('GET', `/restaurants/${a.storeId}/analytics`, { token: a.token }), 'analytics', 'owner analytics')
  await need(s.req('GET', '/staff/analytics', { token: cook.token }), 'analytics', 'staff analytics')
  await need(s.req('GET', '/staff/kds', { token: cook.token }), 'kds', 'staff KDS tickets')
  t.match(await refusal(WsClient.open(`${wsBase(s)}/ws/kds`, { token: cook.token })), { status: 403, body: { code: 'forbidden', reason: 'feature_not_in_plan' } }, 'KDS socket upgrade')
  await need(s.req('POST', '/drivers', { token: a.token, body: { name: 'No', phone: '+15550108888' } }), 'delivery', 'driver create')
  await need(s.req('POST', '/webhook-endpoints', { token: a.token, body: { url: 'http://127.0.0.1:9/x', events: ['*'] } }), 'webhooks', 'endpoint create')
  t.ok(driver.id)

  setAccountPlan(db, a.ownerId, 'free')
  t.equal((await s.req('GET', `/restaurants/${a.storeId}/analytics`, { token: a.token })).status, 200, 'the default plan includes analytics')
  const kds = await WsClient.open(`${wsBase(s)}/ws/kds`, { token: cook.token })
  await kds.next((f) => f.type === 'snapshot')
  await kds.close()
})
