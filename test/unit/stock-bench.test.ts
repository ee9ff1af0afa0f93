/**
 * The stock-contention bench's reconciliation (bench/stock-contention.ts, issue 18 item 2): the
 * scenario must fail when the hot item's stock does not equal its start minus the orders answered
 * 200 (oversold or lost), when a 200 names no row, when rows appear without a 200, or when not every
 * order was answered. Also how answers are classified (200 ids, 422 out_of_stock, anything else).
 */
import t from 'tap'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import { missingRows } from '../../bench/lib/order-check.ts'
import { Answers, reconcile, type Phase } from '../../bench/stock-contention.ts'
import type { LoadResult } from '../../bench/lib/load.ts'

const load = (ok2xx: number, extra: Partial<LoadResult> = {}): LoadResult => ({
  durationSec: 1, ok2xx, non2xx: 0, statuses: { 200: ok2xx }, errors: 0, timeouts: 0, p50: 1, p90: 1, p99: 1, max: 1, mean: 1, ...extra,
})
const answered = (ids: number[]) => Object.assign(new Answers(), { ids })
type State = Phase['before']
const phase = (ok: number, before: State, after: State, extra: Partial<LoadResult> = {}) =>
  ({ load: load(ok, extra), answers: answered(Array.from({ length: ok }, (_, i) => i + 1)), before, after })

t.test('answers: 200 ids, 422 out_of_stock, the rest by status', async (t) => {
  const a = new Answers()
  a.record(200, '{"id":42,"status":"new"}')
  a.record(200, '{"oops":1}')
  a.record(422, '{"message":"Not enough","code":"validation_failed","reason":"out_of_stock","errors":{"items.0.quantity":["Not enough"]}}')
  a.record(422, '{"message":"bad","code":"validation_failed","reason":"validation_failed","errors":{"type":["bad"]}}')
  a.record(503, '{"code":"overloaded"}')
  t.same(a.ids, [42, -1], 'an unparsable 200 is kept as -1 (it names no row)')
  t.equal(a.outOfStock, 1)
  t.same(a.other, { 422: 1, 503: 1 })
})

t.test('a tracked item that lost exactly the units answered 200 reconciles', async (t) => {
  t.same(reconcile(phase(3, { stock: 10, unitsOrdered: 0, orders: 5 }, { stock: 7, unitsOrdered: 3, orders: 8 }), 0, true), [])
  t.same(reconcile(phase(3, { stock: null, unitsOrdered: 0, orders: 5 }, { stock: null, unitsOrdered: 3, orders: 8 }), 0, false), [], 'untracked')
})

t.test('oversold, lost, missing rows, unanswered orders: each is a failure', async (t) => {
  const over = reconcile(phase(3, { stock: 10, unitsOrdered: 0, orders: 5 }, { stock: 6, unitsOrdered: 3, orders: 8 }), 0, true)
  t.match(over.join('\n'), /stock 10 → 6 \(4 taken\) but 3 orders were answered 200/, 'more taken than answered')
  const lost = reconcile(phase(3, { stock: 10, unitsOrdered: 0, orders: 5 }, { stock: 8, unitsOrdered: 3, orders: 8 }), 0, true)
  t.match(lost.join('\n'), /\(2 taken\) but 3/, 'fewer taken than answered')
  t.match(reconcile(phase(1, { stock: 1, unitsOrdered: 0, orders: 0 }, { stock: -1, unitsOrdered: 2, orders: 2 }), 0, true).join('\n'), /below zero/)
  t.match(reconcile(phase(3, { stock: 10, unitsOrdered: 0, orders: 5 }, { stock: 7, unitsOrdered: 3, orders: 8 }), 1, true).join('\n'), /1 of 3 orders answered 200 have no row/)
  t.match(reconcile(phase(3, { stock: 10, unitsOrdered: 0, orders: 5 }, { stock: 7, unitsOrdered: 3, orders: 9 }), 0, true).join('\n'), /4 order rows added for 3/)
  t.match(reconcile(phase(3, { stock: 10, unitsOrdered: 0, orders: 5 }, { stock: 7, unitsOrdered: 3, orders: 8 }, { timeouts: 1 }), 0, true).join('\n'), /not every order was answered/)
  t.match(reconcile(phase(3, { stock: null, unitsOrdered: 0, orders: 5 }, { stock: 4, unitsOrdered: 3, orders: 8 }), 0, false).join('\n'), /untracked item now has stock 4/)
})

t.test('missing rows: ids answered 200 without an order row (shared with bench/orders.ts)', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'missing-rows-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const path = join(dir, 'x.db')
  const db = new Database(path)
  db.exec('CREATE TABLE orders (id INTEGER PRIMARY KEY)')
  const ins = db.prepare('INSERT INTO orders (id) VALUES (?)')
  db.transaction(() => { for (let id = 1; id <= 300_000; id++) if (id !== 7) ins.run(id) })()
  db.close()
  t.equal(missingRows(path, []), 0)
  t.equal(missingRows(path, [1, 2, 3]), 0)
  t.equal(missingRows(path, [5, 7, 9]), 1, 'a gap is missing')
  t.equal(missingRows(path, [-1, 4, 300_001]), 2, 'an unparsable 200 (-1) and an id past the end')
  t.equal(missingRows(path, [-1, -1]), 2, 'nothing parsable')
  t.equal(missingRows(path, Array.from({ length: 250_000 }, (_, i) => i + 10)), 0, 'a long run\'s ids (more than a call takes as arguments)')
})
