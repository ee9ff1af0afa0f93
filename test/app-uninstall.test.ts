/**
 * Uninstalling an app (api-v1 §5 "On uninstall the platform revokes the app's tokens and emits
 * `app.uninstalled`", §6 app deliveries; docs/apps.md "Uninstall and webhooks"): every token of the
 * installation is refused at once, recurring charges stop, and the app's webhook URL receives a
 * signed `app.uninstalled` with `type` in place of `event` (verified with standardwebhooks against a
 * real receiver). Events the app subscribed to reach it, in the same format, only from accounts
 * that installed it.
 */
import t from 'tap'
import { Webhook } from 'standardwebhooks'
import { startServer, request } from './helpers/server.ts'
import { createAccount, createOwner, tokenFor, postOrder, isError } from './helpers/fixtures.ts'
import { startReceiver } from './helpers/webhook-receiver.ts'
import { createTestApp, installTestApp } from './helpers/apps.ts'
import { credit, walletBalance } from '../src/storage/wallet.ts'
import { chargeAtInstall, runAppCharges } from '../src/billing/app-charges.ts'
import { nowIso } from '../src/storage/db.ts'

const s = await startServer({ WEBHOOK_ALLOW_LOOPBACK: '1', WEBHOOK_RETRY_SCHEDULE: '0.2', RATE_LIMIT_PER_MINUTE: '100000' })
const rcv = await startReceiver()
t.teardown(async () => { await rcv.close(); await s.close() })
const db = s.app.svc.db

const usage = (token: string) => request(`${s.site}/api/app/usage`, 'POST', {
  token, raw: 'quantity=1', headers: { 'content-type': 'application/x-www-form-urlencoded' },
})
const appDeliveries = () => rcv.received.filter((r) => r.path === '/app')
const typeOf = (r: { body: unknown }) => (r.body as { type?: string }).type

const dev = createOwner(db)
const acct = createAccount(db)
const stranger = createAccount(db)
db.transaction(() => credit(db, acct.ownerId, 5000, 'top_up', null, 'test'))()
const app = createTestApp(db, dev, {
  pricing: 'recurring', price: 1000, scopes: ['orders:read'], webhookUrl: `${rcv.url}/app`, webhookEvents: ['order.created'],
})
// What the consent does: install, issue tokens, and the install-time work in the same transaction.
const { installation, accessToken, refreshToken } = db.transaction(() => {
  const r = installTestApp(db, app.id, acct.ownerId)
  chargeAtInstall(db, r.installation, new Date())
  return r
})()
db.prepare('INSERT INTO app_session_tokens (jti, installation_id, owner_session_id, issued_at, expires_at) VALUES (?, ?, NULL, ?, ?)')
  .run('jti-test', installation.id, nowIso(), nowIso(Date.now() + 60_000))
const order = (a: typeof acct) => postOrder(s, a.token, a.storeId, { type: 'takeaway', items: [{ item_id: a.menu.burger.id, quantity: 1 }] })

t.test('while installed: subscribed events reach the app as app deliveries, only from the installing account', async (t) => {
  t.equal(walletBalance(db, acct.ownerId), 4000, 'the first period was charged at install')
  const mine = await order(acct)
  t.equal(mine.status, 200, mine.text)
  const theirs = await order(stranger)
  t.equal(theirs.status, 200, theirs.text)
  await rcv.until(() => appDeliveries().some((r) => typeOf(r) === 'order.created'), 5000, 'order.created app delivery')
  const got = appDeliveries().filter((r) => typeOf(r) === 'order.created')
  t.equal(got.length, 1)
  t.equal(got[0]!.body.data.order_id, mine.body.id, 'the installing account\'s order, not the stranger\'s')
  t.notOk('event' in got[0]!.body, 'app deliveries carry `type` in place of `event`')
  t.doesNotThrow(() => new Webhook(app.webhook_secret).verify(got[0]!.raw, got[0]!.headers), 'signed with the app\'s whsec_ secret')
})

t.test('the app token works before; it cannot uninstall itself', async (t) => {
  t.equal((await usage(accessToken)).status, 200)
  isError(t, await s.req('DELETE', `/apps/installations/${installation.id}`, { token: accessToken }), 403, 'forbidden')
  isError(t, await s.req('DELETE', `/apps/installations/${installation.id}`, { token: stranger.token }), 404, 'not_found', 'another account\'s installation')
  const list = await s.req('GET', '/apps/installations', { token: acct.token })
  t.match(list.body, [{ id: installation.id, app_id: app.id, app_name: app.name, pricing: 'recurring', price: 10, status: 'active' }])
})

t.test('uninstall: tokens revoked at once, signed app.uninstalled, no further charges', async (t) => {
  // The developer moved the webhook URL since: the delivery follows the app's current URL.
  const movedUrl = await s.req('PUT', `/developer/apps/${app.id}`, { token: tokenFor(db, dev, ['*']), body: { webhook_url: `${rcv.url}/moved` } })
  t.equal(movedUrl.status, 200, movedUrl.text)
  const r = await s.req('DELETE', `/apps/installations/${installation.id}`, { token: acct.token })
  t.equal(r.status, 200, r.text)
  t.match(r.body, { id: installation.id, status: 'uninstalled' })

  isError(t, await usage(accessToken), 401, 'unauthenticated', 'the access token is refused at once')
  const rows = db.prepare('SELECT kind, revoked_at FROM app_tokens WHERE installation_id = ?').all(installation.id) as Array<{ kind: string; revoked_at: string | null }>
  t.ok(rows.length >= 2 && rows.every((x) => x.revoked_at !== null), 'every access and refresh token revoked')
  t.ok(refreshToken, 'the refresh token existed')
  t.equal(db.prepare('SELECT COUNT(*) FROM app_session_tokens WHERE installation_id = ? AND revoked_at IS NULL').pluck().get(installation.id), 0, 'session tokens revoked')

  const moved = () => rcv.received.filter((x) => x.path === '/moved' && typeOf(x) === 'app.uninstalled')
  await rcv.until(() => moved().length > 0, 5000, 'app.uninstalled delivered')
  const d = moved()[0]!
  t.equal(appDeliveries().filter((x) => typeOf(x) === 'app.uninstalled').length, 0, 'not to the old URL')
  const verified = new Webhook(app.webhook_secret).verify(d.raw, d.headers) as { type: string; data: Record<string, unknown> }
  t.equal(verified.type, 'app.uninstalled')
  t.match(verified.data, { app_id: app.id, installation_id: installation.id, user_id: acct.ownerId })
  t.notOk('event' in (verified as object))
  t.match(d.headers['webhook-id'], /^msg_/)

  // Not again: the second uninstall is a 404 and sends nothing more.
  isError(t, await s.req('DELETE', `/apps/installations/${installation.id}`, { token: acct.token }), 404, 'not_found')
  t.same((await s.req('GET', '/apps/installations', { token: acct.token })).body, [])

  // No further charges, however far the billing clock goes.
  const later = new Date(Date.now() + 95 * 86_400_000)
  const charged = db.transaction(() => runAppCharges(db, later))().filter((c) => c.installation_id === installation.id)
  t.same(charged, [], 'recurring charges stopped')
  t.equal(walletBalance(db, acct.ownerId), 4000)

  // Events of the account no longer reach the app (the fan-out runs in the order's transaction).
  const after = await order(acct)
  t.equal(after.status, 200)
  const endpointId = db.prepare('SELECT id FROM webhook_endpoints WHERE app_id = ?').pluck().get(app.id)
  t.equal(db.prepare("SELECT COUNT(*) FROM webhook_deliveries WHERE endpoint_id = ? AND event = 'order.created'").pluck().get(endpointId), 1,
    'only the order made while installed')
})

t.test('the app\'s delivery endpoint is not one of the developer\'s endpoints', async (t) => {
  const list = await s.req('GET', '/webhook-endpoints', { token: tokenFor(db, dev, ['*']) })
  t.equal(list.status, 200, list.text)
  t.same(list.body.data ?? list.body, [])
})
