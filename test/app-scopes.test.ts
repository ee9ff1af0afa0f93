/**
 * App tokens at work (api-v1 §4.10, §5; docs/apps.md "Calling the API"): an app access token is an
 * owner principal limited to the installing account and its granted scopes. REST: a call needing
 * orders:read fails unless granted; account-wide operations are refused; another account's store
 * is a 404. MCP: the admin server needs mcp:use, and hides the tools outside the scopes.
 */
import t from 'tap'
import { startServer } from './helpers/server.ts'
import { createAccount } from './helpers/fixtures.ts'
import { createTestApp, installTestApp } from './helpers/apps.ts'
import { bearer, callTool, connectMcp, rawMcp } from './helpers/mcp.ts'
import { revokeInstallationTokens } from '../src/auth/app-tokens.ts'
import { nowIso } from '../src/storage/db.ts'

const s = await startServer({ RATE_LIMIT_PER_MINUTE: '100000' })
t.teardown(() => s.close())
const db = s.app.svc.db
const acct = createAccount(db)
const other = createAccount(db)
const developer = createAccount(db)
const ALL = ['menu:read', 'menu:write', 'orders:read', 'orders:write', 'analytics:read', 'restaurant:read', 'mcp:use']
const app = createTestApp(db, developer.ownerId, { scopes: ALL })
const install = (scopes: string[]) => {
  // One active installation per app and account: a re-consent replaces the scopes; each gets its own tokens.
  const other = createTestApp(db, developer.ownerId, { scopes: ALL })
  return installTestApp(db, other.id, acct.ownerId, scopes).accessToken
}
const get = (token: string, path: string) => s.req('GET', path, { token })
const orders = `/restaurants/${acct.storeId}/orders`
const menu = `/restaurants/${acct.storeId}/menu`

t.test('a call needing orders:read fails unless the owner granted it', async (t) => {
  const menuOnly = install(['menu:read'])
  const r = await get(menuOnly, orders)
  t.equal(r.status, 403)
  t.equal(r.body.code, 'forbidden')
  t.equal((await get(menuOnly, menu)).status, 200, 'menu:read reads the menu')
  const ordersRead = install(['orders:read'])
  t.equal((await get(ordersRead, orders)).status, 200)
  t.equal((await get(ordersRead, menu)).status, 403, 'and not the menu')
  t.equal((await s.req('POST', orders, { token: ordersRead, body: { type: 'takeaway', items: [{ item_id: acct.menu.fries, quantity: 1 }] } })).status, 403, 'orders:read cannot write orders')
  const ordersWrite = install(['orders:write'])
  t.equal((await s.req('POST', orders, { token: ordersWrite, body: { type: 'takeaway', items: [{ item_id: acct.menu.fries, quantity: 1 }] } })).status, 200, 'orders:write creates orders')
  t.equal((await get(install(['restaurant:read']), `/restaurants/${acct.storeId}`)).status, 200, 'restaurant:read reads the store')
  t.equal((await get(install(['analytics:read']), `/restaurants/${acct.storeId}/analytics`)).status, 200, 'analytics:read')
  t.equal((await get(install(['mcp:use']), orders)).status, 403, 'mcp:use alone grants no API call')
})

t.test('account-wide operations are refused whatever the scopes', async (t) => {
  const every = install(ALL)
  for (const [method, path] of [['GET', '/tokens'], ['POST', '/tokens'], ['GET', '/wallet'], ['GET', '/subscription'], ['POST', '/subscription/cancel'], ['GET', '/developer/apps']] as const) {
    const r = await s.req(method, path, { token: every, ...(method === 'POST' ? { body: { name: 'x', capabilities: ['*'] } } : {}) })
    t.equal(r.status, 403, `${method} ${path}`)
  }
  t.equal(db.prepare("SELECT COUNT(*) FROM owner_tokens WHERE owner_id = ? AND name = 'x'").pluck().get(acct.ownerId), 0, 'no token minted')
})

t.test('the token acts for the installing account only: another account\'s store is a 404', async (t) => {
  const every = install(ALL)
  t.equal((await get(every, `/restaurants/${other.storeId}/orders`)).status, 404)
  t.equal((await get(every, `/restaurants/${other.storeId}/menu`)).status, 404)
})

t.test('revoked, refresh and uninstalled tokens are 401', async (t) => {
  const a = createTestApp(db, developer.ownerId, { scopes: ['orders:read'] })
  const { accessToken, refreshToken, installation } = installTestApp(db, a.id, acct.ownerId)
  t.equal((await get(accessToken, orders)).status, 200)
  t.equal((await get(refreshToken, orders)).status, 401, 'a refresh token is not a bearer token')
  db.transaction(() => revokeInstallationTokens(db, installation.id, nowIso()))()
  t.equal((await get(accessToken, orders)).status, 401, 'revoked at once')
  const b = installTestApp(db, a.id, acct.ownerId)
  db.prepare("UPDATE app_installations SET status = 'uninstalled', uninstalled_at = ? WHERE id = ?").run(nowIso(), b.installation.id)
  t.equal((await get(b.accessToken, orders)).status, 401, 'an uninstalled app\'s token stops working')
  const c = installTestApp(db, a.id, acct.ownerId)
  db.prepare("UPDATE app_tokens SET expires_at = '2000-01-01T00:00:00.000+00:00' WHERE installation_id = ?").run(c.installation.id)
  t.equal((await get(c.accessToken, orders)).status, 401, 'expired')
})

t.test('an app token has its own rate-limit budget key (never an owner token\'s)', async (t) => {
  const { principalKey } = await import('../src/auth/principals.ts')
  const p = s.app.svc.auth.owner({ headers: {}, query: {}, bearer: install(['orders:read']) })
  t.ok(p?.app, 'resolved as an app principal')
  t.match(principalKey(p!), /^app-token:\d+$/)
  t.match(principalKey(s.app.svc.auth.owner({ headers: {}, query: {}, bearer: acct.token })!), /^owner-token:\d+$/)
})

t.test('MCP: the admin server needs mcp:use; tools outside the scopes are hidden', async (t) => {
  const without = install(['orders:read', 'menu:read'])
  const init = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } } })
  const refused = await rawMcp(s, '/mcp', init, { ...bearer(without), accept: 'application/json, text/event-stream' })
  t.equal(refused.status, 403, 'no mcp:use: 403')
  t.equal(refused.json?.code, 'forbidden')

  const withMcp = install(['mcp:use', 'orders:read'])
  const client = await connectMcp(s, '/mcp', bearer(withMcp))
  t.teardown(() => client.close())
  const names = (await client.listTools()).tools.map((x) => x.name).sort()
  t.ok(names.includes('list_orders') && names.includes('get_order'), 'orders:read tools are listed')
  for (const hidden of ['get_menu', 'add_menu_item', 'list_restaurants', 'sales_report', 'update_order_status', 'list_customers', 'create_coupon']) {
    t.notOk(names.includes(hidden), `${hidden} is hidden`)
  }
  const listed = await callTool(client, 'list_orders', { restaurant_id: acct.storeId })
  t.equal(listed.isError, false, 'a listed tool works')
  const outside = await callTool(client, 'list_orders', { restaurant_id: other.storeId })
  t.equal(outside.isError, true, 'another account\'s store is not_found')

  const wide = await connectMcp(s, '/mcp', bearer(install(['mcp:use', 'menu:write', 'restaurant:read'])))
  t.teardown(() => wide.close())
  const wideNames = (await wide.listTools()).tools.map((x) => x.name)
  t.ok(wideNames.includes('add_category') && wideNames.includes('list_restaurants'), 'menu:write and restaurant:read tools')
  t.notOk(wideNames.includes('list_orders'), 'no orders tools without orders:read')
})

t.test('a re-consent with fewer scopes narrows the tokens issued before it at once', async (t) => {
  const a = createTestApp(db, developer.ownerId, { scopes: ['orders:read', 'menu:read'] })
  const first = installTestApp(db, a.id, other.ownerId)
  const otherOrders = `/restaurants/${other.storeId}/orders`
  t.equal((await get(first.accessToken, otherOrders)).status, 200)
  installTestApp(db, a.id, other.ownerId, ['menu:read'])
  t.equal((await get(first.accessToken, otherOrders)).status, 403, 'orders:read is no longer granted')
  t.equal((await get(first.accessToken, `/restaurants/${other.storeId}/menu`)).status, 200, 'menu:read still is')
})
