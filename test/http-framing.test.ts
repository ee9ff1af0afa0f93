/**
 * HTTP/1.1 framing and request heads from a raw socket (RFC 9112; docs/deployment.md "HTTP
 * framing"): what reaches the application is refused with the right status and, where the body's
 * end is in doubt, the connection is closed so nothing behind it is served as another request.
 * What uWebSockets.js's parser swallows itself is documented there; for those, the server must
 * not serve the request and must keep answering everyone else.
 */
import t, { type Test } from 'tap'
import { startServer } from './helpers/server.ts'
import { counts, createAccount, envelopeProblem } from './helpers/fixtures.ts'
import { exchange, head, type RawExchange } from './helpers/raw-http.ts'

const s = await startServer({ RATE_LIMIT_PER_MINUTE: '100000' })
t.teardown(() => s.close())
const db = s.app.svc.db
const acct = createAccount(db)
const ordersPath = `/api/v1/restaurants/${acct.storeId}/orders`
const order = JSON.stringify({ type: 'takeaway', items: [{ item_id: acct.menu.fries, quantity: 1 }] })
const auth = `Authorization: Bearer ${acct.token}`
const json = 'Content-Type: application/json'
const post = (lines: string[]) => head(`POST ${ordersPath} HTTP/1.1`, ['Host: 127.0.0.1', auth, json, ...lines])
/** A request that, served, answers 200 with the owner's profile. */
const smuggled = head('GET /api/v1/me HTTP/1.1', ['Host: 127.0.0.1', auth])
const chunked = (body: string) => `${Buffer.byteLength(body).toString(16)}\r\n${body}\r\n0\r\n\r\n`

/** Exactly one answer, `status` with the §7 envelope `code`, then the server closed the connection. */
function refusedAndClosed(t: Test, r: RawExchange, status: number, code: string) {
  t.equal(r.responses.length, 1, `one answer (got ${JSON.stringify(r.text.slice(0, 300))})`)
  const [res] = r.responses
  t.equal(res?.status, status, `answers ${status}`)
  t.equal(envelopeProblem(safeJson(res?.body), code), null, `the §7 envelope with code ${code}`)
  t.same(res?.headers.connection, ['close'], 'says Connection: close')
  t.ok(r.closed, 'and closes the connection instead of leaving it hanging')
}
const safeJson = (s: string | undefined): unknown => { try { return JSON.parse(s ?? '') } catch { return undefined } }

/** The server still answers an ordinary request on a new connection. */
async function stillServes(t: Test) {
  const r = await fetch(`${s.site}/healthz`)
  t.equal(r.status, 200, 'the server still answers an ordinary request')
  await r.body?.cancel()
}

t.test('Content-Length given twice with different values is 400 and the connection closes (RFC 9112 §6.3)', async (t) => {
  const before = counts(db)
  // uWS frames the body by the first value: these two bytes are the whole body to it.
  refusedAndClosed(t, await exchange(s.port, [post(['Content-Length: 2', 'Content-Length: 40']) + '{}']), 400, 'bad_request')
  // Here it waits for 40 bytes that never come: the answer must not wait for them.
  refusedAndClosed(t, await exchange(s.port, [post(['Content-Length: 40', 'Content-Length: 2']) + '{}']), 400, 'bad_request')
  t.same(counts(db), before, 'nothing written')
  await stillServes(t)
})

t.test('a request smuggled behind a conflicting Content-Length is never served', async (t) => {
  const before = counts(db)
  // One write: the bytes after the first length's body are, to uWS, the next request on the connection.
  const r = await exchange(s.port, [post(['Content-Length: 2', `Content-Length: ${2 + smuggled.length}`]) + '{}' + smuggled])
  t.ok(r.closed, 'the connection is closed')
  t.ok(r.responses.length <= 1, `at most the refusal is answered (got ${r.responses.length})`)
  t.ok(r.responses.every((x) => x.status === 400), `nothing but 400 (got ${r.responses.map((x) => x.status).join(', ')})`)
  t.notMatch(r.text, /"email"|"owner"|HTTP\/1\.1 200/, 'the smuggled GET /me was not answered')
  t.same(counts(db), before, 'nothing written')
  await stillServes(t)
})

t.test('a repeated Content-Length with one value is that value (RFC 9110 §8.6)', async (t) => {
  const len = Buffer.byteLength(order)
  const r = await exchange(s.port, [post([`Content-Length: ${len}`, `Content-Length: ${len}`]) + order], { until: (x) => x.responses.length === 1 })
  t.equal(r.responses[0]?.status, 200, 'the order is created')
})

t.test('a transfer coding other than chunked is 501 and the connection closes (RFC 9112 §6.1)', async (t) => {
  const before = counts(db)
  for (const coding of ['gzip', 'gzip, chunked', 'deflate', 'identity', 'x-custom']) {
    t.test(coding, async (t) => {
      refusedAndClosed(t, await exchange(s.port, [post([`Transfer-Encoding: ${coding}`]) + chunked(order)]), 501, 'not_implemented')
    })
  }
  t.test('the coding split over two header lines', async (t) => {
    refusedAndClosed(t, await exchange(s.port, [post(['Transfer-Encoding: gzip', 'Transfer-Encoding: chunked']) + chunked(order)]), 501, 'not_implemented')
  })
  t.test('chunked applied twice (RFC 9112 §7)', async (t) => {
    refusedAndClosed(t, await exchange(s.port, [post(['Transfer-Encoding: chunked, chunked']) + chunked(order)]), 400, 'bad_request')
  })
  await t.test('after all of them', async (t) => {
    t.same(counts(db), before, 'nothing written')
    await stillServes(t)
  })
})

t.test('a chunked body still works, in any letter case, and keeps the connection open', async (t) => {
  for (const coding of ['chunked', 'Chunked']) {
    const r = await exchange(s.port, [post([`Transfer-Encoding: ${coding}`]) + chunked(order)], { until: (x) => x.responses.length === 1 })
    t.equal(r.responses[0]?.status, 200, `${coding}: the order is created`)
    t.equal(r.responses[0]?.headers.connection, undefined, `${coding}: no Connection: close`)
  }
})

t.test('Host given twice, or not a host, is 400 (RFC 9112 §3.2)', async (t) => {
  for (const hosts of [['Host: 127.0.0.1', 'Host: 127.0.0.1'], ['Host: a.example', 'Host: b.example'], ['Host: a b'], ['Host: a/b']]) {
    const r = await exchange(s.port, [head('GET /api/v1/me HTTP/1.1', [...hosts, auth])], { until: (x) => x.responses.length === 1 })
    t.equal(r.responses[0]?.status, 400, `${hosts.join(' + ')}: 400`)
    t.equal(envelopeProblem(safeJson(r.responses[0]?.body), 'bad_request'), null, `${hosts.join(' + ')}: bad_request envelope`)
  }
  for (const host of ['127.0.0.1:8080', 'shop.example.com', '[::1]:443', '']) {
    const r = await exchange(s.port, [head('GET /api/v1/me HTTP/1.1', [`Host: ${host}`, auth])], { until: (x) => x.responses.length === 1 })
    t.equal(r.responses[0]?.status, 200, `Host ${JSON.stringify(host)} is fine`)
  }
})

// Swallowed by uWS's own parser, never reaching the application (docs/deployment.md): the
// request is not served, and nobody else notices.
t.test('what the uWS parser refuses itself is not served, and the server keeps answering', async (t) => {
  const cases: Array<[string, string, boolean]> = [
    // [what, bytes, closed at once by uWS (else it hangs until uWS's idle timeout)]
    ['Content-Length and Transfer-Encoding together', post([`Content-Length: ${Buffer.byteLength(order)}`, 'Transfer-Encoding: chunked']) + chunked(order), true],
    ['a Content-Length that is not a number', post(['Content-Length: 1e1']) + order, true],
    ['a negative Content-Length', post(['Content-Length: -1']) + order, true],
    ['HTTP/1.0', head('GET /healthz HTTP/1.0', ['Host: 127.0.0.1']), false],
    ['HTTP/1.1 without any header', head('GET /healthz HTTP/1.1', []), false],
    ['HTTP/1.1 without Host', head('GET /healthz HTTP/1.1', ['Accept: */*']), true],
    ['60 header lines', head('GET /healthz HTTP/1.1', ['Host: 127.0.0.1', ...Array.from({ length: 59 }, (_, i) => `X-Filler-${i}: ${i}`)]), false],
    ['the HTTP/2 connection preface', 'PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', false],
  ]
  for (const [what, bytes, closes] of cases) {
    t.test(what, async (t) => {
      // Short bound for the ones that hang: this test only needs them pending while others are served.
      const pending = exchange(s.port, [bytes], { bound: closes ? undefined : 500 })
      await stillServes(t)
      const r = await pending
      t.notOk(r.responses.some((x) => x.status < 300), `not served (${JSON.stringify(r.text.slice(0, 120))})`)
      if (closes) t.ok(r.closed, 'the connection is closed')
    })
  }
})
