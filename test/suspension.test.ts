/**
 * Suspension (docs/billing.md "Suspension", issue 13 item 4): a suspended account's tokens of every
 * family (owner, staff, storefront, customer, driver) answer 403 `account_suspended`, its public
 * menu, sign-ins and store page say the store is unavailable, its open sockets close (the CLI
 * writes from another process: the server's data_version watcher re-validates them), new sockets
 * are refused, and its data is kept; unsuspending restores everything at once. Other accounts are
 * untouched throughout.
 */
import t from 'tap'
import { startServer, refusal } from './helpers/server.ts'
import { counts, createAccount, createCustomer, createDriver, createStaff, createStorefrontToken, isError, postOrder } from './helpers/fixtures.ts'
import { WsClient, wsBase } from './helpers/ws-client.ts'
import { runCli } from '../src/cli.ts'

const s = await startServer({ RATE_LIMIT_PER_MINUTE: '100000' })
t.teardown(() => s.close())
const db = s.app.svc.db
const a = createAccount(db)
const other = createAccount(db)
const staff = createStaff(db, a.storeId, { role: 'manager', station: 'grill' })
const storefront = createStorefrontToken(db, a.storeId)
const customer = createCustomer(db, a.storeId)
const driver = createDriver(db, a.ownerId, a.storeId)
const env = { DB_PATH: s.dbPath, LOG_LEVEL: 'silent' }
const cli = (...args: string[]) => JSON.parse(runCli([...args, '--json'], env).out)

/** One authenticated call per token family, and the public routes of the store. */
const calls = () => ({
  owner: s.req('GET', `/restaurants/${a.storeId}/menu`, { token: a.token }),
  staff: s.req('GET', '/staff/me', { token: staff.token }),
  storefront: s.req('GET', '/storefront/menu', { headers: { 'x-storefront-token': storefront } }),
  customer: s.req('GET', '/customer/me', { token: customer.token }),
  driver: s.req('GET', '/driver/me', { token: driver.token }),
  'public menu': s.req('GET', `/menu/${a.storeId}`),
  'customer sign-in': s.req('POST', `/restaurants/${a.storeId}/customer/login`, { body: { email: customer.email, password: customer.password, device: 'phone' } }),
})
const all = async () => Object.fromEntries(await Promise.all(Object.entries(calls()).map(async ([k, p]) => [k, await p] as const)))

t.test('suspend: every family 403, public routes unavailable, sockets closed, data kept; unsuspend restores', async (t) => {
  for (const [family, r] of Object.entries(await all())) t.equal(r.status, 200, `${family} works before`)
  const kds = await WsClient.open(`${wsBase(s)}/ws/kds`, { token: staff.token })
  await kds.next((f) => f.type === 'snapshot')
  const drv = await WsClient.open(`${wsBase(s)}/ws/driver`, { token: driver.token })
  const otherKds = await WsClient.open(`${wsBase(s)}/ws/kds`, { token: createStaff(db, other.storeId, { role: 'kitchen' }).token })
  const order = await postOrder(s, a.token, a.storeId, { type: 'takeaway', items: [{ item_id: a.menu.fries, quantity: 1 }] })
  t.equal(order.status, 200)
  const trackToken = order.body.track_token as string
  t.equal((await s.req('GET', `/track/${trackToken}`)).status, 200, 'tracking works before')
  const before = counts(db)

  t.match(cli('account', 'suspend', '--owner', String(a.ownerId), '--reason', 'unpaid'), { owner_id: a.ownerId, suspended: true, reason: 'unpaid', changed: true })
  t.match(await kds.closedWithin(5000), { code: 4003, reason: 'account_suspended' }, 'the kitchen screen closes')
  t.match(await drv.closedWithin(5000), { code: 4003, reason: 'account_suspended' }, 'the driver socket closes')

  const after = await all()
  for (const family of ['owner', 'staff', 'storefront', 'customer', 'driver']) isError(t, after[family]!, 403, 'account_suspended', family)
  for (const route of ['public menu', 'customer sign-in']) {
    isError(t, after[route]!, 403, 'account_suspended', route)
    t.equal(after[route]!.body.message, 'This store is unavailable.')
  }
  const page = await s.req('GET', `${s.site}/s/${a.slug}`)
  t.equal(page.status, 403)
  t.match(page.text, /This store is unavailable/, 'the store page says so')
  // Tracking is a public door of the store too: the API, the page and the socket say it is unavailable.
  const track = await s.req('GET', `/track/${trackToken}`)
  isError(t, track, 403, 'account_suspended', 'tracking')
  t.equal(track.body.message, 'This store is unavailable.')
  const trackPage = await s.req('GET', `${s.site}/t/${trackToken}`)
  t.equal(trackPage.status, 403)
  t.match(trackPage.text, /This store is unavailable/, 'the tracking page says so')
  t.match(await refusal(WsClient.open(`${wsBase(s)}/ws/track/${trackToken}`)), { status: 403, body: { code: 'forbidden', reason: 'account_suspended' } }, 'the tracking socket is refused')
  isError(t, await s.req('GET', '/track/not-a-token'), 404, 'not_found', 'an unknown token is still 404')
  t.match(await refusal(WsClient.open(`${wsBase(s)}/ws/kds`, { token: staff.token })), { status: 403, body: { code: 'forbidden', reason: 'account_suspended' } }, 'a new socket is refused')
  t.equal((await s.req('GET', `/restaurants/${other.storeId}/menu`, { token: other.token })).status, 200, 'another account is untouched')
  t.ok(await otherKds.none(() => false, 100) && (await Promise.race([otherKds.closed.then(() => 'closed'), Promise.resolve('open')])) === 'open', 'its sockets stay open')
  t.same(counts(db), before, 'the data is kept')
  t.match(cli('account', 'suspend', '--owner', String(a.ownerId)), { suspended: true, changed: false }, 'suspending twice changes nothing')

  t.match(cli('account', 'unsuspend', '--owner', String(a.ownerId)), { suspended: false, changed: true })
  for (const [family, r] of Object.entries(await all())) t.equal(r.status, 200, `${family} works again at once`)
  t.equal((await s.req('GET', `${s.site}/s/${a.slug}`)).status, 200)
  t.equal((await s.req('GET', `/track/${trackToken}`)).status, 200, 'tracking works again')
  t.equal((await s.req('GET', `${s.site}/t/${trackToken}`)).status, 200)
  const again = await WsClient.open(`${wsBase(s)}/ws/kds`, { token: staff.token })
  await again.next((f) => f.type === 'snapshot')
  await again.close()
  await otherKds.close()
})

t.test('the CLI refuses bad input', async (t) => {
  t.throws(() => runCli(['account', 'suspend', '--owner', '999999'], env), /no owner/)
  t.throws(() => runCli(['account', 'suspend'], env), /--owner/)
})
