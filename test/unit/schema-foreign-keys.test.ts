/**
 * Deleting a parent row makes SQLite look for the rows that reference it (to cascade, set null, or
 * refuse). Without an index on the referencing columns that look is a whole-table scan per deleted
 * parent, so a delete of n parents costs n × (size of the child table): the retention prune once took
 * 10.5 s for 10,000 webhook deliveries because re-queues were found that way (migration 028).
 *
 * Two rules keep that cost to what is deleted. Parents that go many at a time — the prune's tables
 * every hour, a store's orders and payments in one cascade when the store is removed — have every
 * reference to them indexed. And every reference held by a table that grows with traffic is indexed,
 * whatever its parent: removing one staff member must not read every payment ever taken. What is left
 * is a row deleted one at a time (an account, an app) looking once through a table that stays small.
 */
import t from 'tap'
import Database from 'better-sqlite3'
import { migrate, type Db } from '../../src/storage/db.ts'

const BULK_PARENTS = new Set([
  // Pruned (src/storage/prune.ts).
  'webhook_deliveries', 'webhook_attempts', 'outbox', 'idempotency_keys', 'owner_sessions', 'owner_tokens',
  'owner_email_tokens', 'staff_tokens', 'customer_tokens', 'driver_tokens', 'shell_tokens', 'shell_handoffs',
  'app_tokens', 'app_session_tokens', 'oauth_codes', 'customer_otps', 'driver_login_codes',
  // A store's history, deleted with the store.
  'orders', 'order_lines', 'payments', 'refunds', 'customers', 'deliveries', 'shipments', 'reservations',
])

/** Tables whose rows accumulate with orders, payments, deliveries and billing. */
const GROWN_CHILDREN = new Set([
  'orders', 'order_lines', 'payments', 'refunds', 'outbox', 'webhook_deliveries', 'webhook_attempts', 'delivery_offers',
  'deliveries', 'stock_moves', 'store_credit_entries', 'gift_card_entries', 'coupon_redemptions', 'customers',
  'customer_addresses', 'customer_tokens', 'reservations', 'shipments', 'app_usage', 'app_charges', 'wallet_entries',
  'customer_invoices', 'driver_shifts', 'shifts', 'idempotency_keys', 'pod_photos',
])

const db: Db = new Database(':memory:')
migrate(db)
t.teardown(() => db.close())

interface Fk { id: number; seq: number; table: string; from: string }
const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'").pluck().all() as string[]

/** Index column lists of a table (partial ones included: `col = ?` implies `col IS NOT NULL`). */
function indexedPrefixes(table: string): string[][] {
  const indexes = db.prepare(`PRAGMA index_list("${table}")`).all() as Array<{ name: string }>
  const lists = indexes.map((i) => (db.prepare(`PRAGMA index_info("${i.name}")`).all() as Array<{ name: string }>).map((c) => c.name))
  const pk = (db.prepare(`PRAGMA table_info("${table}")`).all() as Array<{ name: string; pk: number }>).filter((c) => c.pk > 0).sort((a, b) => a.pk - b.pk).map((c) => c.name)
  return [...lists, pk]
}

t.test('every reference to a row deleted in bulk, and every reference a grown table holds, is indexed', async (t) => {
  for (const table of [...BULK_PARENTS, ...GROWN_CHILDREN]) t.ok(tables.includes(table), `${table} exists`)
  const missing: string[] = []
  let checked = 0
  for (const table of tables) {
    const byKey = new Map<number, Fk[]>()
    for (const fk of db.prepare(`PRAGMA foreign_key_list("${table}")`).all() as Fk[]) byKey.set(fk.id, [...(byKey.get(fk.id) ?? []), fk])
    for (const cols of byKey.values()) {
      if (!BULK_PARENTS.has(cols[0]!.table) && !GROWN_CHILDREN.has(table)) continue
      checked++
      const from = cols.sort((a, b) => a.seq - b.seq).map((c) => c.from)
      if (!indexedPrefixes(table).some((idx) => from.every((c, k) => idx[k] === c))) missing.push(`${table}(${from.join(', ')}) → ${cols[0]!.table}`)
    }
  }
  t.ok(checked > 10, `${checked} references checked`)
  t.same(missing, [], 'an index leads with the referencing columns')
})

t.test('the planner uses them: deleting a delivery, an order, a payment or a staff member reads no whole child table', async (t) => {
  for (const sql of ['DELETE FROM webhook_deliveries WHERE id = 1', 'DELETE FROM orders WHERE id = 1', 'DELETE FROM payments WHERE id = 1', 'DELETE FROM staff WHERE id = 1']) {
    const plan = (db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all() as Array<{ detail: string }>).map((r) => r.detail)
    t.same(plan.filter((d) => d.startsWith('SCAN ')), [], `${sql}: ${plan.join(' | ')}`)
  }
})
