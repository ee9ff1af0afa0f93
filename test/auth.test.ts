/** Owner authentication (api-v1 §5): how a token is presented and when it is refused (401). */
import t from 'tap'
import { startServer } from './helpers/server.ts'
import { createAccount, isError, tokenFor } from './helpers/fixtures.ts'
import { nowIso } from '../src/storage/db.ts'
import { newToken, sha256Hex } from '../src/auth/tokens.ts'

const s = await startServer({ RATE_LIMIT_PER_MINUTE: '10000' })
t.teardown(() => s.close())
const db = s.app.svc.db
const acct = createAccount(db)

t.test('a bearer token in the Authorization header authenticates', async (t) => {
  const r = await s.req('GET', '/me', { token: acct.token })
  t.equal(r.status, 200)
  t.equal(r.body.kind, 'owner')
  t.equal(r.body.owner.id, acct.ownerId)
  t.same(r.body.token.capabilities, ['*'])
  t.equal(r.body.token.prefix, acct.token.slice(0, 10))
  t.notOk(JSON.stringify(r.body).includes(acct.token), 'the raw token is never echoed')
  const lower = await s.req('GET', '/me', { headers: { authorization: `bearer ${acct.token}` } })
  t.equal(lower.status, 200, 'the scheme name is case-insensitive')
})

t.test('the api_token query parameter authenticates and is not mistaken for a query field', async (t) => {
  const r = await s.req('GET', `/restaurants?api_token=${encodeURIComponent(acct.token)}`)
  t.equal(r.status, 200)
  t.equal(r.body.total, 1)
  const paged = await s.req('GET', `/restaurants?page=1&api_token=${encodeURIComponent(acct.token)}`)
  t.equal(paged.status, 200)
  t.equal(paged.body.current_page, 1)
  const orders = await s.req('GET', `/restaurants/${acct.storeId}/orders?api_token=${encodeURIComponent(acct.token)}`)
  t.equal(orders.status, 200, 'strict query schemas do not trip over api_token')
})

t.test('tokens are stored only as SHA-256 digests', async (t) => {
  const row = db.prepare('SELECT token_hash FROM owner_tokens WHERE token_hash = ?').get(sha256Hex(acct.token))
  t.ok(row, 'found by digest')
  const raw = db.prepare('SELECT COUNT(*) FROM owner_tokens WHERE token_hash = ? OR token_prefix = ?').pluck().get(acct.token, acct.token)
  t.equal(raw, 0, 'the raw token is not stored')
})

t.test('missing, malformed, unknown, expired and revoked tokens get 401 unauthenticated', async (t) => {
  const expired = tokenFor(db, acct.ownerId, ['*'], nowIso(Date.now() - 1000))
  const future = tokenFor(db, acct.ownerId, ['*'], nowIso(Date.now() + 3600_000))
  const revoked = tokenFor(db, acct.ownerId, ['*'])
  db.prepare('UPDATE owner_tokens SET revoked_at = ? WHERE token_hash = ?').run(nowIso(), sha256Hex(revoked))

  const cases: Array<[string, Record<string, string>, string?]> = [
    ['no credentials', {}],
    ['empty bearer', { authorization: 'Bearer ' }],
    ['another scheme', { authorization: `Basic ${Buffer.from('a:b').toString('base64')}` }],
    ['unknown token', { authorization: 'Bearer dso_not-a-real-token' }],
    ['token with a trailing character', { authorization: `Bearer ${acct.token}x` }],
    ['expired token', { authorization: `Bearer ${expired}` }],
    ['revoked token', { authorization: `Bearer ${revoked}` }],
    ['unknown api_token', {}, 'api_token=dso_nope'],
    ['expired api_token', {}, `api_token=${encodeURIComponent(expired)}`],
  ]
  for (const [what, headers, qs] of cases) {
    for (const path of ['/me', `/restaurants/${acct.storeId}/orders`]) {
      const r = await s.req('GET', `${path}${qs ? `?${qs}` : ''}`, { headers })
      isError(t, r, 401, 'unauthenticated', `${what} on ${path}`)
    }
  }
  const post = await s.req('POST', `/restaurants/${acct.storeId}/orders`, { body: { type: 'takeaway', items: [{ item_id: acct.menu.fries, quantity: 1 }] } })
  isError(t, post, 401, 'unauthenticated', 'an unauthenticated write')
  t.equal((await s.req('GET', '/me', { token: future })).status, 200, 'a token expiring later still works')
})

t.test('a token stops working the moment it expires or is revoked', async (t) => {
  const tok = tokenFor(db, acct.ownerId, ['*'], nowIso(Date.now() + 400))
  t.equal((await s.req('GET', '/me', { token: tok })).status, 200)
  await new Promise((r) => setTimeout(r, 500))
  isError(t, await s.req('GET', '/me', { token: tok }), 401, 'unauthenticated', 'after expiry')

  const tok2 = tokenFor(db, acct.ownerId, ['*'])
  t.equal((await s.req('GET', '/me', { token: tok2 })).status, 200)
  db.prepare('UPDATE owner_tokens SET revoked_at = ? WHERE token_hash = ?').run(nowIso(), sha256Hex(tok2))
  isError(t, await s.req('GET', '/me', { token: tok2 }), 401, 'unauthenticated', 'after revocation')
})

t.test('tokens of other families are not owner tokens', async (t) => {
  const driverToken = newToken('driver')
  db.prepare('INSERT INTO drivers (owner_id, restaurant_id, name, phone, token_hash, created_at) VALUES (?, ?, ?, ?, ?, ?)')
    .run(acct.ownerId, acct.storeId, 'D', '+15550002', sha256Hex(driverToken), nowIso())
  const storefrontToken = newToken('storefront')
  db.prepare('INSERT INTO storefront_tokens (store_id, token_hash, created_at) VALUES (?, ?, ?)').run(acct.storeId, sha256Hex(storefrontToken), nowIso())
  for (const [what, tok] of [['driver', driverToken], ['storefront', storefrontToken]] as const) {
    isError(t, await s.req('GET', `/restaurants/${acct.storeId}/orders`, { token: tok }), 401, 'unauthenticated', `a ${what} token as bearer`)
    isError(t, await s.req('GET', `/restaurants/${acct.storeId}/orders`, { headers: { 'x-storefront-token': tok } }), 401, 'unauthenticated', `a ${what} token in X-Storefront-Token`)
  }
  isError(t, await s.req('GET', `/restaurants/${acct.storeId}/orders`, { token: sha256Hex(acct.token) }), 401, 'unauthenticated', 'the stored digest is not a token')
})

t.test('public routes need no token and ignore a bad one', async (t) => {
  t.equal((await s.req('GET', '')).status, 200)
  t.equal((await s.req('GET', '/openapi.json')).status, 200)
  t.equal((await s.req('GET', `/menu/${acct.storeId}`)).status, 200)
  t.equal((await s.req('GET', `/menu/${acct.storeId}`, { token: 'dso_garbage' })).status, 200)
})
