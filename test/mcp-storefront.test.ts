/**
 * The storefront MCP server (issue 12 item 4, api-v1 §4.11; docs/mcp-storefront.md) driven by the
 * official SDK client: admission by the `agent` scope, tools per scope, the storefront order limits,
 * server-side prices and coupons, REST and MCP seeing each other's orders, store-only tracking.
 */
import t from 'tap'
import { startServer } from './helpers/server.ts'
import { connectMcp, callTool, rawMcp, type Client, rpcError } from './helpers/mcp.ts'
import { counts, createAccount, createOwner, createStore, createMenu, createStorefrontToken, envelopeProblem } from './helpers/fixtures.ts'

const s = await startServer({ RATE_LIMIT_PER_MINUTE: '100000' })
t.teardown(() => s.close())
const db = s.app.svc.db

const a = createAccount(db)
const b = createAccount(db)
const ALL = ['menu:read', 'order:write', 'agent']
const agentToken = createStorefrontToken(db, a.storeId, ALL)
const menuAgentToken = createStorefrontToken(db, a.storeId, ['menu:read', 'agent'])
const plainToken = createStorefrontToken(db, a.storeId, ['menu:read', 'order:write'])
const bToken = createStorefrontToken(db, b.storeId, ALL)
db.prepare('UPDATE menu_items SET is_vegan = 1 WHERE id = ?').run(a.menu.fries)

const PATH = '/mcp/storefront'
const sf = (token: string) => ({ 'x-storefront-token': token })
const clients: Client[] = []
const connect = async (token: string) => {
  const c = await connectMcp(s, PATH, sf(token))
  clients.push(c)
  return c
}
t.teardown(async () => { for (const c of clients) await c.close() })

const agent = await connect(agentToken)
const initialize = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } } })


const STOREFRONT_TOOLS = [
  'apply_coupon', 'get_item', 'get_menu', 'get_opening_hours', 'get_order', 'get_store_info', 'list_categories',
  'list_fulfillment_modes', 'place_order', 'price_cart', 'search_menu', 'track_order',
]
const ORDER_TOOLS = ['get_order', 'place_order', 'track_order']

t.test('a storefront token without the agent scope gets 403 with the error envelope; no token 401', async (t) => {
  const r = await rawMcp(s, PATH, initialize, sf(plainToken))
  t.equal(r.status, 403)
  t.equal(envelopeProblem(r.json, 'forbidden'), null, 'forbidden envelope')
  t.match(r.json.message, /agent scope/)
  await t.rejects(connectMcp(s, PATH, sf(plainToken)), 'the SDK client cannot connect either')
  const none = await rawMcp(s, PATH, initialize)
  t.equal(none.status, 401)
  t.equal(envelopeProblem(none.json, 'unauthenticated'), null)
})

t.test('an agent token with both scopes sees the 12 storefront tools', async (t) => {
  const { tools } = await agent.listTools()
  t.same(tools.map((x) => x.name).sort(), STOREFRONT_TOOLS)
  for (const x of tools) t.equal(x.inputSchema.type, 'object', `${x.name} takes an object`)
  t.notOk(tools.some((x) => Object.keys(x.inputSchema.properties ?? {}).some((p) => p === 'restaurant_id' || p === 'store_id')), 'no tool names a store')
})

t.test('a menu:read agent token sees no order tools and is refused if it calls one anyway', async (t) => {
  const reader = await connect(menuAgentToken)
  const names = (await reader.listTools()).tools.map((x) => x.name)
  t.equal(names.length, 9)
  for (const n of ORDER_TOOLS) t.notOk(names.includes(n), `${n} is hidden`)
  const before = counts(db)
  const r = await callTool(reader, 'place_order', { type: 'takeaway', items: [{ item_id: a.menu.fries, quantity: 1 }] })
  t.ok(r.isError)
  t.equal(r.json.code, 'forbidden')
  t.same(counts(db), before, 'nothing written')
  t.notOk((await callTool(reader, 'get_menu')).isError, 'menu tools still work')
})

t.test('place_order keeps the storefront limits: 40 items, 30 per line, takeaway or on-table', async (t) => {
  const before = counts(db)
  const many = await rpcError(callTool(agent, 'place_order', { type: 'takeaway', items: Array.from({ length: 41 }, () => ({ item_id: a.menu.fries, quantity: 1 })) }))
  t.equal(many.code, -32602, '41 items are invalid arguments')
  t.equal((many.data as any).code, 'validation_failed')
  t.ok((many.data as any).errors.items, 'keyed items')
  const heavy = await rpcError(callTool(agent, 'place_order', { type: 'takeaway', items: [{ item_id: a.menu.fries, quantity: 31 }] }))
  t.equal(heavy.code, -32602)
  t.ok((heavy.data as any).errors['items.0.quantity'], '31 on a line is keyed items.0.quantity')
  const delivery = await rpcError(callTool(agent, 'place_order', { type: 'delivery', address: '1 Main St', items: [{ item_id: a.menu.fries, quantity: 1 }] }))
  t.ok((delivery.data as any).errors.type, 'delivery is not a storefront order type')
  const cart = await rpcError(callTool(agent, 'price_cart', { items: [{ item_id: a.menu.fries, quantity: 31 }] }))
  t.ok((cart.data as any).errors['items.0.quantity'], 'price_cart has the same per-line limit')
  t.same(counts(db), before, 'nothing written')

  const ok = await callTool(agent, 'place_order', { type: 'takeaway', items: Array.from({ length: 40 }, () => ({ item_id: a.menu.fries, quantity: 30 })) })
  t.notOk(ok.isError, '40 lines of 30 is accepted')
  t.equal(ok.json.items.length, 40)
})

t.test('prices and coupons are the server\'s: price_cart and place_order agree, client prices are ignored', async (t) => {
  const code = `AGENT${Date.now()}`
  const c = await s.req('POST', `/restaurants/${a.storeId}/coupons`, { token: a.token, body: { code, kind: 'percent', value: 10 } })
  t.equal(c.status, 200)
  const items = [
    { item_id: a.menu.burger.id, quantity: 2, variation: a.menu.burger.double, extras: [a.menu.burger.cheese], price: 0.01, unit_price: 0.01 },
    { item_id: a.menu.fries, quantity: 1, price: 0 },
  ]
  // 2 × (15.00 + 1.50) + 3.00 = 36.00; 10% off = 3.60; tip 2.00 → 34.40
  const priced = await callTool(agent, 'price_cart', { items, tip_amount: 2, coupon_code: code.toLowerCase(), subtotal: 1, total: 1, discount: 99 })
  t.notOk(priced.isError, JSON.stringify(priced.json))
  t.match(priced.json, { subtotal: 36, discount: 3.6, tip_amount: 2, total: 34.4, coupon_code: code, item_count: 3, currency: 'USD' })
  t.equal(priced.json.items[0].unit_price, 15)

  const checked = await callTool(agent, 'apply_coupon', { items, coupon_code: code })
  t.match(checked.json, { valid: true, reason: null, discount: 3.6, cart: { total: 32.4 } })
  const unknown = await callTool(agent, 'apply_coupon', { items, coupon_code: 'NOPE' })
  t.notOk(unknown.isError, 'a coupon that does not apply is an answer, not an error')
  t.match(unknown.json, { valid: false, discount: 0, cart: { total: 36 } })
  t.match(unknown.json.reason, /does not exist/)
  const refused = await callTool(agent, 'price_cart', { items, coupon_code: 'NOPE' })
  t.ok(refused.isError)
  t.equal(refused.json.code, 'validation_failed')
  t.ok(refused.json.errors.coupon_code, 'price_cart refuses it as an order would')
  const uses = () => db.prepare('SELECT uses FROM coupons WHERE code = ?').pluck().get(code)
  t.equal(uses(), 0, 'pricing does not use the coupon up')

  const placed = await callTool(agent, 'place_order', {
    type: 'takeaway', customer_name: 'Dana', items, tip_amount: 2, coupon_code: code, total: 0.01, subtotal: 0.01, discount: 0, is_paid: true,
  })
  t.notOk(placed.isError, JSON.stringify(placed.json))
  t.match(placed.json, { subtotal: 36, discount: 3.6, tip_amount: 2, total: 34.4, coupon_code: code, is_paid: false, source: 'storefront' })
  t.equal(uses(), 1, 'the order used the coupon')
})

t.test('the order answer carries track_token and continue_url; REST sees the MCP order and MCP the REST one', async (t) => {
  const placed = await callTool(agent, 'place_order', { type: 'on-table', table_number: '7', items: [{ item_id: a.menu.fries, quantity: 2 }] })
  t.notOk(placed.isError)
  const order = placed.json
  t.match(order.track_token, /^trk_/)
  t.equal(order.continue_url, `${s.site}/t/${order.track_token}`)
  const rest = await s.req('GET', `/restaurants/${a.storeId}/orders/${order.id}`, { token: a.token })
  t.equal(rest.status, 200)
  t.match(rest.body, { id: order.id, total: 6, type: 'on-table', table_number: '7', is_paid: false })

  const viaRest = await s.req('POST', '/storefront/orders', { headers: sf(plainToken), body: { type: 'takeaway', items: [{ item_id: a.menu.burger.id, quantity: 1 }] } })
  t.equal(viaRest.status, 200)
  const tracked = await callTool(agent, 'track_order', { track_token: viaRest.body.track_token })
  t.notOk(tracked.isError)
  t.match(tracked.json, { id: viaRest.body.id, status: 'new', total: 10, continue_url: viaRest.body.continue_url })
  const full = await callTool(agent, 'get_order', { track_token: viaRest.body.track_token })
  t.match(full.json, { id: viaRest.body.id, items: [{ item_id: a.menu.burger.id, quantity: 1 }] })

  // The owner moves the MCP order on; the agent's tracking sees it.
  const st = await s.req('PUT', `/restaurants/${a.storeId}/orders/${order.id}/status`, { token: a.token, body: { status: 'preparing' } })
  t.equal(st.status, 200)
  t.equal((await callTool(agent, 'track_order', { track_token: order.track_token })).json.status, 'preparing')
})

t.test("another store's order is not_found by its track token; so is an unknown token", async (t) => {
  const other = await s.req('POST', '/storefront/orders', { headers: sf(bToken), body: { type: 'takeaway', items: [{ item_id: b.menu.fries, quantity: 1 }] } })
  t.equal(other.status, 200)
  for (const name of ['track_order', 'get_order']) {
    const r = await callTool(agent, name, { track_token: other.body.track_token })
    t.ok(r.isError, `${name} refuses`)
    t.equal(r.json.code, 'not_found')
    t.equal((await callTool(agent, name, { track_token: 'trk_nope' })).json.code, 'not_found', `${name}: same answer for a token that does not exist`)
  }
  const item = await callTool(agent, 'get_item', { item_id: b.menu.fries })
  t.equal(item.json.code, 'not_found', "another store's item is not_found")
})

t.test('browsing: categories, search by words, dietary and price, item detail', async (t) => {
  const cats = (await callTool(agent, 'list_categories')).json
  t.match(cats, [{ id: a.menu.categoryId, name: 'Mains', item_count: 3, available_count: 2 }, { id: a.menu.emptyCategoryId, item_count: 0 }])
  const names = async (args: Record<string, unknown>) => (await callTool(agent, 'search_menu', args)).json.map((i: any) => i.name)
  t.same(await names({ query: 'BUR' }), ['Burger'])
  t.same(await names({ max_price: 5 }), ['Fries'], 'soup (5.00) is sold out, burger costs 10.00')
  t.same(await names({ max_price: 5, include_sold_out: true }), ['Fries', 'Soup'])
  t.same(await names({ dietary: ['vegan'] }), ['Fries'])
  t.same(await names({ dietary: ['vegan', 'halal'] }), [])
  const found = (await callTool(agent, 'search_menu', { query: 'burger' })).json[0]
  t.match(found, { from_price: 10, category: { id: a.menu.categoryId, name: 'Mains' } })
  const burger = (await callTool(agent, 'get_item', { item_id: a.menu.burger.id })).json
  t.same(burger.variations.map((v: any) => v.name), ['Single', 'Double'])
  t.same(burger.groups, [{ name: 'Extras', extras: [{ id: a.menu.burger.cheese, name: 'Cheese', price: 1.5, group: null }, { id: a.menu.burger.bacon, name: 'Bacon', price: 2, group: null }] }])
  t.equal((await callTool(agent, 'get_item', { item_id: a.menu.soup })).json.is_sold_out, true)
})

t.test('price_cart refuses a sold-out item as an order would, and writes nothing', async (t) => {
  const before = counts(db)
  const r = await callTool(agent, 'price_cart', { items: [{ item_id: a.menu.fries, quantity: 1 }, { item_id: a.menu.soup, quantity: 1 }] })
  t.ok(r.isError)
  t.equal(r.json.code, 'validation_failed')
  t.match(r.json.errors['items.1.item_id'], [/sold out/])
  t.same(counts(db), before)
})

t.test('store info and hours; a store that is not accepting orders refuses place_order with store_closed', async (t) => {
  const info = (await callTool(agent, 'get_store_info')).json
  t.match(info, { id: a.storeId, city: 'Testville', order_types: ['takeaway', 'on-table'], open_now: true, hours: { always_open: true } })
  t.same((await callTool(agent, 'list_fulfillment_modes')).json.map((m: any) => [m.type, m.requires]), [['takeaway', []], ['on-table', ['table_number']]])

  const owner = createOwner(db)
  const closed = createStore(db, owner, { settings: { accepting_orders: false, timezone: 'Europe/Berlin', business_hours: { mon_sun: '11:00-22:00' }, address: '1 Harbour Rd' } })
  const menu = createMenu(db, closed.id)
  const c = await connect(createStorefrontToken(db, closed.id, ALL))
  const hours = (await callTool(c, 'get_opening_hours')).json
  t.match(hours, { timezone: 'Europe/Berlin', open_now: false, closed_reason: 'not_accepting', always_open: false, accepting_orders: false, next_opening: null })
  t.same(hours.business_hours.mon, [['11:00', '22:00']])
  t.match((await callTool(c, 'get_store_info')).json, { open_now: false, address: '1 Harbour Rd' })
  const before = counts(db)
  const r = await callTool(c, 'place_order', { type: 'takeaway', items: [{ item_id: menu.fries, quantity: 1 }] })
  t.ok(r.isError)
  t.match(r.json, { code: 'validation_failed', reason: 'store_closed' })
  t.same(counts(db), before, 'nothing written')
})

t.test('the same operations over HTTP: POST /storefront/cart/price and GET /storefront/items/{itemId}', async (t) => {
  const r = await s.req('POST', '/storefront/cart/price', { headers: sf(plainToken), body: { items: [{ item_id: a.menu.fries, quantity: 2 }] } })
  t.equal(r.status, 200)
  t.match(r.body, { subtotal: 6, total: 6, discount: 0 })
  const item = await s.req('GET', `/storefront/items/${a.menu.burger.id}`, { headers: sf(plainToken) })
  t.match(item.body, { id: a.menu.burger.id, name: 'Burger' })
  const other = await s.req('GET', `/storefront/items/${b.menu.fries}`, { headers: sf(plainToken) })
  t.equal(other.status, 404)
  const reader = await s.req('GET', '/storefront/orders/trk_nope', { headers: sf(createStorefrontToken(db, a.storeId, ['menu:read'])) })
  t.equal(reader.status, 403, 'order routes need order:write')
})

t.test('issuing a storefront token accepts the agent scope; the default stays menu:read and order:write', async (t) => {
  const plain = await s.req('POST', `/restaurants/${a.storeId}/storefront-tokens`, { token: a.token, body: {} })
  t.same(plain.body.scopes, ['menu:read', 'order:write'])
  const issued = await s.req('POST', `/restaurants/${a.storeId}/storefront-tokens`, { token: a.token, body: { scopes: ALL } })
  t.equal(issued.status, 200)
  t.same(issued.body.scopes, ALL)
  const c = await connect(issued.body.token)
  t.equal((await c.listTools()).tools.length, 12)
})

t.test('the demo seed\'s storefront token carries menu:read, order:write and agent', async (t) => {
  const demo = s.seed()
  const c = await connect(demo.store.storefront_token)
  t.equal((await c.listTools()).tools.length, 12)
})
