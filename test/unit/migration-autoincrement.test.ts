/**
 * Migration 006 (issue 10 #2, docs/storage.md "Ids"): every generated id is AUTOINCREMENT, so a
 * deleted row's id is never handed out again; references to deletable rows have foreign keys. A
 * database built by migrations 001-005 and holding data (deleted newest rows, an order pointing at
 * a driver id another owner was handed) keeps every row and id, drops only the wrong references,
 * and gives new rows ids above every id it ever handed out. Plus the runner's foreign_keys=off
 * opt-in, and a guard: a table added later with a generated id but without AUTOINCREMENT fails here.
 */
import t from 'tap'
import Database from 'better-sqlite3'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { migrate, readMigrations, type Db, type Migration } from '../../src/storage/db.ts'
import { deleteIdleDriver } from '../../src/storage/drivers.ts'

const REBUILD = 6
const all = readMigrations()
const upTo = (v: number) => all.filter((m) => m.version <= v)
t.ok(all.find((m) => m.version === REBUILD)?.foreignKeysOff, 'migration 006 opts into foreign_keys=off')

function fresh(migrations: Migration[], pragmas: string[] = []): Db {
  const db = new Database(':memory:')
  db.pragma('foreign_keys = ON')
  for (const p of pragmas) db.pragma(p)
  migrate(db, migrations)
  return db
}

const tables = (db: Db) =>
  db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name").pluck().all() as string[]

/** Insert a row; returns its id (rowid). */
function ins(db: Db, table: string, row: Record<string, unknown>): number {
  const cols = Object.keys(row)
  return Number(db.prepare(`INSERT INTO ${table} (${cols.join(', ')}) VALUES (${cols.map(() => '?').join(', ')})`).run(...Object.values(row)).lastInsertRowid)
}

const T0 = '2026-01-01T10:00:00.000+00:00'
const at = (minute: number) => `2026-01-01T10:${String(minute).padStart(2, '0')}:00.000+00:00`

/**
 * A 001-005 database as the old schema let it become. Returns the ids the assertions need.
 * Minutes on the clock: 01 drivers exist, 10 D3 works, 20 D3 deleted, 21 owner B is handed id 3, ...
 */
function populate(db: Db) {
  const ownerA = ins(db, 'owners', { name: 'A', email: 'a@x', created_at: T0 })
  const ownerB = ins(db, 'owners', { name: 'B', email: 'b@x', created_at: T0 })
  ins(db, 'owner_tokens', { owner_id: ownerA, token_hash: 'ha', token_prefix: 'dso_a', capabilities: '["*"]', created_at: T0 })
  ins(db, 'owner_tokens', { owner_id: ownerB, token_hash: 'hb', token_prefix: 'dso_b', capabilities: '["*"]', created_at: T0 })
  const storeA = ins(db, 'stores', { owner_id: ownerA, title: 'A', slug: 'a', created_at: T0 })
  const storeB = ins(db, 'stores', { owner_id: ownerB, title: 'B', slug: 'b', created_at: T0 })
  ins(db, 'storefront_tokens', { store_id: storeA, token_hash: 'sf', created_at: T0 })

  // Menu: category 2 and item 3 deleted (item 3 stays in an order line's history), extras replaced.
  const cat = ins(db, 'menu_categories', { store_id: storeA, name: 'Mains', created_at: T0 })
  const cat2 = ins(db, 'menu_categories', { store_id: storeA, name: 'Gone', created_at: T0 })
  const item = (name: string) => ins(db, 'menu_items', { store_id: storeA, category_id: cat, name, price: 1000, created_at: T0, updated_at: T0 })
  const pizza = item('Pizza')
  item('Salad')
  const soup = item('Soup')
  const variant = ins(db, 'item_variants', { item_id: pizza, name: 'Large', price: 1500, created_at: T0, updated_at: T0 })
  // Extras are replaced wholesale on every item edit: the old schema hands their ids out again.
  ins(db, 'item_extras', { item_id: pizza, name: 'Ham', price: 100 })
  const oldExtra = ins(db, 'item_extras', { item_id: pizza, name: 'Cheese', price: 150 })
  db.prepare('DELETE FROM item_extras WHERE item_id = ?').run(pizza)
  const newExtra = ins(db, 'item_extras', { item_id: pizza, name: 'Cheese', price: 150 })

  const customer = ins(db, 'customers', { store_id: storeA, name: 'Ada', phone: '+15550001', created_at: T0, updated_at: T0 })
  const goneCustomer = ins(db, 'customers', { store_id: storeA, name: 'Gone', phone: '+15550002', created_at: T0, updated_at: T0 })

  const driver = (owner: number, minute: number) =>
    ins(db, 'drivers', { owner_id: owner, restaurant_id: owner === ownerA ? storeA : storeB, name: `D${minute}`, phone: `+1555000${minute}`, created_at: at(minute), on_shift: 1 })
  const d1 = driver(ownerA, 1)
  driver(ownerA, 2)
  const d3 = driver(ownerA, 3)

  let n = 0
  const order = (o: { driver?: number | null; status?: string; customer?: number | null; assignedAt?: string; store?: number }) => {
    const timeline: Record<string, string> = { created_at: at(5) }
    if (o.assignedAt) timeline.assigned_at = o.assignedAt
    const id = ins(db, 'orders', {
      store_id: o.store ?? storeA, type: 'delivery', status: 'ready', delivery_status: o.status ?? 'delivered', customer_id: o.customer ?? null,
      customer_name: 'Ada', phone: '+15550001', address: '1 Main St', subtotal: 1000, total: 1000, driver_id: o.driver ?? null,
      track_token: `tt${++n}`, timeline: JSON.stringify(timeline), created_at: at(5), updated_at: at(5),
    })
    ins(db, 'order_lines', { order_id: id, item_id: pizza, variant_id: variant, name: 'Pizza', quantity: 1, unit_price: 1000, extras: JSON.stringify([{ id: oldExtra, name: 'Cheese', price: 150 }]), line_total: 1150 })
    ins(db, 'deliveries', { order_id: id, driver_fee: 300, updated_at: at(5) })
    ins(db, 'outbox', { owner_id: ownerA, store_id: storeA, event: 'order.created', data: JSON.stringify({ order_id: id, restaurant_id: storeA }), created_at: at(5) })
    if (o.driver != null) {
      ins(db, 'outbox', { owner_id: ownerA, store_id: storeA, event: 'order.driver_assigned', data: JSON.stringify({ order_id: id, restaurant_id: storeA, driver_id: o.driver }), created_at: o.assignedAt ?? at(10) })
    }
    return id
  }

  // Kept: a delivered order of a live driver of the same owner, with a live customer.
  const kept = order({ driver: d1, customer, assignedAt: at(10) })
  ins(db, 'order_lines', { order_id: kept, item_id: soup, name: 'Soup', quantity: 1, unit_price: 1000, line_total: 1000 })
  // D3 (owner A) delivers one order and holds another (the old schema let a delete leave both), then is deleted...
  const leakedDelivered = order({ driver: d3, customer: goneCustomer, assignedAt: at(10) })
  const leakedActive = order({ driver: d3, status: 'out_for_delivery', assignedAt: at(10) })
  db.prepare('DELETE FROM drivers WHERE id = ?').run(d3)
  db.prepare('DELETE FROM customers WHERE id = ?').run(goneCustomer)
  // ... and owner B's next driver is handed id 3: the defect this migration closes.
  const reusedByB = driver(ownerB, 21)
  // Same owner: D4 delivers at :30, is deleted, and A's next driver (:40) is handed id 4.
  const d4 = driver(ownerA, 25)
  const staleSameOwner = order({ driver: d4, assignedAt: at(30) })
  db.prepare('DELETE FROM drivers WHERE id = ?').run(d4)
  const reusedByA = driver(ownerA, 40)
  // The newest driver, deleted, leaving only its delivered order behind: ids up to 5 were handed out.
  const d5 = driver(ownerA, 45)
  const dangling = order({ driver: d5, assignedAt: at(46) })
  db.prepare('DELETE FROM drivers WHERE id = ?').run(d5)
  db.prepare('DELETE FROM menu_items WHERE id = ?').run(soup)
  db.prepare('DELETE FROM menu_categories WHERE id = ?').run(cat2)
  ins(db, 'outbox', { owner_id: ownerA, store_id: storeA, event: 'menu.updated', data: JSON.stringify({ restaurant_id: storeA, change: 'deleted', entity: 'category', id: cat2 }), created_at: at(50) })

  // Every other table gets rows too, so "every row intact" covers them.
  ins(db, 'idempotency_keys', { scope: 'owner:1', key: 'k1', request_hash: 'h', order_id: kept, created_at: T0 })
  const staff = ins(db, 'staff', { store_id: storeA, name: 'Sam', email: 's@x', role: 'manager', password_hash: 'p', created_at: T0, totp_pending: 'ABC', totp_last_step: 7 })
  ins(db, 'staff_tokens', { staff_id: staff, token_hash: 'st', device: 'pos', method: 'password', created_at: T0 })
  ins(db, 'staff_devices', { staff_id: staff, device_token: 'sd', platform: 'ios', created_at: T0, updated_at: T0 })
  ins(db, 'staff_pin_salts', { store_id: storeA, salt: 'salt' })
  ins(db, 'staff_pin_failures', { store_id: storeA, device: 'pos', failures: 1, window_start: T0 })
  ins(db, 'store_integration', { store_id: storeA, updated_at: T0 })
  const coupon = ins(db, 'coupons', { store_id: storeA, code: 'TEN', kind: 'percent', value: 10, created_at: T0, updated_at: T0 })
  ins(db, 'coupon_redemptions', { coupon_id: coupon, order_id: kept, discount: 100, created_at: T0 })
  ins(db, 'customer_tokens', { customer_id: customer, token_hash: 'ct', device: 'phone', created_at: T0 })
  ins(db, 'customer_otps', { store_id: storeA, phone: '+15550001', code_hash: 'c', expires_at: T0, created_at: T0 })
  ins(db, 'customer_addresses', { customer_id: customer, address: '1 Main St', created_at: T0, updated_at: T0 })
  const card = ins(db, 'gift_cards', { store_id: storeA, customer_id: customer, code_hash: 'g', code_last4: '1234', created_at: T0 })
  ins(db, 'gift_card_entries', { gift_card_id: card, amount: 5000, reason: 'issued', created_at: T0 })
  ins(db, 'gift_card_entries', { gift_card_id: card, amount: -1000, reason: 'redeemed', order_id: kept, created_at: T0 })
  ins(db, 'store_credit_entries', { store_id: storeA, customer_id: customer, amount: 500, reason: 'refund', order_id: kept, created_at: T0 })
  ins(db, 'driver_shifts', { driver_id: d1, started_at: T0 })
  ins(db, 'driver_tokens', { driver_id: d1, token_hash: 'dt', created_at: T0 })
  ins(db, 'driver_login_codes', { phone: '+15550001', code_hash: 'x', expires_at: T0, created_at: T0 })
  ins(db, 'driver_devices', { driver_id: d1, device_token: 'dd', platform: 'android', created_at: T0, updated_at: T0 })
  ins(db, 'delivery_offers', { order_id: kept, store_id: storeA, driver_id: d1, fee: 300, status: 'accepted', expires_at: T0, created_at: T0 })
  const ep = ins(db, 'webhook_endpoints', { owner_id: ownerA, url: 'https://example.com/h', events: '["*"]', secret: 'whsec_x', from_event_id: 0, created_at: T0 })
  const ep2 = ins(db, 'webhook_endpoints', { owner_id: ownerA, url: 'https://example.com/h2', events: '["*"]', secret: 'whsec_y', from_event_id: 0, created_at: T0 })
  const del = ins(db, 'webhook_deliveries', { endpoint_id: ep, msg_id: 'm1', event_id: 1, event: 'order.created', body: '{}', status: 'failed', created_at: T0, updated_at: T0 })
  ins(db, 'webhook_deliveries', { endpoint_id: ep, msg_id: 'm2', event: 'order.created', body: '{}', status: 'pending', next_attempt_at: 1, requeued_from: del, created_at: T0, updated_at: T0 })
  ins(db, 'webhook_attempts', { delivery_id: del, attempt: 1, http_status: 500, duration_ms: 12, created_at: T0 })
  db.prepare('DELETE FROM webhook_endpoints WHERE id = ?').run(ep2)
  const maxEvent = db.prepare('SELECT MAX(id) FROM outbox').pluck().get() as number
  db.prepare('UPDATE webhook_cursor SET last_event_id = ?').run(maxEvent)

  const violations = db.pragma('foreign_key_check') as unknown[]
  if (violations.length) throw new Error(`fixture breaks the old foreign keys: ${JSON.stringify(violations)}`)
  return { newExtra, ownerA, ownerB, storeA, d1, d3, d5, reusedByB, reusedByA, kept, leakedDelivered, leakedActive, staleSameOwner, dangling, customer, goneCustomer, soup, oldExtra, cat2, ep2, maxEvent }
}

/** Every row of every table, by rowid. */
function snapshot(db: Db): Record<string, unknown[]> {
  const out: Record<string, unknown[]> = {}
  for (const name of tables(db)) if (name !== 'schema_migrations') out[name] = db.prepare(`SELECT * FROM ${name} ORDER BY rowid`).all()
  return out
}

t.test('a 001-005 database keeps every row and id; only wrong references are dropped', async (t) => {
  const db = fresh(upTo(REBUILD - 1))
  const ids = populate(db)
  t.equal(ids.reusedByB, ids.d3, 'the old schema hands a deleted id to another owner (the defect)')
  t.equal(ids.reusedByA, 4, 'and to the same owner')
  const before = snapshot(db)
  t.same(migrate(db, upTo(REBUILD)), [REBUILD])
  const after = snapshot(db)

  // What the migration is expected to change: orders naming a driver that is not theirs.
  type OrderRow = { id: number; driver_id: number | null; delivery_status: string; customer_id: number | null }
  const expected = structuredClone(before)
  for (const o of expected.orders as OrderRow[]) {
    if ([ids.leakedDelivered, ids.leakedActive, ids.staleSameOwner, ids.dangling].includes(o.id)) {
      o.driver_id = null
      if (o.id === ids.leakedActive) o.delivery_status = 'pending'
    }
    if (o.customer_id === ids.goneCustomer) o.customer_id = null
  }
  t.same(Object.keys(after).sort(), Object.keys(before).sort(), 'the same tables')
  for (const name of Object.keys(before)) t.same(after[name], expected[name], `${name}: every row, every id, every value`)

  const order = (id: number) => db.prepare('SELECT driver_id, delivery_status FROM orders WHERE id = ?').get(id)
  t.same(order(ids.kept), { driver_id: ids.d1, delivery_status: 'delivered' }, "a live driver's order keeps its driver")
  t.same(order(ids.leakedDelivered), { driver_id: null, delivery_status: 'delivered' }, "owner B's driver no longer sees owner A's delivery")
  t.same(order(ids.leakedActive), { driver_id: null, delivery_status: 'pending' }, 'an order in progress goes back to the pool')
  t.same(order(ids.staleSameOwner), { driver_id: null, delivery_status: 'delivered' }, 'a driver created after the assignment is not its driver')
  t.same(db.pragma('foreign_key_check'), [], 'every reference valid')
  t.equal(db.pragma('foreign_keys', { simple: true }), 1, 'enforcement back on')
})

t.test('new rows get ids above every id the database ever handed out, and never a deleted one', async (t) => {
  const db = fresh(upTo(REBUILD - 1))
  const ids = populate(db)
  migrate(db, upTo(REBUILD))
  const seq = (name: string) => db.prepare('SELECT seq FROM sqlite_sequence WHERE name = ?').pluck().get(name) as number
  t.equal(seq('drivers'), ids.d5, 'the deleted newest driver, known from its order and events')
  t.equal(seq('menu_items'), ids.soup, 'the deleted newest item, known from an order line')
  t.equal(ids.newExtra, 1, 'the old schema reused the replaced extras\' ids')
  t.equal(seq('item_extras'), ids.oldExtra, 'the highest extra id an order line names')
  t.equal(seq('menu_categories'), ids.cat2, 'the deleted category, known from its menu.updated event')
  t.equal(seq('customers'), ids.goneCustomer)
  t.equal(seq('outbox'), ids.maxEvent)

  const now = T0
  const d = ins(db, 'drivers', { owner_id: ids.ownerB, name: 'New', phone: '+15559999', created_at: now })
  t.equal(d, ids.d5 + 1)
  db.prepare('DELETE FROM drivers WHERE id = ?').run(d)
  t.equal(ins(db, 'drivers', { owner_id: ids.ownerB, name: 'Next', phone: '+15559998', created_at: now }), d + 1, 'a deleted newest id is never handed out again')
  const ep = ins(db, 'webhook_endpoints', { owner_id: ids.ownerB, url: 'https://example.com/b', events: '["*"]', secret: 's', from_event_id: 0, created_at: now })
  db.prepare('DELETE FROM webhook_endpoints WHERE id = ?').run(ep)
  t.ok(ins(db, 'webhook_endpoints', { owner_id: ids.ownerB, url: 'https://example.com/b', events: '["*"]', secret: 's', from_event_id: 0, created_at: now }) > ep)
  const item = ins(db, 'menu_items', { store_id: ids.storeA, category_id: 1, name: 'New', price: 1, created_at: now, updated_at: now })
  t.ok(item > ids.soup, 'a new item cannot take the id an old order line names')
})

t.test('foreign keys: deleting a driver or customer leaves their orders, naming nobody', async (t) => {
  const db = fresh(upTo(REBUILD))
  const ids = populate(db)
  db.prepare('DELETE FROM drivers WHERE id = ?').run(ids.d1)
  t.same(db.prepare('SELECT driver_id, delivery_status FROM orders WHERE id = ?').get(ids.kept), { driver_id: null, delivery_status: 'delivered' })
  t.equal(db.prepare('SELECT COUNT(*) FROM delivery_offers WHERE driver_id = ?').pluck().get(ids.d1), 0, 'its offers go with it')
  db.prepare('DELETE FROM customers WHERE id = ?').run(ids.customer)
  t.equal(db.prepare('SELECT customer_id FROM orders WHERE id = ?').pluck().get(ids.kept), null)
  t.throws(() => db.prepare('UPDATE orders SET driver_id = 999 WHERE id = ?').run(ids.kept), /FOREIGN KEY/, 'an order cannot name a driver that does not exist')
  // An order (only ever deleted with its store) takes its offers; ledger entries stay, naming no order.
  db.prepare('DELETE FROM stores WHERE id = ?').run(ids.storeA)
  t.equal(db.prepare('SELECT COUNT(*) FROM orders').pluck().get(), 0)
  t.same(db.pragma('foreign_key_check'), [])
})

t.test('deleteIdleDriver: refused while an order has the driver on an active delivery, decided in the write', async (t) => {
  const db = fresh(upTo(REBUILD))
  const ids = populate(db)
  const busy = ins(db, 'drivers', { owner_id: ids.ownerA, name: 'Busy', phone: '+15558888', created_at: T0 })
  const o = db.prepare('SELECT id FROM orders WHERE driver_id = ?').pluck().get(ids.d1) as number
  db.prepare("UPDATE orders SET driver_id = ?, delivery_status = 'picked_up' WHERE id = ?").run(busy, o)
  t.equal(deleteIdleDriver(db, busy), false, 'refused: driver_busy')
  t.ok(db.prepare('SELECT 1 FROM drivers WHERE id = ?').get(busy), 'still there')
  db.prepare("UPDATE orders SET delivery_status = 'delivered' WHERE id = ?").run(o)
  t.equal(deleteIdleDriver(db, busy), true)
  t.same(db.prepare('SELECT driver_id, delivery_status FROM orders WHERE id = ?').get(o), { driver_id: null, delivery_status: 'delivered' }, 'its history stays, naming no driver')
  t.equal(deleteIdleDriver(db, busy), false, 'already gone')
})

// --- the schema is 001-005's, plus AUTOINCREMENT and the new foreign keys ------------------------

const NEW_FOREIGN_KEYS = [
  'delivery_offers.store_id → stores.id ON DELETE CASCADE',
  'gift_card_entries.order_id → orders.id ON DELETE SET NULL',
  'orders.customer_id → customers.id ON DELETE SET NULL',
  'orders.driver_id → drivers.id ON DELETE SET NULL',
  'store_credit_entries.order_id → orders.id ON DELETE SET NULL',
]
const NEW_INDEXES = ['gift_card_entries_order', 'store_credit_entries_order']

function foreignKeys(db: Db, table: string): string[] {
  return (db.pragma(`foreign_key_list(${table})`) as Array<{ table: string; from: string; to: string; on_delete: string; on_update: string; match: string }>)
    .map((f) => `${table}.${f.from} → ${f.table}.${f.to} ON DELETE ${f.on_delete}${f.on_update === 'NO ACTION' ? '' : ` ON UPDATE ${f.on_update}`}`)
}

/** Indexes by what they are (autoindex names follow the table, so the name is not compared for those). */
function indexes(db: Db, table: string): string[] {
  return (db.pragma(`index_list(${table})`) as Array<{ name: string; unique: number; origin: string; partial: number }>).map((i) => {
    const cols = (db.pragma(`index_xinfo(${i.name})`) as Array<{ name: string | null; desc: number; key: number; coll: string }>)
      .filter((c) => c.key).map((c) => `${c.name}${c.desc ? ' DESC' : ''} ${c.coll}`).join(', ')
    const sql = db.prepare('SELECT sql FROM sqlite_master WHERE type = ? AND name = ?').pluck().get('index', i.name) as string | null
    return `${i.origin === 'c' ? i.name : i.origin} unique=${i.unique} partial=${i.partial} (${cols}) ${sql ?? ''}`
  })
}

/** The CHECK clauses of a table's SQL, whitespace-normalised. */
function checks(sql: string): string[] {
  const out: string[] = []
  const re = /CHECK\s*\(/gi
  for (let m = re.exec(sql); m; m = re.exec(sql)) {
    let depth = 1
    let i = m.index + m[0].length
    for (; i < sql.length && depth > 0; i++) depth += sql[i] === '(' ? 1 : sql[i] === ')' ? -1 : 0
    out.push(sql.slice(m.index, i).replace(/\s+/g, ' '))
  }
  return out.sort()
}

const tableSql = (db: Db, name: string) => db.prepare("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?").pluck().get(name) as string

t.test('columns, defaults, CHECKs, UNIQUEs and indexes are unchanged; foreign keys only added', async (t) => {
  const old = fresh(upTo(REBUILD - 1))
  const cur = fresh(upTo(REBUILD))
  t.same(tables(cur), tables(old), 'the same tables, no leftover new_* table')
  const addedFks: string[] = []
  const addedIdx: string[] = []
  for (const name of tables(old)) {
    t.same(cur.pragma(`table_xinfo(${name})`), old.pragma(`table_xinfo(${name})`), `${name}: columns, types, NOT NULL, defaults, primary key, in order`)
    t.same(checks(tableSql(cur, name)), checks(tableSql(old, name)), `${name}: CHECK constraints`)
    const [fo, fc] = [foreignKeys(old, name), foreignKeys(cur, name)]
    t.same(fo.filter((f) => !fc.includes(f)), [], `${name}: no foreign key lost or changed`)
    addedFks.push(...fc.filter((f) => !fo.includes(f)))
    const [io, ic] = [indexes(old, name), indexes(cur, name)]
    t.same(io.filter((i) => !ic.includes(i)), [], `${name}: no index or UNIQUE lost or changed`)
    addedIdx.push(...ic.filter((i) => !io.includes(i)))
  }
  t.same(addedFks.sort(), NEW_FOREIGN_KEYS, 'exactly the documented new foreign keys')
  t.same(addedIdx.map((i) => i.split(' ')[0]).sort(), NEW_INDEXES, 'and their child indexes')
})

t.test('the renames rewrite nothing, whatever PRAGMA legacy_alter_table says', async (t) => {
  const schema = (db: Db) => db.prepare("SELECT type, name, tbl_name, sql FROM sqlite_master WHERE name NOT LIKE 'sqlite_autoindex%' ORDER BY type, name").all() as Array<{ name: string; sql: string | null }>
  const results = ['legacy_alter_table = OFF', 'legacy_alter_table = ON'].map((p) => {
    const db = fresh(upTo(REBUILD - 1), [p])
    populate(db)
    migrate(db, upTo(REBUILD))
    t.same(db.pragma('foreign_key_check'), [], `${p}: references valid`)
    const names = new Set(tables(db))
    for (const name of names) {
      for (const f of db.pragma(`foreign_key_list(${name})`) as Array<{ table: string }>) t.ok(names.has(f.table), `${p}: ${name} → ${f.table} exists`)
    }
    t.notOk(schema(db).some((r) => /\bnew_\w+/.test(r.sql ?? '')), `${p}: no reference to a temporary table name`)
    return schema(db)
  })
  t.same(results[0], results[1], 'both settings give the same schema')
})

// --- guard: every generated id is AUTOINCREMENT, now and in every later migration -----------------

/**
 * Tables whose INTEGER PRIMARY KEY is not an id SQLite generates for a new row, so AUTOINCREMENT
 * has nothing to protect: one-row tables and bookkeeping. A table whose key is itself a foreign key
 * (deliveries.order_id, ...) is recognised without being listed.
 */
const NOT_GENERATED: Record<string, string> = {
  webhook_cursor: 'one row, id = 1 (CHECK)',
  schema_migrations: 'the migration number',
}

t.test('guard: every table with a generated INTEGER PRIMARY KEY says AUTOINCREMENT', async (t) => {
  const db = fresh(all)
  const missing: string[] = []
  // FTS5 virtual tables and their shadow tables (migration 010) keep SQLite's own rowids: an index
  // row's rowid is the base row's id, never generated, so AUTOINCREMENT does not apply.
  const virtual = new Set((db.pragma('table_list') as Array<{ name: string; type: string }>)
    .filter((r) => r.type === 'virtual' || r.type === 'shadow').map((r) => r.name))
  for (const name of tables(db)) {
    const sql = tableSql(db, name)
    if (virtual.has(name) || /WITHOUT\s+ROWID/i.test(sql) || NOT_GENERATED[name]) continue
    const pk = (db.pragma(`table_info(${name})`) as Array<{ name: string; type: string; pk: number }>).filter((c) => c.pk > 0)
    // Only a single column declared exactly INTEGER is an alias of the rowid (sqlite.org/lang_createtable.html#rowid).
    if (pk.length !== 1 || pk[0]!.type.toUpperCase() !== 'INTEGER') continue
    const isForeignKey = (db.pragma(`foreign_key_list(${name})`) as Array<{ from: string }>).some((f) => f.from === pk[0]!.name)
    if (isForeignKey) continue
    if (!/\bAUTOINCREMENT\b/i.test(sql)) missing.push(name)
  }
  t.same(missing, [], 'declare the id INTEGER PRIMARY KEY AUTOINCREMENT (issue 10 #2: ids that leave the server are never reused)')
  t.ok((db.prepare('SELECT COUNT(*) FROM sqlite_sequence').pluck().get() as number) >= 32, 'the id tables have sequences')
})

// --- the runner's foreign_keys=off opt-in -------------------------------------------------------

t.test('runner: foreign_keys=off migrations rebuild a parent without cascading; violations roll back', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'migrate-fk-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const base = `CREATE TABLE parent (id INTEGER PRIMARY KEY, name TEXT NOT NULL);
CREATE TABLE child (id INTEGER PRIMARY KEY, parent_id INTEGER NOT NULL REFERENCES parent(id) ON DELETE CASCADE);
INSERT INTO parent (id, name) VALUES (1, 'p'); INSERT INTO child (id, parent_id) VALUES (10, 1);`
  const rebuild = `CREATE TABLE new_parent (id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT NOT NULL);
INSERT INTO new_parent (id, name) SELECT id, name FROM parent;
DROP TABLE parent;
ALTER TABLE new_parent RENAME TO parent;`
  const run = (files: Record<string, string>) => {
    const d = mkdtempSync(join(dir, 'm-'))
    for (const [name, sql] of Object.entries(files)) writeFileSync(join(d, name), sql)
    const db = new Database(':memory:')
    db.pragma('foreign_keys = ON')
    let error: unknown = null
    try { migrate(db, readMigrations(d)) } catch (err) { error = err }
    return { db, error }
  }

  const plain = run({ '001_base.sql': base, '002_rebuild.sql': rebuild })
  t.equal(plain.db.prepare('SELECT COUNT(*) FROM child').pluck().get(), 0, 'without the opt-in, DROP TABLE cascades: why the opt-in exists')

  const off = run({ '001_base.sql': base, '002_rebuild.sql': `-- migrate: foreign_keys=off\n${rebuild}` })
  t.equal(off.error, null)
  t.same(off.db.prepare('SELECT id, parent_id FROM child').all(), [{ id: 10, parent_id: 1 }], 'with it, the children stay')
  t.equal(off.db.pragma('foreign_keys', { simple: true }), 1, 'enforcement is back on afterwards')
  t.same(off.db.prepare('SELECT version FROM schema_migrations ORDER BY version').pluck().all(), [1, 2])

  const bad = run({ '001_base.sql': base, '002_bad.sql': '-- migrate: foreign_keys=off\nINSERT INTO child (id, parent_id) VALUES (11, 99);' })
  t.match(String(bad.error), /002_bad\.sql leaves 1 foreign key violation\(s\): child rowid 11 → parent/)
  t.equal(bad.db.prepare('SELECT COUNT(*) FROM child').pluck().get(), 1, 'rolled back')
  t.same(bad.db.prepare('SELECT version FROM schema_migrations').pluck().all(), [1], 'not recorded')
  t.equal(bad.db.pragma('foreign_keys', { simple: true }), 1, 'enforcement back on after a failure too')

  const broken = run({ '001_base.sql': base, '002_broken.sql': '-- migrate: foreign_keys=off\nDROP TABLE parent; SELECT nonsense FROM nowhere;' })
  t.ok(broken.error, 'an SQL error fails the migration')
  t.equal(broken.db.prepare('SELECT COUNT(*) FROM parent').pluck().get(), 1, 'and rolls it back')
  t.equal(broken.db.pragma('foreign_keys', { simple: true }), 1)

  const notFirst = run({ '001_base.sql': base, '002_rebuild.sql': `-- a comment first\n-- migrate: foreign_keys=off\n${rebuild}` })
  t.equal(notFirst.db.prepare('SELECT COUNT(*) FROM child').pluck().get(), 0, 'the marker counts only on the first line')

  const late = run({ '001_base.sql': base, '003_later.sql': 'SELECT 1;' })
  t.equal(late.error, null)
  const d2 = mkdtempSync(join(dir, 'm-'))
  for (const [name, sql] of Object.entries({ '001_base.sql': base, '002_rebuild.sql': rebuild, '003_later.sql': 'SELECT 1;' })) writeFileSync(join(d2, name), sql)
  t.throws(() => migrate(late.db, readMigrations(d2)), /002_rebuild\.sql is older than migration 3, already applied/, 'a migration older than an applied one is refused, not run out of order')
  t.equal(late.db.prepare('SELECT COUNT(*) FROM child').pluck().get(), 1, 'nothing ran')

  const dup = run({ '001_base.sql': base, '001_again.sql': 'SELECT 1;' })
  t.match(String(dup.error), /001_again\.sql and 001_base\.sql share the number 1/, 'two files with one number are refused, not silently skipped')

  const db = new Database(':memory:')
  db.exec('BEGIN')
  const d = mkdtempSync(join(dir, 'm-'))
  writeFileSync(join(d, '001_x.sql'), '-- migrate: foreign_keys=off\nSELECT 1;')
  t.throws(() => migrate(db, readMigrations(d)), /inside a transaction/, 'refused where the pragma would be silently ignored')
})
