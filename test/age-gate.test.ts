/**
 * Age-restricted items (issue 18 item 4; docs/verticals.md "Age-restricted items"): an item's
 * `min_age` is set by the owner on age_gate stores only and shown in menus; an order holding one is
 * refused with 422 `age_confirmation_required` and nothing written unless it says
 * `age_confirmed: true` — on every front door that creates orders: owner API, storefront API,
 * customer app, store website checkout and the storefront MCP `place_order`.
 */
import t from 'tap'
import { startServer } from './helpers/server.ts'
import { connectMcp, callTool } from './helpers/mcp.ts'
import { counts, createAccount, createCustomer, createStore, createStorefrontToken, createCategory, createItem, isError, postOrder } from './helpers/fixtures.ts'

const s = await startServer({ RATE_LIMIT_PER_MINUTE: '100000' })
t.teardown(() => s.close())
const db = s.app.svc.db

const pharmacy = createAccount(db, { type: 'pharmacy' })
const rx = createCategory(db, pharmacy.storeId, 'Medicines')
const codeine = createItem(db, pharmacy.storeId, rx, 'Cough syrup with codeine', 900)
const plasters = createItem(db, pharmacy.storeId, rx, 'Plasters', 300)

// The storefront, website and customer doors take takeaway orders; a restaurant store lets this test
// reach them whatever the goods verticals' fulfillment modes are. `min_age` is written straight into
// the row (the owner API keeps it to age_gate stores, tested below): the order-time rule reads the
// item, not the store type, so a restricted item is never sold unconfirmed wherever it is.
const bar = createAccount(db)
const store = createStore(db, bar.ownerId, { settings: { business_hours: null } })
const drinks = createCategory(db, store.id, 'Drinks')
const wine = createItem(db, store.id, drinks, 'Red wine', 2000)
const whisky = createItem(db, store.id, drinks, 'Whisky', 4000)
const water = createItem(db, store.id, drinks, 'Water', 200)
db.prepare('UPDATE menu_items SET min_age = ? WHERE id = ?').run(18, wine)
db.prepare('UPDATE menu_items SET min_age = ? WHERE id = ?').run(21, whisky)

const owner = (method: string, path: string, body?: unknown) => s.req(method, path, { token: pharmacy.token, body })

t.test('the owner sets min_age on age_gate stores only, and menus show it', async (t) => {
  const r = await owner('PUT', `/restaurants/${pharmacy.storeId}/menu/items/${codeine}`, { min_age: 18 })
  t.equal(r.status, 200)
  t.equal(r.body.min_age, 18)
  const menu = await owner('GET', `/restaurants/${pharmacy.storeId}/menu`)
  const items = menu.body.flatMap((c: { items: unknown[] }) => c.items) as { id: number; min_age: number | null }[]
  t.equal(items.find((i) => i.id === codeine)?.min_age, 18, 'the menu shows min_age')
  t.equal(items.find((i) => i.id === plasters)?.min_age, null, 'unrestricted items show null on age_gate stores')
  isError(t, await owner('PUT', `/restaurants/${pharmacy.storeId}/menu/items/${plasters}`, { min_age: 0 }), 422, 'validation_failed', 'min_age 0')
  const created = await owner('POST', `/restaurants/${pharmacy.storeId}/menu/items`, { name: 'Nicotine gum', price: 7, min_age: 18 })
  t.equal(created.body.min_age, 18, 'set on create')

  const food = await s.req('PUT', `/restaurants/${bar.storeId}/menu/items/${bar.menu.fries}`, { token: bar.token, body: { min_age: 18 } })
  t.same([food.status, food.body.code, food.body.reason], [422, 'validation_failed', 'not_for_store_type'], 'min_age on a restaurant: a field its vertical does not use')
  t.ok(food.body.errors.min_age)
  const pub = await s.req('GET', `/menu/${store.id}`)
  t.equal(pub.body.flatMap((c: { items: unknown[] }) => c.items).find((i: { id: number }) => i.id === wine).min_age, 18, 'shown wherever it is set')
})

t.test('owner orders', async (t) => {
  const order = { type: 'delivery', address: '1 Main St', items: [{ item_id: codeine, quantity: 1 }, { item_id: plasters, quantity: 2 }] }
  const before = counts(db)
  const refused = await postOrder(s, pharmacy.token, pharmacy.storeId, order)
  isError(t, refused, 422, 'age_confirmation_required', 'without age_confirmed')
  t.match(refused.body.details, { min_age: 18, items: [{ item_id: codeine, name: 'Cough syrup with codeine', min_age: 18 }] })
  t.match(refused.body.message, /Cough syrup with codeine/)
  isError(t, await postOrder(s, pharmacy.token, pharmacy.storeId, { ...order, age_confirmed: false }), 422, 'age_confirmation_required', 'age_confirmed false')
  t.same(counts(db), before, 'nothing written')
  const ok = await postOrder(s, pharmacy.token, pharmacy.storeId, { ...order, age_confirmed: true })
  t.equal(ok.status, 200)
  t.equal(counts(db).orders, before.orders + 1)
  t.equal((await postOrder(s, pharmacy.token, pharmacy.storeId, { type: 'delivery', address: '1 Main St', items: [{ item_id: plasters, quantity: 1 }] })).status, 200, 'unrestricted orders need nothing')
})

const takeaway = (items: { item_id: number; quantity: number }[], extra: Record<string, unknown> = {}) => ({ type: 'takeaway', customer_name: 'Ada', phone: '+15550001111', items, ...extra })

t.test('storefront API orders', async (t) => {
  const headers = { 'x-storefront-token': createStorefrontToken(db, store.id) }
  const before = counts(db)
  const refused = await s.req('POST', '/storefront/orders', { headers, body: takeaway([{ item_id: water, quantity: 1 }, { item_id: whisky, quantity: 1 }, { item_id: wine, quantity: 1 }]) })
  isError(t, refused, 422, 'age_confirmation_required')
  t.equal(refused.body.details.min_age, 21, 'the highest min_age of the order')
  t.same(refused.body.details.items.map((i: { item_id: number }) => i.item_id), [whisky, wine])
  t.same(counts(db), before, 'nothing written')
  const ok = await s.req('POST', '/storefront/orders', { headers, body: takeaway([{ item_id: whisky, quantity: 1 }], { age_confirmed: true }) })
  t.equal(ok.status, 200)
})

t.test('customer app orders', async (t) => {
  const me = createCustomer(db, store.id)
  const before = counts(db)
  isError(t, await s.req('POST', '/customer/orders', { token: me.token, body: takeaway([{ item_id: wine, quantity: 1 }]) }), 422, 'age_confirmation_required')
  t.same(counts(db), before, 'nothing written')
  t.equal((await s.req('POST', '/customer/orders', { token: me.token, body: takeaway([{ item_id: wine, quantity: 1 }], { age_confirmed: true }) })).status, 200)
})

t.test('storefront MCP place_order', async (t) => {
  const client = await connectMcp(s, '/mcp/storefront', { 'x-storefront-token': createStorefrontToken(db, store.id, ['menu:read', 'order:write', 'agent']) })
  t.teardown(() => client.close())
  const before = counts(db)
  const refused = await callTool(client, 'place_order', takeaway([{ item_id: wine, quantity: 1 }]))
  t.ok(refused.isError)
  t.match(refused.json, { code: 'validation_failed', reason: 'age_confirmation_required' })
  t.same(counts(db), before, 'nothing written')
  const ok = await callTool(client, 'place_order', takeaway([{ item_id: wine, quantity: 1 }], { age_confirmed: true }))
  t.notOk(ok.isError, JSON.stringify(ok.json))
  t.equal(counts(db).orders, before.orders + 1)
})

t.test('store website checkout', async (t) => {
  const jar = new Map<string, string>()
  const cookie = () => [...jar].map(([k, v]) => `${k}=${v}`).join('; ')
  const keep = (res: Response) => {
    for (const c of res.headers.getSetCookie()) {
      const pair = c.split(';')[0]!
      const i = pair.indexOf('=')
      if (/Max-Age=0/.test(c)) jar.delete(pair.slice(0, i))
      else jar.set(pair.slice(0, i), pair.slice(i + 1))
    }
  }
  const slug = (db.prepare('SELECT slug FROM stores WHERE id = ?').pluck().get(store.id) as string)
  const url = `${s.site}/s/${slug}`
  const post = async (path: string, fields: Record<string, string>) => {
    const body = new URLSearchParams({ ...fields, csrf: jar.get('csrf') ?? '' })
    const res = await fetch(url + path, { method: 'POST', body, redirect: 'manual', headers: { cookie: cookie(), origin: s.site, 'content-type': 'application/x-www-form-urlencoded' } })
    keep(res)
    return { status: res.status, text: await res.text(), location: res.headers.get('location') }
  }
  keep(await fetch(`${url}/items/${wine}`, { redirect: 'manual' }))
  t.equal((await post('/cart', { item_id: String(wine), quantity: '1' })).status, 303)
  const checkout = await fetch(`${url}/checkout`, { headers: { cookie: cookie() } })
  t.match(await checkout.text(), /name="age_confirmed"/, 'the checkout asks for the age confirmation')
  const before = counts(db)
  const form = { type: 'takeaway', customer_name: 'Ada', customer_phone: '+15550001111' }
  const refused = await post('/checkout', form)
  t.equal(refused.status, 422)
  t.match(refused.text, /aged 18 or over/)
  t.same(counts(db), before, 'nothing written')
  const placed = await post('/checkout', { ...form, age_confirmed: 'on' })
  t.equal(placed.status, 303, placed.text.slice(0, 300))
  t.match(placed.location ?? '', /\/t\/[\w-]+$/)
  t.equal(counts(db).orders, before.orders + 1)
})
