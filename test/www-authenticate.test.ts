/**
 * Every 401 carries a `WWW-Authenticate` challenge (RFC 9110 §11.6.1, RFC 6750 §3), whichever
 * credential family the address takes: the API (`/api/v1`: owner, storefront, customer, driver,
 * staff and mobile-shell tokens), `/api/app/usage`, the MCP servers and the sockets. No credential
 * (or another scheme): `Bearer realm="api"`; a token presented and refused: with
 * `error="invalid_token"`. Answers that are not 401 carry none. /metrics has its own realm
 * (test/metrics.test.ts).
 */
import t from 'tap'
import { startServer, type Res } from './helpers/server.ts'
import { createAccount, createCustomer, createDriver, createStaff, createStorefrontToken, isError } from './helpers/fixtures.ts'
import { bearer, rawMcp } from './helpers/mcp.ts'
import { rawUpgrade } from './helpers/raw-ws.ts'
import { APP_SCOPES } from '../src/domain/app-scopes.ts'

const NONE = 'Bearer realm="api"'
const REFUSED = 'Bearer realm="api", error="invalid_token"'

const s = await startServer({ RATE_LIMIT_PER_MINUTE: '100000' })
t.teardown(() => s.close())
const db = s.app.svc.db
const acct = createAccount(db)
const customer = createCustomer(db, acct.storeId)
const driver = createDriver(db, acct.ownerId, acct.storeId)
const staff = createStaff(db, acct.storeId)
const storefront = createStorefrontToken(db, acct.storeId)

const challenge = (r: Pick<Res, 'headers'>) => r.headers.get('www-authenticate')

/** GET `path` of `/api/v1` with no credential, a refused one and an accepted one (`headers` build each). */
const families: Array<{ family: string; path: string; good: Record<string, string>; bad: Record<string, string> }> = [
  { family: 'owner', path: '/me', good: bearer(acct.token), bad: bearer('dso_forged') },
  { family: 'storefront', path: '/storefront/menu', good: { 'x-storefront-token': storefront }, bad: { 'x-storefront-token': 'dss_forged' } },
  { family: 'customer', path: '/customer/me', good: bearer(customer.token), bad: bearer('dsc_forged') },
  { family: 'driver', path: '/driver/me', good: bearer(driver.token), bad: bearer('dsd_forged') },
  { family: 'staff', path: '/staff/me', good: bearer(staff.token), bad: bearer('dst_forged') },
  { family: 'mobile shell', path: '/app/me', good: {}, bad: bearer('dsh_forged') },
]

for (const f of families) {
  t.test(`${f.family} token (${f.path}): no credential, a refused one, an accepted one`, async (t) => {
    const none = await s.req('GET', f.path)
    isError(t, none, 401, 'unauthenticated', 'no credential')
    t.equal(challenge(none), NONE, 'challenged without an error')
    const bad = await s.req('GET', f.path, { headers: f.bad })
    isError(t, bad, 401, 'unauthenticated', 'a forged token')
    t.equal(challenge(bad), REFUSED, 'challenged with invalid_token')
    if (Object.keys(f.good).length > 0) {
      const good = await s.req('GET', f.path, { headers: f.good })
      t.equal(good.status, 200)
      t.equal(challenge(good), null, 'no challenge on a success')
    }
  })
}

t.test('the owner token in the query, another scheme, an owner token where a driver token is needed', async (t) => {
  t.equal(challenge(await s.req('GET', '/me?api_token=dso_forged')), REFUSED, '?api_token= is a presented token')
  const basic = await s.req('GET', '/me', { headers: { authorization: 'Basic dXNlcjpwdw==' } })
  isError(t, basic, 401, 'unauthenticated')
  t.equal(challenge(basic), NONE, 'another scheme is not a refused token (RFC 6750 §3.1)')
  t.equal(challenge(await s.req('GET', '/driver/me', { token: acct.token })), REFUSED, 'a token of another family is refused')
  const notOwned = await s.req('GET', '/restaurants/999999', { token: acct.token })
  t.equal(notOwned.status, 404)
  t.equal(challenge(notOwned), null, 'other errors carry no challenge')
})

t.test('a failed sign-in is a 401 too: challenged without an error', async (t) => {
  const r = await s.req('POST', `/restaurants/${acct.storeId}/staff/login`, { body: { email: staff.email, password: 'wrong', device: 'x' } })
  isError(t, r, 401, 'unauthenticated')
  t.equal(challenge(r), NONE)
})

t.test('/api/app/usage', async (t) => {
  const none = await s.req('POST', `${s.site}/api/app/usage`, { raw: 'quantity=1', headers: { 'content-type': 'application/x-www-form-urlencoded' } })
  isError(t, none, 401, 'unauthenticated')
  t.equal(challenge(none), NONE)
  const bad = await s.req('POST', `${s.site}/api/app/usage`, { raw: 'quantity=1', headers: { 'content-type': 'application/x-www-form-urlencoded', ...bearer('dsa_forged') } })
  isError(t, bad, 401, 'unauthenticated')
  t.equal(challenge(bad), REFUSED)
})

t.test('MCP servers: admin, storefront, customer', async (t) => {
  const ping = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' })
  for (const [path, bad, good] of [
    ['/mcp', bearer('dso_forged'), bearer(acct.token)],
    ['/mcp/storefront', { 'x-storefront-token': 'dss_forged' }, null],
    ['/mcp/customer', bearer('dsc_forged'), bearer(customer.token)],
  ] as const) {
    // Each names its protected resource metadata (RFC 9728 §5.1, issue 36); the admin server also the scopes to ask for.
    const metadata = `, resource_metadata="${s.site}/.well-known/oauth-protected-resource${path}"${path === '/mcp' ? `, scope="${APP_SCOPES.join(' ')}"` : ''}`
    const none = await rawMcp(s, path, ping)
    t.equal(none.status, 401, `${path} without a credential`)
    t.equal(challenge(none), NONE + metadata)
    const refused = await rawMcp(s, path, ping, bad)
    t.equal(refused.status, 401, `${path} with a forged credential`)
    t.equal(challenge(refused), REFUSED + metadata)
    if (good) {
      const ok = await rawMcp(s, path, ping, good)
      t.equal(ok.status, 200)
      t.equal(challenge(ok), null)
    }
  }
  t.equal(challenge(await rawMcp(s, '/mcp/catalog', ping)), null, 'a public server asks for nothing')
})

t.test('socket upgrades answer 401 with the same challenge', async (t) => {
  const none = await rawUpgrade(s.port, '/api/v1/ws/driver')
  t.equal(none.status, 401)
  t.equal(none.headers['www-authenticate'], NONE)
  const query = await rawUpgrade(s.port, '/api/v1/ws/driver?token=dsd_forged')
  t.equal(query.status, 401)
  t.equal(query.headers['www-authenticate'], REFUSED, '?token= is a presented token')
  const header = await rawUpgrade(s.port, `/api/v1/ws/dispatch/${acct.storeId}`, { authorization: 'Bearer dso_forged' })
  t.equal(header.status, 401)
  t.equal(header.headers['www-authenticate'], REFUSED)
})

t.test('browsers may read the challenge (CORS)', async (t) => {
  const r = await s.req('GET', '/me')
  t.match(r.headers.get('access-control-expose-headers') ?? '', /\bWWW-Authenticate\b/)
})
