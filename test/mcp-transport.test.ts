/**
 * The MCP transport (issue 12 item 1, api-v1 §4.11) driven by the official SDK client as agents
 * drive it, plus raw POSTs for what the SDK never sends: version negotiation, JSON-RPC errors,
 * notifications (202, empty body), GET 405, Origin, body limit, credentials, rate limit.
 */
import t from 'tap'
import { McpError, InitializeResultSchema, EmptyResultSchema } from '@modelcontextprotocol/sdk/types.js'
import { startServer } from './helpers/server.ts'
import { createAccount, createOwner, isError, tokenFor } from './helpers/fixtures.ts'
import { bearer, connectMcp, rawMcp } from './helpers/mcp.ts'
import { suspendAccount } from '../src/storage/accounts.ts'

const rpc = (method: string, params?: unknown, id: number | null = 1) => JSON.stringify({ jsonrpc: '2.0', id, method, ...(params !== undefined ? { params } : {}) })
const clientInfo = { name: 'raw', version: '0' }

t.test('MCP transport', async (t) => {
  const s = await startServer()
  t.teardown(() => s.close())
  const acct = createAccount(s.app.svc.db)
  const auth = bearer(acct.token)

  t.test('the SDK client connects; initialize echoes each supported version and answers the newest for another', async (t) => {
    const client = await connectMcp(s, '/mcp', auth)
    t.teardown(() => client.close())
    // The SDK offers a newer version than this server speaks: it is answered 2025-06-18 and accepts it.
    t.equal(client.getServerVersion()?.name, 'dispatch-admin')
    t.match(client.getInstructions(), /list_restaurants/)
    for (const v of ['2024-11-05', '2025-03-26', '2025-06-18', '2025-11-25']) {
      const r = await client.request({ method: 'initialize', params: { protocolVersion: v, capabilities: {}, clientInfo } }, InitializeResultSchema)
      t.equal(r.protocolVersion, v, `${v} is echoed`)
      t.ok(r.capabilities.tools, 'tools capability')
    }
    const other = await client.request({ method: 'initialize', params: { protocolVersion: '2030-01-01', capabilities: {}, clientInfo } }, InitializeResultSchema)
    t.equal(other.protocolVersion, '2025-11-25', 'an unknown version gets the newest handshake version this server speaks')
    t.same(await client.request({ method: 'ping' }, EmptyResultSchema), {}, 'ping')
  })

  t.test('the discovery index lists the MCP servers with address, auth and tool count', async (t) => {
    const index = await s.req('GET', '/')
    const admin = index.body.mcp_servers.find((m: { url: string }) => m.url === `${s.site}/mcp`)
    t.ok(admin, 'the admin server is listed')
    t.match(admin.auth, /owner bearer/)
    const client = await connectMcp(s, '/mcp', auth)
    t.teardown(() => client.close())
    t.equal(admin.tools, (await client.listTools()).tools.length, 'its tool count is what a `*` token lists')
  })

  t.test('JSON-RPC errors: -32700, -32600, -32601, -32602', async (t) => {
    const bad = await rawMcp(s, '/mcp', '{"jsonrpc": "2.0", ', auth)
    t.equal(bad.status, 400)
    t.equal(bad.json.error.code, -32700, 'malformed JSON is a parse error, not the API envelope')
    t.equal(bad.json.id, null)

    const notRequest = await rawMcp(s, '/mcp', JSON.stringify({ jsonrpc: '1.0', id: 3, method: 'ping' }), auth)
    t.equal(notRequest.json.error.code, -32600, 'wrong jsonrpc version')

    const client = await connectMcp(s, '/mcp', auth)
    t.teardown(() => client.close())
    const failure = (p: Promise<unknown>) => p.then(() => null, (e: unknown) => e)
    const unknownMethod = await failure(client.request({ method: 'prompts/list' }, EmptyResultSchema))
    t.ok(unknownMethod instanceof McpError && unknownMethod.code === -32601, 'unknown method')
    const unknownTool = await failure(client.callTool({ name: 'no_such_tool', arguments: {} }))
    t.ok(unknownTool instanceof McpError && unknownTool.code === -32602, 'unknown tool')
    const badArgs = await client.callTool({ name: 'add_menu_item', arguments: { restaurant_id: acct.storeId, category_id: acct.menu.categoryId, name: 'X', price: 'cheap' } })
      .then(() => null, (e: unknown) => e)
    t.ok(badArgs instanceof McpError && badArgs.code === -32602, 'arguments that do not validate are -32602')
    t.ok((badArgs as McpError).data && ((badArgs as McpError).data as { errors: Record<string, string[]> }).errors.price, 'with the field errors in error.data')
    const badId = await client.callTool({ name: 'get_menu', arguments: { restaurant_id: 'one' } }).then(() => null, (e: unknown) => e)
    t.ok(badId instanceof McpError && badId.code === -32602, 'a scope id that is not a positive integer is -32602')
  })

  t.test('notifications answer 202 with an empty body; batches answer one reply per request', async (t) => {
    const n = await rawMcp(s, '/mcp', JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }), auth)
    t.equal(n.status, 202)
    t.equal(n.text, '')
    t.equal(n.headers.get('content-length'), '0', 'a length, so a kept-alive client does not wait (DEPENDENCIES.md uWS trap)')
    const batch = await rawMcp(s, '/mcp', `[${rpc('ping', undefined, 7)}, ${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/cancelled', params: {} })}]`, auth)
    t.equal(batch.status, 200)
    t.same(batch.json, [{ jsonrpc: '2.0', id: 7, result: {} }])
  })

  t.test('GET answers 405 with Allow; preflight allows POST', async (t) => {
    const g = await rawMcp(s, '/mcp', '', auth, 'GET')
    t.equal(g.status, 405)
    t.equal(g.headers.get('allow'), 'POST, OPTIONS')
    t.equal(g.json.code, 'method_not_allowed')
    const o = await fetch(`${s.site}/mcp`, { method: 'OPTIONS', headers: { origin: 'https://app.example', 'access-control-request-method': 'POST' } })
    t.equal(o.status, 204)
    t.match(o.headers.get('access-control-allow-methods'), /POST/)
    t.match(o.headers.get('access-control-allow-headers'), /MCP-Protocol-Version/)
  })

  t.test('a foreign Origin is refused; the site\'s own is served', async (t) => {
    const evil = await rawMcp(s, '/mcp', rpc('ping'), { ...auth, origin: 'https://evil.example' })
    isError(t, { status: evil.status, headers: evil.headers, body: evil.json, text: evil.text }, 403, 'forbidden', 'foreign Origin')
    const own = await rawMcp(s, '/mcp', rpc('ping'), { ...auth, origin: s.site })
    t.equal(own.status, 200)
    t.equal(own.headers.get('access-control-allow-origin'), '*', 'CORS headers as on the API')
  })

  t.test('an unsupported MCP-Protocol-Version header is a 400', async (t) => {
    const r = await rawMcp(s, '/mcp', rpc('ping'), { ...auth, 'mcp-protocol-version': '1999-01-01' })
    t.equal(r.status, 400)
    t.equal(r.json.error.code, -32600)
  })

  t.test('body limit: 413 envelope', async (t) => {
    const big = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping', params: { pad: 'x'.repeat(s.app.svc.config.bodyLimitBytes) } })
    const r = await rawMcp(s, '/mcp', big, auth)
    isError(t, { status: r.status, headers: r.headers, body: r.json, text: r.text }, 413, 'payload_too_large')
  })

  t.test('credentials: missing or bad token → 401 envelope; the SDK client fails to connect', async (t) => {
    for (const [what, headers] of [['no token', {}], ['bad token', bearer('nope')]] as const) {
      const r = await rawMcp(s, '/mcp', rpc('initialize', { protocolVersion: '2025-06-18', capabilities: {}, clientInfo }), headers)
      isError(t, { status: r.status, headers: r.headers, body: r.json, text: r.text }, 401, 'unauthenticated', what)
      await t.rejects(connectMcp(s, '/mcp', headers), `${what}: SDK connect fails`)
    }
  })

  t.test('a suspended account is refused at the HTTP level', async (t) => {
    const ownerId = createOwner(s.app.svc.db)
    const token = tokenFor(s.app.svc.db, ownerId, ['*'])
    suspendAccount(s.app.svc.db, ownerId, 'test')
    const r = await rawMcp(s, '/mcp', rpc('ping'), bearer(token))
    t.equal(r.status, 403)
    t.match(r.json, { code: 'forbidden', reason: 'account_suspended' })
  })
})

t.test('rate limit per token: 429 with Retry-After', async (t) => {
  const s = await startServer({ RATE_LIMIT_PER_MINUTE: '3' })
  t.teardown(() => s.close())
  const acct = createAccount(s.app.svc.db)
  const statuses: number[] = []
  let last: Awaited<ReturnType<typeof rawMcp>> | null = null
  for (let i = 0; i < 4; i++) {
    last = await rawMcp(s, '/mcp', rpc('ping'), bearer(acct.token))
    statuses.push(last.status)
  }
  t.same(statuses, [200, 200, 200, 429])
  t.equal(last!.json.code, 'rate_limited')
  t.ok(Number(last!.headers.get('retry-after')) >= 1, 'Retry-After')
  t.equal(last!.headers.get('x-ratelimit-limit'), '3')
  // The token's budget is one, whichever door spends it: the API refuses it too now.
  const api = await s.req('GET', '/restaurants', { token: acct.token })
  t.equal(api.status, 429, 'REST and MCP share the token\'s budget')
})

t.test('public servers: a budget per client address (MCP_PUBLIC_RATE_PER_MINUTE)', async (t) => {
  const s = await startServer({ MCP_PUBLIC_RATE_PER_MINUTE: '2' })
  t.teardown(() => s.close())
  const statuses: number[] = []
  let last: Awaited<ReturnType<typeof rawMcp>> | null = null
  for (let i = 0; i < 3; i++) {
    last = await rawMcp(s, '/mcp/catalog', rpc('ping'))
    statuses.push(last.status)
  }
  t.same(statuses, [200, 200, 429])
  t.equal(last!.json.code, 'rate_limited')
  t.ok(Number(last!.headers.get('retry-after')) >= 1, 'Retry-After')
})
