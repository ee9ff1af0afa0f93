/**
 * The CRM (docs/customers.md "CRM"; issue 12 item 3): `GET /restaurants/{id}/customers/{customerId}`
 * with order count, spend and the latest order; the list's `search` over name, email and phone,
 * paginated; the customers named on orders are the CRM's records (an order with a customer's phone
 * is linked to them, whichever front door placed it); tenancy (404); staff with `customers`; and the
 * plan's `crm` feature, checked by every CRM operation (403 `feature_not_in_plan`, nothing written).
 */
import t from 'tap'
import { startServer } from './helpers/server.ts'
import { createAccount, createCustomer, createStaff, createStorefrontToken, isError, postOrder } from './helpers/fixtures.ts'

const s = await startServer({ RATE_LIMIT_PER_MINUTE: '100000' })
t.teardown(() => s.close())
const db = s.app.svc.db
const a = createAccount(db)
const b = createAccount(db)
const sf = createStorefrontToken(db, a.storeId)

const detail = (customerId: number, storeId = a.storeId, token = a.token) => s.req('GET', `/restaurants/${storeId}/customers/${customerId}`, { token })
const list = (query: string, storeId = a.storeId, token = a.token) => s.req('GET', `/restaurants/${storeId}/customers${query}`, { token })
const fries = (extra: Record<string, unknown> = {}) => ({ type: 'takeaway', items: [{ item_id: a.menu.fries, quantity: 2 }], ...extra })
const customerIdOf = (orderId: number) => db.prepare('SELECT customer_id FROM orders WHERE id = ?').pluck().get(orderId) as number | null

t.test('a customer\'s detail: orders, spend (cancelled orders earn nothing) and the latest order', async (t) => {
  const c = createCustomer(db, a.storeId, { phone: '+15550001111' })
  const empty = await detail(c.id)
  t.equal(empty.status, 200)
  t.match(empty.body, { id: c.id, restaurant_id: a.storeId, phone: '+15550001111', order_count: 0, total_spent: 0, currency: 'USD', last_order_id: null, last_order_at: null })
  t.notOk('password_hash' in empty.body)

  const first = await s.req('POST', '/customer/orders', { token: c.token, body: fries() })
  const second = await s.req('POST', '/customer/orders', { token: c.token, body: fries() })
  t.equal(first.status, 200)
  const cancel = await s.req('PUT', `/restaurants/${a.storeId}/orders/${first.body.id}/status`, { token: a.token, body: { status: 'cancelled' } })
  t.equal(cancel.status, 200)
  const r = await detail(c.id)
  t.match(r.body, { order_count: 2, total_spent: second.body.total, last_order_id: second.body.id, last_order_at: second.body.created_at })
  t.equal(second.body.total, 6, 'two fries at 3.00: spend in the API\'s money numbers')
})

t.test('orders named by a customer\'s phone are linked to the CRM record, from every front door', async (t) => {
  const c = createCustomer(db, a.storeId, { phone: '+15550002222' })
  const sfOrder = await s.req('POST', '/storefront/orders', { headers: { 'x-storefront-token': sf }, body: fries({ customer_name: 'Walk-in', phone: '+1 (555) 000-2222' }) })
  t.equal(sfOrder.status, 200)
  t.equal(customerIdOf(sfOrder.body.id), c.id, 'a storefront order with the phone (typed differently) is the customer\'s')
  const phoneOrder = await postOrder(s, a.token, a.storeId, fries({ phone: '+15550002222' }))
  t.equal(customerIdOf(phoneOrder.body.id), c.id, 'an owner\'s phone order too')
  const stranger = await postOrder(s, a.token, a.storeId, fries({ phone: '+15559999999' }))
  t.equal(customerIdOf(stranger.body.id), null, 'an unknown phone links to nobody')
  const otherStore = createCustomer(db, b.storeId, { phone: '+15550003333' })
  const notTheirs = await postOrder(s, a.token, a.storeId, fries({ phone: '+15550003333' }))
  t.equal(customerIdOf(notTheirs.body.id), null, 'another store\'s customer with the phone is not linked')
  t.match((await detail(c.id)).body, { order_count: 2, total_spent: 12, last_order_id: phoneOrder.body.id })
  const history = await s.req('GET', '/customer/orders', { token: c.token })
  t.same(history.body.data.map((o: { id: number }) => o.id), [phoneOrder.body.id, sfOrder.body.id], 'and they are in the customer app\'s history: the same records')
  t.match((await detail(otherStore.id, b.storeId, b.token)).body, { order_count: 0 })
})

t.test('search matches name, email or phone; the list is paginated', async (t) => {
  const store = createAccount(db)
  const mk = (body: Record<string, unknown>) => s.req('POST', `/restaurants/${store.storeId}/customers`, { token: store.token, body })
  t.equal((await mk({ name: 'Grace Hopper', email: 'grace@navy.test' })).status, 200)
  t.equal((await mk({ name: 'Alan Turing', phone: '+44 20 7946 0000' })).status, 200)
  for (let i = 0; i < 31; i++) await mk({ name: `Bulk ${i}`, email: `bulk${i}@x.test` })
  const q = (query: string) => list(query, store.storeId, store.token)
  t.same((await q('?search=hopper')).body.data.map((c: { name: string }) => c.name), ['Grace Hopper'], 'by name, case-insensitively')
  t.same((await q('?search=navy.test')).body.data.map((c: { name: string }) => c.name), ['Grace Hopper'], 'by email')
  t.same((await q('?search=7946')).body.data.map((c: { name: string }) => c.name), ['Alan Turing'], 'by phone')
  t.same((await q('?search=%25')).body.data, [], 'a % is literal, not a wildcard')
  const page1 = (await q('')).body
  t.match(page1, { current_page: 1, last_page: 2, per_page: 30, total: 33 })
  t.equal(page1.data.length, 30)
  t.equal((await q('?page=2')).body.data.length, 3)
})

t.test('tenancy: another store\'s customer and another owner\'s store are 404', async (t) => {
  const theirs = createCustomer(db, b.storeId)
  isError(t, await detail(theirs.id), 404, 'not_found', 'B\'s customer through A\'s store')
  isError(t, await detail(theirs.id, b.storeId, a.token), 404, 'not_found', 'B\'s store with A\'s token')
  isError(t, await detail(999_999), 404, 'not_found', 'no such customer')
})

t.test('staff with `customers` read the detail of their store\'s customers', async (t) => {
  const c = createCustomer(db, a.storeId)
  const cashier = createStaff(db, a.storeId, { role: 'cashier' })
  const r = await s.req('GET', `/staff/customers/${c.id}`, { token: cashier.token })
  t.equal(r.status, 200)
  t.match(r.body, { id: c.id, order_count: Number })
  const theirs = createCustomer(db, b.storeId)
  isError(t, await s.req('GET', `/staff/customers/${theirs.id}`, { token: cashier.token }), 404, 'not_found', 'another store\'s customer')
  const cook = createStaff(db, a.storeId, { role: 'kitchen' })
  isError(t, await s.req('GET', `/staff/customers/${c.id}`, { token: cook.token }), 403, 'forbidden', 'kitchen staff lack `customers`')
})

t.test('an account whose plan lacks the CRM is refused on every CRM route, and nothing is written', async (t) => {
  const free = createAccount(db, { plan: 'free' })
  const c = createCustomer(db, free.storeId)
  const cashier = createStaff(db, free.storeId, { role: 'cashier' })
  const before = db.prepare('SELECT COUNT(*) FROM customers').pluck().get()
  const refusals = [
    ['owner list', await list('', free.storeId, free.token)],
    ['owner detail', await detail(c.id, free.storeId, free.token)],
    ['owner create', await s.req('POST', `/restaurants/${free.storeId}/customers`, { token: free.token, body: { name: 'X', email: 'x@free.test' } })],
    ['staff list', await s.req('GET', '/staff/customers', { token: cashier.token })],
    ['staff detail', await s.req('GET', `/staff/customers/${c.id}`, { token: cashier.token })],
    ['staff create', await s.req('POST', '/staff/customers', { token: cashier.token, body: { phone: '+15550004444' } })],
  ] as const
  for (const [name, r] of refusals) {
    isError(t, r, 403, 'feature_not_in_plan', name)
    t.same(r.body.details, { feature: 'crm', plan: 'free' }, `${name}: details name the feature and plan`)
  }
  t.equal(db.prepare('SELECT COUNT(*) FROM customers').pluck().get(), before, 'no customer created')
  isError(t, await detail(c.id, free.storeId, a.token), 404, 'not_found', 'tenancy still comes first: another owner gets 404, not a plan hint')
})
