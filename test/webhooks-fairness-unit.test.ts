/**
 * The pure parts of webhook fairness (issue 10 #6; docs/webhooks.md "Fairness", "Circuit breaker"),
 * without a server: the circuit breaker's transitions, the endpoint actor's transition with a
 * circuit and a budget, the account/global permit budget, the cached DNS lookup, and the fan-out's
 * bound on delivery rows per transaction.
 */
import t from 'tap'
import type { LookupAddress } from 'node:dns'
import { afterAttempt, attemptsAllowed, closedCircuit, cooldown, MAX_COOLDOWN_FACTOR, stateName, type CircuitPolicy } from '../src/domain/webhook-circuit.ts'
import { initialState, reduceEndpoint, type Effect, type Policy } from '../src/actors/webhook-endpoint.ts'
import { DeliveryBudget } from '../src/webhooks/budget.ts'
import { cachedLookup } from '../src/webhooks/dns-cache.ts'
import { newSecret } from '../src/webhooks/signing.ts'
import { WebhookStore, type Pending } from '../src/storage/webhooks.ts'
import { openDb, nowIso } from '../src/storage/db.ts'
import type { Outcome } from '../src/webhooks/client.ts'

const CP: CircuitPolicy = { failures: 3, cooldownMs: 1000, disableAfterMs: 60_000 }

t.test('the circuit: opens after N failures in a row, one probe after the cool-down, doubling, disabled after the period', async (t) => {
  let c = closedCircuit()
  t.equal(attemptsAllowed(c, false, 0), Infinity, 'closed: no limit')
  c = afterAttempt(c, false, false, 100, CP)
  c = afterAttempt(c, true, false, 200, CP)
  t.same(c, closedCircuit(), 'a success resets the count')
  for (const at of [1000, 1100]) c = afterAttempt(c, false, false, at, CP)
  t.match(c, { failures: 2, failingSince: 1000, openUntil: null }, 'two failures: still closed')
  c = afterAttempt(c, false, false, 1200, CP)
  t.match(c, { failures: 3, openUntil: 2200, probesFailed: 0 }, 'the third opens it for the cool-down')
  t.equal(attemptsAllowed(c, false, 2199), 0, 'nothing before the cool-down ends')
  t.equal(attemptsAllowed(c, false, 2200), 1, 'then one probe')
  t.equal(attemptsAllowed(c, true, 2300), 0, 'and only one at a time')
  c = afterAttempt(c, false, false, 1250, CP)
  t.match(c, { failures: 4, openUntil: 2200 }, 'a straggler that started before it opened only counts')
  c = afterAttempt(c, false, true, 2300, CP)
  t.match(c, { probesFailed: 1, openUntil: 2300 + 2000 }, 'a failed probe doubles the cool-down')
  t.equal(cooldown(10, CP), CP.cooldownMs * MAX_COOLDOWN_FACTOR, 'up to 16×')
  c = afterAttempt(c, true, true, 4400, CP)
  t.same(c, closedCircuit(), 'a successful probe closes it')

  let d = closedCircuit()
  for (let i = 0; i < 3; i++) d = afterAttempt(d, false, false, i, CP)
  d = afterAttempt(d, false, true, 59_999, CP)
  t.equal(d.disabled, false, 'not yet: failing for less than the period')
  d = afterAttempt(d, false, true, 60_000, CP)
  t.equal(d.disabled, true, 'failing continuously for the period disables it')
  t.equal(attemptsAllowed(d, false, 1e12), 0, 'a disabled endpoint sends nothing')
  t.equal(afterAttempt(d, true, false, 60_001, CP).disabled, true, 'a late success does not re-enable it: only resume does')
  t.equal(stateName({ disabled: true, paused: true, open: true }), 'disabled')
  t.equal(stateName({ disabled: false, paused: true, open: true }), 'paused')
  t.equal(stateName({ disabled: false, paused: false, open: true }), 'circuit_open')
  t.equal(stateName({ disabled: false, paused: false, open: false }), 'active')
})

const HEALTHY = { consecutive_failures: 0, failing_since: null, circuit_open_until: null, disabled_at: null, disabled_reason: null }
const row = { id: 7, owner_id: 1, url: 'https://hooks.example/x', events: '["*"]', secret: newSecret(), from_event_id: 0, paused_at: null, created_at: '', ...HEALTHY }
const p = (id: number): Pending => ({ id, msgId: `msg_${id}`, event: 'e', body: '{}', attempts: 0, dueAt: 0 })
const fail: Outcome = { ok: false, status: 500, error: null, excerpt: '', durationMs: 1 }
const okOut: Outcome = { ok: true, status: 200, error: null, excerpt: '', durationMs: 1 }
const kinds = (fx: Effect[]) => fx.map((e) => (e.kind === 'send' ? `send ${e.delivery.id}` : e.kind === 'arm' ? `arm ${e.at}` : e.kind === 'record' ? `record ${e.deliveryId}` : e.kind === 'health' ? `health ${e.change}` : e.kind))

t.test('the endpoint actor with a circuit: holds deliveries (in SQLite) while open, probes one, reopens or closes', async (t) => {
  const policy: Policy = { maxInFlight: 4, window: 100, schedule: [600], circuit: { failures: 2, cooldownMs: 1000, disableAfterMs: 10_000 } }
  const s = initialState(row)
  const step = (msg: Parameters<typeof reduceEndpoint>[1], now: number) => kinds(reduceEndpoint(s, msg, now, () => 0.5, policy))
  t.same(step({ type: 'enqueue', deliveries: [p(1), p(2)] }, 0), ['send 1', 'send 2', 'arm null'])
  // Both retries are 10 min away: they wait in SQLite, and the open circuit reads them back when due.
  t.same(step({ type: 'sent', results: [{ deliveryId: 1, outcome: fail }, { deliveryId: 2, outcome: fail }] }, 10), ['record 1', 'record 2', 'health opened', 'arm 600010'],
    'two failures open the circuit')
  t.same(step({ type: 'enqueue', deliveries: [p(3), p(4), p(5)] }, 20), ['arm 1010'], 'new deliveries are held; the timer is set for the probe')
  t.same([s.known.size, s.dbDueAt], [1, 0], 'one waits in memory for the probe, the others in SQLite')
  t.same(step({ type: 'wake' }, 1010), ['send 3', 'arm null'], 'after the cool-down: one probe')
  t.same(step({ type: 'enqueue', deliveries: [p(6)] }, 1020), ['arm null'], 'nothing else while the probe is out')
  t.same(step({ type: 'sent', results: [{ deliveryId: 3, outcome: fail }] }, 1100), ['record 3', 'health null', 'arm 3100'], 'a failed probe: open again, twice as long')
  t.same(step({ type: 'wake' }, 3100), ['refill', 'arm null'], 'then the next probe is read from SQLite: one row')
  t.same(step({ type: 'loaded', rows: [p(4)], complete: false, nextDue: null }, 3110), ['send 4', 'arm null'], 'and sent')
  t.same(step({ type: 'sent', results: [{ deliveryId: 4, outcome: okOut }] }, 3200), ['record 4', 'health closed', 'refill', 'arm null'], 'a successful probe closes it; the rest is read back')
  t.same(step({ type: 'loaded', rows: [p(5), p(6)], complete: true, nextDue: 600_010 }, 3300), ['send 5', 'send 6', 'arm 570010'], 'and goes out')
  const h = reduceEndpoint(s, { type: 'sent', results: [{ deliveryId: 5, outcome: fail }] }, 3400, () => 0.5, policy).find((e) => e.kind === 'health')
  t.match(h, { kind: 'health', health: { consecutiveFailures: 1, openUntil: null } }, 'health is reported with every change of the count')
})

t.test('the endpoint actor is disabled after failing continuously, and resume re-enables it', async (t) => {
  const policy: Policy = { maxInFlight: 1, window: 100, schedule: [600], circuit: { failures: 1, cooldownMs: 100, disableAfterMs: 1000 } }
  const s = initialState(row)
  const run = (msg: Parameters<typeof reduceEndpoint>[1], now: number) => reduceEndpoint(s, msg, now, () => 0.5, policy)
  run({ type: 'enqueue', deliveries: [p(1), p(2), p(3)] }, 0)
  run({ type: 'sent', results: [{ deliveryId: 1, outcome: fail }] }, 0)
  t.same([s.queue.readyCount, s.dbDueAt], [1, 0], 'opened: the next probe stays in memory, the rest goes to SQLite')
  run({ type: 'wake' }, 100)
  const fx = run({ type: 'sent', results: [{ deliveryId: 2, outcome: { ...fail, status: null, error: 'timeout' } }] }, 1000)
  t.same(kinds(fx), ['record 2', 'health disabled', 'arm null'], 'disabled: nothing sent, no timer')
  t.match(s.disabledReason, /failed for 1 s .*timeout/, `the reason says how long and the last error: ${s.disabledReason}`)
  t.same(kinds(run({ type: 'wake' }, 99_999)), ['arm null'], 'stays quiet')
  t.same(kinds(run({ type: 'set_paused', paused: false }, 100_000)), ['refill', 'arm null'], 'resume re-enables and reads back what waits')
  t.same(kinds(run({ type: 'loaded', rows: [p(3)], complete: true, nextDue: 600_000 }, 100_010)), ['send 3', 'arm 570000'], 'and sends it')
  t.match(s, { disabledAt: null, disabledReason: null, circuit: { failures: 0, openUntil: null, disabled: false } })
})

t.test('a restart keeps an open circuit open and a disabled endpoint disabled', async (t) => {
  const policy: Policy = { maxInFlight: 4, window: 100, schedule: [600], circuit: { failures: 2, cooldownMs: 1000, disableAfterMs: 10_000 } }
  const open = initialState({ ...row, consecutive_failures: 5, failing_since: nowIso(1000), circuit_open_until: 50_000 })
  t.same(kinds(reduceEndpoint(open, { type: 'enqueue', deliveries: [p(1)] }, 2000, () => 0.5, policy)), ['arm 50000'])
  const off = initialState({ ...row, disabled_at: nowIso(1000), disabled_reason: 'x' })
  t.same(kinds(reduceEndpoint(off, { type: 'enqueue', deliveries: [p(1)] }, 2000, () => 0.5, policy)), ['arm null'])
})

t.test('the endpoint actor starts no more than its budget allows and asks to be woken', async (t) => {
  const policy: Policy = { maxInFlight: 8, window: 100, schedule: [1] }
  const s = initialState(row)
  t.same(kinds(reduceEndpoint(s, { type: 'enqueue', deliveries: [p(1), p(2), p(3)] }, 0, () => 0.5, policy, 2)), ['send 1', 'send 2', 'starved', 'arm null'])
  t.same(kinds(reduceEndpoint(s, { type: 'wake' }, 1, () => 0.5, policy, 0)), ['starved', 'arm null'], 'no permit: waits')
  t.same(kinds(reduceEndpoint(s, { type: 'wake' }, 2, () => 0.5, policy, 1)), ['send 3', 'arm null'], 'a permit: sends; nothing left, so no wait')
})

t.test('the budget: per-account and global limits; a freed permit goes to a waiting endpoint whose account has room', async (t) => {
  const woken: number[] = []
  const b = new DeliveryBudget(2, 3, (ep) => woken.push(ep))
  // Account 1 has endpoints 11 and 12, account 2 endpoint 21, account 3 endpoint 31.
  t.equal(b.available(11, 1), 2, 'the per-account limit')
  b.take(11, 1, 2)
  t.equal(b.available(12, 1), 0, 'account 1 is full')
  b.wait(12, 1)
  t.equal(b.available(21, 2), 1, 'the global limit leaves one')
  b.take(21, 2, 1)
  t.equal(b.available(31, 3), 0, 'the server is full')
  b.wait(31, 3)
  b.wait(11, 1)
  t.same(woken, [], 'nobody can be served yet')
  b.release(2)
  t.same(woken, [31], 'account 2\'s permit goes to account 3: account 1 is at its own limit')
  t.equal(b.available(31, 3), 1, 'reserved for the woken endpoint')
  t.equal(b.available(21, 2), 0, 'and not for anyone else')
  b.take(31, 3, 1)
  b.release(1)
  t.same(woken, [31, 12], 'account 1\'s permit goes back to account 1\'s first waiter')
  b.release(1)
  t.same(woken, [31, 12, 11], 'then to its next one')
  t.equal(b.inUse, 3)
  b.take(12, 1, 0)
  t.equal(b.inUse, 2, 'a woken endpoint with nothing to send gives its permit back')
  b.forget(11)
  t.equal(b.inUse, 1, 'a forgotten endpoint gives its reservation back')
  t.equal(b.usedBy(1), 0)
  b.release(3)
  t.equal(b.inUse, 0)
})

t.test('the budget: waiting accounts take turns, whichever account frees the permit', async (t) => {
  const woken: number[] = []
  const b = new DeliveryBudget(10, 2, (ep) => woken.push(ep))
  b.take(1, 100, 2)
  b.wait(1, 100)
  b.wait(2, 100)
  b.wait(3, 200)
  for (let i = 0; i < 3; i++) {
    b.release(woken.length === 0 ? 100 : woken.at(-1)! === 3 ? 200 : 100)
    b.take(woken.at(-1)!, woken.at(-1)! === 3 ? 200 : 100, 1)
  }
  t.same(woken, [1, 3, 2], 'account 100, account 200, account 100: the busy account does not keep the permits')
})

t.test('the cached lookup: one resolution per name while fresh, shared by concurrent callers, bounded in flight, failures cached briefly', async (t) => {
  let now = 0
  let calls = 0
  let inFlight = 0
  let peak = 0
  const answers: Array<() => void> = []
  const resolve = (host: string, _o: unknown, cb: (e: NodeJS.ErrnoException | null, a: LookupAddress[]) => void) => {
    calls++
    inFlight++
    peak = Math.max(peak, inFlight)
    answers.push(() => {
      inFlight--
      if (host === 'nx.example') cb(Object.assign(new Error('ENOTFOUND'), { code: 'ENOTFOUND' }), [])
      else cb(null, [{ address: '93.184.216.34', family: 4 }])
    })
  }
  const lookup = cachedLookup({ resolve, now: () => now, ttlMs: 1000, negativeTtlMs: 100, maxInFlight: 2 })
  const ask = (host: string) => new Promise<{ err: unknown; a: LookupAddress[] }>((r) => lookup(host, { all: true }, (err, a) => r({ err, a })))
  const first = Promise.all([ask('a.example'), ask('a.example'), ask('b.example'), ask('c.example'), ask('nx.example')])
  await new Promise((r) => setImmediate(r))
  t.equal(calls, 2, 'two names resolving at once; the others queue')
  while (answers.length) { answers.shift()!(); await new Promise((r) => setImmediate(r)) }
  const got = await first
  t.equal(calls, 4, 'a.example once for two callers; b, c and nx once each')
  t.equal(peak, 2, 'never more than 2 on the thread pool')
  t.same(got[0]!.a, [{ address: '93.184.216.34', family: 4 }])
  t.equal((got[4]!.err as NodeJS.ErrnoException).code, 'ENOTFOUND')
  now = 50
  await ask('a.example')
  await ask('nx.example')
  t.equal(calls, 4, 'fresh answers (and a fresh failure) come from the cache')
  now = 500
  const again = ask('nx.example')
  await new Promise((r) => setImmediate(r))
  answers.shift()!()
  await again
  t.equal(calls, 5, 'a failure is asked again after its short life')
  now = 2000
  const stale = ask('a.example')
  await new Promise((r) => setImmediate(r))
  answers.shift()!()
  await stale
  t.equal(calls, 6, 'an answer is asked again after its life')
})

t.test('the fan-out writes at most the row budget per transaction, whole events only, and catches up in later ones', async (t) => {
  const db = openDb(':memory:')
  t.teardown(() => db.close())
  const owner = Number(db.prepare('INSERT INTO owners (name, email, created_at) VALUES (?, ?, ?)').run('o', 'o@x', nowIso()).lastInsertRowid)
  const store = new WebhookStore(db)
  for (let i = 0; i < 7; i++) store.insertEndpoint(owner, 'https://hooks.example/x', ['*'], newSecret())
  const ins = db.prepare("INSERT INTO outbox (owner_id, store_id, event, data, created_at) VALUES (?, NULL, 'order.created', '{}', ?)")
  for (let i = 0; i < 10; i++) ins.run(owner, nowIso())
  const steps: number[] = []
  for (;;) {
    const r = db.transaction(() => store.fanout(500, 20))()
    let rows = 0
    for (const l of r.byEndpoint.values()) rows += l.length
    steps.push(rows)
    if (!r.more) break
  }
  t.same(steps, [21, 21, 21, 7], '7 rows per event: 3 events (21 rows) per transaction, the last one the rest')
  t.equal(db.prepare('SELECT COUNT(*) FROM webhook_deliveries').pluck().get(), 70, 'every event × endpoint once')
  t.equal(store.cursor(), store.maxOutboxId(), 'the cursor caught up')
})
