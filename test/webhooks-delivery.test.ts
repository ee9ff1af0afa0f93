/**
 * Webhook deliveries as a receiver sees them (api-v1 §6): the format, both signatures (checked with
 * the `standardwebhooks` package and the legacy hex HMAC), event filters, the test ping, pause and
 * resume, the delivery log, and re-queueing with a fresh webhook-id. A real server and a real local
 * HTTP receiver; loopback receivers are allowed by WEBHOOK_ALLOW_LOOPBACK.
 */
import t from 'tap'
import { startServer } from './helpers/server.ts'
import { createAccount, postOrder, isError } from './helpers/fixtures.ts'
import { createEndpoint, legacySignature, sleep, startReceiver, verifyStandard, type Received } from './helpers/webhook-receiver.ts'

const s = await startServer({ WEBHOOK_ALLOW_LOOPBACK: '1', WEBHOOK_RETRY_SCHEDULE: '0.3', RATE_LIMIT_PER_MINUTE: '100000' })
const rcv = await startReceiver()
t.teardown(async () => { await s.close(); await rcv.close() })
const acct = createAccount(s.app.svc.db)
const order = () => postOrder(s, acct.token, acct.storeId, { type: 'takeaway', items: [{ item_id: acct.menu.burger.id, quantity: 2, extras: [acct.menu.burger.cheese] }] })
const at = (path: string) => rcv.received.filter((r) => r.path === path)
const all = await createEndpoint(s.base, acct.token, `${rcv.url}/all`, ['*'])

t.test('a delivery has the spec format and verifies with standardwebhooks and the legacy signature', async (t) => {
  const o = await order()
  t.equal(o.status, 200)
  await rcv.until(() => at('/all').some((r) => r.body.data.order_id === o.body.id), 5000, 'order.created delivered')
  const r = at('/all').find((r) => r.body.data.order_id === o.body.id)!
  t.equal(r.headers['content-type'], 'application/json')
  t.same(Object.keys(r.body), ['id', 'event', 'created_at', 'data'], 'body is {id, event, created_at, data}')
  t.match(r.body.id, /^msg_[\w-]{16,}$/, 'id is msg_-prefixed')
  t.equal(r.headers['webhook-id'], r.body.id, 'webhook-id is the body id')
  t.equal(r.body.event, 'order.created')
  t.equal(r.headers['x-webhook-event'], 'order.created', 'legacy X-Webhook-Event')
  t.match(r.body.created_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/, 'created_at is ISO 8601')
  t.same(r.body.data, { order_id: o.body.id, restaurant_id: acct.storeId, type: 'takeaway', status: 'new', total: '23.00', delivery_fee: '0.00' }, 'order.created data with total (and the delivery fee) as decimal strings')
  const ts = Number(r.headers['webhook-timestamp'])
  t.ok(Number.isInteger(ts) && Math.abs(ts - Date.now() / 1000) < 10, 'webhook-timestamp is Unix seconds, now')
  t.match(r.headers['webhook-signature'], /^v1,[A-Za-z0-9+/]+=*$/, 'webhook-signature is v1,<base64>')
  t.match(all.secret, /^whsec_[A-Za-z0-9+/]+=*$/, 'secret is whsec_ + base64')
  t.same(verifyStandard(all.secret, r), r.body, 'standardwebhooks verifies the delivery')
  t.equal(r.headers['x-webhook-signature'], legacySignature(all.secret, r.raw), 'X-Webhook-Signature is the hex HMAC of the body')
  // The verifier is real: a changed body, another secret or a stale timestamp are refused.
  t.throws(() => verifyStandard(all.secret, { ...r, raw: r.raw.replace('"23.00"', '"0.01"') }), 'a tampered body does not verify')
  const other = await createEndpoint(s.base, acct.token, `${rcv.url}/unused`, ['shift.closed'])
  t.throws(() => verifyStandard(other.secret, r), 'another endpoint\'s secret does not verify')
  t.throws(() => verifyStandard(all.secret, { ...r, headers: { ...r.headers, 'webhook-timestamp': String(ts - 600) } }), 'a replayed old timestamp does not verify')
})

t.test('endpoints receive only the events they subscribed to', async (t) => {
  const menu = await createEndpoint(s.base, acct.token, `${rcv.url}/menu`, ['menu.*'])
  const status = await createEndpoint(s.base, acct.token, `${rcv.url}/status`, ['order.status_changed'])
  t.same(menu.events, ['menu.*'])
  const o = await order()
  const st = await s.req('PUT', `/restaurants/${acct.storeId}/orders/${o.body.id}/status`, { token: acct.token, body: { status: 'preparing' } })
  t.equal(st.status, 200)
  const cat = await s.req('POST', `/restaurants/${acct.storeId}/menu/categories`, { token: acct.token, body: { name: 'Desserts' } })
  t.equal(cat.status, 200)
  await rcv.until(() => at('/menu').length >= 1 && at('/status').length >= 1 && at('/all').filter((r) => r.body.data.order_id === o.body.id || r.body.event === 'menu.updated').length >= 3, 5000, 'filtered deliveries')
  await sleep(300)
  t.same(at('/menu').map((r) => r.body.event), ['menu.updated'], 'menu.* gets only menu.updated')
  t.same(at('/menu')[0]!.body.data, { restaurant_id: acct.storeId, change: 'created', entity: 'category', id: cat.body.id })
  t.same(at('/status').map((r) => r.body.event), ['order.status_changed'], 'an exact name gets only that event')
  t.same(at('/status')[0]!.body.data, { order_id: o.body.id, restaurant_id: acct.storeId, status: 'preparing', previous_status: 'new' })
  t.ok(verifyStandard(status.secret, at('/status')[0]!), 'signed with that endpoint\'s own secret')
  t.equal(at('/unused').length, 0, 'an endpoint subscribed to nothing that happened gets nothing')
})

t.test('the test action sends a ping to that endpoint only, whatever its filter', async (t) => {
  const ep = await createEndpoint(s.base, acct.token, `${rcv.url}/ping-me`, ['reservation.created'])
  const before = rcv.received.length
  const p = await s.req('POST', `/webhook-endpoints/${ep.id}/ping`, { token: acct.token })
  t.equal(p.status, 200)
  t.equal(p.body.event, 'ping')
  t.match(p.body.webhook_id, /^msg_/)
  await rcv.until(() => at('/ping-me').length === 1, 5000, 'ping delivered')
  const r = at('/ping-me')[0]!
  t.equal(r.headers['webhook-id'], p.body.webhook_id, 'the delivery the API answered with')
  t.same(r.body.data, { endpoint_id: ep.id, message: 'Test event from the dispatch server.' })
  t.ok(verifyStandard(ep.secret, r))
  await sleep(200)
  t.equal(rcv.received.slice(before).filter((x) => x.body.event === 'ping').length, 1, 'no other endpoint got a ping')
})

t.test('pause stops delivery and keeps the secret; resume sends what queued up', async (t) => {
  const ep = await createEndpoint(s.base, acct.token, `${rcv.url}/pausable`, ['order.created'])
  const paused = await s.req('POST', `/webhook-endpoints/${ep.id}/pause`, { token: acct.token })
  t.equal(paused.status, 200)
  t.equal(paused.body.paused, true)
  t.type(paused.body.paused_at, 'string')
  t.notOk('secret' in paused.body, 'the secret is never shown again')
  t.equal((await s.req('POST', `/webhook-endpoints/${ep.id}/pause`, { token: acct.token })).status, 200, 'pausing twice is fine')
  const ids: number[] = []
  for (let i = 0; i < 3; i++) ids.push((await order()).body.id)
  await s.req('POST', `/webhook-endpoints/${ep.id}/ping`, { token: acct.token })
  await rcv.until(() => ids.every((id) => at('/all').some((r) => r.body.data.order_id === id)), 5000, 'other endpoints still get them')
  await sleep(700)
  t.equal(at('/pausable').length, 0, 'nothing is sent while paused')
  const log = await s.req('GET', `/webhook-endpoints/${ep.id}/deliveries?status=pending`, { token: acct.token })
  t.equal(log.body.total, 4, 'the events queue up as pending deliveries')
  t.ok(log.body.data.every((d: { attempt_count: number }) => d.attempt_count === 0), 'with no attempt made')
  const resumed = await s.req('POST', `/webhook-endpoints/${ep.id}/resume`, { token: acct.token })
  t.equal(resumed.status, 200)
  t.equal(resumed.body.paused, false)
  t.equal(resumed.body.paused_at, null)
  await rcv.until(() => at('/pausable').length === 4, 5000, 'queued deliveries sent on resume')
  t.same(at('/pausable').filter((r) => r.body.event === 'order.created').map((r) => r.body.data.order_id).sort(), ids.sort(), 'every queued event arrives')
  t.ok(at('/pausable').every((r) => verifyStandard(ep.secret, r)), 'signed with the secret given at creation')
})

t.test('the delivery log lists deliveries with their attempts; a logged delivery can be re-queued with a fresh webhook-id', async (t) => {
  const ep = await createEndpoint(s.base, acct.token, `${rcv.url}/requeue`, ['order.created'])
  let fail = true
  rcv.respond = (r) => (r.path === '/requeue' && fail ? { status: 503, body: 'maintenance' } : { status: 200, body: 'ok' })
  t.teardown(() => { rcv.respond = () => ({ status: 200, body: 'ok' }) })
  const o = await order()
  await rcv.until(() => at('/requeue').length >= 1)
  const first = at('/requeue')[0]!
  await sleep(100)
  const list = await s.req('GET', `/webhook-endpoints/${ep.id}/deliveries`, { token: acct.token })
  t.equal(list.status, 200)
  t.match(list.body, { current_page: 1, per_page: 20, total: 1 })
  const d = list.body.data[0]
  t.match(d, { webhook_id: first.body.id, event: 'order.created', status: 'pending', attempt_count: 1, requeued_from: null, payload: first.body })
  t.match(d.attempts[0], { attempt: 1, http_status: 503, error: null, response_excerpt: 'maintenance' })
  t.type(d.attempts[0].duration_ms, 'number')
  t.type(d.next_attempt_at, 'string', 'the retry time is shown')
  fail = false
  await rcv.until(() => at('/requeue').length >= 2, 5000, 'retry')
  await sleep(100)
  const one = await s.req('GET', `/webhook-endpoints/${ep.id}/deliveries/${d.id}`, { token: acct.token })
  t.match(one.body, { status: 'succeeded', attempt_count: 2, next_attempt_at: null })
  t.same(one.body.attempts.map((a: { http_status: number }) => a.http_status), [503, 200])

  const rq = await s.req('POST', `/webhook-endpoints/${ep.id}/deliveries/${d.id}/requeue`, { token: acct.token })
  t.equal(rq.status, 200)
  t.not(rq.body.webhook_id, d.webhook_id, 'a fresh webhook-id')
  t.match(rq.body, { event: 'order.created', requeued_from: d.id, attempt_count: 0 })
  t.same(rq.body.payload.data, first.body.data, 'same data')
  t.equal(rq.body.payload.created_at, first.body.created_at, 'same event time')
  await rcv.until(() => at('/requeue').some((r: Received) => r.headers['webhook-id'] === rq.body.webhook_id), 5000, 're-queued delivery')
  const again = at('/requeue').find((r) => r.headers['webhook-id'] === rq.body.webhook_id)!
  t.equal(again.body.id, rq.body.webhook_id)
  t.same(again.body.data, { ...first.body.data, order_id: o.body.id })
  t.ok(verifyStandard(ep.secret, again))
  const orig = await s.req('GET', `/webhook-endpoints/${ep.id}/deliveries/${d.id}`, { token: acct.token })
  t.match(orig.body, { status: 'succeeded', attempt_count: 2 }, 'the original is left as it was')
  const filtered = await s.req('GET', `/webhook-endpoints/${ep.id}/deliveries?status=failed`, { token: acct.token })
  t.equal(filtered.body.total, 0, 'status filter')
  const byEvent = await s.req('GET', `/webhook-endpoints/${ep.id}/deliveries?event=order.created`, { token: acct.token })
  t.equal(byEvent.body.total, 2, 'event filter')
  isError(t, await s.req('POST', `/webhook-endpoints/${ep.id}/deliveries/999999/requeue`, { token: acct.token }), 404, 'not_found', 'unknown delivery')
  isError(t, await s.req('POST', `/webhook-endpoints/${all.id}/deliveries/${d.id}/requeue`, { token: acct.token }), 404, 'not_found', 'another endpoint\'s delivery')
  isError(t, await s.req('GET', `/webhook-endpoints/${ep.id}/deliveries?status=lost`, { token: acct.token }), 422, 'validation_failed', 'unknown status filter')
})

t.test('deleting an endpoint stops its deliveries', async (t) => {
  const ep = await createEndpoint(s.base, acct.token, `${rcv.url}/deleted`, ['*'])
  const del = await s.req('DELETE', `/webhook-endpoints/${ep.id}`, { token: acct.token })
  t.equal(del.status, 204)
  t.equal(del.text, '')
  isError(t, await s.req('GET', `/webhook-endpoints/${ep.id}`, { token: acct.token }), 404, 'not_found')
  isError(t, await s.req('DELETE', `/webhook-endpoints/${ep.id}`, { token: acct.token }), 404, 'not_found', 'deleting twice')
  const o = await order()
  await rcv.until(() => at('/all').some((r) => r.body.data.order_id === o.body.id))
  await sleep(300)
  t.equal(at('/deleted').length, 0)
})
