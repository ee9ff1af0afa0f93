/**
 * Menu reads and writes (api-v1 §2.3, §4.2, §4.4, §6): categories, items, sold-out, variants; each
 * write emits `menu.updated` {restaurant_id, change, entity, id}; the live menu prices the next
 * order at once; the public menu omits sold-out items; the store detail counts items.
 */
import t from 'tap'
import { startServer } from './helpers/server.ts'
import { createAccount, createMenu, createStore, isError, outbox, postOrder } from './helpers/fixtures.ts'

const s = await startServer({ RATE_LIMIT_PER_MINUTE: '100000' })
t.teardown(() => s.close())
const db = s.app.svc.db
const acct = createAccount(db)
const { menu } = acct
const base = `/restaurants/${acct.storeId}/menu`
const call = (method: string, path: string, body?: unknown) => s.req(method, path, { token: acct.token, body })
const lastMenuEvent = () => outbox(db, 'menu.updated').at(-1)?.data
const order = (items: unknown[]) => postOrder(s, acct.token, acct.storeId, { type: 'takeaway', items })

t.test('store detail and owner menu', async (t) => {
  const d = await call('GET', `/restaurants/${acct.storeId}`)
  t.equal(d.status, 200)
  t.match(d.body, { id: acct.storeId, slug: acct.slug, template: 'classic', store_type: 'restaurant', item_count: 3 })
  t.match(d.body.vertical, { label: String, group: 'food', capabilities: Object, fulfillment_modes: ['on-table', 'takeaway', 'delivery'] })
  t.same(d.body.categories.map((c: { name: string; item_count: number }) => [c.name, c.item_count]), [['Mains', 3], ['Empty', 0]])
  t.match(d.body.url, new RegExp(`^${s.site}/s/${acct.slug}$`))
  t.match(d.body.created_at, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/, 'ISO 8601 with offset')

  const m = await call('GET', base)
  t.equal(m.status, 200)
  const mains = m.body.find((c: { id: number }) => c.id === menu.categoryId)
  t.same(mains.items.map((i: { name: string }) => i.name).sort(), ['Burger', 'Fries', 'Soup'], 'the owner menu includes sold-out items')
  const burger = mains.items.find((i: { id: number }) => i.id === menu.burger.id)
  t.match(burger, { price: 10, is_sold_out: false, is_popular: Boolean, is_vegan: Boolean, is_halal: Boolean })
  t.ok('calories' in burger, 'food items carry calories')
  t.same(burger.variations.map((v: { name: string; price: number | null }) => [v.name, v.price]).sort(), [['Double', 15], ['Single', null]])
  t.same(burger.extras.map((e: { name: string; price: number }) => [e.name, e.price]), [['Cheese', 1.5], ['Bacon', 2]])
  t.equal(m.body.find((c: { id: number }) => c.id === menu.emptyCategoryId).items.length, 0)
})

t.test('non-food stores show goods fields instead of food flags', async (t) => {
  const retail = createStore(db, acct.ownerId, { type: 'clothing' })
  createMenu(db, retail.id)
  const m = await call('GET', `/restaurants/${retail.id}/menu`)
  const burger = m.body[0].items.find((i: { name: string }) => i.name === 'Burger')
  t.match(burger, { brand: null, stock: null, variant_count: 2 })
  t.notOk('is_vegan' in burger || 'calories' in burger, 'no food flags')
})

t.test('categories: create, update, delete; a non-empty category is refused', async (t) => {
  const c = await call('POST', `${base}/categories`, { name: '  Desserts ', station: 'pastry' })
  t.equal(c.status, 200, "creates answer 200 (api-v1 §4)")
  t.match(c.body, { id: Number, name: 'Desserts', station: 'pastry', position: Number })
  t.same(lastMenuEvent(), { restaurant_id: acct.storeId, change: 'created', entity: 'category', id: c.body.id })

  const u = await call('PUT', `${base}/categories/${c.body.id}`, { name: 'Sweets', position: 9 })
  t.equal(u.status, 200)
  t.match(u.body, { id: c.body.id, name: 'Sweets', position: 9, station: 'pastry' })
  t.same(lastMenuEvent(), { restaurant_id: acct.storeId, change: 'updated', entity: 'category', id: c.body.id })

  const events = outbox(db, 'menu.updated').length
  isError(t, await call('DELETE', `${base}/categories/${menu.categoryId}`), 422, 'category_not_empty', 'deleting a category with items')
  t.ok(db.prepare('SELECT 1 FROM menu_categories WHERE id = ?').get(menu.categoryId), 'still there')
  t.equal(outbox(db, 'menu.updated').length, events, 'a refused write emits nothing')

  const d = await call('DELETE', `${base}/categories/${c.body.id}`)
  t.equal(d.status, 204)
  t.equal(d.text, '')
  t.same(lastMenuEvent(), { restaurant_id: acct.storeId, change: 'deleted', entity: 'category', id: c.body.id })
  isError(t, await call('PUT', `${base}/categories/${c.body.id}`, { name: 'x' }), 404, 'not_found', 'a deleted category')
  isError(t, await call('DELETE', `${base}/categories/${c.body.id}`), 404, 'not_found', 'deleting twice')

  for (const body of [{}, { name: '' }, { name: '   ' }, { name: 5 }, { name: 'x'.repeat(161) }]) {
    isError(t, await call('POST', `${base}/categories`, body), 422, 'validation_failed', JSON.stringify(body).slice(0, 40))
  }
})

t.test('items: create with variations and extras, update, delete; each emits menu.updated', async (t) => {
  const c = await call('POST', `${base}/items`, {
    category_id: menu.emptyCategoryId, name: 'Pie', price: 4.5, is_vegan: true, calories: 420,
    extras: [{ name: 'Cream', price: 0.75, group: 'Toppings' }], variations: [{ name: 'Slice', price: 4.5 }, { name: 'Whole', price: 20 }],
  })
  t.equal(c.status, 200)
  t.match(c.body, { name: 'Pie', price: 4.5, category_id: menu.emptyCategoryId, is_vegan: true, calories: 420, is_sold_out: false })
  t.same(c.body.extras.map((e: { name: string; price: number; group: string }) => [e.name, e.price, e.group]), [['Cream', 0.75, 'Toppings']])
  t.same(c.body.variations.map((v: { name: string; price: number }) => [v.name, v.price]), [['Slice', 4.5], ['Whole', 20]])
  t.same(lastMenuEvent(), { restaurant_id: acct.storeId, change: 'created', entity: 'item', id: c.body.id })
  t.equal(db.prepare('SELECT price FROM menu_items WHERE id = ?').pluck().get(c.body.id), 450, 'stored in cents')

  // The new item is orderable at once, priced from the live menu.
  const whole = c.body.variations[1].id
  const cream = c.body.extras[0].id
  const o = await order([{ item_id: c.body.id, quantity: 2, variation: whole, extras: [cream] }])
  t.equal(o.status, 200)
  t.equal(o.body.total, 41.5)

  const u = await call('PUT', `${base}/items/${c.body.id}`, { price: 5, name: 'Apple pie', extras: [] })
  t.equal(u.status, 200)
  t.match(u.body, { name: 'Apple pie', price: 5, extras: [] })
  t.same(lastMenuEvent(), { restaurant_id: acct.storeId, change: 'updated', entity: 'item', id: c.body.id })
  const o2 = await order([{ item_id: c.body.id, quantity: 1 }])
  t.equal(o2.body.total, 5, 'the new price applies to the next order')
  isError(t, await order([{ item_id: c.body.id, quantity: 1, extras: [cream] }]), 422, 'validation_failed', 'a removed extra')

  const d = await call('DELETE', `${base}/items/${c.body.id}`)
  t.equal(d.status, 204)
  t.same(lastMenuEvent(), { restaurant_id: acct.storeId, change: 'deleted', entity: 'item', id: c.body.id })
  isError(t, await order([{ item_id: c.body.id, quantity: 1 }]), 422, 'validation_failed', 'a deleted item is refused')
  const past = await s.req('GET', `/restaurants/${acct.storeId}/orders/${o.body.id}`, { token: acct.token })
  t.equal(past.body.items[0].name, 'Pie', 'past orders keep their lines')
  isError(t, await call('PUT', `${base}/items/${c.body.id}`, { name: 'x' }), 404, 'not_found', 'updating a deleted item')

  for (const body of [
    { category_id: menu.categoryId, name: 'x' },
    { category_id: menu.categoryId, name: 'x', price: -1 },
    { category_id: menu.categoryId, name: 'x', price: 1.234 },
    { category_id: 'one', name: 'x', price: 1 },
    { category_id: 987654, name: 'x', price: 1 },
  ]) {
    const r = await call('POST', `${base}/items`, body)
    isError(t, r, 422, 'validation_failed', JSON.stringify(body))
  }
  t.ok((await call('POST', `${base}/items`, { category_id: 987654, name: 'x', price: 1 })).body.errors.category_id, 'unknown category keyed by category_id')
})

t.test('sold-out: PATCH toggles or sets; a sold-out item is refused at once and hidden publicly', async (t) => {
  const path = `${base}/items/${menu.fries}/sold-out`
  const on = await call('PATCH', path)
  t.equal(on.status, 200)
  t.equal(on.body.is_sold_out, true, 'no body toggles on')
  t.same(lastMenuEvent(), { restaurant_id: acct.storeId, change: 'updated', entity: 'item', id: menu.fries })
  isError(t, await order([{ item_id: menu.fries, quantity: 1 }]), 422, 'validation_failed', 'ordering a just-sold-out item')
  const pub = await s.req('GET', `/menu/${acct.storeId}`)
  t.notOk(pub.body.flatMap((c: { items: Array<{ id: number }> }) => c.items).some((i: { id: number }) => i.id === menu.fries), 'hidden from the public menu')

  const { stores, orders } = s.app.svc.actors
  t.ok(stores.passivateIdle(Date.now() + 3_600_000) >= 1, 'store actor passivated')
  orders.passivateIdle(Date.now() + 3_600_000)
  isError(t, await order([{ item_id: menu.fries, quantity: 1 }]), 422, 'validation_failed', 'still sold out after the actor reloads from SQLite')
  t.equal((await call('PATCH', path)).body.is_sold_out, false, 'toggles back off')
  t.equal((await order([{ item_id: menu.fries, quantity: 1 }])).status, 200, 'orderable again at once')
  t.equal((await call('PATCH', path, { is_sold_out: false })).body.is_sold_out, false, 'explicit false stays false')
  t.equal((await call('PATCH', path, { is_sold_out: true })).body.is_sold_out, true, 'explicit true sets')
  t.equal((await call('PATCH', path, { is_sold_out: true })).body.is_sold_out, true, 'explicit true twice stays true')
  t.equal((await call('PATCH', path, { is_sold_out: false })).body.is_sold_out, false)
  isError(t, await call('PATCH', path, { is_sold_out: 'yes' }), 422, 'validation_failed', 'a non-boolean')
  isError(t, await call('PATCH', `${base}/items/987654/sold-out`), 404, 'not_found', 'unknown item')
})

t.test('variants: list, create, read, update, delete', async (t) => {
  const vbase = `${base}/items/${menu.burger.id}/variants`
  const list = await call('GET', vbase)
  t.equal(list.status, 200)
  t.same(list.body.map((v: { id: number }) => v.id).sort(), [menu.burger.single, menu.burger.double].sort())
  // A restaurant's variants are sizes with a price; `sku`/`stock` are goods fields (docs/verticals.md, test/goods-stock.test.ts).
  const c = await call('POST', vbase, { name: 'Triple', price: 19.5 })
  t.equal(c.status, 200)
  t.match(c.body, { id: Number, item_id: menu.burger.id, name: 'Triple', price: 19.5, sku: null })
  t.same(lastMenuEvent(), { restaurant_id: acct.storeId, change: 'created', entity: 'variant', id: c.body.id })
  t.equal((await order([{ item_id: menu.burger.id, quantity: 1, variation: c.body.id }])).body.total, 19.5, 'orderable at once')

  const r = await call('GET', `${vbase}/${c.body.id}`)
  t.equal(r.status, 200)
  t.same(r.body, c.body)
  const u = await call('PUT', `${vbase}/${c.body.id}`, { price: 21 })
  t.equal(u.status, 200)
  t.match(u.body, { name: 'Triple', price: 21 })
  t.same(lastMenuEvent(), { restaurant_id: acct.storeId, change: 'updated', entity: 'variant', id: c.body.id })
  t.equal((await order([{ item_id: menu.burger.id, quantity: 1, variation: c.body.id }])).body.total, 21, 'new variant price applies')
  t.equal((await call('PUT', `${vbase}/${c.body.id}`, { price: null })).body.price, null, 'a variant may fall back to the item price')
  t.equal((await order([{ item_id: menu.burger.id, quantity: 1, variation: c.body.id }])).body.total, 10)

  const d = await call('DELETE', `${vbase}/${c.body.id}`)
  t.equal(d.status, 204)
  t.same(lastMenuEvent(), { restaurant_id: acct.storeId, change: 'deleted', entity: 'variant', id: c.body.id })
  isError(t, await call('GET', `${vbase}/${c.body.id}`), 404, 'not_found', 'deleted variant')
  isError(t, await order([{ item_id: menu.burger.id, quantity: 1, variation: c.body.id }]), 422, 'validation_failed', 'a deleted variant')
  isError(t, await call('GET', `${base}/items/987654/variants`), 404, 'not_found', 'variants of an unknown item')
  isError(t, await call('POST', vbase, { price: 1 }), 422, 'validation_failed', 'a variant needs a name')
})

t.test('the public menu needs no auth, excludes sold-out items and 404s for unknown stores', async (t) => {
  const r = await s.req('GET', `/menu/${acct.storeId}`)
  t.equal(r.status, 200)
  const items = r.body.flatMap((c: { items: Array<{ id: number; is_sold_out: boolean }> }) => c.items)
  t.notOk(items.some((i: { id: number }) => i.id === menu.soup), 'the sold-out soup is not listed')
  t.ok(items.some((i: { id: number }) => i.id === menu.burger.id))
  t.ok(items.every((i: { is_sold_out: boolean }) => i.is_sold_out === false))
  t.match(r.body[0], { id: Number, name: String, items: Array })
  isError(t, await s.req('GET', '/menu/987654'), 404, 'not_found', 'unknown store')
  isError(t, await s.req('GET', '/menu/abc'), 404, 'not_found', 'non-numeric id')
})
