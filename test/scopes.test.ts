/**
 * The owner scope matrix (api-v1 §5), derived from the live route table: for every owner route, a
 * token lacking the route's capability gets 403 `forbidden`; tokens that hold it (exactly, through
 * `*`, `read`/`write`, `*:action`, or a `:write` implying `:read`) get past authorization.
 */
import t from 'tap'
import { startServer, request } from './helpers/server.ts'
import { createAccount, envelopeProblem, postOrder, tokenFor } from './helpers/fixtures.ts'
import { label, ownerRoutes, urlOf, type Route } from './helpers/routes.ts'
import { RESOURCES } from '../src/domain/capabilities.ts'
import { grantReseller } from '../src/storage/reseller.ts'

const s = await startServer({ RATE_LIMIT_PER_MINUTE: '100000' })
t.teardown(() => s.close())
const db = s.app.svc.db
const acct = createAccount(db)
// A reseller too, so the reseller area's routes (api-v1 §4.8) are in the matrix: the role only opens them.
grantReseller(db, acct.ownerId)
const order = await postOrder(s, acct.token, acct.storeId, { type: 'takeaway', items: [{ item_id: acct.menu.fries, quantity: 1 }] })
t.equal(order.status, 200)

const routes = ownerRoutes()
const MISSING = 999_999

/** Real ids for reads; writes aim at ids that do not exist (or send an invalid body) so nothing changes. */
function urlFor(r: Route): string {
  const isRead = r.method === 'GET'
  const values: Record<string, number> = {}
  if (r.path.startsWith('/restaurants/{id}')) values.id = acct.storeId
  if (isRead) {
    Object.assign(values, { categoryId: acct.menu.categoryId, itemId: acct.menu.burger.id, variantId: acct.menu.burger.double, orderId: order.body.id })
  }
  return urlOf(s.site, r, values, MISSING)
}

/** Reads whose fixture ids all exist, so holding the capability must mean a 200. */
const SPINE_READS = new Set(['/me', '/restaurants', '/restaurants/{id}', '/restaurants/{id}/menu', '/restaurants/{id}/orders', '/restaurants/{id}/orders/{orderId}',
  '/restaurants/{id}/analytics', '/restaurants/{id}/menu/items/{itemId}/variants', '/restaurants/{id}/menu/items/{itemId}/variants/{variantId}'])

const send = (r: Route, token: string) => request(urlFor(r), r.method, { token, body: r.body ? {} : undefined })

const tokens = new Map<string, string>()
const tok = (caps: string[]) => {
  const key = caps.join(',')
  if (!tokens.has(key)) tokens.set(key, tokenFor(db, acct.ownerId, caps))
  return tokens.get(key)!
}

/**
 * Owner-family routes only an app's token may call, whatever scopes it was granted (docs/apps.md
 * "Billing"): reporting usage needs no capability, and an owner's own token is refused (403).
 */
const APP_TOKEN_ONLY = new Set(['POST /api/app/usage'])
/**
 * Reads that take a body, so they are POSTs: they change nothing and need the :read capability
 * (docs/dispatch.md "Quotes"; the theme preview, docs/themes.md "Editing from the dashboard").
 */
const READS_BY_POST = new Set(['POST /restaurants/{id}/delivery-quote', 'POST /restaurants/{id}/theme/preview'])

t.test('the route table is consistent with the capability rules', async (t) => {
  t.ok(routes.length >= 20, `${routes.length} owner routes`)
  for (const r of routes) {
    if (APP_TOKEN_ONLY.has(`${r.method} ${r.path}`)) {
      t.notOk(r.capability, `${label(r)}: app tokens of any scope report usage`)
    } else if (READS_BY_POST.has(`${r.method} ${r.path}`)) {
      t.ok(r.capability?.endsWith(':read'), `${label(r)}: a read with a body needs a :read capability`)
    } else if (r.method === 'GET') {
      t.ok(!r.capability || r.capability.endsWith(':read'), `${label(r)}: a GET needs a :read capability (read grants every GET)`)
    } else {
      t.ok(r.capability?.endsWith(':write'), `${label(r)}: a write needs a :write capability`)
    }
  }
  const byPath = (m: string, p: string) => routes.find((r) => r.method === m && r.path === p)?.capability
  t.equal(byPath('POST', '/restaurants/{id}/orders'), 'orders:write', 'order creation needs orders:write (spec: write scope)')
  t.equal(byPath('PUT', '/restaurants/{id}/orders/{orderId}/status'), 'orders:write')
  t.equal(byPath('GET', '/restaurants/{id}/orders'), 'orders:read')
  t.equal(byPath('GET', '/restaurants/{id}/analytics'), 'analytics:read')
  t.equal(byPath('GET', '/restaurants/{id}/menu'), 'menu:read')
})

t.test('a token lacking the capability gets 403 forbidden on every owner route', async (t) => {
  for (const r of routes) {
    if (!r.capability) continue
    const [resource, action] = r.capability.split(':') as [string, string]
    const lacking: string[][] = [
      RESOURCES.filter((x) => x !== resource).map((x) => `${x}:write`),
    ]
    if (action === 'write') lacking.push(['read'], ['*:read'], [`${resource}:read`], RESOURCES.map((x) => `${x}:read`))
    await Promise.all(lacking.map(async (caps) => {
      const res = await send(r, tok(caps))
      t.equal(res.status, 403, `${label(r)} with [${caps.join(',')}] → 403`)
      t.equal(envelopeProblem(res.body, 'forbidden'), null, `${label(r)} forbidden envelope`)
    }))
  }
})

t.test('a token holding the capability (directly or implied) is let through', async (t) => {
  for (const r of routes) {
    const granting: string[][] = [['*'], ['write'], ['*:write']]
    if (r.capability) {
      const [resource, action] = r.capability.split(':') as [string, string]
      granting.push([r.capability])
      if (action === 'read') granting.push([`${resource}:write`], ['read'], ['*:read'])
    } else {
      granting.push(['read'], ['orders:read'])
    }
    await Promise.all(granting.map(async (caps) => {
      const res = await send(r, tok(caps))
      t.not(res.status, 403, `${label(r)} with [${caps.join(',')}] is not forbidden (got ${res.status} ${res.body?.code ?? ''})`)
      t.not(res.status, 401, `${label(r)} with [${caps.join(',')}] is authenticated`)
      if (r.method === 'GET' && SPINE_READS.has(r.path)) t.equal(res.status, 200, `${label(r)} with [${caps.join(',')}] answers 200`)
    }))
  }
})

t.test('write implies read, and a scope grants nothing outside its resource', async (t) => {
  const menuWrite = tok(['menu:write'])
  t.equal((await s.req('GET', `/restaurants/${acct.storeId}/menu`, { token: menuWrite })).status, 200)
  t.equal((await s.req('GET', `/restaurants/${acct.storeId}/orders`, { token: menuWrite })).status, 403)
  const ordersRead = tok(['orders:read'])
  t.equal((await s.req('GET', `/restaurants/${acct.storeId}/orders`, { token: ordersRead })).status, 200)
  const before = db.prepare('SELECT COUNT(*) FROM orders').pluck().get()
  const denied = await postOrder(s, ordersRead, acct.storeId, { type: 'takeaway', items: [{ item_id: acct.menu.fries, quantity: 1 }] })
  t.equal(denied.status, 403, 'orders:read cannot create orders')
  t.equal(db.prepare('SELECT COUNT(*) FROM orders').pluck().get(), before, 'a forbidden write writes nothing')
  const combo = tok(['orders:read', 'analytics:read'])
  t.equal((await s.req('GET', `/restaurants/${acct.storeId}/analytics`, { token: combo })).status, 200)
  t.equal((await s.req('GET', `/restaurants/${acct.storeId}/orders`, { token: combo })).status, 200)
  t.equal((await s.req('GET', `/restaurants/${acct.storeId}/menu`, { token: combo })).status, 403)
})
