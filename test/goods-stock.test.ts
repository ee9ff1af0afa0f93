/**
 * Stock of goods (issue 18 item 2, docs/verticals.md "Stock and variants"): orders take stock
 * atomically, never below zero under concurrency, are refused whole with 422 `out_of_stock` when
 * short, cancellations put stock back; variant stock; every order front door; goods and food fields
 * only where the store's vertical has them.
 */
import t from 'tap'
import { startServer } from './helpers/server.ts'
import { counts, createAccount, createCategory, createCustomer, createStorefrontToken, isError, postOrder } from './helpers/fixtures.ts'
import { callTool, connectMcp } from './helpers/mcp.ts'

const s = await startServer({ RATE_LIMIT_PER_MINUTE: '100000' })
t.teardown(() => s.close())
const db = s.app.svc.db

const retail = createAccount(db, { type: 'retail' })
const cat = createCategory(db, retail.storeId, 'Goods')
/** Through the API: the store actor holds the menu once a request touched the store. */
const item = async (name: string, stock: number | null): Promise<number> => {
  const r = await s.req('POST', `/restaurants/${retail.storeId}/menu/items`, { token: retail.token, body: { name, price: 5, stock, category_id: cat } })
  if (r.status !== 200) throw new Error(JSON.stringify(r.body))
  return r.body.id as number
}
const stockOf = (id: number) => db.prepare('SELECT stock FROM menu_items WHERE id = ?').pluck().get(id) as number | null
const delivery = (items: unknown[]) => ({ type: 'delivery', address: '1 Main St', items })
const menuItem = async (id: number) => {
  const menu = (await s.req('GET', `/restaurants/${retail.storeId}/menu`, { token: retail.token })).body as Array<{ items: any[] }>
  return menu.flatMap((c) => c.items).find((i) => i.id === id)
}

t.test('stock 5, 20 concurrent orders of 1: exactly 5 succeed, stock 0, item sold out', async (t) => {
  const id = await item('Hot lamp', 5)
  const results = await Promise.all(Array.from({ length: 20 }, () => postOrder(s, retail.token, retail.storeId, delivery([{ item_id: id, quantity: 1 }]))))
  const ok = results.filter((r) => r.status === 200)
  t.equal(ok.length, 5, 'five orders taken')
  for (const r of results.filter((x) => x.status !== 200)) isError(t, r, 422, 'out_of_stock')
  t.equal(stockOf(id), 0, 'stock at zero, never below')
  const m = await menuItem(id)
  t.equal(m.stock, 0)
  t.equal(m.is_sold_out, true, 'zero stock shows sold out')
  const pub = (await s.req('GET', `/menu/${retail.storeId}`)).body as Array<{ items: any[] }>
  t.notOk(pub.flatMap((c) => c.items).some((i) => i.id === id), 'the public menu omits it')
})

t.test('an order for more than is in stock is refused whole, nothing written', async (t) => {
  const a = await item('Kettle', 2)
  const b = await item('Mug', 10)
  const before = counts(db)
  const r = await postOrder(s, retail.token, retail.storeId, delivery([{ item_id: b, quantity: 3 }, { item_id: a, quantity: 3 }]))
  isError(t, r, 422, 'out_of_stock')
  t.ok(r.body.errors['items.1.quantity'], 'names the short line')
  t.notOk(r.body.errors['items.0.quantity'], 'not the line that fits')
  t.same(counts(db), before, 'no order, line, event')
  t.equal(stockOf(a), 2)
  t.equal(stockOf(b), 10, 'the line that fitted was not taken either')
  // Two lines of one item draw on one count.
  isError(t, await postOrder(s, retail.token, retail.storeId, delivery([{ item_id: a, quantity: 2 }, { item_id: a, quantity: 1 }])), 422, 'out_of_stock')
  t.equal(stockOf(a), 2)
  t.equal((await postOrder(s, retail.token, retail.storeId, delivery([{ item_id: a, quantity: 1 }, { item_id: a, quantity: 1 }]))).status, 200)
  t.equal(stockOf(a), 0)
})

t.test('untracked items (stock null) are unlimited', async (t) => {
  const id = await item('Bag', null)
  t.equal((await postOrder(s, retail.token, retail.storeId, delivery([{ item_id: id, quantity: 999 }]))).status, 200)
  t.equal(stockOf(id), null)
})

t.test('cancelling an order puts its stock back, once', async (t) => {
  const id = await item('Lamp', 3)
  const r = await postOrder(s, retail.token, retail.storeId, delivery([{ item_id: id, quantity: 3 }]))
  t.equal(r.status, 200)
  t.equal(stockOf(id), 0)
  isError(t, await postOrder(s, retail.token, retail.storeId, delivery([{ item_id: id, quantity: 1 }])), 422, 'out_of_stock')
  const status = (st: string) => s.req('PUT', `/restaurants/${retail.storeId}/orders/${r.body.id}/status`, { token: retail.token, body: { status: st } })
  t.equal((await status('cancelled')).status, 200)
  t.equal(stockOf(id), 3, 'restored in the cancellation')
  t.equal((await status('cancelled')).status, 200)
  t.equal(stockOf(id), 3, 'setting cancelled again restores nothing more')
  t.equal((await status('new')).status, 200)
  t.equal(stockOf(id), 0, 'reopened: the order takes its stock again (test/reopen-stock.test.ts)')
  t.equal((await status('cancelled')).status, 200)
  t.equal(stockOf(id), 3, 'and a second cancellation puts back only that')
  // The store actor's held counts followed: the next order is priced against the restored stock.
  t.equal((await postOrder(s, retail.token, retail.storeId, delivery([{ item_id: id, quantity: 3 }]))).status, 200)
  t.equal(stockOf(id), 0)
})

t.test('refunding lines puts their stock back; refunding by amount does not', async (t) => {
  const id = await item('Lamp shade', 5)
  const o = await postOrder(s, retail.token, retail.storeId, delivery([{ item_id: id, quantity: 3 }]))
  t.equal(o.status, 200, o.text)
  t.equal(stockOf(id), 2)
  const base = `/restaurants/${retail.storeId}/orders/${o.body.id}`
  t.equal((await s.req('POST', `${base}/payments`, { token: retail.token, body: { amount: o.body.total, method: 'card' } })).status, 200)
  const byAmount = await s.req('POST', `${base}/refunds`, { token: retail.token, body: { amount: 1 } })
  t.equal(byAmount.status, 200, byAmount.text)
  t.equal(stockOf(id), 2, 'money back alone puts nothing on the shelf')
  const lineId = o.body.items[0].id as number
  const byLines = await s.req('POST', `${base}/refunds`, { token: retail.token, body: { lines: [{ line_id: lineId, quantity: 2 }] } })
  t.equal(byLines.status, 200, byLines.text)
  t.equal(stockOf(id), 4, 'two units back')
  t.equal((await menuItem(id)).stock, 4, 'the menu the store sells from knows it')
  const next = await postOrder(s, retail.token, retail.storeId, delivery([{ item_id: id, quantity: 4 }]))
  t.equal(next.status, 200, 'the returned units can be sold again')
})

t.test('variant stock: each variant its own count, sold out at zero; item stock caps the total', async (t) => {
  const id = await item('T-shirt', null)
  const mk = (name: string, stock: number | null) =>
    s.req('POST', `/restaurants/${retail.storeId}/menu/items/${id}/variants`, { token: retail.token, body: { name, sku: `TS-${name}`, stock, price: 12 } })
  const small = (await mk('S', 1)).body
  const large = (await mk('L', 5)).body
  t.equal(small.stock, 1)
  t.equal((await postOrder(s, retail.token, retail.storeId, delivery([{ item_id: id, variation: small.id, quantity: 1 }]))).status, 200)
  const r = await postOrder(s, retail.token, retail.storeId, delivery([{ item_id: id, variation: small.id, quantity: 1 }]))
  isError(t, r, 422, 'out_of_stock')
  t.match(r.body.errors['items.0.quantity'][0], /T-shirt \(S\)/)
  t.equal((await postOrder(s, retail.token, retail.storeId, delivery([{ item_id: id, variation: large.id, quantity: 2 }]))).status, 200)
  const m = await menuItem(id)
  t.equal(m.variant_count, 2)
  t.same(m.variations.map((v: any) => [v.name, v.stock, v.is_sold_out]), [['S', 0, true], ['L', 3, false]])
  t.equal(m.is_sold_out, false, 'one variant left: the item is not sold out')
  // Item stock 1 caps the total across variants.
  t.equal((await s.req('PUT', `/restaurants/${retail.storeId}/menu/items/${id}`, { token: retail.token, body: { stock: 1 } })).status, 200)
  isError(t, await postOrder(s, retail.token, retail.storeId, delivery([{ item_id: id, variation: large.id, quantity: 2 }])), 422, 'out_of_stock')
  t.equal((await postOrder(s, retail.token, retail.storeId, delivery([{ item_id: id, variation: large.id, quantity: 1 }]))).status, 200)
  t.equal(stockOf(id), 0)
  t.equal(db.prepare('SELECT stock FROM item_variants WHERE id = ?').pluck().get(large.id), 2)
})

t.test('every order front door takes and refuses stock', async (t) => {
  // Storefront orders are takeaway/on-table (api-v1 §2.4): a restaurant item with stock written in.
  const food = createAccount(db)
  db.prepare('UPDATE menu_items SET stock = 2 WHERE id = ?').run(food.menu.fries)
  const sfToken = createStorefrontToken(db, food.storeId, ['menu:read', 'order:write', 'agent'])
  const sf = (body: unknown) => s.req('POST', '/storefront/orders', { headers: { 'x-storefront-token': sfToken }, body })
  t.equal((await sf({ type: 'takeaway', items: [{ item_id: food.menu.fries, quantity: 1 }] })).status, 200, 'storefront')
  const mcp = await connectMcp(s, '/mcp/storefront', { 'x-storefront-token': sfToken })
  t.teardown(() => mcp.close())
  const placed = await callTool(mcp, 'place_order', { type: 'takeaway', items: [{ item_id: food.menu.fries, quantity: 1 }] })
  t.equal(placed.isError, false, 'MCP storefront place_order')
  t.equal(stockOf(food.menu.fries), 0)
  isError(t, await sf({ type: 'takeaway', items: [{ item_id: food.menu.fries, quantity: 1 }] }), 422, 'out_of_stock')
  const refused = await callTool(mcp, 'place_order', { type: 'takeaway', items: [{ item_id: food.menu.fries, quantity: 1 }] })
  t.equal(refused.isError, true)
  t.match(JSON.stringify(refused.raw), /out_of_stock/, 'MCP refusal names the code')

  const id = await item('Customer lamp', 1)
  const customer = createCustomer(db, retail.storeId)
  const mine = (q: number) => s.req('POST', '/customer/orders', { token: customer.token, body: delivery([{ item_id: id, quantity: q }]) })
  isError(t, await mine(2), 422, 'out_of_stock')
  t.equal((await mine(1)).status, 200, 'customer app')
  t.equal(stockOf(id), 0)
})

t.test('goods fields only where the vertical has goods_fields, food fields only with food_fields', async (t) => {
  const food = createAccount(db)
  const onFood = (body: Record<string, unknown>) => s.req('POST', `/restaurants/${food.storeId}/menu/items`, { token: food.token, body: { name: 'X', price: 1, ...body } })
  for (const field of [{ stock: 3 }, { brand: 'Acme' }, { sku: 'A-1' }]) {
    const r = await onFood(field)
    isError(t, r, 422, 'not_for_store_type')
    t.ok(r.body.errors[Object.keys(field)[0]!], `names ${Object.keys(field)[0]}`)
  }
  isError(t, await s.req('POST', `/restaurants/${food.storeId}/menu/items/${food.menu.burger.id}/variants`, { token: food.token, body: { name: 'XL', stock: 2 } }), 422, 'not_for_store_type')
  t.equal((await s.req('POST', `/restaurants/${food.storeId}/menu/items/${food.menu.burger.id}/variants`, { token: food.token, body: { name: 'XL', price: 14 } })).status, 200, 'sizes stay food variants')
  t.equal((await onFood({ is_vegan: true, calories: 300, brand: null })).status, 200, 'food fields on a restaurant; null goods fields change nothing')
  const onRetail = (body: Record<string, unknown>) => s.req('POST', `/restaurants/${retail.storeId}/menu/items`, { token: retail.token, body: { name: 'Y', price: 1, ...body } })
  isError(t, await onRetail({ calories: 10 }), 422, 'not_for_store_type')
  const made = await onRetail({ stock: 4, sku: 'Y-1', brand: 'Yoyodyne' })
  t.equal(made.status, 200)
  t.match(made.body, { stock: 4, sku: 'Y-1', brand: 'Yoyodyne', variant_count: 0 })
  t.type(made.body.brand_id, 'number', 'a brand named by name is found or created')
})

t.test('a stock count must stay an exact integer: above a billion is refused, nothing written', async (t) => {
  const before = db.prepare('SELECT COUNT(*) FROM menu_items').pluck().get()
  const r = await s.req('POST', `/restaurants/${retail.storeId}/menu/items`, { token: retail.token, body: { name: 'Infinite', price: 1, stock: 1e308, category_id: cat } })
  isError(t, r, 422, 'validation_failed')
  t.ok(r.body.errors?.stock, 'keyed by stock')
  t.equal(db.prepare('SELECT COUNT(*) FROM menu_items').pluck().get(), before)
})
