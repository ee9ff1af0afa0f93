/**
 * Crash cycles in CI (issue 21 item 3): the same code as `npm run chaos` (bench/lib/chaos-run.ts)
 * for three cycles — the real server in its own process under mixed load, SIGKILL at a seeded
 * random moment, the file checked read-only, restart, idempotent retries and webhook catch-up
 * checked. Then the checks themselves are shown to catch what they look for, on the file the run
 * left: an acknowledged order that is not there, an order stored twice, a status that went back;
 * and the receiver's bookkeeping: one change under two webhook-ids.
 */
import t from 'tap'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import { runChaos } from '../bench/lib/chaos-run.ts'
import { afterKill } from '../bench/lib/chaos-checks.ts'
import { Ledger } from '../bench/lib/chaos-ledger.ts'
import { ChaosReceiver } from '../bench/lib/chaos-receiver.ts'
import { fileURLToPath } from 'node:url'

// Not from ./helpers/process.ts: that imports the app, and this test only talks to child processes.
const ROOT = fileURLToPath(new URL('..', import.meta.url))
const dir = mkdtempSync(join(tmpdir(), 'dispatch-chaos-test-'))
const dbPath = join(dir, 'chaos.db')
t.teardown(() => rmSync(dir, { recursive: true, force: true }))

t.test('three kill -9 cycles under mixed load lose no acknowledged write and no webhook', async (t) => {
  const lines: string[] = []
  const s = await runChaos({ cycles: 3, seed: 21, dbPath, cwd: ROOT, killAfterMs: [700, 1500], webhookWaitMs: 30_000, log: (l) => { lines.push(l); t.comment(l) } })
  t.same(s.failures, [], 'no violation in any cycle')
  t.equal(s.survived, 3, 'every cycle survived')
  t.equal(lines.length, 3, 'one line per cycle')
  // The checks had something to check: the load really ran before every kill (on a busy machine a
  // short life may not get to every kind of write, so the kinds are summed over the cycles).
  for (const r of s.records) {
    t.ok(r.ordersAcked > 0, `cycle ${r.cycle}: ${r.ordersAcked} orders acknowledged before the kill`)
    t.equal(r.webhooksConfirmed, r.eventsAtKill, `cycle ${r.cycle}: all ${r.eventsAtKill} events committed before the kill were delivered after it`)
    t.ok(r.idempotentRetries > 0, `cycle ${r.cycle}: idempotent creates were retried across the restart`)
  }
  const sum = (k: 'statusChangesAcked' | 'bumpsAcked' | 'positionsAcked' | 'eventsAtKill') => s.records.reduce((a, r) => a + r[k], 0)
  t.ok(sum('statusChangesAcked') > 0 && sum('bumpsAcked') > 0 && sum('positionsAcked') > 0, 'status changes, KDS bumps and driver positions were acknowledged too')
  t.ok(sum('eventsAtKill') > 0, 'events were waiting for delivery at the kills')
  t.ok(s.acknowledgedWritesChecked > 100, `${s.acknowledgedWritesChecked} acknowledged writes checked`)
})

t.test('the file checks catch a lost write, a duplicate and a status that went back', async (t) => {
  const db = new Database(dbPath, { readonly: true })
  const ownerId = db.prepare('SELECT owner_id FROM outbox ORDER BY id LIMIT 1').pluck().get() as number
  const [a, b] = db.prepare("SELECT id, note, status FROM orders WHERE note LIKE 'chaos21-%' ORDER BY id LIMIT 2").all() as Array<{ id: number; note: string; status: string }>
  db.close()

  const clean = new Ledger('chaos21')
  clean.orders.push({ note: a!.note, key: null, body: '', id: a!.id, cycle: 1 })
  const none: string[] = []
  afterKill(dbPath, clean, ownerId, 0, none)
  t.same(none, [], 'a true ledger passes')

  const lost = new Ledger('chaos21')
  lost.orders.push({ note: 'chaos21-never-stored', key: null, body: '', id: 999_999, cycle: 1 })
  const out1: string[] = []
  afterKill(dbPath, lost, ownerId, 0, out1)
  t.match(out1.join('\n'), /acknowledged order 999999 \(chaos21-never-stored\) is missing/, 'an acknowledged order that is not in the file is reported')

  const dup = new Ledger('chaos21')
  dup.orders.push({ note: b!.note, key: null, body: '', id: a!.id, cycle: 1 })
  const out2: string[] = []
  afterKill(dbPath, dup, ownerId, 0, out2)
  t.match(out2.join('\n'), new RegExp(`acknowledged order ${a!.id} \\(${b!.note}\\) is stored as ${b!.id}`), 'an acknowledged order stored under another id is reported')

  const back = new Ledger('chaos21')
  back.statuses.push({ id: a!.id, orderId: a!.id, acked: a!.status === 'cancelled' ? 'ready' : 'cancelled', inFlight: null })
  const out3: string[] = []
  afterKill(dbPath, back, ownerId, 0, out3)
  t.match(out3.join('\n'), new RegExp(`order ${a!.id}: status ${a!.status}, acknowledged`), 'a status other than the acknowledged one is reported')

  // Two rows with one note: copy the file and duplicate an order in the copy.
  const copy = join(dir, 'dup.db')
  const src = new Database(dbPath, { readonly: true })
  await src.backup(copy)
  src.close()
  const w = new Database(copy)
  w.prepare("INSERT INTO orders (store_id, type, status, note, subtotal, total, track_token, timeline, created_at, updated_at) SELECT store_id, type, status, note, subtotal, total, track_token || 'x', timeline, created_at, updated_at FROM orders WHERE id = ?").run(a!.id)
  w.close()
  const out4: string[] = []
  afterKill(copy, new Ledger('chaos21'), ownerId, 0, out4)
  t.match(out4.join('\n'), new RegExp(`order ${a!.note} exists twice`), 'an order stored twice is reported')
})

t.test('the receiver catches one change under two webhook-ids and one id for two changes', async (t) => {
  const rcv = new ChaosReceiver(0, () => 1)
  await rcv.start()
  t.teardown(() => rcv.close())
  const send = (id: string, data: unknown) => fetch(`${rcv.url}/hook`, { method: 'POST', headers: { 'webhook-id': id, 'content-type': 'application/json' }, body: JSON.stringify({ id, event: 'order.created', created_at: '2026-11-23T10:00:00.000+00:00', data }) })
  await send('msg_a', { order_id: 1 })
  await send('msg_a', { order_id: 1 }) // a retry: same id, same change — fine
  t.same(rcv.duplicates(), [], 'a retry under the same id is no duplicate')
  t.same(rcv.problems, [])
  await send('msg_b', { order_id: 1 })
  t.same(rcv.duplicates(), [['msg_a', 'msg_b']], 'the same change under a second id is reported')
  await send('msg_a', { order_id: 2 })
  t.match(rcv.problems.join('\n'), /msg_a was sent for two different changes/, 'one id for two changes is reported')
  t.equal(rcv.byId.get('msg_a')!.requests, 3)
})
