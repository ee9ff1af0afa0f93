/**
 * An order whose total is zero (a free item, a full discount) has nothing to pay: it is paid as it is
 * placed — `is_paid` true in the reply and when read back, `order.paid` beside `order.created` (methods
 * empty, amounts 0.00), and a payment is refused 409 `order_already_paid` as for any paid order. An
 * order with something to pay is not paid at placing and fires no `order.paid`.
 */
import t from 'tap'
import { startServer } from './helpers/server.ts'
import { createAccount, envelopeProblem, postOrder } from './helpers/fixtures.ts'
import { createEndpoint, startReceiver, type Received } from './helpers/webhook-receiver.ts'

const s = await startServer({ WEBHOOK_ALLOW_LOOPBACK: '1', RATE_LIMIT_PER_MINUTE: '100000' })
const rcv = await startReceiver()
t.teardown(async () => { await s.close(); await rcv.close() })
const a = createAccount(s.app.svc.db)
await createEndpoint(s.base, a.token, `${rcv.url}/free`, ['order.created', 'order.paid'])

const events = (orderId: number) => rcv.received.filter((r: Received) => r.body.data.order_id === orderId).map((r) => r.body.event).sort()

t.test('a zero-total order is paid as it is placed', async (t) => {
  const cat = await s.req('POST', `/restaurants/${a.storeId}/menu/categories`, { token: a.token, body: { name: 'Free' } })
  t.equal(cat.status, 200, cat.text)
  const item = await s.req('POST', `/restaurants/${a.storeId}/menu/items`, { token: a.token, body: { category_id: cat.body.id, name: 'Tap water', price: 0 } })
  t.equal(item.status, 200, item.text)
  const o = await postOrder(s, a.token, a.storeId, { type: 'takeaway', customer_name: 'Ada', items: [{ item_id: item.body.id, quantity: 2 }] })
  t.equal(o.status, 200, o.text)
  t.equal(o.body.total, 0)
  t.equal(o.body.is_paid, true, 'paid in the reply')
  const read = await s.req('GET', `/restaurants/${a.storeId}/orders/${o.body.id}`, { token: a.token })
  t.equal(read.body.is_paid, true, 'and when read back')
  await rcv.until(() => events(o.body.id).length === 2, 5000, 'order.created and order.paid')
  t.same(events(o.body.id), ['order.created', 'order.paid'])
  const paid = rcv.received.find((r) => r.body.event === 'order.paid' && r.body.data.order_id === o.body.id)!
  t.match(paid.body.data, { order_id: o.body.id, restaurant_id: a.storeId, total: '0.00', amount_paid: '0.00', tips: '0.00', methods: [] })
  t.equal(paid.body.data.paid_at, read.body.created_at, 'paid when placed')
  const pay = await s.req('POST', `/restaurants/${a.storeId}/orders/${o.body.id}/payments`, { token: a.token, body: { amount: 1, method: 'cash' } })
  t.equal(pay.status, 409)
  t.equal(envelopeProblem(pay.body, 'order_already_paid'), null, 'the §7 envelope')
})

t.test('an order with something to pay is not paid at placing', async (t) => {
  const o = await postOrder(s, a.token, a.storeId, { type: 'takeaway', customer_name: 'Ada', items: [{ item_id: a.menu.fries, quantity: 1 }] })
  t.equal(o.status, 200)
  t.equal(o.body.is_paid, false)
  await rcv.until(() => events(o.body.id).length >= 1, 5000, 'order.created')
  // The free order's two events arrived together; this one's order.created has arrived, so an
  // order.paid would have too (one transaction, one fan-out).
  t.same(events(o.body.id), ['order.created'])
})
