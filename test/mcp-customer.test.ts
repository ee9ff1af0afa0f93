/**
 * The customer MCP server (issue 12 item 5, api-v1 §4.11; docs/mcp-customer.md) driven by the
 * official SDK client: identity only from the customer token (no tool takes a customer id or phone,
 * a supplied one changes nothing), another customer's order is not_found by id and by track token,
 * reorder prices a past order today and says what it left out, and REST agrees with MCP.
 */
import t from 'tap'
import { startServer } from './helpers/server.ts'
import { bearer, callTool, connectMcp, rawMcp, type Client, rpcError } from './helpers/mcp.ts'
import { counts, createAccount, createItem, createCustomer, envelopeProblem } from './helpers/fixtures.ts'

const s = await startServer({ RATE_LIMIT_PER_MINUTE: '100000' })
t.teardown(() => s.close())
const db = s.app.svc.db

const a = createAccount(db)
const salad = createItem(db, a.storeId, a.menu.categoryId, 'Salad', 700)
const me = createCustomer(db, a.storeId)
const other = createCustomer(db, a.storeId)

const PATH = '/mcp/customer'
const clients: Client[] = []
t.teardown(async () => { for (const c of clients) await c.close() })
const connect = async (token: string) => {
  const c = await connectMcp(s, PATH, bearer(token))
  clients.push(c)
  return c
}

const order = async (token: string, items: unknown[]) => {
  const r = await s.req('POST', '/customer/orders', { token, body: { type: 'takeaway', items } })
  if (r.status !== 200) throw new Error(`order: ${r.status} ${r.text}`)
  return r.body as { id: number; track_token: string; total: number }
}
const mine1 = await order(me.token, [{ item_id: a.menu.fries, quantity: 1 }])
const mine2 = await order(me.token, [
  { item_id: a.menu.burger.id, quantity: 2, variation: a.menu.burger.double, extras: [a.menu.burger.cheese, a.menu.burger.bacon] },
  { item_id: a.menu.fries, quantity: 3 },
  { item_id: salad, quantity: 1 },
])
const theirs = await order(other.token, [{ item_id: a.menu.fries, quantity: 5 }])

const agent = await connect(me.token)


t.test('six tools, none of which takes a customer id or a phone', async (t) => {
  const { tools } = await agent.listTools()
  t.same(tools.map((x) => x.name).sort(), ['my_bookings', 'my_orders', 'my_profile', 'order_detail', 'reorder', 'track_order'])
  for (const x of tools) {
    const props = Object.keys(x.inputSchema.properties ?? {})
    t.notOk(props.some((p) => /customer|phone/.test(p)), `${x.name} takes no customer id or phone (${props.join(', ')})`)
  }
})

t.test('a missing or unknown customer token is 401 with the error envelope', async (t) => {
  const init = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } } })
  for (const headers of [{}, bearer('dsc_nope'), bearer(a.token)]) {
    const r = await rawMcp(s, PATH, init, headers)
    t.equal(r.status, 401)
    t.equal(envelopeProblem(r.json, 'unauthenticated'), null)
  }
})

t.test('my_orders: own orders only, newest first, limited; a supplied customer_id changes nothing', async (t) => {
  const all = await callTool(agent, 'my_orders')
  t.same(all.json.map((o: any) => o.id), [mine2.id, mine1.id])
  t.same((await callTool(agent, 'my_orders', { limit: 1 })).json.map((o: any) => o.id), [mine2.id])
  const spoofed = await callTool(agent, 'my_orders', { customer_id: other.id, phone: other.phone })
  t.same(spoofed.json.map((o: any) => o.id), [mine2.id, mine1.id], 'identity comes from the token')
  const bad = await rpcError(callTool(agent, 'my_orders', { limit: 51 }))
  t.equal(bad.code, -32602)
  const profile = await callTool(agent, 'my_profile', { customer_id: other.id })
  t.match(profile.json, { id: me.id, email: me.email })
})

t.test("order_detail and track_order: own orders; another customer's is not_found by id and by track token", async (t) => {
  const detail = await callTool(agent, 'order_detail', { order_id: mine2.id })
  t.match(detail.json, { id: mine2.id, customer_id: me.id, items: [{ item_id: a.menu.burger.id, quantity: 2 }, {}, {}] })
  for (const args of [{ order_id: theirs.id }, { order_id: 99_999_999 }]) {
    const r = await callTool(agent, 'order_detail', args)
    t.ok(r.isError)
    t.equal(r.json.code, 'not_found')
    t.notOk(JSON.stringify(r.json).includes(String(theirs.total)), 'nothing of the order leaks')
  }
  t.match((await callTool(agent, 'track_order', { order_id: mine1.id })).json, { id: mine1.id, status: 'new', track_url: `${s.site}/t/${mine1.track_token}` })
  t.match((await callTool(agent, 'track_order', { track_token: mine1.track_token })).json, { id: mine1.id })
  t.equal((await callTool(agent, 'track_order', { order_id: theirs.id })).json.code, 'not_found')
  t.equal((await callTool(agent, 'track_order', { track_token: theirs.track_token })).json.code, 'not_found', 'even with its track token')
  t.equal((await rpcError(callTool(agent, 'track_order', {}))).code, -32602, 'one of order_id and track_token is needed')
  t.equal((await rpcError(callTool(agent, 'track_order', { order_id: mine1.id, track_token: mine1.track_token }))).code, -32602, 'not both')

  // REST agrees: the same operation over HTTP.
  t.equal((await s.req('GET', `/customer/orders/${theirs.id}`, { token: me.token })).status, 404)
  t.equal((await s.req('GET', `/customer/orders/${mine1.id}`, { token: me.token })).body.id, mine1.id)
  t.equal((await s.req('GET', `/customer/orders/track?order_id=${theirs.id}`, { token: me.token })).status, 404)
  t.equal((await s.req('GET', `/customer/orders/track?order_id=${mine1.id}`, { token: me.token })).body.id, mine1.id, 'an id as query digits')
  t.same((await s.req('GET', '/customer/orders/recent?limit=1', { token: me.token })).body.map((o: any) => o.id), [mine2.id])
})

t.test('reorder rebuilds a past order priced now, leaving out sold-out and deleted items and saying which', async (t) => {
  const soldOut = await s.req('PATCH', `/restaurants/${a.storeId}/menu/items/${a.menu.fries}/sold-out`, { token: a.token, body: { is_sold_out: true } })
  t.equal(soldOut.status, 200)
  const removed = await s.req('DELETE', `/restaurants/${a.storeId}/menu/items/${salad}`, { token: a.token })
  t.equal(removed.status, 204)
  const before = counts(db)
  const r = await callTool(agent, 'reorder', { order_id: mine2.id })
  t.notOk(r.isError, JSON.stringify(r.json))
  t.equal(r.json.from_order_id, mine2.id)
  t.same(r.json.cart.items, [{ item_id: a.menu.burger.id, quantity: 2, variation: a.menu.burger.double, extras: [a.menu.burger.cheese, a.menu.burger.bacon], note: null }])
  t.same(r.json.skipped.map((x: any) => [x.item_id, x.reason]), [[a.menu.fries, 'sold out'], [salad, 'no longer on the menu']])
  // 2 × (15.00 + 1.50 + 2.00)
  t.match(r.json.priced, { subtotal: 37, total: 37, item_count: 2 })
  t.same(counts(db), before, 'nothing ordered')
  t.equal((await callTool(agent, 'reorder', { order_id: theirs.id })).json.code, 'not_found')

  // The draft is what the customer app sends: it places as priced.
  const placed = await s.req('POST', '/customer/orders', { token: me.token, body: r.json.cart })
  t.equal(placed.status, 200)
  t.equal(placed.body.total, r.json.priced.total)
  // ... and MCP sees the REST order at once.
  t.equal((await callTool(agent, 'my_orders', { limit: 1 })).json[0].id, placed.body.id)
})

t.test('my_bookings is an empty list until reservations exist', async (t) => {
  const r = await callTool(agent, 'my_bookings')
  t.notOk(r.isError)
  t.same(r.json, [])
})
