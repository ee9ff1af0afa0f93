/**
 * Editing and removing stores over the API (issue 14 item 2; docs/stores.md "Editing a store",
 * "Removing a store"): PUT /restaurants/{id} and DELETE /restaurants/{id}, through a real server.
 */
import t from 'tap'
import { startServer, type TestServer } from './helpers/server.ts'
import { createAccount, createOwner, createPlan, createStore, isError, postOrder, tokenFor, type Account } from './helpers/fixtures.ts'
import { setAccountPlan } from '../src/storage/plans.ts'

let s: TestServer
t.before(async () => { s = await startServer() })
t.teardown(() => s.close())

const db = () => s.app.svc.db
const storeRow = (id: number) => db().prepare('SELECT title, store_type, currency, city, settings, deleted_at FROM stores WHERE id = ?').get(id) as Record<string, any>
const fries = (a: Account) => ({ type: 'takeaway', items: [{ item_id: a.menu.fries, quantity: 1 }] })

t.test('PUT /restaurants/{id} edits title, store type, currency, city, address and time zone', async (t) => {
  const a = createAccount(db())
  const r = await s.req('PUT', `/restaurants/${a.storeId}`, {
    token: a.token,
    body: { title: 'Corner Café', store_type: 'retail', currency: 'EUR', city: 'Lisbon', address: 'Rua Augusta 1', timezone: 'Europe/Lisbon' },
  })
  t.equal(r.status, 200, r.text)
  t.match(r.body, { id: a.storeId, title: 'Corner Café', store_type: 'retail', currency: 'EUR', city: 'Lisbon' })
  t.equal(r.body.settings.timezone, 'Europe/Lisbon')
  t.equal(r.body.settings.address, 'Rua Augusta 1')
  const settings = (await s.req('GET', `/restaurants/${a.storeId}/settings`, { token: a.token })).body
  t.match(settings, { timezone: 'Europe/Lisbon', address: 'Rua Augusta 1', city: 'Lisbon' })
  // The store actor took the new vertical at once: retail has no takeaway, but in-store orders.
  isError(t, await postOrder(s, a.token, a.storeId, fries(a)), 422, 'validation_failed', 'a takeaway order at a retail store')
  const inStore = await postOrder(s, a.token, a.storeId, { ...fries(a), type: 'in_store' })
  t.equal(inStore.status, 200, `an in-store order after the edit: ${inStore.text.slice(0, 200)}`)

  // Keys left out stay; null clears city.
  const partial = await s.req('PUT', `/restaurants/${a.storeId}`, { token: a.token, body: { title: 'Corner Café 2', city: null } })
  t.equal(partial.status, 200)
  t.match(storeRow(a.storeId), { title: 'Corner Café 2', store_type: 'retail', city: null })
})

t.test('invalid edits are 422 and change nothing', async (t) => {
  const a = createAccount(db())
  const before = storeRow(a.storeId)
  for (const body of [{ title: '' }, { currency: 'euro' }, { timezone: 'Mars/Olympus' }, { store_type: 'spaceport' }, { title: 'ok', address: 'x'.repeat(301) }]) {
    isError(t, await s.req('PUT', `/restaurants/${a.storeId}`, { token: a.token, body }), 422, 'validation_failed', JSON.stringify(body).slice(0, 40))
  }
  t.same(storeRow(a.storeId), before, 'the store is unchanged')
})

t.test('tenancy and capability: another owner\'s store is 404, a read-only token 403', async (t) => {
  const a = createAccount(db())
  const b = createAccount(db())
  isError(t, await s.req('PUT', `/restaurants/${b.storeId}`, { token: a.token, body: { title: 'mine now' } }), 404, 'not_found', 'PUT another owner\'s store')
  isError(t, await s.req('DELETE', `/restaurants/${b.storeId}`, { token: a.token }), 404, 'not_found', 'DELETE another owner\'s store')
  const reader = tokenFor(db(), a.ownerId, ['restaurants:read'])
  isError(t, await s.req('PUT', `/restaurants/${a.storeId}`, { token: reader, body: { title: 'x' } }), 403, 'forbidden', 'PUT with restaurants:read')
  isError(t, await s.req('DELETE', `/restaurants/${a.storeId}`, { token: reader }), 403, 'forbidden', 'DELETE with restaurants:read')
  t.not(storeRow(b.storeId).title, 'mine now')
  t.equal(storeRow(b.storeId).deleted_at, null)
  t.equal(storeRow(a.storeId).deleted_at, null)
})

t.test('the currency cannot change once the store has orders', async (t) => {
  const a = createAccount(db())
  t.equal((await postOrder(s, a.token, a.storeId, fries(a))).status, 200)
  isError(t, await s.req('PUT', `/restaurants/${a.storeId}`, { token: a.token, body: { currency: 'EUR', title: 'Renamed' } }), 409, 'conflict', 'currency change with orders')
  t.match(storeRow(a.storeId), { currency: 'USD' }, 'currency kept')
  t.not(storeRow(a.storeId).title, 'Renamed', 'nothing of the refused edit was written')
  t.equal((await s.req('PUT', `/restaurants/${a.storeId}`, { token: a.token, body: { currency: 'USD', title: 'Renamed' } })).status, 200, 'same currency is fine')
})

t.test('DELETE is refused while orders are in progress, then removes the store and keeps its orders', async (t) => {
  const a = createAccount(db())
  const o1 = (await postOrder(s, a.token, a.storeId, fries(a))).body
  const o2 = (await postOrder(s, a.token, a.storeId, fries(a))).body
  const refused = await s.req('DELETE', `/restaurants/${a.storeId}`, { token: a.token })
  isError(t, refused, 409, 'conflict', 'delete with live orders')
  t.equal(refused.body.details.orders_in_progress, 2)
  t.equal(storeRow(a.storeId).deleted_at, null, 'not removed')

  await s.req('PUT', `/restaurants/${a.storeId}/orders/${o1.id}/status`, { token: a.token, body: { status: 'completed' } })
  isError(t, await s.req('DELETE', `/restaurants/${a.storeId}`, { token: a.token }), 409, 'conflict', 'one order still in progress')
  await s.req('PUT', `/restaurants/${a.storeId}/orders/${o2.id}/status`, { token: a.token, body: { status: 'cancelled' } })

  const del = await s.req('DELETE', `/restaurants/${a.storeId}`, { token: a.token })
  t.equal(del.status, 204, del.text)
  t.ok(storeRow(a.storeId).deleted_at, 'marked removed')
  t.equal(db().prepare('SELECT COUNT(*) FROM orders WHERE store_id = ?').pluck().get(a.storeId), 2, 'its orders are kept')

  isError(t, await s.req('GET', `/restaurants/${a.storeId}`, { token: a.token }), 404, 'not_found', 'GET the removed store')
  isError(t, await s.req('GET', `/restaurants/${a.storeId}/orders`, { token: a.token }), 404, 'not_found', 'its orders route')
  isError(t, await s.req('PUT', `/restaurants/${a.storeId}`, { token: a.token, body: { title: 'back' } }), 404, 'not_found', 'editing it')
  isError(t, await s.req('DELETE', `/restaurants/${a.storeId}`, { token: a.token }), 404, 'not_found', 'removing it twice')
  isError(t, await postOrder(s, a.token, a.storeId, fries(a)), 404, 'not_found', 'a new order')
  const list = (await s.req('GET', '/restaurants', { token: a.token })).body
  t.notOk(list.data.some((x: { id: number }) => x.id === a.storeId), 'gone from the store list')
  isError(t, await s.req('GET', `/menu/${a.storeId}`), 404, 'not_found', 'the public menu')
  t.equal(JSON.parse(storeRow(a.storeId).settings).public_listing, false, 'left the public catalog')
})

t.test('a removed store frees its place in the plan\'s stores quota', async (t) => {
  const plan = createPlan(db(), ['multi_store'], { stores: 1 })
  const ownerId = createOwner(db(), undefined, null)
  setAccountPlan(db(), ownerId, plan)
  const token = tokenFor(db(), ownerId, ['*'])
  const first = createStore(db(), ownerId)
  isError(t, await s.req('POST', '/restaurants', { token, body: { title: 'Second' } }), 403, 'plan_limit_reached', 'second store over the quota')
  t.equal((await s.req('DELETE', `/restaurants/${first.id}`, { token })).status, 204)
  const again = await s.req('POST', '/restaurants', { token, body: { title: 'Second' } })
  t.equal(again.status, 200, again.text)
})
