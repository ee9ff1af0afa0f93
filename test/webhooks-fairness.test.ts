/**
 * One account's webhooks cannot take the server (issue 10 #6; docs/webhooks.md "Fairness"):
 * - at most WEBHOOK_MAX_ENDPOINTS endpoints per account: one more is 422 `quota_exceeded`, also
 *   when the creates race;
 * - at most WEBHOOK_ACCOUNT_CONCURRENCY requests in flight per account across its endpoints (each
 *   endpoint could open WEBHOOK_CONCURRENCY), while another account's endpoint still gets its
 *   deliveries;
 * - at most WEBHOOK_GLOBAL_CONCURRENCY in flight for the server, and a waiting account gets the
 *   next permit that frees rather than the account that already holds them all.
 * Small configured numbers; every wait is for an observable event, with a failure bound.
 */
import t from 'tap'
import { startServer } from './helpers/server.ts'
import { createAccount, isError, postOrder, type Account } from './helpers/fixtures.ts'
import { createEndpoint, startReceiver, type Answer } from './helpers/webhook-receiver.ts'

const BOUND_MS = 15_000
const order = (s: Awaited<ReturnType<typeof startServer>>, a: Account) => postOrder(s, a.token, a.storeId, { type: 'takeaway', items: [{ item_id: a.menu.fries, quantity: 1 }] })

t.test('an account has at most WEBHOOK_MAX_ENDPOINTS endpoints; one more is 422 quota_exceeded, racing creates included', async (t) => {
  const s = await startServer({ WEBHOOK_ALLOW_LOOPBACK: '1', RATE_LIMIT_PER_MINUTE: '1000000', WEBHOOK_MAX_ENDPOINTS: '3' })
  const rcv = await startReceiver()
  t.teardown(async () => { await rcv.close(); await s.close() })
  const a = createAccount(s.app.svc.db)
  const b = createAccount(s.app.svc.db)
  const create = (acct: Account) => s.req('POST', '/webhook-endpoints', { token: acct.token, body: { url: `${rcv.url}/hook`, events: ['*'] } })
  const first = []
  for (let i = 0; i < 3; i++) first.push(await create(a))
  t.same(first.map((r) => r.status), [201, 201, 201])
  const over = await create(a)
  isError(t, over, 422, 'quota_exceeded', 'the fourth endpoint')
  t.match(over.body.message, /3/, `the message names the limit: ${over.body.message}`)
  t.equal((await create(b)).status, 201, 'another account has its own allowance')
  t.equal((await s.req('DELETE', `/webhook-endpoints/${first[0]!.body.id}`, { token: a.token })).status, 204)
  t.equal((await create(a)).status, 201, 'a delete makes room again')

  const c = createAccount(s.app.svc.db)
  const racing = await Promise.all(Array.from({ length: 8 }, () => create(c)))
  t.equal(racing.filter((r) => r.status === 201).length, 3, 'eight concurrent creates: exactly three succeed')
  for (const r of racing.filter((r) => r.status !== 201)) isError(t, r, 422, 'quota_exceeded', 'a racing create over the limit')
  t.equal(s.app.svc.db.prepare('SELECT COUNT(*) FROM webhook_endpoints WHERE owner_id = ?').pluck().get(c.ownerId), 3, 'three were stored')
})

t.test('one account holds at most WEBHOOK_ACCOUNT_CONCURRENCY requests at once; another account still gets its delivery', async (t) => {
  // Each endpoint could open 8; the account may open 2 in all. Attempts never time out during the test.
  const s = await startServer({
    WEBHOOK_ALLOW_LOOPBACK: '1', RATE_LIMIT_PER_MINUTE: '1000000', WEBHOOK_CONCURRENCY: '8', WEBHOOK_ACCOUNT_CONCURRENCY: '2', WEBHOOK_TIMEOUT_MS: '60000',
  })
  const rcv = await startReceiver()
  t.teardown(async () => { await rcv.close(); await s.close() })
  rcv.respond = (r): Answer => (r.path === '/x' ? 'hang' : { status: 200 })
  const x = createAccount(s.app.svc.db)
  const y = createAccount(s.app.svc.db)
  // Three endpoints of X at one hanging URL: the receiver's peak for /x is X's concurrency.
  for (let i = 0; i < 3; i++) await createEndpoint(s.base, x.token, `${rcv.url}/x`, ['order.created'])
  await createEndpoint(s.base, y.token, `${rcv.url}/y`, ['order.created'])
  for (let i = 0; i < 6; i++) t.equal((await order(s, x)).status, 200)
  await rcv.until(() => (rcv.peakOpen.get('/x') ?? 0) >= 2, BOUND_MS, 'X has requests hanging')
  const oy = await order(s, y)
  await rcv.until((all) => all.some((r) => r.path === '/y' && r.body.data.order_id === oy.body.id), BOUND_MS, 'Y\'s delivery arrives while X\'s hang')
  t.equal(rcv.peakOpen.get('/x'), 2, 'X never had more than its budget of 2 requests open (18 deliveries were due)')
  t.equal(rcv.received.filter((r) => r.path === '/x').length, 2, 'the other 16 wait for a permit')
  const pending = s.app.svc.db.prepare("SELECT COUNT(*) FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id WHERE e.owner_id = ? AND d.status = 'pending'").pluck().get(x.ownerId)
  t.equal(pending, 18, 'X\'s deliveries are all still pending, none lost')
})

t.test('the global cap: at most WEBHOOK_GLOBAL_CONCURRENCY at once, and a waiting account gets the next free permit', async (t) => {
  const s = await startServer({
    WEBHOOK_ALLOW_LOOPBACK: '1', RATE_LIMIT_PER_MINUTE: '1000000', WEBHOOK_CONCURRENCY: '8', WEBHOOK_ACCOUNT_CONCURRENCY: '8', WEBHOOK_GLOBAL_CONCURRENCY: '2',
  })
  const rcv = await startReceiver()
  t.teardown(async () => { await rcv.close(); await s.close() })
  // X's receiver is slow (every answer takes a while), Y's is quick.
  rcv.respond = (r): Answer => (r.path === '/x' ? { status: 200, delayMs: 300 } : { status: 200 })
  const x = createAccount(s.app.svc.db)
  const y = createAccount(s.app.svc.db)
  for (let i = 0; i < 3; i++) await createEndpoint(s.base, x.token, `${rcv.url}/x`, ['order.created'])
  await createEndpoint(s.base, y.token, `${rcv.url}/y`, ['order.created'])
  for (let i = 0; i < 4; i++) t.equal((await order(s, x)).status, 200)
  await rcv.until(() => (rcv.peakOpen.get('/x') ?? 0) >= 2, BOUND_MS, 'X holds both permits')
  const oy = await order(s, y)
  await rcv.until((all) => all.some((r) => r.path === '/y' && r.body.data.order_id === oy.body.id), BOUND_MS, 'Y\'s delivery arrives')
  await rcv.until((all) => all.filter((r) => r.path === '/x').length >= 12, BOUND_MS, 'all of X\'s deliveries arrive')
  t.equal(rcv.peakOpenAll, 2, 'never more than 2 requests open at once, all accounts together')
  // X had 12 deliveries queued when Y's arrived; Y was served at the first release, not after X's queue.
  const yAt = rcv.received.findIndex((r) => r.path === '/y')
  t.ok(yAt <= 3, `Y's delivery was request #${yAt + 1} of ${rcv.received.length}: it got one of the first permits X released`)
})
