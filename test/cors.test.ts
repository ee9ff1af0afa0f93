/** CORS for browser clients and request ids: preflight, allow/expose headers, X-Request-Id. */
import t from 'tap'
import { startServer } from './helpers/server.ts'
import { createAccount } from './helpers/fixtures.ts'

const s = await startServer({ RATE_LIMIT_PER_MINUTE: '100000' })
t.teardown(() => s.close())
const acct = createAccount(s.app.svc.db)
const origin = { origin: 'https://dashboard.example' }

t.test('a preflight is answered 204 with the Access-Control-Allow-* headers', async (t) => {
  const r = await s.req('OPTIONS', `/restaurants/${acct.storeId}/orders`, {
    headers: { ...origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization, content-type, idempotency-key' },
  })
  t.equal(r.status, 204)
  t.equal(r.text, '')
  t.equal(r.headers.get('access-control-allow-origin'), '*')
  const methods = r.headers.get('access-control-allow-methods')?.split(/,\s*/) ?? []
  t.ok(methods.includes('GET') && methods.includes('POST'), `methods of the route: ${methods.join(', ')}`)
  const allowed = (r.headers.get('access-control-allow-headers') ?? '').toLowerCase().split(/,\s*/)
  for (const h of ['authorization', 'content-type', 'idempotency-key', 'x-storefront-token']) t.ok(allowed.includes(h), `allows ${h}`)
  t.ok(Number(r.headers.get('access-control-max-age')) > 0, 'cacheable')
  const unknown = await s.req('OPTIONS', '/nope', { headers: { ...origin, 'access-control-request-method': 'GET' } })
  t.equal(unknown.status, 404, 'no preflight for a route that does not exist')
})

t.test('actual responses, errors included, carry Access-Control-Allow-Origin and expose the API headers', async (t) => {
  for (const [what, r] of [
    ['success', await s.req('GET', '/me', { token: acct.token, headers: origin })],
    ['401', await s.req('GET', '/me', { headers: origin })],
    ['404', await s.req('GET', '/nope', { headers: origin })],
    ['public', await s.req('GET', `/menu/${acct.storeId}`, { headers: origin })],
  ] as const) {
    t.equal(r.headers.get('access-control-allow-origin'), '*', `${what}: allow origin`)
    const exposed = (r.headers.get('access-control-expose-headers') ?? '').toLowerCase()
    for (const h of ['x-request-id', 'x-ratelimit-limit', 'x-ratelimit-remaining', 'retry-after', 'idempotent-replayed']) t.ok(exposed.includes(h), `${what}: exposes ${h}`)
  }
})

t.test('X-Request-Id is echoed, or generated, on every response', async (t) => {
  const echoed = await s.req('GET', '/me', { token: acct.token, headers: { 'x-request-id': 'trace-42' } })
  t.equal(echoed.headers.get('x-request-id'), 'trace-42')
  const err = await s.req('POST', `/restaurants/${acct.storeId}/orders`, { token: acct.token, raw: '{', headers: { 'content-type': 'application/json', 'x-request-id': 'trace-43' } })
  t.equal(err.status, 400)
  t.equal(err.headers.get('x-request-id'), 'trace-43', 'also on errors')
  const a = await s.req('GET', '')
  const b = await s.req('GET', '')
  t.ok(a.headers.get('x-request-id') && a.headers.get('x-request-id') !== b.headers.get('x-request-id'), 'a fresh id per request otherwise')
})
