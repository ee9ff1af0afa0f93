/**
 * The pure parts of webhooks, without a server: retry back-off with jitter, event patterns, SSRF
 * classification (and the connect-time lookup with a fake resolver), signatures checked against
 * the standardwebhooks package, the endpoint actor's transition, its queue, and the configuration.
 */
import t from 'tap'
import { createHmac } from 'node:crypto'
import type { LookupAddress } from 'node:dns'
import { Webhook } from 'standardwebhooks'
import { MAX_ATTEMPTS, retryDelayMs, verdict } from '../src/domain/webhook-retry.ts'
import { EVENT_FAMILIES, isEventPattern, subscribes } from '../src/domain/webhook-events.ts'
import { checkAddress, checkUrl, guardedLookup, rangeOf, resolvesPublic } from '../src/webhooks/ssrf.ts'
import { newSecret, signedHeaders, signingKey } from '../src/webhooks/signing.ts'
import { deliveryBody, newMessageId, type Pending } from '../src/storage/webhooks.ts'
import { DeliveryQueue } from '../src/actors/webhook-queue.ts'
import { HORIZON_MS, initialState, reduceEndpoint, type Effect, type Policy } from '../src/actors/webhook-endpoint.ts'
import { loadConfig } from '../src/config.ts'
import type { Outcome } from '../src/webhooks/client.ts'

/** The health columns of an endpoint row that has never failed. */
const HEALTHY = { consecutive_failures: 0, failing_since: null, circuit_open_until: null, disabled_at: null, disabled_reason: null }

t.test('back-off: the schedule with ±20 % jitter, 5 attempts in total', async (t) => {
  const sched = [60, 300, 900, 3600]
  t.equal(MAX_ATTEMPTS, 5)
  t.equal(retryDelayMs(1, sched, 0.5), 60_000, 'middle of the jitter range is the scheduled wait')
  t.equal(retryDelayMs(1, sched, 0), 48_000, '-20 %')
  t.equal(retryDelayMs(1, sched, 0.999999), 72_000, '+20 %')
  t.same([1, 2, 3, 4].map((a) => retryDelayMs(a, sched, 0.5)), [60_000, 300_000, 900_000, 3_600_000], 'about 1 min, 5 min, 15 min, 1 h')
  t.equal(retryDelayMs(5, sched, 0.5), null, 'no sixth attempt')
  t.same([1, 2, 3, 4].map((a) => retryDelayMs(a, [2], 0.5)), [2000, 2000, 2000, 2000], 'a short schedule repeats its last wait')
  for (let i = 0; i < 1000; i++) {
    const d = retryDelayMs(2, sched, Math.random())!
    if (d < 240_000 || d > 360_000) t.fail(`jitter out of range: ${d}`)
  }
  t.same(verdict(true, 3, sched, 0.5), { status: 'succeeded' })
  t.same(verdict(false, 4, sched, 0.5), { status: 'pending', retryInMs: 3_600_000 })
  t.same(verdict(false, 5, sched, 0.5), { status: 'failed' })
})

t.test('event patterns: names, "*", family wildcards', async (t) => {
  for (const p of ['*', 'order.created', 'ping', 'subscription.*', 'order.*', 'app.uninstalled', 'subscription.trial_ending']) t.ok(isEventPattern(p), p)
  for (const p of ['', 'order', 'orders.*', '*.*', 'order.*.*', 'order.created ', 'Order.created', 'subscription.*x']) t.notOk(isEventPattern(p), JSON.stringify(p))
  t.ok(EVENT_FAMILIES.includes('subscription') && EVENT_FAMILIES.includes('order'))
  t.ok(subscribes(['*'], 'menu.updated'))
  t.ok(subscribes(new Set(['order.*']), 'order.delivered'))
  t.notOk(subscribes(['order.*'], 'menu.updated'))
  t.ok(subscribes(['menu.updated'], 'menu.updated'))
  t.notOk(subscribes(['*'], 'ping'), 'ping is never matched: it is sent to one endpoint directly')
})

t.test('SSRF: only global unicast addresses (loopback when allowed), mapped IPv6 unwrapped', async (t) => {
  const cases: Array<[string, string]> = [
    ['127.0.0.1', 'loopback'], ['10.1.2.3', 'private'], ['172.20.0.1', 'private'], ['192.168.0.1', 'private'], ['169.254.169.254', 'linkLocal'],
    ['100.64.0.1', 'carrierGradeNat'], ['0.0.0.0', 'unspecified'], ['224.0.0.1', 'multicast'], ['::1', 'loopback'], ['::ffff:127.0.0.1', 'loopback'],
    ['[::ffff:10.0.0.1]', 'private'], ['fe80::1', 'linkLocal'], ['fc00::1', 'uniqueLocal'], ['8.8.8.8', 'unicast'], ['2606:4700::1111', 'unicast'],
  ]
  for (const [ip, range] of cases) t.equal(rangeOf(ip), range, `${ip} is ${range}`)
  t.equal(rangeOf('example.com'), null)
  t.ok(checkAddress('8.8.8.8', false).ok)
  t.notOk(checkAddress('127.0.0.1', false).ok)
  t.ok(checkAddress('127.0.0.1', true).ok, 'loopback when allowed')
  t.ok(checkAddress('::ffff:127.0.0.1', true).ok, 'mapped loopback when allowed')
  t.notOk(checkAddress('10.0.0.1', true).ok, 'private even when loopback is allowed')
  t.equal(checkUrl('https://2130706433/x', false).ok, false, 'decimal form of 127.0.0.1')
  t.equal(checkUrl('https://8.8.8.8/x', false).ok, true)
  t.equal(checkUrl('http://8.8.8.8/x', false).ok, false, 'http refused')
  t.equal(checkUrl('http://localhost:1/x', true).ok, true, 'http to loopback when allowed')
  t.equal(checkUrl('http://example.com/x', true).ok, false, 'http only to loopback')
  t.equal(checkUrl('https://u:p@example.com/', false).ok, false)
})

t.test('SSRF at registration: a name must resolve, and only to public addresses', async (t) => {
  const resolver = (answers: Record<string, string[]>) => async (host: string) => {
    if (!(host in answers)) throw Object.assign(new Error('ENOTFOUND'), { code: 'ENOTFOUND' })
    return answers[host]!
  }
  const r = resolver({ 'hooks.example': ['93.184.216.34', '2606:2800:220:1::1'], 'rebind.example': ['93.184.216.34', '10.0.0.5'], 'meta.example': ['169.254.169.254'], 'empty.example': [] })
  t.ok((await resolvesPublic('hooks.example', false, r)).ok)
  t.notOk((await resolvesPublic('rebind.example', false, r)).ok, 'one internal answer among public ones is enough to refuse')
  t.notOk((await resolvesPublic('meta.example', false, r)).ok)
  t.notOk((await resolvesPublic('empty.example', false, r)).ok)
  t.notOk((await resolvesPublic('nx.example', false, r)).ok, 'a name that does not resolve')
  const slow = () => new Promise<string[]>(() => {})
  t.notOk((await resolvesPublic('slow.example', false, slow, 50)).ok, 'a resolver that never answers times out')
})

t.test('SSRF at connect time: the guarded lookup refuses internal answers and hands back what it checked', async (t) => {
  const fakeDns = (answers: LookupAddress[]) => ((_h: string, _o: unknown, cb: (e: Error | null, a: LookupAddress[]) => void) => cb(null, answers)) as never
  const call = (answers: LookupAddress[], all: boolean, allowLoopback = false) => new Promise<{ err: NodeJS.ErrnoException | null; addr: unknown; family?: number }>((resolve) =>
    guardedLookup(allowLoopback, fakeDns(answers))('h.example', { all }, (err, addr, family) => resolve({ err, addr, family })))
  const pub = { address: '93.184.216.34', family: 4 }
  let r = await call([pub], false)
  t.same([r.err, r.addr, r.family], [null, '93.184.216.34', 4], 'single answer form')
  r = await call([pub, { address: '2606:2800:220:1::1', family: 6 }], true)
  t.same(r.addr, [pub, { address: '2606:2800:220:1::1', family: 6 }], 'all-answers form (autoSelectFamily)')
  r = await call([pub, { address: '127.0.0.1', family: 4 }], true)
  t.equal(r.err?.code, 'EWEBHOOKBLOCKED', 'rebinding to loopback refused')
  r = await call([{ address: '::ffff:169.254.169.254', family: 6 }], false)
  t.equal(r.err?.code, 'EWEBHOOKBLOCKED', 'mapped metadata address refused')
  r = await call([{ address: '127.0.0.1', family: 4 }], false, true)
  t.equal(r.err, null, 'loopback passes when allowed')
})

t.test('signatures: Standard Webhooks v1 (checked by the standardwebhooks package) and the legacy hex HMAC', async (t) => {
  const secret = newSecret()
  t.match(secret, /^whsec_[A-Za-z0-9+/]{43}=$/)
  t.equal(signingKey(secret).length, 32)
  const msgId = newMessageId()
  t.match(msgId, /^msg_[A-Za-z0-9_-]{22}$/)
  t.not(newMessageId(), msgId)
  const body = deliveryBody(msgId, 'order.created', '2026-11-22T20:30:00.000+00:00', '{"order_id":1,"total":"9.50"}')
  t.same(JSON.parse(body), { id: msgId, event: 'order.created', created_at: '2026-11-22T20:30:00.000+00:00', data: { order_id: 1, total: '9.50' } })
  const ts = Math.floor(Date.now() / 1000)
  const h = signedHeaders(signingKey(secret), secret, msgId, 'order.created', ts, body)
  t.same(new Webhook(secret).verify(body, h as unknown as Record<string, string>), JSON.parse(body), 'verifies with the library')
  t.equal(h['webhook-signature'], new Webhook(secret).sign(msgId, new Date(ts * 1000), body), 'byte-identical to the library\'s own signature')
  t.equal(h['x-webhook-signature'], createHmac('sha256', secret).update(body).digest('hex'))
  t.equal(h['x-webhook-event'], 'order.created')
  t.throws(() => new Webhook(newSecret()).verify(body, h as unknown as Record<string, string>), 'another secret fails')
})

t.test('the delivery queue: due ones first in arrival order, retries by due time', async (t) => {
  const q = new DeliveryQueue()
  const p = (id: number, dueAt: number): Pending => ({ id, msgId: `msg_${id}`, event: 'e', body: '{}', attempts: 0, dueAt })
  q.push(p(1, 0), 100)
  q.push(p(2, 500), 100)
  q.push(p(3, 300), 100)
  q.push(p(4, 50), 100)
  t.equal(q.size, 4)
  t.equal(q.nextDueAt, 300)
  t.same([q.shift()?.id, q.shift()?.id, q.shift()], [1, 4, undefined])
  q.promote(400)
  t.same([q.shift()?.id, q.shift()], [3, undefined])
  t.equal(q.nextDueAt, 500)
  const big = new DeliveryQueue()
  const order = Array.from({ length: 3000 }, (_, i) => (i * 7919) % 3000)
  for (const d of order) big.push(p(d, 1000 + d), 0)
  big.promote(10_000)
  const out: number[] = []
  for (let x = big.shift(); x; x = big.shift()) out.push(x.id)
  t.same(out, [...order].sort((a, b) => a - b), 'heap order holds for many entries (and the ready list compacts)')
})

t.test('the endpoint actor transition', async (t) => {
  const policy: Policy = { maxInFlight: 2, window: 4, schedule: [1] }
  const row = { id: 9, owner_id: 1, url: 'https://hooks.example/x', events: '["*"]', secret: newSecret(), from_event_id: 0, paused_at: null, created_at: '', ...HEALTHY }
  const p = (id: number, dueAt = 0): Pending => ({ id, msgId: `msg_${id}`, event: 'e', body: '{}', attempts: 0, dueAt })
  const kinds = (fx: Effect[]) => fx.map((e) => (e.kind === 'send' ? `send ${e.delivery.id}` : e.kind === 'arm' ? `arm ${e.at}` : e.kind === 'record' ? `record ${e.deliveryId} ${e.status}` : e.kind === 'refill' ? `refill ${e.limit}` : e.kind))
  const fail: Outcome = { ok: false, status: 500, error: null, excerpt: 'x', durationMs: 1 }
  const okOut: Outcome = { ok: true, status: 200, error: null, excerpt: '', durationMs: 1 }
  const rand = () => 0.5
  const s = initialState(row)
  const step = (msg: Parameters<typeof reduceEndpoint>[1], now: number) => kinds(reduceEndpoint(s, msg, now, rand, policy))

  t.same(step({ type: 'enqueue', deliveries: [p(1), p(2), p(3)] }, 1000), ['send 1', 'send 2', 'arm null'], 'sends up to maxInFlight')
  t.same(step({ type: 'enqueue', deliveries: [p(1), p(4), p(5), p(6)] }, 1000), ['arm null'], 'known ids are ignored; beyond the window (4) deliveries stay in SQLite')
  t.equal(s.dbDueAt, 0, 'and the actor knows something due is waiting there')
  t.same(step({ type: 'sent', results: [{ deliveryId: 1, outcome: fail }] }, 1100), ['record 1 pending', 'send 3', 'arm 2100'], 'a failure is rescheduled one wait later; the next due one goes out')
  t.same(step({ type: 'sent', results: [{ deliveryId: 2, outcome: okOut }] }, 1200), ['record 2 succeeded', 'send 4', 'refill 7', 'arm 2100'], 'a refill is asked for once the window is half empty')
  t.same(step({ type: 'sent', results: [{ deliveryId: 3, outcome: okOut }] }, 1300), ['record 3 succeeded', 'arm 2100'], 'one refill at a time')
  t.same(step({ type: 'loaded', rows: [p(3), p(4), p(5), p(6)], complete: true, nextDue: null }, 1400), ['send 5', 'arm 2100'],
    'loaded rows are admitted; one in flight and one that settled while the read ran are skipped')
  t.equal(s.dbDueAt, null, 'everything pending is in memory again')
  t.same(step({ type: 'sent', results: [{ deliveryId: 4, outcome: okOut }] }, 1410), ['record 4 succeeded', 'send 6', 'arm 2100'])
  step({ type: 'sent', results: [{ deliveryId: 5, outcome: okOut }] }, 1420)
  t.same(step({ type: 'sent', results: [{ deliveryId: 6, outcome: okOut }] }, 1430), ['record 6 succeeded', 'arm 2100'], 'only the retry of 1 is left, waiting')
  t.same(step({ type: 'set_paused', paused: true }, 1500), ['arm null'], 'paused: no timer')
  t.same(step({ type: 'wake' }, 2200), ['arm null'], 'paused: nothing is sent even when due')
  t.same(step({ type: 'set_paused', paused: false }, 2300), ['send 1', 'arm null'], 'resume sends what is due')
  for (let attempt = 2; attempt <= 5; attempt++) {
    const fx = reduceEndpoint(s, { type: 'sent', results: [{ deliveryId: 1, outcome: fail }] }, 3000 * attempt, rand, policy)
    const rec = fx.find((e) => e.kind === 'record') as Extract<Effect, { kind: 'record' }>
    t.equal(rec.attempt, attempt)
    t.equal(rec.status, attempt < 5 ? 'pending' : 'failed', `attempt ${attempt} → ${rec.status}`)
    if (attempt < 5) t.same(step({ type: 'wake' }, 3000 * attempt + 1001), ['send 1', 'arm null'], 'sent again when the timer fires')
  }
  t.notOk(s.known.has(1), 'a failed delivery leaves memory')
  t.same(step({ type: 'sent', results: [{ deliveryId: 77, outcome: okOut }] }, 99_000), ['arm null'], 'a result for a delivery not in flight here is ignored')
  step({ type: 'enqueue', deliveries: [p(20), p(21), p(22)] }, 100_000)
  t.same(step({ type: 'sent', results: [{ deliveryId: 20, outcome: okOut }, { deliveryId: 21, outcome: fail }] }, 100_100), ['record 20 succeeded', 'record 21 pending', 'send 22', 'arm 101100'],
    'several results in one message: each recorded, then one round of sends')
})

t.test('the endpoint actor keeps far-off retries in SQLite and reads them back shortly before they are due', async (t) => {
  const policy: Policy = { maxInFlight: 1, window: 4, schedule: [60] }
  const row = { id: 3, owner_id: 1, url: 'https://hooks.example/x', events: '["*"]', secret: newSecret(), from_event_id: 0, paused_at: null, created_at: '', ...HEALTHY }
  const s = initialState(row)
  const rand = () => 0.5
  const d: Pending = { id: 1, msgId: 'msg_1', event: 'e', body: '{}', attempts: 0, dueAt: 0 }
  reduceEndpoint(s, { type: 'enqueue', deliveries: [d] }, 0, rand, policy)
  const fx = reduceEndpoint(s, { type: 'sent', results: [{ deliveryId: 1, outcome: { ok: false, status: 503, error: null, excerpt: '', durationMs: 1 } }] }, 1000, rand, policy)
  t.equal(s.known.size, 0, 'a retry a minute away is not held in memory')
  t.equal(s.dbDueAt, 61_000)
  t.same(fx.at(-1), { kind: 'arm', at: 61_000 - HORIZON_MS }, 'the timer is set to read it back half a minute before it is due')
  t.same(reduceEndpoint(s, { type: 'wake' }, 31_000, rand, policy).map((e) => e.kind), ['refill', 'arm'])
  const back = reduceEndpoint(s, { type: 'loaded', rows: [{ ...d, attempts: 1, dueAt: 61_000 }], complete: true, nextDue: null }, 31_050, rand, policy)
  t.same(back, [{ kind: 'arm', at: 61_000 }], 'read back into memory, due at its time')
  t.same(reduceEndpoint(s, { type: 'wake' }, 61_000, rand, policy).map((e) => e.kind), ['send', 'arm'], 'and sent then')
})

t.test('with its retry queue full, the actor does not re-read SQLite on every message', async (t) => {
  const policy: Policy = { maxInFlight: 1, window: 4, schedule: [1] }
  const row = { id: 5, owner_id: 1, url: 'https://hooks.example/x', events: '["*"]', secret: newSecret(), from_event_id: 0, paused_at: null, created_at: '', ...HEALTHY }
  const s = initialState(row)
  const rand = () => 0.5
  const p = (id: number): Pending => ({ id, msgId: `msg_${id}`, event: 'e', body: '{}', attempts: 0, dueAt: 0 })
  const fail: Outcome = { ok: false, status: 500, error: null, excerpt: '', durationMs: 1 }
  reduceEndpoint(s, { type: 'enqueue', deliveries: [p(1), p(2), p(3), p(4)] }, 0, rand, policy)
  for (let i = 1; i <= 4; i++) reduceEndpoint(s, { type: 'sent', results: [{ deliveryId: i, outcome: fail }] }, i, rand, policy)
  t.equal(s.queue.waitingCount, 4, 'four retries waiting: the retry queue is full')
  reduceEndpoint(s, { type: 'enqueue', deliveries: [p(5)] }, 10, rand, policy)
  const fx = reduceEndpoint(s, { type: 'sent', results: [{ deliveryId: 5, outcome: fail }] }, 20, rand, policy)
  t.equal(s.dbDueAt, 1020, 'the fifth retry stays in SQLite')
  t.notOk(fx.some((e) => e.kind === 'refill'), 'no read while the retry queue is more than half full')
  const later = reduceEndpoint(s, { type: 'enqueue', deliveries: [p(6)] }, 30, rand, policy)
  t.same(later.map((e) => e.kind), ['send', 'arm'], 'new work still goes out at once')
})

t.test('a refill that ran before a result was handled does not bring the settled delivery back', async (t) => {
  const row = { id: 4, owner_id: 1, url: 'https://hooks.example/x', events: '["*"]', secret: newSecret(), from_event_id: 0, paused_at: null, created_at: '', ...HEALTHY }
  const policy: Policy = { maxInFlight: 1, window: 2, schedule: [1] }
  const s = initialState(row)
  const rand = () => 0.5
  const p = (id: number): Pending => ({ id, msgId: `msg_${id}`, event: 'e', body: '{}', attempts: 0, dueAt: 0 })
  const ok: Outcome = { ok: true, status: 200, error: null, excerpt: '', durationMs: 1 }
  const kinds = (fx: Effect[]) => fx.map((e) => (e.kind === 'send' ? `send ${e.delivery.id}` : e.kind === 'record' ? `record ${e.deliveryId}` : e.kind))
  reduceEndpoint(s, { type: 'enqueue', deliveries: [p(10), p(11), p(12)] }, 0, rand, policy)
  t.same(kinds(reduceEndpoint(s, { type: 'sent', results: [{ deliveryId: 10, outcome: ok }] }, 1, rand, policy)), ['record 10', 'send 11', 'refill', 'arm'])
  reduceEndpoint(s, { type: 'sent', results: [{ deliveryId: 11, outcome: ok }] }, 2, rand, policy)
  t.same(kinds(reduceEndpoint(s, { type: 'loaded', rows: [p(11), p(12)], complete: true, nextDue: null }, 3, rand, policy)), ['send 12', 'arm'], 'the stale row 11 is skipped')
})

t.test('configuration of webhooks', async (t) => {
  const c = loadConfig({})
  t.same([c.webhookTimeoutMs, c.webhookConcurrency, c.webhookRetrySchedule, c.webhookAllowLoopback], [10_000, 8, [60, 300, 900, 3600], false], 'defaults: 10 s, 8, the spec schedule, loopback off')
  const d = loadConfig({ WEBHOOK_TIMEOUT_MS: '250', WEBHOOK_CONCURRENCY: '2', WEBHOOK_RETRY_SCHEDULE: '1,2,3,4', WEBHOOK_ALLOW_LOOPBACK: '1' })
  t.same([d.webhookTimeoutMs, d.webhookConcurrency, d.webhookRetrySchedule, d.webhookAllowLoopback], [250, 2, [1, 2, 3, 4], true])
  t.same(loadConfig({ WEBHOOK_RETRY_SCHEDULE: '0.3' }).webhookRetrySchedule, [0.3], 'fractions of a second (tests)')
  for (const env of [{ WEBHOOK_RETRY_SCHEDULE: '1,2,3,4,5' }, { WEBHOOK_RETRY_SCHEDULE: '1,,2' }, { WEBHOOK_RETRY_SCHEDULE: '-1' }, { WEBHOOK_RETRY_SCHEDULE: 'soon' },
    { WEBHOOK_TIMEOUT_MS: '0' }, { WEBHOOK_TIMEOUT_MS: '600000' }, { WEBHOOK_CONCURRENCY: '0' }, { WEBHOOK_CONCURRENCY: 'many' }]) {
    const name = Object.keys(env)[0]!
    t.throws(() => loadConfig(env), new RegExp(name), `${name}=${Object.values(env)[0]} refused`)
  }
})
