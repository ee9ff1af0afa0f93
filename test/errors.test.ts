/**
 * The error contract (api-v1 §7, docs/errors.md): one envelope {message, code, errors?} for every
 * failure, field-keyed validation errors, the codes for malformed JSON, oversize bodies, unknown
 * routes and methods — and nothing written when a request fails.
 */
import t from 'tap'
import { startServer } from './helpers/server.ts'
import { counts, createAccount, envelopeProblem, isError, postOrder } from './helpers/fixtures.ts'

const s = await startServer({ BODY_LIMIT_BYTES: '2048', RATE_LIMIT_PER_MINUTE: '100000' })
t.teardown(() => s.close())
const db = s.app.svc.db
const acct = createAccount(db)
const ordersPath = `/restaurants/${acct.storeId}/orders`
const good = { type: 'takeaway', items: [{ item_id: acct.menu.fries, quantity: 1 }] }

t.test('malformed JSON is 400 malformed_json', async (t) => {
  const before = counts(db)
  for (const raw of ['{bad', '{"type": "takeaway",', "{'a': 1}", '\u0000']) {
    const r = await s.req('POST', ordersPath, { token: acct.token, raw, headers: { 'content-type': 'application/json' } })
    isError(t, r, 400, 'malformed_json', JSON.stringify(raw))
  }
  t.same(counts(db), before, 'nothing written')
})

t.test('wrong types, bad quantities and missing fields are 422 validation_failed keyed by field path', async (t) => {
  const before = counts(db)
  const cases: Array<[string, unknown, string[]]> = [
    ['empty object', {}, ['type', 'items']],
    ['no items', { type: 'takeaway', items: [] }, ['items']],
    ['unknown type', { type: 'teleport', items: good.items }, ['type']],
    ['type of wrong JSON type', { type: 5, items: good.items }, ['type']],
    ['items not an array', { type: 'takeaway', items: 'fries' }, ['items']],
    ['item_id a string', { type: 'takeaway', items: [{ item_id: String(acct.menu.fries), quantity: 1 }] }, ['items.0.item_id']],
    ['quantity a string', { type: 'takeaway', items: [{ item_id: acct.menu.fries, quantity: '2' }] }, ['items.0.quantity']],
    ['zero quantity', { type: 'takeaway', items: [{ item_id: acct.menu.fries, quantity: 0 }] }, ['items.0.quantity']],
    ['negative quantity', { type: 'takeaway', items: [{ item_id: acct.menu.fries, quantity: -1 }] }, ['items.0.quantity']],
    ['fractional quantity', { type: 'takeaway', items: [{ item_id: acct.menu.fries, quantity: 1.5 }] }, ['items.0.quantity']],
    ['missing quantity', { type: 'takeaway', items: [{ item_id: acct.menu.fries }] }, ['items.0.quantity']],
    ['second line bad', { type: 'takeaway', items: [good.items[0], { item_id: acct.menu.fries, quantity: 0 }] }, ['items.1.quantity']],
    ['unknown item id', { type: 'takeaway', items: [{ item_id: 987654, quantity: 1 }] }, ['items.0.item_id']],
    ['unknown item among good ones', { type: 'takeaway', items: [good.items[0], { item_id: 987654, quantity: 1 }] }, ['items.1.item_id']],
    ['extras not ids', { type: 'takeaway', items: [{ item_id: acct.menu.burger.id, quantity: 1, extras: ['cheese'] }] }, ['items.0.extras.0']],
    ['negative tip', { ...good, tip_amount: -1 }, ['tip_amount']],
    ['tip with three decimals', { ...good, tip_amount: 1.005 }, ['tip_amount']],
    ['tip as a string', { ...good, tip_amount: '2' }, ['tip_amount']],
    ['body is null', null, []],
    ['body is a string', 'takeaway', []],
  ]
  for (const [what, body, keys] of cases) {
    const r = await s.req('POST', ordersPath, { token: acct.token, raw: JSON.stringify(body), headers: { 'content-type': 'application/json' } })
    isError(t, r, 422, 'validation_failed', what)
    t.type(r.body?.errors, 'object', `${what}: has errors`)
    for (const k of keys) t.ok(r.body?.errors?.[k], `${what}: errors has key ${k} (got ${Object.keys(r.body?.errors ?? {}).join(', ')})`)
    if (keys.length === 0) t.ok(Object.keys(r.body?.errors ?? {}).length > 0, `${what}: at least one error`)
  }
  const empty = await s.req('POST', ordersPath, { token: acct.token, headers: { 'content-type': 'application/json' } })
  isError(t, empty, 422, 'validation_failed', 'no body at all')
  t.same(counts(db), before, 'nothing written by any of them')
})

t.test('an oversize body is 413 payload_too_large, declared or streamed', async (t) => {
  const before = counts(db)
  const big = JSON.stringify({ ...good, note: 'x'.repeat(4000) })
  isError(t, await postOrder(s, acct.token, acct.storeId, JSON.parse(big)), 413, 'payload_too_large', 'with Content-Length')
  const chunks = [big.slice(0, 1500), big.slice(1500, 3000), big.slice(3000)]
  const stream = new ReadableStream({ start(c) { for (const ch of chunks) c.enqueue(new TextEncoder().encode(ch)); c.close() } })
  const r = await fetch(s.base + ordersPath, {
    method: 'POST', headers: { authorization: `Bearer ${acct.token}`, 'content-type': 'application/json' }, body: stream, duplex: 'half',
  } as RequestInit)
  t.equal(r.status, 413, 'chunked (no Content-Length)')
  t.equal(envelopeProblem(await r.json(), 'payload_too_large'), null)
  t.same(counts(db), before, 'nothing written')
  const atLimit = await postOrder(s, acct.token, acct.storeId, { ...good, note: 'y'.repeat(900) })
  t.equal(atLimit.status, 200, 'a body under the limit is accepted')
})

t.test('a non-JSON content type is 415', async (t) => {
  const r = await s.req('POST', ordersPath, { token: acct.token, raw: JSON.stringify(good), headers: { 'content-type': 'text/plain' } })
  isError(t, r, 415, 'unsupported_media_type')
  const ok = await s.req('POST', ordersPath, { token: acct.token, raw: JSON.stringify(good), headers: { 'content-type': 'application/json; charset=utf-8' } })
  t.equal(ok.status, 200, 'a charset parameter is fine')
})

t.test('unknown routes are 404 not_found (api-v1 §7; reason route_not_found); a known path with the wrong method is 405', async (t) => {
  for (const path of ['/nope', '/restaurants/1/nope', `/restaurants/${acct.storeId}/orders/1/nope`]) {
    isError(t, await s.req('GET', path, { token: acct.token }), 404, 'route_not_found', path)
  }
  isError(t, await s.req('GET', `${s.site}/definitely-not-here`), 404, 'route_not_found', 'outside /api/v1')
  isError(t, await s.req('GET', `${s.site}/api/v2/restaurants`), 404, 'route_not_found', 'another API version')
  const preflight = await s.req('OPTIONS', '/nope', { headers: { origin: 'https://app.example', 'access-control-request-method': 'GET' } })
  isError(t, preflight, 404, 'route_not_found', 'a preflight of an unknown path')
  for (const [method, path, allow] of [['PATCH', '/restaurants', 'GET, POST'], ['DELETE', ordersPath, 'GET, POST'], ['POST', '/me', 'GET']] as const) {
    const r = await s.req(method, path, { token: acct.token })
    isError(t, r, 405, 'method_not_allowed', `${method} ${path}`)
    t.same(r.headers.get('allow')?.split(/,\s*/).sort(), allow.split(', ').sort(), `Allow lists ${allow}`)
  }
})

t.test('ids that cannot exist are 404 not_found, not validation errors', async (t) => {
  for (const id of ['abc', '0', '-1', '1.5', '01', '99999999999999999999']) {
    isError(t, await s.req('GET', `/restaurants/${id}`, { token: acct.token }), 404, 'not_found', `store id ${id}`)
  }
  isError(t, await s.req('GET', `${ordersPath}/abc`, { token: acct.token }), 404, 'not_found', 'order id abc')
  isError(t, await s.req('GET', `${ordersPath}/424242`, { token: acct.token }), 404, 'not_found', 'unknown order id')
  const r = await s.req('GET', '/restaurants/424242', { token: acct.token })
  t.notOk('errors' in r.body, 'no errors map outside validation')
})

t.test('query validation is 422 with the parameter as key', async (t) => {
  for (const q of ['page=0', 'page=abc', 'page=-1', 'page=1.5', 'status=bogus']) {
    const r = await s.req('GET', `${ordersPath}?${q}`, { token: acct.token })
    isError(t, r, 422, 'validation_failed', q)
    t.ok(r.body.errors?.[q.split('=')[0]!], `${q}: keyed by its name`)
  }
})

t.test('every error response carries a request id; a sane incoming X-Request-Id is echoed', async (t) => {
  const r = await s.req('GET', '/nope', { headers: { 'x-request-id': 'abc-123.x_y' } })
  t.equal(r.headers.get('x-request-id'), 'abc-123.x_y')
  const weird = await s.req('GET', '/nope', { headers: { 'x-request-id': 'has spaces and <html>' } })
  t.match(weird.headers.get('x-request-id'), /^[0-9a-f-]{36}$/, 'an unsafe one is replaced by a fresh id')
  const fresh = await s.req('GET', '/me', { token: acct.token })
  t.match(fresh.headers.get('x-request-id'), /^[0-9a-f-]{36}$/)
})

t.test('HEAD answers like GET without a body, so a kept-alive connection stays in sync', async (t) => {
  const { connect } = await import('node:net')
  const sock = connect(s.port, '127.0.0.1')
  t.teardown(() => sock.destroy())
  let raw = ''
  sock.on('data', (d: Buffer) => { raw += d.toString('latin1') })
  await new Promise((r) => sock.once('connect', r))
  const until = async (done: () => boolean) => {
    const deadline = Date.now() + 2000
    while (!done() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10))
  }
  sock.write(`HEAD /api/v1/me HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${acct.token}\r\n\r\n`)
  await until(() => raw.includes('\r\n\r\n'))
  await new Promise((r) => setTimeout(r, 50)) // a body, if any, would arrive now
  sock.write('GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n')
  const deadline = Date.now() + 2000
  while (!raw.includes('{"status":"ok"}') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10))
  const [head, rest] = [raw.slice(0, raw.indexOf('\r\n\r\n') + 4), raw.slice(raw.indexOf('\r\n\r\n') + 4)]
  t.match(head, /^HTTP\/1\.1 200/, 'HEAD answers 200')
  t.match(head, /content-type: application\/json/i)
  t.match(rest, /^HTTP\/1\.1 200/, 'the next response starts right after the HEAD headers (no body in between)')
  const get = await s.req('GET', '/me', { token: acct.token })
  const len = head.match(/content-length: (\d+)/i)?.[1]
  t.equal(Number(len), Buffer.byteLength(get.text), 'Content-Length is what GET would send')
})

// Last: breaks this server's schema on purpose.
t.test('an unexpected failure is 500 internal_error without internals', async (t) => {
  db.exec('ALTER TABLE owners RENAME TO owners_gone')
  t.teardown(() => db.exec('ALTER TABLE owners_gone RENAME TO owners'))
  const r = await s.req('GET', '/me', { token: acct.token })
  isError(t, r, 500, 'internal_error')
  t.notMatch(r.text, /owners|sqlite|SELECT|stack|at \w+ \(/i, 'no SQL, table names or stack in the answer')
})
