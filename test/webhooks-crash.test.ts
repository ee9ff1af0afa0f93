/**
 * Webhook durability (api-v1 §6 rule 1; ARCHITECTURE "Webhooks"; issue 4 item 4): the real server
 * runs as a child process and is killed with SIGKILL twice — first in the middle of an order burst
 * while the receiver fails every delivery (so deliveries are pending), then while the restarted
 * server is catching up. After the last restart every order.created event in the outbox — and five
 * written by another process while the server was down, which only the fan-out cursor can find —
 * reaches the receiver, each event under exactly one webhook-id however often it was sent, every
 * request verifies with standardwebhooks, and the log ends with nothing pending.
 */
import t from 'tap'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import { openDb } from '../src/storage/db.ts'
import { createAccount } from './helpers/fixtures.ts'
import { spawnServer, streamUntilKilled, type ServerProcess } from './helpers/process.ts'
import { createEndpoint, sleep, startReceiver, verifyStandard } from './helpers/webhook-receiver.ts'

const dir = mkdtempSync(join(tmpdir(), 'dispatch-webhook-crash-'))
const dbPath = join(dir, 'crash.db')
t.teardown(() => rmSync(dir, { recursive: true, force: true }))
const setup = openDb(dbPath)
const acct = createAccount(setup)
setup.close()

const rcv = await startReceiver()
t.teardown(() => rcv.close())
// The receiver fails on purpose in the first phase: the circuit breaker (webhooks-circuit.test.ts)
// must not open and hold the catch-up after the restart for its cool-down.
const env: Record<string, string> = { DB_PATH: dbPath, DEMO_SEED: '0', RATE_LIMIT_PER_MINUTE: '1000000', WEBHOOK_ALLOW_LOOPBACK: '1', WEBHOOK_RETRY_SCHEDULE: '0.5', WEBHOOK_CIRCUIT_FAILURES: '1000' }
let server: ServerProcess | null = null
t.teardown(() => server?.kill())

const readDb = <T>(fn: (db: Database.Database) => T): T => {
  const db = new Database(dbPath, { readonly: true })
  try { return fn(db) } finally { db.close() }
}
const createdEvents = () => readDb((db) => db.prepare("SELECT json_extract(data, '$.order_id') FROM outbox WHERE event = 'order.created'").pluck().all() as number[])

async function createOne(sp: ServerProcess, i: number): Promise<number | null> {
  try {
    const r = await fetch(`${sp.base}/restaurants/${acct.storeId}/orders`, {
      method: 'POST',
      headers: { authorization: `Bearer ${acct.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ type: 'takeaway', note: `crash ${i}`, items: [{ item_id: acct.menu.fries, quantity: 1 + (i % 3) }] }),
    })
    return r.status === 200 ? ((await r.json()) as { id: number }).id : null
  } catch {
    return null
  }
}

let secret = ''

t.test('SIGKILL mid-burst while every delivery fails: events and pending deliveries survive', async (t) => {
  rcv.respond = () => ({ status: 500, body: 'not now' })
  server = await spawnServer(env)
  secret = (await createEndpoint(server.base, acct.token, `${rcv.url}/orders`, ['order.created'])).secret
  const sp = server
  const ids = await streamUntilKilled(sp, (n) => createOne(sp, n), 100)
  const acknowledged = ids.filter((x): x is number => x !== null)
  t.ok(acknowledged.length >= 100, `${acknowledged.length} orders acknowledged before the kill`)
  t.equal(ids.filter((x) => x === null).length, 64, 'every client was cut off mid-stream by the kill')
  const events = new Set(createdEvents())
  t.ok(acknowledged.every((id) => events.has(id)), 'every acknowledged order has its order.created event in the outbox')
  const state = readDb((db) => ({
    pending: db.prepare("SELECT COUNT(*) FROM webhook_deliveries WHERE status = 'pending'").pluck().get() as number,
    succeeded: db.prepare("SELECT COUNT(*) FROM webhook_deliveries WHERE status = 'succeeded'").pluck().get() as number,
    deliveries: db.prepare('SELECT COUNT(*) FROM webhook_deliveries').pluck().get() as number,
  }))
  t.ok(state.pending > 0, `${state.pending} deliveries were pending at the kill`)
  t.equal(state.succeeded, 0, 'none had succeeded')
  t.ok(rcv.received.length > 0, `${rcv.received.length} failed attempts reached the receiver before the kill`)
  t.ok(state.deliveries <= events.size, `${state.deliveries} delivery rows for ${events.size} events`)
  // Events written while the server is down (by another process) have no delivery rows yet: the
  // fan-out cursor must pick them up after the restart.
  const db = new Database(dbPath)
  const ins = db.prepare("INSERT INTO outbox (owner_id, store_id, event, data, created_at) VALUES (?, ?, 'order.created', ?, ?)")
  for (let i = 1; i <= 5; i++) ins.run(acct.ownerId, acct.storeId, JSON.stringify({ order_id: 900_000 + i, restaurant_id: acct.storeId, type: 'takeaway', status: 'new', total: '1.00' }), new Date().toISOString())
  db.close()
})

t.test('restart, SIGKILL again while catching up, restart: every event arrives under one webhook-id', async (t) => {
  rcv.respond = () => ({ status: 200, body: 'ok' })
  const before = rcv.received.length
  server = await spawnServer(env)
  // Let part of the backlog through, then kill again in the middle of the catch-up.
  await rcv.until((all) => all.length >= before + 20, 20_000, 'catch-up started')
  await server.kill('SIGKILL')
  await sleep(100)
  server = await spawnServer(env)

  const events = createdEvents()
  const delivered = () => new Set(rcv.received.filter((r) => r.body.event === 'order.created').map((r) => r.body.data.order_id as number))
  // Deliveries that were pending have retries due up to a schedule step after the restart.
  await rcv.until(() => { const d = delivered(); return events.every((id) => d.has(id)) }, 60_000, `all ${events.length} events delivered`)
  t.pass(`all ${events.length} order.created events reached the receiver`)

  const idsByOrder = new Map<number, Set<string>>()
  const orderById = new Map<string, Set<number>>()
  for (const r of rcv.received) {
    const orderId = r.body.data.order_id as number
    if (!idsByOrder.has(orderId)) idsByOrder.set(orderId, new Set())
    idsByOrder.get(orderId)!.add(r.headers['webhook-id']!)
    if (!orderById.has(r.headers['webhook-id']!)) orderById.set(r.headers['webhook-id']!, new Set())
    orderById.get(r.headers['webhook-id']!)!.add(orderId)
  }
  const multi = [...idsByOrder].filter(([, ids]) => ids.size !== 1)
  t.same(multi, [], 'no event was ever sent under two different webhook-ids')
  t.ok([...orderById.values()].every((s) => s.size === 1), 'no webhook-id was used for two events')
  t.equal(idsByOrder.size, events.length, 'and no event was delivered that is not in the outbox')
  const bad = rcv.received.filter((r) => { try { verifyStandard(secret, r); return false } catch { return true } })
  t.equal(bad.length, 0, `all ${rcv.received.length} requests verify with standardwebhooks`)
  t.ok(rcv.received.length > events.length, `${rcv.received.length - events.length} repeats (retries of failed attempts), all with their original id`)

  await sleep(300)
  const final = readDb((db) => ({
    statuses: db.prepare('SELECT status, COUNT(*) AS n FROM webhook_deliveries GROUP BY status').all() as Array<{ status: string; n: number }>,
    perEvent: db.prepare('SELECT COUNT(*) FROM (SELECT event_id FROM webhook_deliveries GROUP BY event_id HAVING COUNT(*) > 1)').pluck().get() as number,
    cursorBehind: db.prepare('SELECT (SELECT MAX(id) FROM outbox) - last_event_id FROM webhook_cursor').pluck().get() as number,
    attemptsLogged: db.prepare("SELECT COUNT(*) FROM webhook_deliveries d WHERE d.status = 'succeeded' AND NOT EXISTS (SELECT 1 FROM webhook_attempts a WHERE a.delivery_id = d.id AND a.http_status = 200)").pluck().get() as number,
  }))
  t.same(final.statuses, [{ status: 'succeeded', n: events.length }], 'one delivery row per event, all succeeded')
  t.equal(final.perEvent, 0, 'no event has two delivery rows')
  t.equal(final.cursorBehind, 0, 'the fan-out cursor caught up')
  t.equal(final.attemptsLogged, 0, 'every success has its logged 200 attempt')
  await server.kill('SIGTERM')
  server = null
})
