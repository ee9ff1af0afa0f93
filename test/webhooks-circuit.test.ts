/**
 * The circuit breaker of a webhook endpoint (issue 10 #6; docs/webhooks.md "Circuit breaker"):
 * after WEBHOOK_CIRCUIT_FAILURES failed attempts in a row the circuit opens and the endpoint shows
 * `state: circuit_open` with its counters; deliveries queued meanwhile stay pending without being
 * attempted; after the cool-down one probe goes out, and a success closes the circuit and lets the
 * rest through; an endpoint failing continuously for WEBHOOK_DISABLE_AFTER_MS is `disabled` (no new
 * deliveries either) until POST /resume re-enables it. Small configured numbers, one server each.
 *
 * No timing assertions: every wait is for an observable state, with a generous failure bound.
 */
import t, { type Test } from 'tap'
import { startServer, type TestServer } from './helpers/server.ts'
import { createAccount, postOrder, type Account } from './helpers/fixtures.ts'
import { createEndpoint, startReceiver, type Receiver } from './helpers/webhook-receiver.ts'

const BOUND_MS = 15_000

async function setup(t: Test, env: Record<string, string>): Promise<{ s: TestServer; rcv: Receiver; acct: Account; healthy: Set<string> }> {
  const s = await startServer({ WEBHOOK_ALLOW_LOOPBACK: '1', RATE_LIMIT_PER_MINUTE: '1000000', ...env })
  const rcv = await startReceiver()
  t.teardown(async () => { await rcv.close(); await s.close() })
  // Paths answer 500 unless listed as healthy.
  const healthy = new Set<string>()
  rcv.respond = (r) => (healthy.has(r.path) ? { status: 200, body: 'ok' } : { status: 500, body: 'down' })
  return { s, rcv, acct: createAccount(s.app.svc.db), healthy }
}

/** Poll `read` until `ok` holds; fails after BOUND_MS (a failure bound, not a timing assertion). */
async function until<T>(read: () => Promise<T>, ok: (v: T) => boolean, what: string): Promise<T> {
  const end = Date.now() + BOUND_MS
  for (;;) {
    const v = await read()
    if (ok(v)) return v
    if (Date.now() > end) throw new Error(`${what}: not reached within ${BOUND_MS} ms; last: ${JSON.stringify(v)}`)
    await new Promise((r) => setTimeout(r, 20))
  }
}

const endpoint = (s: TestServer, a: Account, id: number) => s.req('GET', `/webhook-endpoints/${id}`, { token: a.token }).then((r) => r.body)
const ping = async (s: TestServer, a: Account, id: number) => {
  const r = await s.req('POST', `/webhook-endpoints/${id}/ping`, { token: a.token })
  if (r.status !== 200) throw new Error(`ping: ${r.status} ${r.text}`)
  return r.body as { id: number; webhook_id: string }
}
const deliveries = (s: TestServer, a: Account, id: number, query = '') =>
  s.req('GET', `/webhook-endpoints/${id}/deliveries${query}`, { token: a.token }).then((r) => r.body as { total: number; data: Array<{ id: number; status: string; attempt_count: number; event: string }> })

t.test('the circuit opens after N consecutive failures, holds later deliveries, shows on the endpoint; resume re-enables it', async (t) => {
  // A long cool-down: no probe during this test. Retries far away: only first attempts happen.
  const { s, rcv, acct, healthy } = await setup(t, { WEBHOOK_CIRCUIT_FAILURES: '3', WEBHOOK_CIRCUIT_COOLDOWN_MS: '600000', WEBHOOK_RETRY_SCHEDULE: '600' })
  const down = await createEndpoint(s.base, acct.token, `${rcv.url}/down`, ['order.created'])
  const fresh = await endpoint(s, acct, down.id)
  t.match(fresh, { state: 'active', consecutive_failures: 0, failing_since: null, circuit_open_until: null, disabled_at: null, disabled_reason: null, paused: false })

  for (let i = 0; i < 3; i++) await ping(s, acct, down.id)
  const open = await until(() => endpoint(s, acct, down.id), (e) => e.state === 'circuit_open', 'circuit open')
  t.equal(open.consecutive_failures, 3, 'three failures in a row')
  t.match(open.failing_since, /^\d{4}-\d\d-\d\dT/, 'failing_since is set')
  t.ok(Date.parse(open.circuit_open_until) > Date.now(), 'circuit_open_until is when the next probe may go')
  t.equal(open.paused, false, 'not paused: the circuit is the endpoint\'s own state')
  const listed = await s.req('GET', '/webhook-endpoints', { token: acct.token })
  t.equal(listed.body.data.find((e: { id: number }) => e.id === down.id).state, 'circuit_open', 'the list shows it too')
  const attemptsAtOpen = rcv.received.filter((r) => r.path === '/down').length

  // Held: a new delivery to the open endpoint stays pending and is not attempted. The healthy
  // endpoint's delivery of the same order arriving shows the order's fan-out has been sent on.
  const ok = await createEndpoint(s.base, acct.token, `${rcv.url}/ok`, ['order.created'])
  healthy.add('/ok')
  const o = await postOrder(s, acct.token, acct.storeId, { type: 'takeaway', items: [{ item_id: acct.menu.fries, quantity: 1 }] })
  await rcv.until((all) => all.some((r) => r.path === '/ok' && r.body.data.order_id === o.body.id), BOUND_MS, 'the healthy endpoint gets the order')
  const held = await deliveries(s, acct, down.id, '?event=order.created')
  t.equal(held.total, 1, 'the order was queued for the open endpoint')
  t.match(held.data[0], { status: 'pending', attempt_count: 0 }, 'and is held, not attempted')
  t.equal(rcv.received.filter((r) => r.path === '/down').length, attemptsAtOpen, 'nothing more reached the failing receiver')
  t.equal((await endpoint(s, acct, ok.id)).state, 'active', 'the healthy endpoint of the same account is unaffected')

  // Resume: the owner says it is fixed. The circuit closes and held deliveries go out at once.
  healthy.add('/down')
  const resumed = await s.req('POST', `/webhook-endpoints/${down.id}/resume`, { token: acct.token })
  t.equal(resumed.status, 200)
  t.match(resumed.body, { state: 'active', consecutive_failures: 0, failing_since: null, circuit_open_until: null })
  await rcv.until((all) => all.some((r) => r.path === '/down' && r.body.event === 'order.created'), BOUND_MS, 'the held delivery arrives after resume')
  const done = await until(() => deliveries(s, acct, down.id, '?event=order.created'), (d) => d.data[0]?.status === 'succeeded', 'held delivery succeeded')
  t.equal(done.data[0]!.attempt_count, 1, 'its first attempt, after the resume')
  t.equal((await endpoint(s, acct, down.id)).state, 'active')
})

t.test('after the cool-down one probe goes out at a time; a successful probe closes the circuit and the rest follow', async (t) => {
  const { s, rcv, acct, healthy } = await setup(t, { WEBHOOK_CIRCUIT_FAILURES: '2', WEBHOOK_CIRCUIT_COOLDOWN_MS: '150', WEBHOOK_RETRY_SCHEDULE: '600' })
  const ep = await createEndpoint(s.base, acct.token, `${rcv.url}/flaky`, ['order.created'])
  for (let i = 0; i < 2; i++) await ping(s, acct, ep.id)
  await until(() => endpoint(s, acct, ep.id), (e) => e.state === 'circuit_open', 'circuit open')
  const queued: Array<{ id: number; webhook_id: string }> = []
  for (let i = 0; i < 6; i++) queued.push(await ping(s, acct, ep.id))
  // Probes keep failing for a while: each is one delivery, so most of the queue is never tried.
  const after = await until(() => endpoint(s, acct, ep.id), (e) => e.consecutive_failures >= 4, 'two failed probes')
  t.equal(after.state, 'circuit_open', 'a failed probe opens the circuit again')
  const log = await deliveries(s, acct, ep.id)
  t.equal(log.total, 8)
  // Without the breaker all 8 would have been sent at once (retries are far away, 8 ≤ WEBHOOK_CONCURRENCY).
  t.ok(log.data.some((d) => d.attempt_count === 0), `deliveries held behind the circuit were not attempted (${log.data.filter((d) => d.attempt_count === 0).length} of 8)`)
  t.ok((rcv.peakOpen.get('/flaky') ?? 0) <= 2, 'probes go one at a time: never more than the first two attempts in flight at once')

  healthy.add('/flaky')
  const closed = await until(() => endpoint(s, acct, ep.id), (e) => e.state === 'active', 'a probe succeeds and closes the circuit')
  t.equal(closed.consecutive_failures, 0)
  await rcv.until((all) => queued.every((q) => all.some((r) => r.headers['webhook-id'] === q.webhook_id && r.path === '/flaky')), BOUND_MS, 'every held ping arrives')
  t.pass('the held deliveries went out once the circuit closed, without a resume')
})

t.test('continuous failure disables the endpoint: no new deliveries until resume re-enables it', async (t) => {
  const { s, rcv, acct, healthy } = await setup(t, {
    // Retries come due quickly, so the open circuit has deliveries to probe with.
    WEBHOOK_CIRCUIT_FAILURES: '2', WEBHOOK_CIRCUIT_COOLDOWN_MS: '50', WEBHOOK_DISABLE_AFTER_MS: '300', WEBHOOK_RETRY_SCHEDULE: '0.1',
  })
  const dead = await createEndpoint(s.base, acct.token, `${rcv.url}/dead`, ['order.created'])
  const witness = await createEndpoint(s.base, acct.token, `${rcv.url}/witness`, ['order.created'])
  healthy.add('/witness')
  for (let i = 0; i < 3; i++) await ping(s, acct, dead.id)
  const disabled = await until(() => endpoint(s, acct, dead.id), (e) => e.state === 'disabled', 'disabled after continuous failure')
  t.match(disabled.disabled_at, /^\d{4}-\d\d-\d\dT/, 'disabled_at is set')
  t.match(disabled.disabled_reason, /failed/i, `disabled_reason says why: ${disabled.disabled_reason}`)
  t.ok(disabled.consecutive_failures >= 2)
  const seen = rcv.received.filter((r) => r.path === '/dead').length

  // A disabled endpoint gets no new deliveries: the witness (same account, same event) shows the fan-out ran.
  const o = await postOrder(s, acct.token, acct.storeId, { type: 'takeaway', items: [{ item_id: acct.menu.fries, quantity: 1 }] })
  await rcv.until((all) => all.some((r) => r.path === '/witness' && r.body.data.order_id === o.body.id), BOUND_MS, 'the witness gets the order')
  t.equal((await deliveries(s, acct, dead.id, '?event=order.created')).total, 0, 'no delivery was queued for the disabled endpoint')
  t.equal(rcv.received.filter((r) => r.path === '/dead').length, seen, 'and nothing was sent to it')
  t.equal((await endpoint(s, acct, witness.id)).state, 'active')

  healthy.add('/dead')
  const resumed = await s.req('POST', `/webhook-endpoints/${dead.id}/resume`, { token: acct.token })
  t.match(resumed.body, { state: 'active', disabled_at: null, disabled_reason: null, consecutive_failures: 0 })
  const pings = await until(() => deliveries(s, acct, dead.id, '?event=ping'), (d) => d.data.every((x) => x.status === 'succeeded'), 'pings held while disabled go out on resume')
  t.equal(pings.total, 3)
  const o2 = await postOrder(s, acct.token, acct.storeId, { type: 'takeaway', items: [{ item_id: acct.menu.fries, quantity: 1 }] })
  await rcv.until((all) => all.some((r) => r.path === '/dead' && r.body.data.order_id === o2.body.id), BOUND_MS, 'new events reach it again')
  t.pass('re-enabled endpoint gets new events')
})
