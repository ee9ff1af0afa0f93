/**
 * JSON-RPC batches and ids on the MCP servers (issue 31 items 1 and 5; docs/mcp.md "Limits"):
 * a batch holds at most MAX_BATCH messages (more: -32600, nothing runs), every message spends the
 * caller's rate budget as a POST of its own would (a batch that does not fit is 429 whole), and
 * numeric ids come back exactly as they were written, past 2^53 too. Raw POSTs: the SDK client never
 * sends batches and holds ids as JS numbers.
 */
import t from 'tap'
import { startServer } from './helpers/server.ts'
import { createAccount, isError } from './helpers/fixtures.ts'
import { bearer, rawMcp } from './helpers/mcp.ts'
import { MAX_BATCH } from '../src/mcp/endpoints.ts'

const ping = (id: number | string) => ({ jsonrpc: '2.0', id, method: 'ping' })
const batchOf = (n: number, from = 1) => JSON.stringify(Array.from({ length: n }, (_, i) => ping(from + i)))

t.test('a batch holds at most MAX_BATCH messages', async (t) => {
  const s = await startServer({ MCP_PUBLIC_RATE_PER_MINUTE: '1000' })
  t.teardown(() => s.close())
  const full = await rawMcp(s, '/mcp/dev', batchOf(MAX_BATCH))
  t.equal(full.status, 200)
  t.equal(full.json.length, MAX_BATCH, `${MAX_BATCH} messages: one answer each`)
  const over = await rawMcp(s, '/mcp/dev', batchOf(MAX_BATCH + 1))
  t.equal(over.status, 400)
  t.match(over.json, { jsonrpc: '2.0', id: null, error: { code: -32600, message: new RegExp(`at most ${MAX_BATCH} messages`) } })
})

t.test('every message of a batch spends the rate budget; a batch that does not fit is refused whole', async (t) => {
  const s = await startServer({ MCP_PUBLIC_RATE_PER_MINUTE: '10', RATE_LIMIT_PER_MINUTE: '10' })
  t.teardown(() => s.close())
  // Public server: per address.
  const first = await rawMcp(s, '/mcp/dev', batchOf(6))
  t.equal(first.status, 200)
  t.equal(first.headers.get('x-ratelimit-remaining'), '4', 'six spent of ten')
  const second = await rawMcp(s, '/mcp/dev', batchOf(5))
  t.equal(second.status, 429, 'five more do not fit in the four left')
  t.equal(second.json.code, 'rate_limited')
  t.ok(Number(second.headers.get('retry-after')) >= 1, 'with Retry-After')
  const single = await rawMcp(s, '/mcp/dev', JSON.stringify(ping(1)))
  t.equal(single.status, 200, 'the refused batch spent nothing beyond its own POST: room is left')

  // Authenticated server: per token, and a refused batch runs none of its calls.
  const acct = createAccount(s.app.svc.db)
  const auth = bearer(acct.token)
  const categories = () => (s.app.svc.db.prepare('SELECT count(*) AS n FROM menu_categories WHERE store_id = ?').get(acct.storeId) as { n: number }).n
  const before = categories()
  const create = (id: number) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'add_category', arguments: { restaurant_id: acct.storeId, name: `Batch ${id}` } } })
  const two = await rawMcp(s, '/mcp', JSON.stringify([create(1), create(2)]), auth)
  t.equal(two.status, 200)
  t.notOk(two.json.some((a: { result?: { isError?: boolean } }) => a.result?.isError), 'a batch that fits runs its calls')
  t.equal(categories(), before + 2)
  const refused = await rawMcp(s, '/mcp', JSON.stringify(Array.from({ length: 9 }, (_, i) => create(i + 3))), auth)
  isError(t, { status: refused.status, headers: refused.headers, body: refused.json, text: refused.text }, 429, 'rate_limited', 'nine calls on the eight left')
  t.equal(categories(), before + 2, 'none of its calls ran')
})

t.test('numeric ids are echoed exactly as written', async (t) => {
  const s = await startServer({ MCP_PUBLIC_RATE_PER_MINUTE: '1000' })
  t.teardown(() => s.close())
  const big = await rawMcp(s, '/mcp/dev', '{"jsonrpc":"2.0","id":9007199254740993,"method":"ping"}')
  t.equal(big.status, 200)
  t.match(big.text, /^\{"jsonrpc":"2\.0","id":9007199254740993,"result":\{\}\}$/, '2^53 + 1 is not rounded')
  const written = await rawMcp(s, '/mcp/dev', '{ "id" : 1.50e3 , "method":"ping", "jsonrpc":"2.0"}')
  t.match(written.text, /"id":1\.50e3,/, 'another spelling of a number stays as it was')
  const err = await rawMcp(s, '/mcp/dev', '{"jsonrpc":"2.0","id":18446744073709551615,"method":"nope"}')
  t.match(err.text, /^\{"jsonrpc":"2\.0","id":18446744073709551615,"error":\{"code":-32601/, 'error answers too')
  // A batch mixing big ids, a string id, a notification, a message that is not an object and one
  // whose params hold an "id" of their own: every answer keeps its own request's id.
  const body = '[{"jsonrpc":"2.0","id":9007199254740995,"method":"ping"},' +
    '{"jsonrpc":"2.0","method":"notifications/initialized"},' +
    '17,' +
    '{"jsonrpc":"2.0","method":"ping","params":{"id":5,"x":[{"id":6}]},"id":12345678901234567890},' +
    '{"jsonrpc":"2.0","id":"9007199254740997","method":"ping"}]'
  const batch = await rawMcp(s, '/mcp/dev', body)
  t.equal(batch.status, 200)
  const ids = [...batch.text.matchAll(/\{"jsonrpc":"2\.0","id":([^,]+),/g)].map((m) => m[1])
  t.same(ids, ['9007199254740995', 'null', '12345678901234567890', '"9007199254740997"'], 'in order: the big id, the invalid message (null), the id beside params ids, the string id')
})
