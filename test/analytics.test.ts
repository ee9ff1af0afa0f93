/** Analytics summary (api-v1 §2.6, §4.2): shape, the default 30-day range, date validation, numbers. */
import t from 'tap'
import { startServer } from './helpers/server.ts'
import { createAccount, isError, postOrder } from './helpers/fixtures.ts'
import { analyticsRange } from '../src/ops/orders/analytics-query.ts'

const s = await startServer({ RATE_LIMIT_PER_MINUTE: '100000' })
t.teardown(() => s.close())
const db = s.app.svc.db
const acct = createAccount(db)
const { menu } = acct
const path = `/restaurants/${acct.storeId}/analytics`
const get = (q = '') => s.req('GET', `${path}${q}`, { token: acct.token })
const day = (offsetDays: number) => new Date(Date.now() + offsetDays * 86_400_000).toISOString().slice(0, 10)

t.test('an empty store has the full shape with zeros', async (t) => {
  const r = await get()
  t.equal(r.status, 200)
  t.same(r.body, {
    range: { from: day(-29), to: day(0) },
    orders: { total: 0, paid: 0, by_status: {}, by_type: {} },
    revenue: { gross: 0, paid: 0, refunded: 0, net: 0, avg_order_value: 0, delivery_fees: 0 },
    top_items: [],
  })
})

t.test('numbers are right for known orders', async (t) => {
  const mk = async (type: string, items: unknown[], extra: Record<string, unknown> = {}) =>
    (await postOrder(s, acct.token, acct.storeId, { type, items, ...extra })).body
  const a = await mk('takeaway', [{ item_id: menu.burger.id, quantity: 2 }]) // 20.00
  const b = await mk('delivery', [{ item_id: menu.fries, quantity: 3 }, { item_id: menu.burger.id, quantity: 1, variation: menu.burger.double }], { address: 'x', tip_amount: 1 }) // 9 + 15 + 1 = 25.00
  const c = await mk('on-table', [{ item_id: menu.fries, quantity: 10 }], { table_number: 4 }) // 30.00, cancelled below
  await s.req('PUT', `/restaurants/${acct.storeId}/orders/${c.id}/status`, { token: acct.token, body: { status: 'cancelled' } })
  await s.req('PUT', `/restaurants/${acct.storeId}/orders/${a.id}/status`, { token: acct.token, body: { status: 'completed' } })
  db.prepare('UPDATE orders SET is_paid = 1 WHERE id = ?').run(b.id)
  // An order outside the range (40 days ago) must not count.
  const old = await mk('takeaway', [{ item_id: menu.fries, quantity: 1 }])
  db.prepare('UPDATE orders SET created_at = ? WHERE id = ?').run(`${day(-40)}T12:00:00.000+00:00`, old.id)

  const r = await get()
  t.equal(r.status, 200)
  t.same(r.body.orders, { total: 3, paid: 1, by_status: { cancelled: 1, completed: 1, new: 1 }, by_type: { delivery: 1, 'on-table': 1, takeaway: 1 } })
  t.same(r.body.revenue, { gross: 45, paid: 25, refunded: 0, net: 25, avg_order_value: 22.5, delivery_fees: 0 }, 'cancelled orders earn nothing')
  t.same(r.body.top_items, [
    { item_id: menu.burger.id, name: 'Burger', quantity: 3 },
    { item_id: menu.fries, name: 'Fries', quantity: 3 },
  ], 'by quantity, cancelled orders excluded')
  for (const k of ['gross', 'paid', 'avg_order_value']) t.type(r.body.revenue[k], 'number', `${k} is a number`)

  const withOld = await get(`?from=${day(-45)}&to=${day(0)}`)
  t.equal(withOld.body.orders.total, 4, 'a wider range includes the old order')
  t.same(withOld.body.range, { from: day(-45), to: day(0) })
  const onlyOld = await get(`?from=${day(-40)}&to=${day(-40)}`)
  t.equal(onlyOld.body.orders.total, 1, 'a one-day range includes the whole day')
  t.equal(onlyOld.body.revenue.gross, 3)
  const wide = await get('?from=1970-01-01&to=9999-12-31')
  t.equal(wide.status, 200)
  t.equal(wide.body.orders.total, 4, 'a range ending on the last representable day includes everything')
  const future = await get(`?from=${day(1)}&to=${day(2)}`)
  t.equal(future.body.orders.total, 0)
})

t.test('from/to default and combine', async (t) => {
  t.same((await get(`?to=2026-03-31`)).body.range, { from: '2026-03-02', to: '2026-03-31' }, 'only to: the 30 days ending there')
  t.same((await get(`?from=${day(-3)}`)).body.range, { from: day(-3), to: day(0) }, 'only from: up to today')
  t.same(analyticsRange({}, Date.parse('2026-01-15T23:59:00Z')), { from: '2025-12-17', to: '2026-01-15' }, 'the last 30 days, today included')
})

t.test('invalid dates and from after to are 422', async (t) => {
  for (const q of ['from=2026-13-01', 'from=2026-02-30', 'to=2026-02-29', 'from=abc', 'to=2026-1-5', 'from=20260101', 'to=2026-01-01T00:00:00Z', 'from=']) {
    const r = await get(`?${q}`)
    isError(t, r, 422, 'validation_failed', q)
    t.ok(r.body.errors?.[q.split('=')[0]!], `${q}: keyed by the parameter`)
  }
  t.equal((await get('?from=2024-02-29&to=2024-03-01')).status, 200, 'a real leap day is fine')
  const r = await get('?from=2026-05-02&to=2026-05-01')
  isError(t, r, 422, 'validation_failed', 'from after to')
  t.ok(r.body.errors?.from)
})
