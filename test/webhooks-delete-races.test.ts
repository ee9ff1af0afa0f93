/**
 * Requests racing a webhook endpoint's delete (issue 10 #5): DELETE, ping, pause, resume and
 * re-queue all go through the endpoint's actor, so whatever is queued behind the delete answers 404
 * `not_found` from the actor itself — never a 500 (the old `FOREIGN KEY constraint failed` of a
 * ping inserted after the delete, or the `TypeError` of a pause that re-read a deleted row), and
 * never a hang. Each round fires the requests in the same tick, in a different order.
 *
 * Every request carries AbortSignal.timeout(REQUEST_BOUND_MS): an unanswered request fails the test
 * through the abort, not through a timing assertion.
 */
import t, { type Test } from 'tap'
import { startServer } from './helpers/server.ts'
import { createAccount } from './helpers/fixtures.ts'
import { createEndpoint, startReceiver } from './helpers/webhook-receiver.ts'

/** A failure bound, under the actor query timeout (10 s), so a hang shows as an abort. */
const REQUEST_BOUND_MS = 8000
const ROUNDS = 24

const s = await startServer({ WEBHOOK_ALLOW_LOOPBACK: '1', RATE_LIMIT_PER_MINUTE: '1000000', WEBHOOK_MAX_ENDPOINTS: '1000' })
const rcv = await startReceiver()
t.teardown(async () => { await s.close(); await rcv.close() })
const db = s.app.svc.db
const acct = createAccount(db)

interface Answer { what: string; status: number; body: any }

async function call(what: string, method: string, path: string): Promise<Answer> {
  const r = await fetch(s.base + path, { method, headers: { authorization: `Bearer ${acct.token}` }, signal: AbortSignal.timeout(REQUEST_BOUND_MS) })
  const text = await r.text()
  return { what, status: r.status, body: text ? JSON.parse(text) : null }
}

const ALLOWED: Record<string, number[]> = {
  delete: [204, 404], ping: [200, 404], pause: [200, 404], resume: [200, 404], requeue: [200, 404], get: [200, 404], log: [200, 404],
}

function check(t: Test, answers: Answer[]): void {
  for (const a of answers) {
    const ok = ALLOWED[a.what]!.includes(a.status)
    t.ok(ok, `${a.what} answered ${a.status}`, ok ? {} : { body: a.body })
    if (a.status === 404) t.equal(a.body?.code, 'not_found', `${a.what}: 404 in the error envelope`)
  }
}

t.test('DELETE racing ping, pause, resume and re-queue of the same endpoint: 2xx or 404, never 500 or a hang', async (t) => {
  let behind = 0
  for (let round = 0; round < ROUNDS; round++) {
    const ep = await createEndpoint(s.base, acct.token, `${rcv.url}/race/${round}`, ['*'])
    const first = await call('ping', 'POST', `/webhook-endpoints/${ep.id}/ping`)
    t.equal(first.status, 200, 'a delivery to re-queue')
    const base = `/webhook-endpoints/${ep.id}`
    const others = [
      () => call('ping', 'POST', `${base}/ping`),
      () => call('pause', 'POST', `${base}/pause`),
      () => call('resume', 'POST', `${base}/resume`),
      () => call('requeue', 'POST', `${base}/deliveries/${first.body.id}/requeue`),
      () => call('ping', 'POST', `${base}/ping`),
      () => call('get', 'GET', base),
      () => call('log', 'GET', `${base}/deliveries`),
    ]
    // The delete goes first in most rounds (the rest queue behind it), in the middle or last in the others.
    const at = round % 3 === 0 ? 0 : round % 3 === 1 ? 3 : others.length
    const order = [...others.slice(0, at), () => call('delete', 'DELETE', base), ...others.slice(at)]
    const answers = await Promise.all(order.map((f) => f()))
    check(t, answers)
    t.equal(answers.filter((a) => a.what === 'delete')[0]!.status, 204, 'the delete itself succeeds')
    behind += answers.filter((a) => a.status === 404).length
    const after = await call('get', 'GET', base)
    t.equal(after.status, 404, 'the endpoint is gone')
    t.equal(db.prepare('SELECT COUNT(*) FROM webhook_deliveries WHERE endpoint_id = ?').pluck().get(ep.id), 0, 'and no delivery of it was written after the delete')
    // A change sent after the delete is a 404 from the route; the actor answers the same.
    const late = await Promise.all([call('ping', 'POST', `${base}/ping`), call('pause', 'POST', `${base}/pause`), call('delete', 'DELETE', base)])
    check(t, late)
    t.ok(late.every((a) => a.status === 404), 'later changes are 404')
  }
  t.ok(behind > 0, `${behind} requests were queued behind a delete and answered 404`)
})

t.test('two deletes of one endpoint: one 204, one 404', async (t) => {
  const ep = await createEndpoint(s.base, acct.token, `${rcv.url}/twice`, ['*'])
  const answers = await Promise.all([call('delete', 'DELETE', `/webhook-endpoints/${ep.id}`), call('delete', 'DELETE', `/webhook-endpoints/${ep.id}`)])
  check(t, answers)
  t.same(answers.map((a) => a.status).sort(), [204, 404])
})
