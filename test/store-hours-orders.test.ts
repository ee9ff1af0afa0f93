/**
 * Business hours bind orders (docs/stores.md "Orders outside business hours"; issue 12 item 3):
 * storefront and customer-app orders while the store is outside its hours, on a holiday or not
 * accepting orders are refused with 422 `store_closed` (details `{reason, opens_at}`), and nothing
 * is written; the owner's own orders (dashboard, phone orders) are accepted; a change of hours
 * takes effect for the very next order (the store actor holds what was written); a replay of an
 * order taken while open still answers after closing; `GET /storefront/restaurant` tells.
 */
import t from 'tap'
import { startServer } from './helpers/server.ts'
import { counts, createAccount, createCustomer, createStorefrontToken, isError, postOrder } from './helpers/fixtures.ts'

const s = await startServer({ RATE_LIMIT_PER_MINUTE: '100000' })
t.teardown(() => s.close())
const db = s.app.svc.db
const a = createAccount(db)
const sf = createStorefrontToken(db, a.storeId)
const customer = createCustomer(db, a.storeId)

const DAYS = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun']
const week = (intervals: string[][]) => Object.fromEntries(DAYS.map((d) => [d, intervals]))
const day = (offset: number) => new Date(Date.now() + offset * 86_400_000).toISOString().slice(0, 10)
const order = { type: 'takeaway', items: [{ item_id: a.menu.fries, quantity: 1 }] }

const setHours = async (body: unknown) => {
  const r = await s.req('PUT', `/restaurants/${a.storeId}/business-hours`, { token: a.token, body })
  if (r.status !== 200) throw new Error(`hours not set: ${r.text}`)
  return r.body
}
const setSettings = async (body: unknown) => {
  const r = await s.req('PUT', `/restaurants/${a.storeId}/settings`, { token: a.token, body })
  if (r.status !== 200) throw new Error(`settings not set: ${r.text}`)
  return r.body
}
const storefrontOrder = (headers: Record<string, string> = {}) => s.req('POST', '/storefront/orders', { headers: { 'x-storefront-token': sf, ...headers }, body: order })
const customerOrder = () => s.req('POST', '/customer/orders', { token: customer.token, body: order })
const ownerOrder = () => postOrder(s, a.token, a.storeId, order)

t.test('open (hours around the clock, or none set): every front door takes orders', async (t) => {
  t.equal((await storefrontOrder()).status, 200, 'no hours set: storefront order accepted')
  await setHours({ business_hours: week([['00:00', '24:00']]), timezone: 'Pacific/Auckland' })
  t.equal((await storefrontOrder()).status, 200, 'storefront')
  t.equal((await customerOrder()).status, 200, 'customer app')
  t.equal((await ownerOrder()).status, 200, 'owner')
})

t.test('outside the hours: storefront and customer orders are refused, nothing is written', async (t) => {
  await setHours({ business_hours: week([]), timezone: 'UTC', holidays: [] })
  const before = counts(db)
  for (const [name, send] of [['storefront', storefrontOrder], ['customer', customerOrder]] as const) {
    const r = await send()
    isError(t, r, 422, 'store_closed', name)
    t.same(r.body.details, { reason: 'hours', opens_at: null }, `${name}: a week without hours has no known opening`)
  }
  t.same(counts(db), before, 'no order, line, event or idempotency key')
  t.equal((await ownerOrder()).status, 200, 'the owner\'s own order (a phone order after hours) is accepted')
})

t.test('on a holiday: refused, and the answer says when the store opens next', async (t) => {
  await setHours({ business_hours: week([['00:00', '24:00']]), timezone: 'UTC', holidays: [{ from: day(-1), to: day(1), note: 'Inventory' }] })
  const r = await storefrontOrder()
  isError(t, r, 422, 'store_closed', 'holiday')
  t.same(r.body.details, { reason: 'holiday', opens_at: `${day(2)}T00:00:00+00:00` })
  t.match(r.body.message, new RegExp(`opens next at ${day(2)}T00:00:00\\+00:00`), 'the message says when')
  isError(t, await customerOrder(), 422, 'store_closed', 'customer app')
  t.equal((await ownerOrder()).status, 200, 'owner order accepted')
  const info = await s.req('GET', '/storefront/restaurant', { headers: { 'x-storefront-token': sf } })
  t.match(info.body, { accepting_orders: false, next_opening: `${day(2)}T00:00:00+00:00`, timezone: 'UTC', holidays: [{ from: day(-1), to: day(1) }] }, 'the storefront can say so before the diner orders')
})

t.test('accepting_orders false closes the store whatever the hours; true opens it again at once', async (t) => {
  await setHours({ business_hours: null, holidays: [] })
  const placed = await storefrontOrder({ 'idempotency-key': 'before-the-pause' })
  t.equal(placed.status, 200)
  await setSettings({ accepting_orders: false })
  const r = await storefrontOrder()
  isError(t, r, 422, 'store_closed', 'paused')
  t.same(r.body.details, { reason: 'not_accepting', opens_at: null })
  isError(t, await customerOrder(), 422, 'store_closed', 'customer app while paused')
  t.equal((await ownerOrder()).status, 200, 'owner order accepted while paused')
  const replay = await storefrontOrder({ 'idempotency-key': 'before-the-pause' })
  t.equal(replay.status, 200, 'a retry of an order taken while open still gets its order')
  t.equal(replay.body.id, placed.body.id)
  await setSettings({ accepting_orders: true })
  t.equal((await storefrontOrder()).status, 200, 'open again for the very next order')
  t.equal((await customerOrder()).status, 200)
})
