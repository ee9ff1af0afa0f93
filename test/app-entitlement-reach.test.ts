/**
 * "The account lacks `apps`" means the same everywhere an installed app reaches, not only on the
 * API (issue 31 item 3 follow-ups; docs/apps.md "When the plan lacks apps"). With the operator's CLI
 * revoking and granting `apps` from another process, apps installed through the real consent page
 * and oauth4webapi as the app's OAuth client:
 *
 * - the token address refuses both grants (`invalid_grant`, details naming the feature) without
 *   spending the refresh token, and the consent page installs nothing; the grant back restores the
 *   installation as it was, the same refresh token included;
 * - the app's webhook URL (a real receiver) gets none of the account's events meanwhile, and not
 *   later either (dropped, not held), while another account's events keep reaching it; the
 *   `entitlement.changed` that grants `apps` back tells the app;
 * - recurring periods that come due meanwhile are not charged (`dispatch billing run --at`), a
 *   period the feature comes back in is charged once, and one that ended without it never is;
 * - the embed page and its session tokens are refused.
 */
import t, { type Test } from 'tap'
import * as oauth from 'oauth4webapi'
import { startServer, request } from './helpers/server.ts'
import { createAccount, isError, postOrder, type Account } from './helpers/fixtures.ts'
import { answerConsent, consentPage, createTestApp, signedIn, type TestAppOpts } from './helpers/apps.ts'
import { startReceiver, type Received } from './helpers/webhook-receiver.ts'
import { dispatchCli } from './helpers/process.ts'

const s = await startServer({ RATE_LIMIT_PER_MINUTE: '100000', WEBHOOK_ALLOW_LOOPBACK: '1', BILLING_CRON: 'off' })
const rcv = await startReceiver()
t.teardown(async () => { await rcv.close(); await s.close() })
const db = s.app.svc.db
const developer = createAccount(db)
const cli = (...args: string[]) => dispatchCli(s, ...args)

const REDIRECT = 'https://app.example/callback'
const as: oauth.AuthorizationServer = {
  issuer: s.site, authorization_endpoint: `${s.site}/oauth/authorize`, token_endpoint: `${s.site}/oauth/token`,
  authorization_response_iss_parameter_supported: true,
}
const insecure = { [oauth.allowInsecureRequests]: true }
const DAY = 86_400_000

/** A published app and the OAuth client that goes with it. */
function publishedApp(opts: TestAppOpts) {
  const app = createTestApp(db, developer.ownerId, { redirectUris: [REDIRECT], ...opts })
  return { app, client: { client_id: app.client_id } as oauth.Client, auth: oauth.ClientSecretPost(app.client_secret) }
}
type Published = ReturnType<typeof publishedApp>

/** An account on the free plan whose `apps` is the operator's grant (so the operator can take it back). */
async function accountWithApps(t: Test): Promise<Account & { who: ReturnType<typeof signedIn> }> {
  const acct = createAccount(db, { plan: 'free' })
  t.match(await cli('entitlement', 'grant', '--owner', String(acct.ownerId), '--feature', 'apps'), { changed: true })
  return { ...acct, who: signedIn(db, acct.ownerId) }
}

const revokeApps = async (t: Test, a: Account) =>
  t.match(await cli('entitlement', 'revoke', '--owner', String(a.ownerId), '--feature', 'apps'), { action: 'revoked', changed: true }, 'the operator revokes apps')
const grantApps = async (t: Test, a: Account) =>
  t.match(await cli('entitlement', 'grant', '--owner', String(a.ownerId), '--feature', 'apps'), { action: 'granted', changed: true }, 'the operator grants apps back')

/** The owner approves on the consent page (PKCE): the authorization response the app receives. */
async function approve(p: Published, who: { cookie: string; csrf: string }) {
  const state = oauth.generateRandomState()
  const verifier = oauth.generateRandomCodeVerifier()
  const r = await answerConsent(s.site, who, {
    response_type: 'code', client_id: p.app.client_id, redirect_uri: REDIRECT, state,
    code_challenge: await oauth.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256',
  }, 'approve')
  if (r.status !== 303) throw new Error(`consent answered ${r.status}: ${await r.text()}`)
  return { params: oauth.validateAuthResponse(as, p.client, new URL(r.headers.get('location')!), state), verifier }
}

/** Redeem an authorization response at the token address. */
const redeem = async (p: Published, code: Awaited<ReturnType<typeof approve>>) =>
  oauth.processAuthorizationCodeResponse(as, p.client, await oauth.authorizationCodeGrantRequest(as, p.client, p.auth, code.params, REDIRECT, code.verifier, insecure))

const refresh = async (p: Published, token: string) =>
  oauth.processRefreshTokenResponse(as, p.client, await oauth.refreshTokenGrantRequest(as, p.client, p.auth, token, insecure))

/** The RFC error body of a refused token request. */
async function tokenError(p: Promise<unknown>): Promise<{ status: number; body: Record<string, unknown> } | 'no error'> {
  try { await p } catch (e) {
    if (e instanceof oauth.ResponseBodyError) return { status: e.status, body: e.cause }
    throw e
  }
  return 'no error'
}

const installations = async (a: Account) => (await s.req('GET', '/apps/installations', { token: a.token })).body as Array<Record<string, any>>

t.test('OAuth: while the plan lacks apps both grants are invalid_grant and the consent page installs nothing; the grant back restores it all', async (t) => {
  const p = publishedApp({ scopes: ['orders:read', 'menu:read'] })
  const a = await accountWithApps(t)
  const tokens = await redeem(p, await approve(p, a.who))
  const orders = `/restaurants/${a.storeId}/orders`
  t.equal((await s.req('GET', orders, { token: tokens.access_token })).status, 200, 'the app works')
  const before = await installations(a)
  // A code issued while the plan had apps, redeemed after it lost them.
  const pending = await approve(p, a.who)

  await revokeApps(t, a)
  const refused = await tokenError(refresh(p, tokens.refresh_token!))
  t.match(refused, { status: 400, body: { error: 'invalid_grant', code: 'invalid_grant', details: { feature: 'apps', plan: 'free' } } }, 'refresh: invalid_grant naming the feature')
  t.match(refused, { body: { error_description: /apps/ } })
  t.match(await tokenError(redeem(p, pending)), { status: 400, body: { error: 'invalid_grant', details: { feature: 'apps' } } }, 'code exchange: invalid_grant naming the feature')

  const q = { response_type: 'code', client_id: p.app.client_id, redirect_uri: REDIRECT, state: 'again' }
  const page = await consentPage(s.site, a.who, q)
  t.equal(page.status, 403, 'the consent page refuses')
  t.match(page.headers.get('content-type'), /^text\/html/, 'as a page')
  const html = await page.text()
  t.match(html, /does not include apps/, 'saying why')
  t.notMatch(html, 'value="approve"', 'without an approve button')
  const answer = await answerConsent(s.site, a.who, q, 'approve')
  t.equal(answer.status, 403, 'approving anyway is refused')
  t.match(answer.headers.get('content-type'), /^text\/html/, 'with a page, not JSON')
  t.match(await answer.text(), /does not include apps/)
  t.same(await installations(a), before, 'the installation is untouched: nothing revoked, nothing re-installed')

  await grantApps(t, a)
  const again = await refresh(p, tokens.refresh_token!)
  t.match(again, { token_type: 'bearer', scope: 'menu:read orders:read' }, 'the same refresh token works again: it was not spent')
  t.equal((await s.req('GET', orders, { token: again.access_token })).status, 200, 'and its access token reads the orders')
  t.equal((await s.req('GET', orders, { token: tokens.access_token })).status, 200, 'the first access token was not revoked either')
})

t.test('webhooks: the account\'s events do not reach the app while the plan lacks apps, nor afterwards (dropped, not held)', async (t) => {
  const path = '/app-hooks'
  const p = publishedApp({ scopes: ['orders:read'], webhookUrl: `${rcv.url}${path}`, webhookEvents: ['order.created', 'entitlement.changed'] })
  const a = await accountWithApps(t)
  const bystander = await accountWithApps(t)
  await approve(p, a.who)
  await approve(p, bystander.who)
  const orderOf = (r: Received) => (r.path === path && (r.body as { type?: string }).type === 'order.created' ? r.body.data.order_id as number : null)
  const reached = (id: number) => rcv.received.some((r) => orderOf(r) === id)
  const order = async (x: Account) => {
    const r = await postOrder(s, x.token, x.storeId, { type: 'takeaway', items: [{ item_id: x.menu.burger.id, quantity: 1 }] })
    t.equal(r.status, 200, r.status === 200 ? 'an order' : r.text)
    return r.body.id as number
  }

  const first = await order(a)
  await rcv.until(() => reached(first), 10_000, 'the first order reaches the app')

  await revokeApps(t, a)
  const meanwhile = await order(a)
  const other = await order(bystander)
  // The bystander's later event reaching the same app endpoint shows the fan-out has passed ours.
  await rcv.until(() => reached(other), 10_000, 'another account\'s order reaches the app')
  await new Promise((r) => setTimeout(r, 300))
  t.notOk(reached(meanwhile), 'an order placed while the plan lacks apps is not delivered')

  await grantApps(t, a)
  const after = await order(a)
  const appsChanges = () => rcv.received.filter((r) => r.path === path && (r.body as { type?: string }).type === 'entitlement.changed'
    && r.body.data.user_id === a.ownerId && r.body.data.feature_key === 'apps').map((r) => r.body.data.action as string)
  await rcv.until(() => reached(after) && appsChanges().length > 0, 10_000, 'orders reach the app again once apps is back')
  t.same(appsChanges(), ['granted'], 'the app hears that apps is back, not that it went (nothing of the account reaches it meanwhile)')
  await new Promise((r) => setTimeout(r, 300))
  t.notOk(reached(meanwhile), 'and the order from meanwhile never does: it was dropped, not held')
  t.equal(rcv.received.filter((r) => orderOf(r) === first).length, 1, 'nothing delivered twice')
})

t.test('recurring charges: not charged for a period that comes due while the plan lacks apps; never twice for one period', async (t) => {
  const p = publishedApp({ pricing: 'recurring', price: 1000 })
  const a = await accountWithApps(t)
  t.match(await cli('wallet', 'top-up', '--owner', String(a.ownerId), '--amount', '100.00'), { balance: '100.00' })
  await approve(p, a.who)
  const [inst] = await installations(a)
  const start = Date.parse(inst!.installed_at)
  const period = (k: number) => new Date(start + k * 30 * DAY).toISOString()
  /** `dispatch billing run --at` in another process: what it did to this installation's periods. */
  const run = async (atMs: number) => {
    const r = await cli('billing', 'run', '--at', new Date(atMs).toISOString())
    return (r.tasks.app_charges as Array<{ installation_id: number; period_start: string; result: string }>)
      .filter((c) => c.installation_id === inst!.id).map((c) => ({ start: new Date(c.period_start).toISOString(), result: c.result }))
  }
  const charged = async () => {
    const w = await s.req('GET', '/wallet', { token: a.token })
    return (w.body.data as Array<{ reason: string; reference: string; amount: number }>).filter((e) => e.reason === 'app_recurring')
      .map((e) => ({ amount: e.amount, period: e.reference.replace(`app_installation:${inst!.id}:period:`, '') })).reverse()
  }
  const periodStarts = async () => (await charged()).map((e) => new Date(e.period).toISOString())
  t.same(await periodStarts(), [period(0)], 'the first period at install')

  await revokeApps(t, a)
  t.same(await run(start + 30 * DAY + 3_600_000), [{ start: period(1), result: 'skipped' }], 'period 1 comes due without apps: skipped')
  t.same(await run(start + 30 * DAY + 7_200_000), [], 'a second run does nothing')
  t.same(await periodStarts(), [period(0)], 'nothing charged')

  await grantApps(t, a)
  t.same(await run(start + 31 * DAY), [{ start: period(1), result: 'charged' }], 'apps is back within period 1: the owner uses the app in it, so it is charged now')
  t.same(await run(start + 31 * DAY + 60_000), [], 'once')

  await revokeApps(t, a)
  t.same(await run(start + 61 * DAY), [{ start: period(2), result: 'skipped' }], 'period 2 comes due without apps')
  await grantApps(t, a)
  t.same(await run(start + 91 * DAY), [{ start: period(3), result: 'charged' }], 'period 2 ended without apps: never charged; period 3 is')
  t.same(await run(start + 91 * DAY), [], 'the same run again charges nothing')
  t.same(await periodStarts(), [period(0), period(1), period(3)], 'three periods paid, one wallet entry each')
  t.ok((await charged()).every((e) => e.amount === -10), 'each at the agreed price')
})

t.test('the embed page and its session tokens are refused while the plan lacks apps, and served again after', async (t) => {
  const p = publishedApp({ embedUrl: 'https://app.example/embedded' })
  const a = await accountWithApps(t)
  await approve(p, a.who)
  const embed = () => fetch(`${s.site}/apps/${p.app.id}/embed`, { redirect: 'manual', headers: { cookie: a.who.cookie } })
  const sessionToken = () => request(`${s.site}/apps/${p.app.id}/session-token`, 'GET', { headers: { cookie: a.who.cookie } })
  t.equal((await embed()).status, 200, 'the page before')
  t.equal((await sessionToken()).status, 200, 'a session token before')

  await revokeApps(t, a)
  const page = await embed()
  t.equal(page.status, 403, 'the page is refused')
  t.match(page.headers.get('content-type'), /^text\/html/)
  const html = await page.text()
  t.match(html, /does not include apps/, 'with the plan\'s message')
  t.notMatch(html, /<iframe/, 'and no frame of the app')
  const token = await sessionToken()
  isError(t, token, 403, 'feature_not_in_plan', 'a session token')
  t.match(token.body, { details: { feature: 'apps' } })
  t.notMatch(token.text, /"token"/, 'no token in it')

  await grantApps(t, a)
  t.equal((await embed()).status, 200, 'the page again')
  t.equal((await sessionToken()).status, 200, 'session tokens again')
})
