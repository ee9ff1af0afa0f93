/**
 * Crash safety (ARCHITECTURE 3, "Webhooks"): a reply is sent only after its change is durable, and
 * an order, its lines and its order.created outbox row commit together. The real server runs as a
 * child process and is killed with SIGKILL right after a burst and in the middle of one.
 */
import t, { type Test } from 'tap'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import { openDb } from '../src/storage/db.ts'
import { createAccount, type Account } from './helpers/fixtures.ts'
import { spawnServer, streamUntilKilled, type ServerProcess } from './helpers/process.ts'

const dir = mkdtempSync(join(tmpdir(), 'dispatch-crash-'))
const dbPath = join(dir, 'crash.db')
t.teardown(() => rmSync(dir, { recursive: true, force: true }))

const setup = openDb(dbPath)
const acct: Account = createAccount(setup)
setup.close()

const env = { DB_PATH: dbPath, DEMO_SEED: '0', RATE_LIMIT_PER_MINUTE: '1000000' }
let server: ServerProcess | null = null
t.teardown(() => server?.kill())

/** One order creation; resolves with the created id, or null for any other outcome (incl. a dead server). */
async function createOne(sp: ServerProcess, i: number): Promise<number | null> {
  try {
    const r = await fetch(`${sp.base}/restaurants/${acct.storeId}/orders`, {
      method: 'POST',
      headers: { authorization: `Bearer ${acct.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ type: 'takeaway', note: `burst ${i}`, items: [{ item_id: acct.menu.burger.id, quantity: 1 + (i % 3), extras: [acct.menu.burger.cheese] }, { item_id: acct.menu.fries, quantity: 1 }] }),
    })
    if (r.status !== 200) return null
    return ((await r.json()) as { id: number }).id
  } catch {
    return null
  }
}

/** Every acknowledged order is durable with both lines and its event; no order is half-written. */
async function verify(t: Test, sp: ServerProcess, acknowledged: number[]) {
  const db = new Database(dbPath, { readonly: true })
  try {
    const q = {
      order: db.prepare('SELECT id FROM orders WHERE id = ?'),
      lines: db.prepare('SELECT COUNT(*) FROM order_lines WHERE order_id = ?').pluck(),
      event: db.prepare("SELECT COUNT(*) FROM outbox WHERE event = 'order.created' AND json_extract(data, '$.order_id') = ?").pluck(),
    }
    let missing = 0
    let badLines = 0
    let badEvents = 0
    for (const id of acknowledged) {
      if (!q.order.get(id)) missing++
      if (q.lines.get(id) !== 2) badLines++
      if (q.event.get(id) !== 1) badEvents++
    }
    t.equal(missing, 0, `all ${acknowledged.length} acknowledged orders survived`)
    t.equal(badLines, 0, 'each with its two lines')
    t.equal(badEvents, 0, 'each with exactly one order.created outbox row')
    const torn = db.prepare(`SELECT COUNT(*) FROM orders o WHERE (SELECT COUNT(*) FROM order_lines l WHERE l.order_id = o.id) != 2
      OR (SELECT COUNT(*) FROM outbox e WHERE e.event = 'order.created' AND json_extract(e.data, '$.order_id') = o.id) != 1`).pluck().get()
    t.equal(torn, 0, 'no order in the database is half-written (acknowledged or not)')
  } finally {
    db.close()
  }
  // And the restarted server serves them.
  const sample = acknowledged.filter((_, i) => i % 25 === 0)
  for (const id of sample) {
    const r = await fetch(`${sp.base}/restaurants/${acct.storeId}/orders/${id}`, { headers: { authorization: `Bearer ${acct.token}` } })
    const body = (await r.json()) as { items: unknown[] }
    t.ok(r.status === 200 && body.items.length === 2, `order ${id} readable after restart`)
  }
}

t.test('SIGKILL right after a burst of acknowledged orders loses none of them', async (t) => {
  server = await spawnServer(env)
  const ids = await Promise.all(Array.from({ length: 200 }, (_, i) => createOne(server!, i)))
  const acknowledged = ids.filter((x): x is number => x !== null)
  await server.kill('SIGKILL')
  t.equal(acknowledged.length, 200, 'the whole burst was acknowledged')
  server = await spawnServer(env)
  await verify(t, server, acknowledged)
})

t.test('SIGKILL in the middle of a burst loses no acknowledged order and tears none', async (t) => {
  const sp = server!
  const ids = await streamUntilKilled(sp, (n) => createOne(sp, n), 300)
  const acknowledged = ids.filter((x): x is number => x !== null)
  t.ok(acknowledged.length >= 300, `${acknowledged.length} acknowledged before the kill`)
  t.equal(ids.filter((x) => x === null).length, 64, 'every client was cut off mid-stream by the kill')
  server = await spawnServer(env)
  await verify(t, server, acknowledged)
  const after = await createOne(server, 9999)
  t.ok(after !== null, 'the restarted server takes new orders')
  await server.kill('SIGTERM')
})
