/**
 * Refunds by lines put tracked stock back when the refund completes (docs/verticals.md "Stock and
 * variants", docs/operations.md "Refunds"): at once for card refunds, when the provider confirms for
 * online ones — so the units go back exactly once, whatever the path.
 */
import t from 'tap'
import { startServer } from './helpers/server.ts'
import { createAccount, createCategory, postOrder } from './helpers/fixtures.ts'

const s = await startServer({ RATE_LIMIT_PER_MINUTE: '100000', PAYMENT_PROVIDER: 'dev' })
t.teardown(() => s.close())
const db = s.app.svc.db
const shop = createAccount(db, { type: 'retail' })
const cat = createCategory(db, shop.storeId, 'Goods')
const stockOf = (id: number) => db.prepare('SELECT stock FROM menu_items WHERE id = ?').pluck().get(id) as number
const base = (orderId: number) => `/restaurants/${shop.storeId}/orders/${orderId}`

async function tracked(name: string, stock: number): Promise<number> {
  const r = await s.req('POST', `/restaurants/${shop.storeId}/menu/items`, { token: shop.token, body: { name, price: 5, stock, category_id: cat } })
  if (r.status !== 200) throw new Error(r.text)
  return r.body.id as number
}
async function paidOrder(itemId: number, quantity: number, method: 'card' | 'online') {
  const o = await postOrder(s, shop.token, shop.storeId, { type: 'in_store', items: [{ item_id: itemId, quantity }] })
  if (o.status !== 200) throw new Error(o.text)
  const p = await s.req('POST', `${base(o.body.id)}/payments`, { token: shop.token, body: { amount: o.body.total, method } })
  if (p.status !== 200) throw new Error(p.text)
  if (method === 'online') {
    const done = await s.req('POST', '/payments/dev/complete', { body: { provider_ref: p.body.payment.provider_ref, client_secret: p.body.client_action.client_secret } })
    if (done.status !== 200) throw new Error(done.text)
  }
  return { id: o.body.id as number, lineId: o.body.items[0].id as number }
}

t.test('an online refund of lines puts the units back once, when the provider completes it', async (t) => {
  const id = await tracked('Serum', 10)
  const o = await paidOrder(id, 4, 'online')
  t.equal(stockOf(id), 6)
  const r = await s.req('POST', `${base(o.id)}/refunds`, { token: shop.token, body: { lines: [{ line_id: o.lineId, quantity: 3 }] } })
  t.equal(r.status, 200, r.text)
  t.match(r.body.data[0], { method: 'online', status: 'completed' })
  t.equal(stockOf(id), 9, 'three units back, once')
  const again = await s.req('POST', `${base(o.id)}/refunds`, { token: shop.token, body: { lines: [{ line_id: o.lineId, quantity: 3 }] } })
  t.equal(again.status, 422, 'the refunded units cannot be refunded again')
  t.equal(stockOf(id), 9, 'and nothing more comes back')
})

t.test('a card refund of lines puts the units back at once', async (t) => {
  const id = await tracked('Cream', 5)
  const o = await paidOrder(id, 2, 'card')
  t.equal(stockOf(id), 3)
  const r = await s.req('POST', `${base(o.id)}/refunds`, { token: shop.token, body: { lines: [{ line_id: o.lineId, quantity: 1 }] } })
  t.equal(r.status, 200, r.text)
  t.equal(stockOf(id), 4)
})

t.test('an online refund the provider refuses puts nothing back, and the units stay refundable', async (t) => {
  const id = await tracked('Lotion', 10)
  const o = await paidOrder(id, 2, 'online')
  t.equal(stockOf(id), 8)
  const provider = s.app.svc.payments
  const refund = provider.refund.bind(provider)
  provider.refund = async () => { throw new Error('card network down') }
  try {
    const r = await s.req('POST', `${base(o.id)}/refunds`, { token: shop.token, body: { lines: [{ line_id: o.lineId, quantity: 2 }] } })
    t.equal(r.status, 502, r.text)
    t.equal(stockOf(id), 8, 'no units back for a refund that did not happen')
  } finally {
    provider.refund = refund
  }
  const retry = await s.req('POST', `${base(o.id)}/refunds`, { token: shop.token, body: { lines: [{ line_id: o.lineId, quantity: 2 }] } })
  t.equal(retry.status, 200, retry.text)
  t.equal(stockOf(id), 10, 'back once, when the retry completed')
})
