/**
 * Ids that leave the server are never handed out again (issue 10 #2; docs/storage.md "Ids"). Before
 * migration 006 SQLite gave a new row max(id)+1: when owner A deleted its newest driver, the next
 * driver of ANY owner got the same id, and with it the old driver's deliveries (customer name,
 * phone, address, totals) and earnings. Now the id is new, the old orders name no driver, and the
 * new driver's token sees nothing of them. The same for other deletable things.
 */
import t from 'tap'
import { startServer } from './helpers/server.ts'
import { assign, createFleet, deliveryOrder, driverStatus, randomPhone, type TestDriver } from './helpers/delivery.ts'

const s = await startServer({ RATE_LIMIT_PER_MINUTE: '100000', WEBHOOK_ALLOW_LOOPBACK: '1' })
t.teardown(() => s.close())
const db = s.app.svc.db
const a = createFleet(db, { driverFee: 4.5 })
const b = createFleet(db)

/** Through the API, so the id is the one the server generates. */
async function createDriver(ownerToken: string, restaurantId: number): Promise<TestDriver> {
  const r = await s.req('POST', '/drivers', { token: ownerToken, body: { name: 'Driver', phone: randomPhone(), restaurant_id: restaurantId } })
  if (r.status !== 200) throw new Error(`driver create failed: ${r.status} ${r.text}`)
  return { id: r.body.id, token: r.body.token, phone: r.body.phone, name: r.body.name }
}

t.test("a deleted driver's id goes to nobody, and nobody sees its deliveries", async (t) => {
  // Owner A's newest driver delivers an order (with a tip, so it earns), then is deleted.
  const old = await createDriver(a.ownerToken, a.storeId)
  const o = await deliveryOrder(s, a, { tip_amount: 2 })
  await assign(s, a, o.id, old.id)
  t.equal((await driverStatus(s, old, o.id, 'delivered')).status, 200)
  const before = await s.req('GET', '/driver/earnings', { token: old.token })
  t.match(before.body, { deliveries: 1, fees: 4.5, tips: 2 }, 'the old driver earned from it')
  t.equal((await s.req('DELETE', `/drivers/${old.id}`, { token: a.ownerToken })).status, 204)

  // Owner B's next driver: before the fix it was handed the same id.
  const next = await createDriver(b.ownerToken, b.storeId)
  t.not(next.id, old.id, 'a new id')
  t.ok(next.id > old.id, 'ids only grow')

  const list = await s.req('GET', '/driver/deliveries', { token: next.token })
  t.equal(list.status, 200)
  t.same(list.body.data, [], 'no deliveries')
  t.equal(list.body.total, 0)
  const one = await s.req('GET', `/driver/deliveries/${o.id}`, { token: next.token })
  t.equal(one.status, 404, "the old driver's delivery is not found")
  t.equal(one.body.code, 'not_found')
  t.notOk(one.text.includes('1 Main St'), 'no address, name or phone of the old customer')
  const earnings = await s.req('GET', '/driver/earnings', { token: next.token })
  t.equal(earnings.status, 200)
  t.match(earnings.body, { deliveries: 0, fees: 0, tips: 0, total: 0, days: [] }, 'no earnings')
  t.equal((await s.req('GET', '/driver/earnings?period=month', { token: next.token })).body.deliveries, 0)
  const me = await s.req('GET', '/driver/me', { token: next.token })
  t.same(me.body.active_deliveries, [])

  // The order keeps its history and names no driver.
  const order = await s.req('GET', `/restaurants/${a.storeId}/orders/${o.id}`, { token: a.ownerToken })
  t.match(order.body, { id: o.id, delivery_status: 'delivered', driver: null, customer_name: 'Ada' })
  const byDriver = await s.req('GET', `/restaurants/${a.storeId}/deliveries?driver_id=${old.id}`, { token: a.ownerToken })
  t.same(byDriver.body.data, [], 'no delivery names the deleted driver')
  // The order's actor still remembers the driver; a later change of the order must not write it back.
  const done = await s.req('PUT', `/restaurants/${a.storeId}/orders/${o.id}/status`, { token: a.ownerToken, body: { status: 'completed' } })
  t.equal(done.status, 200, 'the order can still be changed')
  t.match(done.body, { status: 'completed', driver: null })
  t.equal(db.prepare('SELECT driver_id FROM orders WHERE id = ?').pluck().get(o.id), null)
})

t.test("within one account too: the next driver is not handed the deleted one's failed delivery", async (t) => {
  const old = await createDriver(a.ownerToken, a.storeId)
  const o = await deliveryOrder(s, a)
  await assign(s, a, o.id, old.id)
  t.equal((await driverStatus(s, old, o.id, 'failed')).status, 200)
  t.equal((await s.req('DELETE', `/drivers/${old.id}`, { token: a.ownerToken })).status, 204)
  const next = await createDriver(a.ownerToken, a.storeId)
  t.not(next.id, old.id, 'not reused within the same account either')
  t.equal((await s.req('GET', `/driver/deliveries/${o.id}`, { token: next.token })).status, 404)
  t.same((await s.req('GET', '/driver/deliveries', { token: next.token })).body.data, [])
})

/** Create under A, delete it (the newest of its kind), create the same kind under B. */
const kinds: Array<{ kind: string; create: (owner: typeof a) => Promise<number>; remove: (owner: typeof a, id: number) => Promise<number> }> = [
  {
    kind: 'menu item',
    create: async (f) => {
      const categoryId = db.prepare('SELECT category_id FROM menu_items WHERE id = ?').pluck().get(f.itemId) as number
      const r = await s.req('POST', `/restaurants/${f.storeId}/menu/items`, { token: f.ownerToken, body: { category_id: categoryId, name: 'Special', price: 12 } })
      if (r.status !== 200) throw new Error(`item create failed: ${r.status} ${r.text}`)
      return r.body.id
    },
    remove: async (f, id) => (await s.req('DELETE', `/restaurants/${f.storeId}/menu/items/${id}`, { token: f.ownerToken })).status,
  },
  {
    kind: 'webhook endpoint',
    create: async (f) => {
      // An event these tests never emit, so nothing is ever sent to the unreachable address.
      const r = await s.req('POST', '/webhook-endpoints', { token: f.ownerToken, body: { url: 'http://127.0.0.1:9/hook', events: ['customer.created'] } })
      if (r.status !== 201) throw new Error(`endpoint create failed: ${r.status} ${r.text}`)
      return r.body.id
    },
    remove: async (f, id) => (await s.req('DELETE', `/webhook-endpoints/${id}`, { token: f.ownerToken })).status,
  },
  {
    kind: 'coupon',
    create: async (f) => {
      const r = await s.req('POST', `/restaurants/${f.storeId}/coupons`, { token: f.ownerToken, body: { code: `C${Date.now()}${Math.random().toString(36).slice(2, 6)}`, kind: 'fixed', value: 1 } })
      if (r.status !== 200) throw new Error(`coupon create failed: ${r.status} ${r.text}`)
      return r.body.id
    },
    remove: async (f, id) => (await s.req('DELETE', `/restaurants/${f.storeId}/coupons/${id}`, { token: f.ownerToken })).status,
  },
]

for (const k of kinds) {
  t.test(`a deleted ${k.kind}'s id goes to nobody`, async (t) => {
    const old = await k.create(a)
    t.equal(await k.remove(a, old), 204)
    const next = await k.create(b)
    t.ok(next > old, `a new ${k.kind} of another account gets a new id (${next} > ${old})`)
  })
}
