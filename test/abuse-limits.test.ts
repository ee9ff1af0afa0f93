/**
 * HTTP limits under abuse (issue 21 item 5, docs/limits.md), each with a clear answer and nothing
 * written: a URL over MAX_URL_BYTES (414), headers over MAX_HEADER_BYTES (431), a JSON body nested
 * deeper than MAX_NESTING (400, before parsing), a body trickled slower than BODY_TIMEOUT_MS allows
 * (408 and the connection closed). Raw sockets where fetch would hide what the server did.
 */
import t from 'tap'
import net from 'node:net'
import { startServer } from './helpers/server.ts'
import { counts, createAccount, envelopeProblem, postOrder } from './helpers/fixtures.ts'
import { exchange, head } from './helpers/raw-http.ts'
import { rawUpgrade } from './helpers/raw-ws.ts'
import { JSON_SHAPE, MAX_NESTING } from '../src/net/request-limits.ts'
import { MAX_FORM_FIELDS } from '../src/http/body.ts'

const BODY_TIMEOUT_MS = 1000
const s = await startServer({ RATE_LIMIT_PER_MINUTE: '100000', BODY_TIMEOUT_MS: String(BODY_TIMEOUT_MS) })
t.teardown(() => s.close())
const db = s.app.svc.db
const acct = createAccount(db)
const { menu } = acct
const order = { type: 'takeaway', customer_name: 'Ada', items: [{ item_id: menu.fries, quantity: 1 }] }
const ordersPath = `/restaurants/${acct.storeId}/orders`

/** The order is valid: what each test refuses would otherwise have been written. */
t.before(async () => {
  const r = await postOrder(s, acct.token, acct.storeId, order)
  if (r.status !== 200) throw new Error(`fixture order refused: ${r.status} ${r.text}`)
})

t.test('a URL (path + query) over MAX_URL_BYTES: 414 uri_too_long before routing, nothing written', async (t) => {
  const { maxUrlBytes } = s.app.svc.config
  t.equal(maxUrlBytes, 8192, 'the documented default')
  const before = counts(db)
  const url = `/api/v1${ordersPath}?pad=`
  const at = await s.req('POST', s.site + url + 'x'.repeat(maxUrlBytes - url.length), { token: acct.token, body: order })
  t.equal(at.status, 200, 'exactly the limit is served')
  const over = await s.req('POST', s.site + url + 'x'.repeat(maxUrlBytes - url.length + 1), { token: acct.token, body: order })
  t.equal(over.status, 414)
  t.equal(envelopeProblem(over.body, 'uri_too_long'), null, 'the §7 envelope')
  t.ok(over.headers.get('x-request-id'), 'with a request id')
  const after = counts(db)
  t.equal(after.orders, before.orders + 1, 'only the request at the limit wrote an order')
  const unknown = await s.req('GET', s.site + '/no/such/route?' + 'q'.repeat(maxUrlBytes), {})
  t.equal(unknown.status, 414, 'answered before routing (not 404)')
  const anonymous = await s.req('POST', s.site + url + 'x'.repeat(maxUrlBytes), { body: order })
  t.equal(anonymous.status, 414, 'and before authentication (not 401)')
})

t.test('WebSocket upgrades: the same 414 and 431, before authentication, and a socket at the limits opens', async (t) => {
  const { maxUrlBytes, maxHeaderBytes } = s.app.svc.config
  const path = `/api/v1/ws/orders/${acct.storeId}?token=${acct.token}&pad=`
  const at = await rawUpgrade(s.port, path + 'x'.repeat(maxUrlBytes - path.length))
  t.equal(at.status, 101, 'a URL of exactly the limit upgrades')
  const long = await rawUpgrade(s.port, path + 'x'.repeat(maxUrlBytes - path.length + 1))
  t.equal(long.status, 414)
  t.equal(envelopeProblem(JSON.parse(long.body), 'uri_too_long'), null, 'the §7 envelope')
  const anonymous = await rawUpgrade(s.port, `/api/v1/ws/orders/${acct.storeId}?pad=${'x'.repeat(maxUrlBytes)}`)
  t.equal(anonymous.status, 414, 'before authentication (not 401)')
  const big = await rawUpgrade(s.port, `/api/v1/ws/orders/${acct.storeId}?token=${acct.token}`, { 'x-filler': 'f'.repeat(maxHeaderBytes) })
  t.equal(big.status, 431)
  t.equal(envelopeProblem(JSON.parse(big.body), 'request_header_fields_too_large'), null)
})

t.test('header lines over MAX_HEADER_BYTES: 431 request_header_fields_too_large, nothing written', async (t) => {
  const { maxHeaderBytes } = s.app.svc.config
  t.equal(maxHeaderBytes, 16_384, 'the documented default')
  const before = counts(db)
  const big = await postOrder(s, acct.token, acct.storeId, order, { 'x-filler': 'f'.repeat(maxHeaderBytes) })
  t.equal(big.status, 431)
  t.equal(envelopeProblem(big.body, 'request_header_fields_too_large'), null)
  // Many lines adding up (well below uWS's own cap of 48 lines, fetch adds ~10).
  const many = Object.fromEntries(Array.from({ length: 30 }, (_, i) => [`x-filler-${i}`, 'g'.repeat(Math.ceil(maxHeaderBytes / 30))]))
  t.equal((await postOrder(s, acct.token, acct.storeId, order, many)).status, 431, 'counted over all lines')
  t.same(counts(db), before, 'nothing written')
  const fine = await postOrder(s, acct.token, acct.storeId, order, { 'x-filler': 'f'.repeat(maxHeaderBytes / 2) })
  t.equal(fine.status, 200, 'below the limit an ordinary request')
})

t.test(`a JSON body nested deeper than ${MAX_NESTING} levels: 400 bad_request before parsing, nothing written`, async (t) => {
  const before = counts(db)
  const nest = (n: number) => '['.repeat(n) + ']'.repeat(n)
  const deep = await s.req('POST', ordersPath, { token: acct.token, raw: `{"type":"takeaway","items":[],"note":${nest(MAX_NESTING + 1)}}`, headers: { 'content-type': 'application/json' } })
  t.equal(deep.status, 400)
  t.equal(envelopeProblem(deep.body, 'bad_request'), null)
  t.match(deep.body.details, { max_depth: MAX_NESTING })
  // Nearly the whole body limit of nesting: refused by the scan, the process stays up.
  const depth = Math.floor(s.app.svc.config.bodyLimitBytes / 2) - 10
  const huge = await s.req('POST', ordersPath, { token: acct.token, raw: nest(depth), headers: { 'content-type': 'application/json' } })
  t.equal(huge.status, 400, `${depth} levels: 400`)
  const inString = await s.req('POST', ordersPath, { token: acct.token, body: { ...order, note: '['.repeat(200) } })
  t.equal(inString.status, 200, 'brackets inside a string are not nesting')
  const atLimit = await s.req('POST', ordersPath, { token: acct.token, raw: `{"type":"takeaway","items":${nest(MAX_NESTING - 1)}}`, headers: { 'content-type': 'application/json' } })
  t.equal(atLimit.status, 422, `${MAX_NESTING} levels parse and reach validation`)
  const mcp = await s.req('POST', s.site + '/mcp', { token: acct.token, raw: `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":${nest(MAX_NESTING + 1)}}`, headers: { 'content-type': 'application/json' } })
  t.equal(mcp.status, 400, 'the MCP addresses too')
  t.equal(envelopeProblem(mcp.body, 'bad_request'), null)
  const after = counts(db)
  t.equal(after.orders, before.orders + 1, 'only the string-bracket order was written')
  t.equal((await s.req('GET', s.site + '/healthz')).status, 200, 'the server is fine')
})

t.test('a JSON body past the shape limits (members, elements, values): 400 bad_request naming the limit, before parsing', async (t) => {
  const before = counts(db)
  const post = (raw: string) => s.req('POST', ordersPath, { token: acct.token, raw, headers: { 'content-type': 'application/json' } })
  const list = (n: number, el: string) => Array(n).fill(el).join(',')
  for (const [what, raw, detail] of [
    ['an object of one member too many', `{"type":"takeaway","items":[],"note":{${Array.from({ length: JSON_SHAPE.members + 1 }, (_, i) => `"k${i}":1`).join(',')}}}`, { max_members: JSON_SHAPE.members }],
    ['an array of one element too many', `{"type":"takeaway","items":[${list(JSON_SHAPE.elements + 1, '0')}]}`, { max_elements: JSON_SHAPE.elements }],
    ['one value too many in all', `{"type":"takeaway","items":[${list(JSON_SHAPE.nodes / 10, `[${list(9, '0')}]`)}]}`, { max_nodes: JSON_SHAPE.nodes }],
  ] as const) {
    const r = await post(raw)
    t.equal(r.status, 400, `${what}: 400`)
    t.equal(envelopeProblem(r.body, 'bad_request'), null)
    t.same(r.body.details, detail, `${what}: details name the limit`)
  }
  const atLimit = await post(`{"type":"takeaway","items":[${list(JSON_SHAPE.elements, '0')}]}`)
  t.equal(atLimit.status, 422, `${JSON_SHAPE.elements} elements parse and reach validation`)
  const form = await s.req('POST', `${s.site}/api/app/usage`, { token: acct.token, raw: 'a=1&'.repeat(MAX_FORM_FIELDS) + 'a=1', headers: { 'content-type': 'application/x-www-form-urlencoded' } })
  t.equal(form.status, 400, 'a form of one field too many')
  t.same(form.body.details, { max_fields: MAX_FORM_FIELDS })
  t.same(counts(db), before, 'nothing written')
})

/** POST the order's head at once, then its body one byte every `everyMs`; resolves when the server closes. */
function trickle(everyMs: number): Promise<{ text: string; sent: number; total: number }> {
  const body = JSON.stringify(order)
  const headBytes = head(`POST /api/v1${ordersPath} HTTP/1.1`, ['Host: 127.0.0.1', `Authorization: Bearer ${acct.token}`, 'Content-Type: application/json', `Content-Length: ${Buffer.byteLength(body)}`])
  return new Promise((resolve, reject) => {
    const sock = net.connect(s.port, '127.0.0.1')
    let text = ''
    let sent = 0
    let timer: NodeJS.Timeout | undefined
    // A failure bound only: the deadline under test is 1 s, uWS's own idle timeout 10 s.
    const bound = setTimeout(() => { sock.destroy(); reject(new Error(`still open after 9 s; got ${JSON.stringify(text)}`)) }, 9000)
    sock.on('data', (d: Buffer) => { text += d.toString('latin1') })
    sock.on('error', () => { /* close follows */ })
    sock.on('close', () => { clearTimeout(bound); clearInterval(timer); resolve({ text, sent, total: body.length }) })
    sock.once('connect', () => {
      sock.write(headBytes)
      timer = setInterval(() => { if (sent < body.length && !sock.destroyed) sock.write(body[sent++]!) }, everyMs)
    })
  })
}

t.test('a body trickled in (slowloris): 408 request_timeout after BODY_TIMEOUT_MS, connection closed, nothing written', async (t) => {
  const before = counts(db)
  // 100 ms per byte: the ~80-byte body would take ~8 s; the deadline is 1 s in total, not per byte.
  const r = await trickle(100)
  t.ok(r.sent < r.total, `the body was not complete (${r.sent}/${r.total} bytes sent)`)
  const m = /^HTTP\/1\.1 (\d{3})[^]*?\r\n\r\n([^]*)$/.exec(r.text)
  t.equal(m?.[1], '408', 'answered 408')
  t.match(r.text, /connection: close/i, 'saying the connection closes')
  t.equal(envelopeProblem(JSON.parse(m?.[2] ?? 'null'), 'request_timeout'), null, 'the §7 envelope')
  t.same(counts(db), before, 'nothing written')
  t.equal((await postOrder(s, acct.token, acct.storeId, order)).status, 200, 'an ordinary body is unaffected')
})

t.test('several slow bodies at once do not hold up anyone else', async (t) => {
  const slow = Array.from({ length: 20 }, () => trickle(200))
  const r = await exchange(s.port, [head('GET /healthz HTTP/1.1', ['Host: 127.0.0.1'])], { until: (x) => x.responses.length === 1 })
  t.equal(r.responses[0]?.status, 200, 'served while 20 bodies trickle')
  const done = await Promise.all(slow)
  t.ok(done.every((d) => d.text.startsWith('HTTP/1.1 408')), 'each of them got its 408')
})
