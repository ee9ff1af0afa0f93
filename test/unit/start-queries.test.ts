/**
 * Nothing at start scales with history (issue 19 item 4; bench/cold-start.ts measures it): every
 * statement the server runs from opening the database until it is listening, the billing catch-up
 * has settled and the webhook queue was resumed, is planned by SQLite without a full scan of a table
 * that grows with the business (orders, their lines, the outbox, deliveries, customers, stores…).
 * A scan there would be invisible on a test database and cost seconds on a city's (1M orders).
 * The retention prune's catch-up (5 s after start, and hourly) is not covered: it is bounded by the
 * retention window, not by history (docs/running.md "Backups and retention").
 */
import t from 'tap'
import Database from 'better-sqlite3'
import { startServer } from '../helpers/server.ts'

/** Tables whose size follows history or the number of customers, stores and drivers. */
const GROWS = ['orders', 'order_lines', 'outbox', 'deliveries', 'webhook_deliveries', 'webhook_attempts', 'customers', 'stores', 'drivers',
  'menu_items', 'idempotency_keys', 'payments', 'refunds', 'stock_moves', 'coupon_redemptions', 'gift_card_entries', 'wallet_entries', 'owner_tokens']

/** Record the SQL text of every statement executed while `on` (prepared ones that never run do not count). */
function recorder() {
  const seen = new Set<string>()
  const state = { on: false }
  const proto = Object.getPrototypeOf(new Database(':memory:').prepare('SELECT 1')) as Record<string, (...a: unknown[]) => unknown>
  for (const m of ['run', 'get', 'all', 'iterate'] as const) {
    const orig = proto[m]!
    proto[m] = function (this: { source: string }, ...args: unknown[]) {
      if (state.on) seen.add(this.source)
      return orig.apply(this, args)
    }
  }
  return { seen, state }
}

/** EXPLAIN QUERY PLAN of `sql` with every parameter NULL (the plan does not depend on the values). */
function plan(db: Database.Database, sql: string): string[] {
  const s = db.prepare(`EXPLAIN QUERY PLAN ${sql}`)
  const named = [...new Set([...sql.matchAll(/[@:$]([A-Za-z_]\w*)/g)].map((m) => m[1]!))]
  const positional = (sql.match(/\?/g) ?? []).length
  const args: unknown[] = named.length ? [Object.fromEntries(named.map((n) => [n, null]))] : Array.from({ length: positional }, () => null)
  return (s.all(...args) as Array<{ detail: string }>).map((r) => r.detail)
}

/**
 * The table a plan step scans in full when it is one that grows, else null. A scan through a partial
 * index reads only the rows of its WHERE (the pending webhook queue), not the history.
 */
function growingScan(step: string, partial: Set<string>): string | null {
  const m = /^SCAN (\w+)(?: USING (?:COVERING )?INDEX (\w+))?/.exec(step)
  return m && GROWS.includes(m[1]!) && !(m[2] && partial.has(m[2])) ? m[1]! : null
}

t.test('start-up statements never scan a table that grows with history', async (t) => {
  const rec = recorder()
  rec.state.on = true
  const srv = await startServer()
  t.teardown(() => srv.close())
  // Settled: the billing catch-up is done and the webhook fan-out kick (and queue resume) committed.
  await srv.app.billing.started
  await srv.app.svc.committer.write(() => null)
  const res = await srv.req('GET', `${srv.site}/readyz`)
  rec.state.on = false
  t.equal(res.status, 200, 'ready')
  t.ok(rec.seen.size > 5, `start-up ran ${rec.seen.size} distinct statements`)

  const db = new Database(srv.dbPath, { readonly: true })
  t.teardown(() => db.close())
  const partial = new Set(db.prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND sql LIKE '% WHERE %'").pluck().all() as string[])
  const scans: string[] = []
  for (const sql of rec.seen) {
    if (!/^\s*(SELECT|WITH|INSERT|UPDATE|DELETE)/i.test(sql)) continue
    for (const step of plan(db, sql)) {
      if (growingScan(step, partial)) scans.push(`${step} ← ${sql.replace(/\s+/g, ' ').slice(0, 160)}`)
    }
  }
  t.same(scans, [], 'no full scan of a growing table at start')
})

t.test('the check sees a scan when there is one', async (t) => {
  // The assertion above is only as good as `plan`: a scan of orders must be reported.
  const db = new Database(':memory:')
  db.exec('CREATE TABLE orders (id INTEGER PRIMARY KEY, store_id INTEGER, status TEXT); CREATE INDEX orders_store ON orders(store_id)')
  t.match(plan(db, "SELECT COUNT(*) FROM orders WHERE status = 'new'").join(';'), /^SCAN orders/)
  t.notMatch(plan(db, 'SELECT id FROM orders WHERE store_id = ?').join(';'), /SCAN orders/)
  t.notMatch(plan(db, 'SELECT id FROM orders WHERE store_id = @store AND id > :after').join(';'), /SCAN orders/)
  // A scan of a full (not partial) index is still a scan of every row.
  t.match(plan(db, 'SELECT DISTINCT store_id FROM orders').join(';'), /^SCAN orders USING COVERING INDEX orders_store/)
  // …and the classification of the steps: growing tables only, partial indexes excepted.
  db.exec("CREATE INDEX orders_open ON orders(store_id) WHERE status = 'new'; CREATE TABLE settings (k TEXT)")
  const partial = new Set(['orders_open'])
  t.equal(growingScan(plan(db, "SELECT COUNT(*) FROM orders WHERE status = 'new'")[0]!, partial), null, 'a scan of a partial index is not a scan of history')
  t.equal(growingScan(plan(db, 'SELECT DISTINCT store_id FROM orders')[0]!, partial), 'orders', 'a full index scan counts')
  t.equal(growingScan(plan(db, "SELECT COUNT(*) FROM orders WHERE status = 'cancelled'")[0]!, partial), 'orders', 'a table scan counts')
  t.equal(growingScan(plan(db, 'SELECT * FROM settings')[0]!, partial), null, 'a table that does not grow may be scanned')
  db.close()
})
