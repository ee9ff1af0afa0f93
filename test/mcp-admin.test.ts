/**
 * The admin MCP server (issue 12 item 3, api-v1 §4.11) through the official SDK client: the tool
 * list per capability, tenancy, REST and MCP observing each other's writes, the plan quota and the
 * `mcp` feature, domain failures as isError results, and the order-list filters both doors share.
 */
import t from 'tap'
import { startServer } from './helpers/server.ts'
import { createAccount, createOwner, createStore, outbox, postOrder, tokenFor } from './helpers/fixtures.ts'
import { bearer, callTool, connectMcp, rawMcp } from './helpers/mcp.ts'
import { nowIso } from '../src/storage/db.ts'
import { setAccountPlan } from '../src/storage/plans.ts'

const ADMIN_TOOLS = [
  'list_restaurants', 'get_menu', 'list_categories', 'add_category', 'update_category', 'delete_category', 'add_menu_item',
  'update_menu_item', 'delete_menu_item', 'set_item_availability', 'list_orders', 'get_order', 'update_order_status',
  'list_customers', 'get_customer', 'sales_report', 'get_restaurant_settings', 'update_business_hours', 'list_coupons', 'create_coupon',
  'update_coupon', 'delete_coupon', 'assign_driver', 'get_delivery_zones', 'set_delivery_zones',
  'set_item_photo', 'remove_item_photo', 'reorder_categories', 'reorder_items',
]
const WRITE_TOOLS = ['add_category', 'update_category', 'delete_category', 'add_menu_item', 'update_menu_item', 'delete_menu_item',
  'set_item_availability', 'update_order_status', 'update_business_hours', 'create_coupon', 'update_coupon', 'delete_coupon', 'assign_driver', 'set_delivery_zones',
  'set_item_photo', 'remove_item_photo', 'reorder_categories', 'reorder_items']

t.test('admin MCP server', async (t) => {
  const s = await startServer()
  t.teardown(() => s.close())
  const db = s.app.svc.db
  const acct = createAccount(db)
  const other = createAccount(db)
  const admin = await connectMcp(s, '/mcp', bearer(acct.token))
  t.teardown(() => admin.close())

  t.test('a `*` token sees every admin tool, each with an object input schema and a description', async (t) => {
    const { tools } = await admin.listTools()
    const names = tools.map((x) => x.name)
    for (const n of ADMIN_TOOLS) t.ok(names.includes(n), n)
    t.equal(tools.length, 29, 'the 22 of api-v1 §4.11 plus assign_driver, the delivery zones, the item photo and the menu order')
    for (const x of tools) {
      t.equal(x.inputSchema.type, 'object', `${x.name} schema is an object`)
      t.ok((x.description ?? '').length > 40, `${x.name} is described`)
    }
    const add = tools.find((x) => x.name === 'add_menu_item')!
    t.same([...add.inputSchema.required!].sort(), ['name', 'price', 'restaurant_id'], 'the spec\'s example arguments are all it needs')
    t.equal(tools.find((x) => x.name === 'list_orders')!.inputSchema.properties!.page && (tools.find((x) => x.name === 'list_orders')!.inputSchema.properties!.page as { type: string }).type, 'integer')
  })

  t.test('a read token sees no write tool and is refused if it calls one', async (t) => {
    const read = await connectMcp(s, '/mcp', bearer(tokenFor(db, acct.ownerId, ['read'])))
    t.teardown(() => read.close())
    const names = (await read.listTools()).tools.map((x) => x.name)
    for (const n of WRITE_TOOLS) t.notOk(names.includes(n), `${n} hidden`)
    t.ok(names.includes('get_menu'), 'reads listed')
    const r = await callTool(read, 'add_menu_item', { restaurant_id: acct.storeId, category_id: acct.menu.categoryId, name: 'Sneaky', price: 1 })
    t.ok(r.isError)
    t.equal(r.json.code, 'forbidden')
    t.equal(db.prepare("SELECT COUNT(*) FROM menu_items WHERE name = 'Sneaky'").pluck().get(), 0, 'nothing written')
  })

  t.test('a restricted token sees exactly what its capabilities grant', async (t) => {
    const c = await connectMcp(s, '/mcp', bearer(tokenFor(db, acct.ownerId, ['menu:read'])))
    t.teardown(() => c.close())
    const names = (await c.listTools()).tools.map((x) => x.name).sort()
    t.same(names, ['get_menu', 'list_categories'])
  })

  t.test('another owner\'s restaurant or order is not_found, nothing written', async (t) => {
    const menu = await callTool(admin, 'get_menu', { restaurant_id: other.storeId })
    t.ok(menu.isError)
    t.equal(menu.json.code, 'not_found')
    const add = await callTool(admin, 'add_menu_item', { restaurant_id: other.storeId, category_id: other.menu.categoryId, name: 'Intruder', price: 1 })
    t.equal(add.json.code, 'not_found')
    t.equal(db.prepare("SELECT COUNT(*) FROM menu_items WHERE name = 'Intruder'").pluck().get(), 0)
    // Resolution comes before validation: a bad body at someone else's store is still not_found.
    const bad = await callTool(admin, 'add_category', { restaurant_id: other.storeId })
    t.equal(bad.json.code, 'not_found')
    const o = await postOrder(s, other.token, other.storeId, { type: 'takeaway', customer_name: 'Y', phone: '+15550001111', items: [{ item_id: other.menu.fries, quantity: 1 }] })
    t.equal(o.status, 200)
    const got = await callTool(admin, 'get_order', { restaurant_id: acct.storeId, order_id: o.body.id })
    t.equal(got.json.code, 'not_found', 'an order of another store')
  })

  t.test('REST and MCP observe each other\'s writes', async (t) => {
    const before = outbox(db, 'menu.updated').length
    const add = await callTool(admin, 'add_menu_item', { restaurant_id: acct.storeId, category_id: acct.menu.categoryId, name: 'Agent Pie', price: 7.5, is_vegan: true })
    t.notOk(add.isError, 'added')
    t.equal(add.json.name, 'Agent Pie')
    t.equal(add.json.price, 7.5, 'decimal money, as REST')
    const rest = await s.req('GET', `/restaurants/${acct.storeId}/menu`, { token: acct.token })
    const items = rest.body.flatMap((c: { items: Array<{ id: number; name: string }> }) => c.items)
    t.ok(items.some((i: { id: number }) => i.id === add.json.id), 'REST sees the MCP write')
    const events = outbox(db, 'menu.updated').slice(before)
    t.ok(events.some((e) => e.data.entity === 'item' && e.data.id === add.json.id), 'a menu.updated event for it')

    const created = await s.req('POST', `/restaurants/${acct.storeId}/menu/categories`, { token: acct.token, body: { name: 'From REST' } })
    t.equal(created.status, 200)
    const cats = await callTool(admin, 'list_categories', { restaurant_id: acct.storeId })
    t.ok(cats.json.some((c: { id: number; item_count: number }) => c.id === created.body.id && c.item_count === 0), 'MCP sees the REST write')
    const restCats = await s.req('GET', `/restaurants/${acct.storeId}/menu/categories`, { token: acct.token })
    t.same(restCats.body, cats.json, 'GET /menu/categories is the same operation')
  })

  t.test('add_menu_item without a category: the first category, or a new "Menu" one', async (t) => {
    const plain = await callTool(admin, 'add_menu_item', { restaurant_id: acct.storeId, name: 'Just Soup', price: 4 })
    t.notOk(plain.isError, 'added with restaurant_id, name and price only')
    t.equal(plain.json.category_id, acct.menu.categoryId, 'into the first category')
    const store = createStore(db, acct.ownerId)
    const first = await callTool(admin, 'add_menu_item', { restaurant_id: store.id, name: 'Lonely Item', price: 2 })
    t.notOk(first.isError)
    const cats = await callTool(admin, 'list_categories', { restaurant_id: store.id })
    t.match(cats.json, [{ id: first.json.category_id, name: 'Menu', item_count: 1 }], 'a store without categories gets one')
    const second = await callTool(admin, 'add_menu_item', { restaurant_id: store.id, name: 'Second Item', price: 2 })
    t.equal(second.json.category_id, first.json.category_id, 'and only one')
  })

  t.test('domain failures are isError results with the API code', async (t) => {
    const del = await callTool(admin, 'delete_category', { restaurant_id: acct.storeId, category_id: acct.menu.categoryId })
    t.ok(del.isError)
    t.match(del.json, { code: 'validation_failed', reason: 'category_not_empty' })
    const ok = await callTool(admin, 'delete_category', { restaurant_id: acct.storeId, category_id: acct.menu.emptyCategoryId })
    t.notOk(ok.isError)
    t.same(ok.json, { ok: true })
    const sold = await callTool(admin, 'set_item_availability', { restaurant_id: acct.storeId, item_id: acct.menu.fries, is_sold_out: true })
    t.equal(sold.json.is_sold_out, true)
  })

  t.test('CRM: list_customers and get_customer see the customers REST creates', async (t) => {
    const made = await s.req('POST', `/restaurants/${acct.storeId}/customers`, { token: acct.token, body: { name: 'Carla Crm', email: 'carla@example.com' } })
    t.equal(made.status, 200)
    const list = await callTool(admin, 'list_customers', { restaurant_id: acct.storeId, search: 'carla' })
    t.same(list.json.data.map((c: { id: number }) => c.id), [made.body.id])
    const one = await callTool(admin, 'get_customer', { restaurant_id: acct.storeId, customer_id: made.body.id })
    t.notOk(one.isError)
    t.equal(one.json.id, made.body.id)
    const theirs = await callTool(admin, 'get_customer', { restaurant_id: other.storeId, customer_id: made.body.id })
    t.equal(theirs.json.code, 'not_found', 'another owner\'s store')
  })

  t.test('list_orders filters: status, date range, search (REST has them too)', async (t) => {
    const place = (name: string) => postOrder(s, acct.token, acct.storeId, { type: 'takeaway', customer_name: name, phone: '+15550002222', items: [{ item_id: acct.menu.burger.id, quantity: 1 }] })
    const a = (await place('Alice Zebra')).body
    const b = (await place('Bob Yak')).body
    await callTool(admin, 'update_order_status', { restaurant_id: acct.storeId, order_id: b.id, status: 'preparing' })
    const byName = await callTool(admin, 'list_orders', { restaurant_id: acct.storeId, search: 'zebra' })
    t.same(byName.json.data.map((o: { id: number }) => o.id), [a.id], 'search by customer name')
    const byId = await callTool(admin, 'list_orders', { restaurant_id: acct.storeId, search: String(b.id) })
    t.same(byId.json.data.map((o: { id: number }) => o.id), [b.id], 'search by order id')
    const accepted = await callTool(admin, 'list_orders', { restaurant_id: acct.storeId, status: 'preparing' })
    t.same(accepted.json.data.map((o: { id: number }) => o.id), [b.id], 'status')
    const today = nowIso().slice(0, 10)
    const inRange = await callTool(admin, 'list_orders', { restaurant_id: acct.storeId, from: today, to: today, page: 1 })
    t.ok(inRange.json.data.length >= 2, 'today')
    const past = await callTool(admin, 'list_orders', { restaurant_id: acct.storeId, from: '2001-01-01', to: '2001-01-31' })
    t.equal(past.json.total, 0, 'a range without orders')
    const rest = await s.req('GET', `/restaurants/${acct.storeId}/orders?search=zebra&from=${today}&to=${today}`, { token: acct.token })
    t.same(rest.body.data.map((o: { id: number }) => o.id), [a.id], 'REST filters the same way')
    const reversed = await s.req('GET', `/restaurants/${acct.storeId}/orders?from=${today}&to=2001-01-01`, { token: acct.token })
    t.equal(reversed.status, 422)
    const badPage = await admin.callTool({ name: 'list_orders', arguments: { restaurant_id: acct.storeId, page: 0 } }).then(() => null, (e: { code?: number }) => e)
    t.equal(badPage?.code, -32602, 'page 0 is a bad argument')
  })
})

t.test('plan: the mcp feature and the menu-item quota', async (t) => {
  const s = await startServer()
  t.teardown(() => s.close())
  const db = s.app.svc.db

  t.test('an account whose plan lacks `mcp` gets 403 feature_not_in_plan at the HTTP level', async (t) => {
    const ownerId = createOwner(db, 'Free owner', 'free')
    const token = tokenFor(db, ownerId, ['*'])
    const r = await rawMcp(s, '/mcp', JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }), bearer(token))
    t.equal(r.status, 403)
    t.match(r.json, { code: 'forbidden', reason: 'feature_not_in_plan' })
    t.equal(r.json.details.feature, 'mcp')
    await t.rejects(connectMcp(s, '/mcp', bearer(token)), 'the SDK client cannot connect')
  })

  t.test('add_menu_item checks the menu-item quota: plan_limit_reached as an isError result', async (t) => {
    db.prepare(`INSERT INTO plans (key, name, price, features, quotas, created_at) VALUES ('tiny-mcp', 'Tiny', 0, ?, ?, ?)`)
      .run(JSON.stringify(['mcp']), JSON.stringify({ menu_items: 1 }), nowIso())
    const ownerId = createOwner(db, 'Tiny owner', null)
    setAccountPlan(db, ownerId, 'tiny-mcp')
    const token = tokenFor(db, ownerId, ['*'])
    const store = createStore(db, ownerId)
    const c = await connectMcp(s, '/mcp', bearer(token))
    t.teardown(() => c.close())
    const cat = await callTool(c, 'add_category', { restaurant_id: store.id, name: 'Mains' })
    const first = await callTool(c, 'add_menu_item', { restaurant_id: store.id, category_id: cat.json.id, name: 'One', price: 1 })
    t.notOk(first.isError, 'within the quota')
    const second = await callTool(c, 'add_menu_item', { restaurant_id: store.id, category_id: cat.json.id, name: 'Two', price: 1 })
    t.ok(second.isError)
    t.match(second.json, { code: 'forbidden', reason: 'plan_limit_reached' })
    t.equal(second.json.details.limit, 'menu_items')
    t.equal(db.prepare("SELECT COUNT(*) FROM menu_items WHERE name = 'Two'").pluck().get(), 0, 'nothing written')
    // The same plan has no CRM: the customer tools answer the entitlement refusal as a result.
    const crm = await callTool(c, 'list_customers', { restaurant_id: store.id })
    t.ok(crm.isError)
    t.match(crm.json, { code: 'forbidden', reason: 'feature_not_in_plan' })
    t.equal(crm.json.details.feature, 'crm')
  })
})
