/**
 * Retries and isolation (api-v1 §6 rules 1–3, §8): a 500 or a timeout is retried with the same
 * webhook-id on the (shortened) schedule, at most 5 attempts in total, then the delivery is
 * failed; a slow endpoint holds at most WEBHOOK_CONCURRENCY requests while another endpoint gets
 * everything; redirects are not followed; long answers are cut to an excerpt. Lower bounds of
 * the schedule are rules and are checked here; how fast deliveries arrive is the webhooks bench's
 * question (bench/webhooks.ts, the half-failing row), never a functional test's: waits below are
 * generous failure bounds only.
 */
import t from 'tap'
import { startServer } from './helpers/server.ts'
import { createAccount, postOrder } from './helpers/fixtures.ts'
import { createEndpoint, sleep, startReceiver, verifyStandard, type Answer, type Received } from './helpers/webhook-receiver.ts'

const SCHEDULE_S = 0.3
// Long enough that a loaded machine (other test files share its two cores) does not time out an answered attempt.
const TIMEOUT_MS = 1500
const CONCURRENCY = 3
const s = await startServer({
  WEBHOOK_ALLOW_LOOPBACK: '1', WEBHOOK_RETRY_SCHEDULE: String(SCHEDULE_S), WEBHOOK_TIMEOUT_MS: String(TIMEOUT_MS),
  WEBHOOK_CONCURRENCY: String(CONCURRENCY), RATE_LIMIT_PER_MINUTE: '100000',
})
const rcv = await startReceiver()
t.teardown(async () => { await s.close(); await rcv.close() })
const acct = createAccount(s.app.svc.db)
const at = (path: string) => rcv.received.filter((r) => r.path === path)
/** Per-path answers; anything else is 200. */
const answers = new Map<string, (r: Received, n: number) => Answer>()
rcv.respond = (r) => answers.get(r.path)?.(r, at(r.path).length) ?? { status: 200, body: 'ok' }

async function pinged(path: string, events: string[] = ['*']) {
  const ep = await createEndpoint(s.base, acct.token, `${rcv.url}${path}`, events)
  const p = await s.req('POST', `/webhook-endpoints/${ep.id}/ping`, { token: acct.token })
  t.equal(p.status, 200)
  return { ep, delivery: p.body as { id: number; webhook_id: string } }
}
const delivery = (epId: number, id: number) => s.req('GET', `/webhook-endpoints/${epId}/deliveries/${id}`, { token: acct.token }).then((r) => r.body)
/** The delivery once its log shows `n` attempts (attempt records are written a moment after the request). */
async function loggedAttempts(epId: number, id: number, n: number) {
  const until = Date.now() + 20_000
  for (;;) {
    const d = await delivery(epId, id)
    if (d.attempts.length >= n || Date.now() > until) return d
    await sleep(20)
  }
}

t.test('500s are retried with the same webhook-id and body, spaced by the schedule, until a 2xx', async (t) => {
  answers.set('/flaky', (_r, n) => (n <= 2 ? { status: 500, body: 'boom' } : { status: 204 }))
  const { ep, delivery: d } = await pinged('/flaky')
  await rcv.until(() => at('/flaky').length >= 3, 20_000, 'three attempts')
  const got = at('/flaky')
  t.ok(got.every((r) => r.headers['webhook-id'] === d.webhook_id), 'every attempt carries the same webhook-id')
  t.ok(got.every((r) => r.raw === got[0]!.raw), 'and the same body')
  t.ok(got.every((r) => verifyStandard(ep.secret, r)), 'each attempt is signed (with its own timestamp)')
  for (let i = 1; i < got.length; i++) {
    const gap = got[i]!.at - got[i - 1]!.at
    t.ok(gap >= SCHEDULE_S * 1000 * 0.8 - 20, `attempt ${i + 1} waited ${gap} ms (schedule ${SCHEDULE_S * 1000} ms ± 20 % jitter)`)
  }
  const log = await loggedAttempts(ep.id, d.id, 3)
  t.match(log, { status: 'succeeded', attempt_count: 3, next_attempt_at: null })
  t.same(log.attempts.map((a: { attempt: number; http_status: number }) => [a.attempt, a.http_status]), [[1, 500], [2, 500], [3, 204]], 'every attempt logged with its number and status')
  t.equal(log.attempts[0].response_excerpt, 'boom', 'with a response excerpt')
  await sleep(SCHEDULE_S * 1000 * 2)
  t.equal(at('/flaky').length, 3, 'nothing more after the success')
})

t.test('a timeout is a failure: the attempt is logged as such and retried with the same id', async (t) => {
  answers.set('/slow-once', (_r, n) => (n === 1 ? 'hang' : { status: 200, body: 'late but fine' }))
  const { ep, delivery: d } = await pinged('/slow-once')
  await rcv.until(() => at('/slow-once').length >= 2, 20_000, 'retry after the timeout')
  t.same(at('/slow-once').map((r) => r.headers['webhook-id']), [d.webhook_id, d.webhook_id])
  t.ok(at('/slow-once')[1]!.at - at('/slow-once')[0]!.at >= TIMEOUT_MS, 'the first attempt was given up after the time limit')
  const log = await loggedAttempts(ep.id, d.id, 2)
  t.match(log, { status: 'succeeded', attempt_count: 2 })
  t.match(log.attempts[0], { attempt: 1, http_status: null, error: 'timeout' })
  t.ok(log.attempts[0].duration_ms >= TIMEOUT_MS - 20, `given up only after the time limit (${log.attempts[0].duration_ms} ms)`)
  t.match(log.attempts[1], { attempt: 2, http_status: 200, response_excerpt: 'late but fine' })
})

t.test('at most 5 attempts, then the delivery is failed', async (t) => {
  answers.set('/down', () => ({ status: 500, body: 'down' }))
  const { ep, delivery: d } = await pinged('/down')
  await rcv.until(() => at('/down').length >= 5, 30_000, 'five attempts')
  await sleep(SCHEDULE_S * 1000 * 3)
  t.equal(at('/down').length, 5, 'exactly 5 attempts in total')
  t.ok(at('/down').every((r) => r.headers['webhook-id'] === d.webhook_id), 'all with the same id')
  const log = await loggedAttempts(ep.id, d.id, 5)
  t.match(log, { status: 'failed', attempt_count: 5, next_attempt_at: null })
  t.same(log.attempts.map((a: { attempt: number }) => a.attempt), [1, 2, 3, 4, 5])
  const failed = await s.req('GET', `/webhook-endpoints/${ep.id}/deliveries?status=failed`, { token: acct.token })
  t.equal(failed.body.total, 1)
})

t.test('a slow endpoint holds at most WEBHOOK_CONCURRENCY requests while another endpoint gets every event', async (t) => {
  answers.set('/stuck', () => 'hang')
  await createEndpoint(s.base, acct.token, `${rcv.url}/stuck`, ['order.created'])
  await createEndpoint(s.base, acct.token, `${rcv.url}/healthy`, ['order.created'])
  const ids: number[] = []
  for (let i = 0; i < 20; i++) {
    const o = await postOrder(s, acct.token, acct.storeId, { type: 'takeaway', items: [{ item_id: acct.menu.fries, quantity: 1 }] })
    ids.push(o.body.id)
  }
  await rcv.until(() => ids.every((id) => at('/healthy').some((r) => r.body.data.order_id === id)), 20_000, 'healthy endpoint gets every order')
  t.pass('the healthy endpoint got all 20 while the other one hangs')
  await rcv.until(() => at('/stuck').length > 0, 20_000, 'the stuck endpoint is being tried')
  t.ok((rcv.peakOpen.get('/stuck') ?? 0) <= CONCURRENCY, `at most ${CONCURRENCY} requests open at once to it (peak ${rcv.peakOpen.get('/stuck')})`)
  answers.set('/stuck', () => ({ status: 200 }))
})

t.test('redirects are not followed; a 3xx is a failed attempt', async (t) => {
  answers.set('/moved', () => ({ status: 307, body: 'moved', headers: { location: `${rcv.url}/elsewhere` } }))
  const { ep, delivery: d } = await pinged('/moved')
  await rcv.until(() => at('/moved').length >= 2, 20_000, 'a retry')
  const log = await loggedAttempts(ep.id, d.id, 1)
  t.equal(log.attempts[0].http_status, 307)
  t.equal(log.status, 'pending', 'not a success')
  t.equal(at('/elsewhere').length, 0, 'the Location was never requested')
  await s.req('DELETE', `/webhook-endpoints/${ep.id}`, { token: acct.token })
})

t.test('a long answer is cut: the logged excerpt is 1 KiB', async (t) => {
  answers.set('/chatty', () => ({ status: 200, body: 'x'.repeat(200_000) }))
  const { ep, delivery: d } = await pinged('/chatty')
  await rcv.until(() => at('/chatty').length >= 1)
  const log = await loggedAttempts(ep.id, d.id, 1)
  t.equal(log.status, 'succeeded')
  t.equal(log.attempts[0].response_excerpt.length, 1024)
})
