/**
 * MCP protocol revisions and optional capabilities (issue 36 items 3, 4, 7): each of the five
 * revisions negotiated as the specification says (handshake revisions in `initialize`, 2026-07-28
 * per request in `_meta` with `server/discover`), never a 400 for a version the server speaks;
 * resources and completions on the admin and dev servers, scoped like the tools.
 */
import t from 'tap'
import { startServer } from './helpers/server.ts'
import { createAccount, createStorefrontToken, tokenFor } from './helpers/fixtures.ts'
import { bearer, connectMcp, rawMcp } from './helpers/mcp.ts'
import { PROTOCOL_VERSIONS } from '../src/mcp/protocol.ts'

const s = await startServer({ RATE_LIMIT_PER_MINUTE: '100000', MCP_PUBLIC_RATE_PER_MINUTE: '100000' })
t.teardown(() => s.close())
const db = s.app.svc.db
const acct = createAccount(db, { plan: 'pro' })
const other = createAccount(db, { plan: 'pro' })
const auth = bearer(acct.token)
const META = 'io.modelcontextprotocol/protocolVersion'
const stateless = (version: string) => ({ _meta: { [META]: version, 'io.modelcontextprotocol/clientCapabilities': {} } })
const rpc = (method: string, params?: unknown, id: number | string = 1) => JSON.stringify({ jsonrpc: '2.0', id, method, ...(params !== undefined ? { params } : {}) })

t.test('handshake revisions: initialize echoes each one, a newer or unknown one gets 2025-11-25', async (t) => {
  for (const v of ['2024-11-05', '2025-03-26', '2025-06-18', '2025-11-25']) {
    const r = await rawMcp(s, '/mcp/catalog', rpc('initialize', { protocolVersion: v, capabilities: {}, clientInfo: { name: 'x', version: '1' } }), { 'mcp-protocol-version': v })
    t.equal(r.status, 200, `${v} with its header`)
    t.equal(r.json.result.protocolVersion, v, `${v} is echoed`)
    t.notOk('resultType' in r.json.result, 'no resultType in the handshake era')
  }
  for (const v of ['2026-07-28', '2031-01-01', 'draft']) {
    const r = await rawMcp(s, '/mcp/catalog', rpc('initialize', { protocolVersion: v, capabilities: {}, clientInfo: { name: 'x', version: '1' } }))
    t.equal(r.json.result.protocolVersion, '2025-11-25', `${v}: the newest handshake revision is offered`)
  }
})

t.test('the MCP-Protocol-Version header: every supported revision passes, another is 400', async (t) => {
  t.same([...PROTOCOL_VERSIONS], ['2026-07-28', '2025-11-25', '2025-06-18', '2025-03-26', '2024-11-05'])
  for (const v of PROTOCOL_VERSIONS) {
    const r = await rawMcp(s, '/mcp/catalog', rpc('tools/list'), { 'mcp-protocol-version': v })
    t.equal(r.status, 200, `${v} is accepted`)
  }
  const r = await rawMcp(s, '/mcp/catalog', rpc('tools/list'), { 'mcp-protocol-version': '2024-10-07' })
  t.equal(r.status, 400)
  t.match(r.json.error.message, /2026-07-28, 2025-11-25/)
})

t.test('2026-07-28: stateless requests with _meta, server/discover, resultType, -32022', async (t) => {
  const discover = await rawMcp(s, '/mcp', rpc('server/discover', stateless('2026-07-28')), { ...auth, 'mcp-protocol-version': '2026-07-28' })
  t.equal(discover.status, 200)
  t.match(discover.json.result, {
    resultType: 'complete', supportedVersions: ['2026-07-28'], serverInfo: { name: 'dispatch-admin' },
    capabilities: { tools: {}, resources: {}, completions: {} },
  })
  t.match(discover.json.result.instructions, /list_restaurants/)
  // No initialize first: the request carries everything.
  const list = await rawMcp(s, '/mcp', rpc('tools/list', stateless('2026-07-28')), { ...auth, 'mcp-protocol-version': '2026-07-28' })
  t.equal(list.json.result.resultType, 'complete')
  t.ok(list.json.result.tools.some((x: { name: string }) => x.name === 'get_menu'))
  const call = await rawMcp(s, '/mcp', rpc('tools/call', { name: 'list_restaurants', arguments: {}, ...stateless('2026-07-28') }), auth)
  t.equal(call.json.result.resultType, 'complete')
  t.equal(call.json.result.structuredContent.data[0].id, acct.storeId, 'the tool ran')

  const unknown = await rawMcp(s, '/mcp/catalog', rpc('tools/list', stateless('2027-01-01')))
  t.equal(unknown.status, 400)
  t.match(unknown.json.error, { code: -32022, data: { supported: ['2026-07-28'], requested: '2027-01-01' } }, 'an unknown version names the supported ones')
  const mismatch = await rawMcp(s, '/mcp/catalog', rpc('tools/list', stateless('2026-07-28')), { 'mcp-protocol-version': '2025-11-25' })
  t.equal(mismatch.status, 400)
  t.equal(mismatch.json.error.code, -32600, 'a header that disagrees with _meta is an invalid request')
})

t.test('structured output: tools answering objects declare an output schema, and the SDK client checks answers against it', async (t) => {
  const client = await connectMcp(s, '/mcp', auth)
  t.teardown(() => client.close())
  const { tools } = await client.listTools()
  const byName = new Map(tools.map((x) => [x.name, x]))
  t.equal(byName.get('get_order')?.outputSchema?.type, 'object', 'get_order declares its result')
  t.equal(byName.get('list_restaurants')?.outputSchema?.type, 'object')
  t.notOk(byName.get('get_menu')?.outputSchema, 'a list result (an array) is text only, so no output schema')
  t.ok(tools.every((x) => x.title), 'every tool has a title')
  // The SDK validates structuredContent against outputSchema and throws when it does not match.
  const stores = await client.callTool({ name: 'list_restaurants', arguments: {} })
  t.match(stores.structuredContent, { data: [{ id: acct.storeId }] })
  const missing = await client.callTool({ name: 'get_order', arguments: { restaurant_id: acct.storeId, order_id: 99999999 } })
  t.equal(missing.isError, true, 'an error result')
  t.notOk(missing.structuredContent, 'carries its envelope as text only, as it does not match the schema')
  t.match(JSON.parse((missing.content as Array<{ text: string }>)[0]!.text), { code: 'not_found' })
})

t.test('the SDK client negotiates 2025-11-25 on every server', async (t) => {
  for (const [path, headers] of [['/mcp', auth], ['/mcp/catalog', {}], ['/mcp/dev', {}]] as const) {
    const client = await connectMcp(s, path, headers)
    t.teardown(() => client.close())
    t.ok(client.getServerCapabilities()?.tools, `${path}: tools`)
    const { tools } = await client.listTools()
    t.ok(tools.length > 0)
  }
})

t.test('admin resources: menu and settings of the caller\'s stores, read through the tools\' operations', async (t) => {
  const client = await connectMcp(s, '/mcp', auth)
  t.teardown(() => client.close())
  t.ok(client.getServerCapabilities()?.resources, 'resources declared')
  t.ok(client.getServerCapabilities()?.completions, 'completions declared')
  const { resources } = await client.listResources()
  const uris = resources.map((r) => r.uri)
  t.ok(uris.includes(`dispatch://restaurants/${acct.storeId}/menu`))
  t.ok(uris.includes(`dispatch://restaurants/${acct.storeId}/settings`))
  t.notOk(uris.some((u) => u.includes(`/${other.storeId}/`)), 'never another owner\'s store')
  const { resourceTemplates } = await client.listResourceTemplates()
  t.ok(resourceTemplates.some((x) => x.uriTemplate === 'dispatch://restaurants/{restaurant_id}/orders/{order_id}'))

  const menu = await client.readResource({ uri: `dispatch://restaurants/${acct.storeId}/menu` })
  const categories = JSON.parse((menu.contents[0] as { text: string }).text)
  t.ok(Array.isArray(categories) && categories[0].items.length > 0, 'the menu, as get_menu answers it')
  const itemId = categories[0].items[0].id
  const item = await client.readResource({ uri: `dispatch://restaurants/${acct.storeId}/menu/items/${itemId}` })
  t.equal(JSON.parse((item.contents[0] as { text: string }).text).id, itemId, 'one item')
  const settings = await client.readResource({ uri: `dispatch://restaurants/${acct.storeId}/settings` })
  t.match(JSON.parse((settings.contents[0] as { text: string }).text), { timezone: String })

  for (const uri of [`dispatch://restaurants/${other.storeId}/menu`, 'dispatch://restaurants/999999/menu', 'dispatch://restaurants/abc/menu', `dispatch://restaurants/${acct.storeId}/menu/items/99999999`, 'file:///etc/passwd']) {
    const r = await rawMcp(s, '/mcp', rpc('resources/read', { uri }), auth)
    t.equal(r.json.error?.code, -32002, `${uri}: not found`)
  }

  // A token that may not read menus lists no menus and cannot read them.
  const narrow = { token: tokenFor(db, acct.ownerId, ['orders:read', 'restaurants:read']) }
  const listed = await rawMcp(s, '/mcp', rpc('resources/list'), bearer(narrow.token))
  t.ok(listed.json.result.resources.every((r: { uri: string }) => !r.uri.endsWith('/menu')), 'no menu without menu:read')
  const refused = await rawMcp(s, '/mcp', rpc('resources/read', { uri: `dispatch://restaurants/${acct.storeId}/menu` }), bearer(narrow.token))
  t.equal(refused.json.error.code, -32602)
  t.equal(refused.json.error.data.code, 'forbidden', 'the capability is checked as for the tool')
})

t.test('completions: restaurant, order and item ids the caller can see', async (t) => {
  const client = await connectMcp(s, '/mcp', auth)
  t.teardown(() => client.close())
  const order = await s.req('POST', `/restaurants/${acct.storeId}/orders`, { token: acct.token, body: { type: 'takeaway', items: [{ item_id: acct.menu.fries, quantity: 1 }] } })
  t.equal(order.status, 200, order.text)
  const complete = (uri: string, name: string, value: string, args: Record<string, string> = {}) =>
    client.complete({ ref: { type: 'ref/resource', uri }, argument: { name, value }, context: { arguments: args } })
  const stores = await complete('dispatch://restaurants/{restaurant_id}/menu', 'restaurant_id', '')
  t.same(stores.completion.values, [String(acct.storeId)], 'only the caller\'s store')
  const orders = await complete('dispatch://restaurants/{restaurant_id}/orders/{order_id}', 'order_id', '', { restaurant_id: String(acct.storeId) })
  t.ok(orders.completion.values.includes(String(order.body.id)), 'the store\'s orders')
  const foreign = await complete('dispatch://restaurants/{restaurant_id}/orders/{order_id}', 'order_id', '', { restaurant_id: String(other.storeId) })
  t.same(foreign.completion.values, [], 'another owner\'s store completes to nothing')
  const items = await complete('dispatch://restaurants/{restaurant_id}/menu/items/{item_id}', 'item_id', String(acct.menu.fries).slice(0, 1), { restaurant_id: String(acct.storeId) })
  t.ok(items.completion.values.includes(String(acct.menu.fries)), 'the menu\'s items, by prefix')
  const prompt = await client.complete({ ref: { type: 'ref/prompt', name: 'nothing' }, argument: { name: 'x', value: '' } })
  t.same(prompt.completion.values, [], 'no prompts: nothing to complete')
})

t.test('storefront resources: the token\'s store only', async (t) => {
  const token = createStorefrontToken(db, acct.storeId, ['menu:read', 'agent'])
  const client = await connectMcp(s, '/mcp/storefront', { 'x-storefront-token': token })
  t.teardown(() => client.close())
  const { resources } = await client.listResources()
  t.same(resources.map((r) => r.uri).sort(), ['dispatch://store/info', 'dispatch://store/menu'])
  const menu = JSON.parse(((await client.readResource({ uri: 'dispatch://store/menu' })).contents[0] as { text: string }).text)
  t.ok(menu.some((c: { items: Array<{ id: number }> }) => c.items.some((i) => i.id === acct.menu.fries)), 'the store\'s menu')
  const item = JSON.parse(((await client.readResource({ uri: `dispatch://store/items/${acct.menu.fries}` })).contents[0] as { text: string }).text)
  t.equal(item.id, acct.menu.fries)
  for (const uri of [`dispatch://store/items/${other.menu.fries}`, 'dispatch://store/items/0', 'dispatch://store/items/x']) {
    const r = await rawMcp(s, '/mcp/storefront', rpc('resources/read', { uri }), { 'x-storefront-token': token })
    t.equal(r.json.error?.code, -32002, `${uri}: not found (another store's item included)`)
  }
  const ids = await client.complete({ ref: { type: 'ref/resource', uri: 'dispatch://store/items/{item_id}' }, argument: { name: 'item_id', value: '' } })
  t.ok(ids.completion.values.includes(String(acct.menu.fries)))
  t.notOk(ids.completion.values.includes(String(other.menu.fries)), 'only this store\'s items')
})

t.test('dev resources: the docs, the same reads as fetch_full_doc', async (t) => {
  const client = await connectMcp(s, '/mcp/dev')
  t.teardown(() => client.close())
  const { resources } = await client.listResources()
  t.ok(resources.some((r) => r.uri === 'dispatch://docs/mcp.md'))
  const doc = await client.readResource({ uri: 'dispatch://docs/mcp.md' })
  t.match((doc.contents[0] as { text: string }).text, /^# MCP servers/)
  t.equal(doc.contents[0]!.mimeType, 'text/markdown')
  const names = await client.complete({ ref: { type: 'ref/resource', uri: 'dispatch://docs/{name}' }, argument: { name: 'name', value: 'mcp-' } })
  t.ok(names.completion.values.includes('mcp-dev.md'))
  const missing = await rawMcp(s, '/mcp/dev', rpc('resources/read', { uri: 'dispatch://docs/..%2F..%2Fetc%2Fpasswd' }))
  t.equal(missing.json.error.code, -32002, 'only the product docs')
  const catalog = await rawMcp(s, '/mcp/catalog', rpc('resources/list'))
  t.equal(catalog.json.error.code, -32601, 'a server without resources does not pretend to have them')
})
