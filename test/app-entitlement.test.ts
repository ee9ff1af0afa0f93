/**
 * An installed app works only while the installing account's plan includes `apps` (issue 31 item 3,
 * docs/billing.md "Plans and entitlements", docs/apps.md "Calling the API"). Its access token is
 * refused with 403 `feature_not_in_plan` on every front door as soon as the entitlement goes —
 * REST, the admin MCP server (the official SDK client), new sockets, and open sockets close with
 * 4003 — whether the operator's CLI revokes it from another process or the account's own plan
 * change (a pause, in this process) does; granting it back makes the same token work again. The
 * account's own token and other accounts' apps are untouched throughout.
 */
import t, { type Test } from 'tap'
import { dispatchCli } from './helpers/process.ts'
import { refusal, startServer, type Res } from './helpers/server.ts'
import { createAccount, isError } from './helpers/fixtures.ts'
import { createTestApp, installTestApp } from './helpers/apps.ts'
import { bearer, callTool, connectMcp, rawMcp } from './helpers/mcp.ts'
import { WsClient, wsBase } from './helpers/ws-client.ts'

const s = await startServer({ RATE_LIMIT_PER_MINUTE: '100000' })
t.teardown(() => s.close())
const db = s.app.svc.db
const developer = createAccount(db)
const app = createTestApp(db, developer.ownerId, { scopes: ['orders:read', 'mcp:use'] })

/** The real operator CLI, in its own process, against the running server's database. */
const cli = (...args: string[]) => dispatchCli(s, ...args)

/** An account with the app installed: `growth` has `mcp` but not `apps`, so `apps` is the operator's manual grant. */
async function installed(t: Test) {
  const acct = createAccount(db, { plan: 'growth' })
  t.match(await cli('entitlement', 'grant', '--owner', String(acct.ownerId), '--feature', 'apps'), { changed: true })
  const { accessToken } = installTestApp(db, app.id, acct.ownerId)
  return { ...acct, app: accessToken, orders: `/restaurants/${acct.storeId}/orders`, socket: `${wsBase(s)}/ws/orders/${acct.storeId}` }
}

const refusedForPlan = (t: Test, r: Res, what: string) => {
  isError(t, r, 403, 'feature_not_in_plan', what)
  t.equal(r.body.details?.feature, 'apps', `${what} names the feature`)
}

const mcpList = (token: string) => rawMcp(s, '/mcp', JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }), { ...bearer(token), accept: 'application/json, text/event-stream' })

t.test('the CLI revokes apps from another process: REST, MCP and sockets refuse the app at once; a grant restores it', async (t) => {
  const a = await installed(t)
  const bystander = await installed(t)
  t.equal((await s.req('GET', a.orders, { token: a.app })).status, 200, 'REST works before')
  const agent = await connectMcp(s, '/mcp', bearer(a.app))
  t.teardown(() => agent.close())
  t.notOk((await callTool(agent, 'list_orders', { restaurant_id: a.storeId })).isError, 'MCP works before')
  const board = await WsClient.open(a.socket, { token: a.app })
  await board.next((f) => f.type === 'snapshot')
  const other = await WsClient.open(bystander.socket, { token: bystander.app })
  await other.next((f) => f.type === 'snapshot')

  t.match(await cli('entitlement', 'revoke', '--owner', String(a.ownerId), '--feature', 'apps'), { action: 'revoked', changed: true })
  refusedForPlan(t, await s.req('GET', a.orders, { token: a.app }), 'REST')
  const listed = await mcpList(a.app)
  t.equal(listed.status, 403, 'MCP: 403 at the HTTP level')
  t.match(listed.json, { code: 'forbidden', reason: 'feature_not_in_plan', details: { feature: 'apps' } })
  await t.rejects(agent.callTool({ name: 'list_orders', arguments: { restaurant_id: a.storeId } }), { code: 403, message: /feature_not_in_plan/ }, 'a connected agent\'s next call fails')
  await t.rejects(connectMcp(s, '/mcp', bearer(a.app)), 'a new agent cannot connect')
  t.match(await refusal(WsClient.open(a.socket, { token: a.app })), { status: 403, body: { code: 'forbidden', reason: 'feature_not_in_plan', details: { feature: 'apps' } } }, 'a new socket is refused')
  // The database watcher re-checks open sockets within about half a second (src/ws/sessions.ts).
  t.match(await board.closedWithin(15_000), { code: 4003, reason: 'feature_not_in_plan' }, 'the open socket closes')
  t.equal((await s.req('GET', a.orders, { token: a.token })).status, 200, 'the owner\'s own token still works')
  t.equal((await s.req('GET', bystander.orders, { token: bystander.app })).status, 200, 'another account\'s app still works')
  t.ok(await Promise.race([other.closed.then(() => false), new Promise<boolean>((r) => setTimeout(() => r(true), 200))]), 'and its socket stays open')

  t.match(await cli('entitlement', 'grant', '--owner', String(a.ownerId), '--feature', 'apps'), { action: 'granted', changed: true })
  t.equal((await s.req('GET', a.orders, { token: a.app })).status, 200, 'REST works again at once')
  t.notOk((await callTool(agent, 'list_orders', { restaurant_id: a.storeId })).isError, 'the same agent works again')
  const again = await WsClient.open(a.socket, { token: a.app })
  await again.next((f) => f.type === 'snapshot')
  await again.close()
  await other.close()
})

t.test('the account\'s own plan change in this process (a pause falls back to the free plan) stops the app at once', async (t) => {
  const a = createAccount(db) // pro: apps from the subscription
  const { accessToken } = installTestApp(db, app.id, a.ownerId)
  const board = await WsClient.open(`${wsBase(s)}/ws/orders/${a.storeId}`, { token: accessToken })
  await board.next((f) => f.type === 'snapshot')

  t.equal((await s.req('POST', '/subscription/pause', { token: a.token })).status, 200, 'paused')
  refusedForPlan(t, await s.req('GET', `/restaurants/${a.storeId}/orders`, { token: accessToken }), 'REST')
  // The free plan lacks `mcp` too: the app's refusal comes first, at authentication.
  t.match((await mcpList(accessToken)).json, { code: 'forbidden', reason: 'feature_not_in_plan', details: { feature: 'apps' } }, 'MCP')
  // No other process wrote, so the database watcher sees nothing: the change itself re-checks the socket.
  t.match(await board.closedWithin(2000), { code: 4003, reason: 'feature_not_in_plan' }, 'the open socket closes')

  t.equal((await s.req('POST', '/subscription/resume', { token: a.token })).status, 200, 'resumed')
  t.equal((await s.req('GET', `/restaurants/${a.storeId}/orders`, { token: accessToken })).status, 200, 'the app works again')
  t.equal((await mcpList(accessToken)).status, 200)
})
