/**
 * The owner's order list shows the store's number of orders (api-v1 §2.1 `total`). Counting them on
 * every request walked the store's whole index (34–85 ms for a million orders), so the total is kept
 * per store and brought up to date by counting only newer orders (src/storage/orders.ts
 * `storeTotal`, migration 031). It must stay exact whoever writes: orders placed through the API,
 * orders and deletions written on another SQLite connection (the CLI, an operator), other stores.
 * Each case lists first, so the kept total exists and the case fails without the catch-up or the
 * deletion count.
 */
import t from 'tap'
import Database from 'better-sqlite3'
import { startServer } from './helpers/server.ts'
import { createAccount, type Account } from './helpers/fixtures.ts'
import { newTrackToken } from '../src/auth/tokens.ts'

const s = await startServer({ RATE_LIMIT_PER_MINUTE: '100000' })
t.teardown(() => s.close())
const db = s.app.svc.db
/** Another connection to the server's database file, as the CLI or an operator's sqlite3 would have. */
const other = new Database(s.dbPath)
other.pragma('busy_timeout = 5000')
other.pragma('foreign_keys = ON')
t.teardown(() => other.close())

const place = async (a: Account) => {
  const r = await s.req('POST', `/restaurants/${a.storeId}/orders`, { token: a.token, body: { type: 'takeaway', items: [{ item_id: a.menu.fries, quantity: 1 }] } })
  t.equal(r.status, 200)
  return r.body.id as number
}
const total = async (a: Account, query = '') => {
  const r = await s.req('GET', `/restaurants/${a.storeId}/orders${query}`, { token: a.token })
  t.equal(r.status, 200)
  return r.body.total as number
}
/** A copy of order `id` written on the other connection (a new id and track token). */
const copyElsewhere = (id: number) => Number(other.prepare(`INSERT INTO orders (store_id, type, status, delivery_status, is_paid, customer_name, phone, subtotal, discount, tip_amount, total, track_token, timeline, created_at, updated_at)
  SELECT store_id, type, status, delivery_status, is_paid, customer_name, phone, subtotal, discount, tip_amount, total, ?, timeline, created_at, updated_at FROM orders WHERE id = ?`).run(newTrackToken(), id).lastInsertRowid)

t.test('orders placed after a listing are counted, and only the store\'s own', async (t) => {
  const a = createAccount(db)
  const b = createAccount(db)
  for (let i = 0; i < 3; i++) await place(a)
  await place(b)
  t.equal(await total(a), 3)
  t.equal(await total(b), 1)
  await place(a)
  await place(a)
  t.equal(await total(a), 5, 'two newer orders counted on top of the kept total')
  t.equal(await total(b), 1, 'another store\'s orders are not')
  await place(b)
  t.equal(await total(b), 2)
  t.equal(await total(a), 5)
})

t.test('orders written on another connection are counted by the next listing', async (t) => {
  const a = createAccount(db)
  const first = await place(a)
  t.equal(await total(a), 1)
  copyElsewhere(first)
  copyElsewhere(first)
  t.equal(await total(a), 3)
  const r = await s.req('GET', `/restaurants/${a.storeId}/orders`, { token: a.token })
  t.equal(r.body.data.length, 3, 'the page shows as many as the total says')
})

t.test('an order deleted anywhere, and a whole store deleted, are no longer counted', async (t) => {
  const a = createAccount(db)
  const ids = [await place(a), await place(a), await place(a)]
  t.equal(await total(a), 3)
  other.prepare('DELETE FROM orders WHERE id = ?').run(ids[1])
  t.equal(await total(a), 2, 'a deletion on another connection starts the count again')
  await place(a)
  t.equal(await total(a), 3)

  const gone = createAccount(db)
  await place(gone)
  await place(gone)
  t.equal(await total(gone), 2)
  const before = other.prepare('SELECT n FROM order_deletions').pluck().get() as number
  // The API refuses to delete a store with open orders (409); an operator's delete cascades.
  other.prepare('DELETE FROM stores WHERE id = ?').run(gone.storeId)
  t.equal(other.prepare('SELECT COUNT(*) FROM orders WHERE store_id = ?').pluck().get(gone.storeId), 0, 'the store\'s orders went with it')
  t.equal(other.prepare('SELECT n FROM order_deletions').pluck().get(), before + 2, 'orders removed with their store count as deletions (the cascade fires the trigger)')
  t.equal(await total(a), 3, 'the other stores\' totals are counted again, unchanged')
})

t.test('the status filter keeps counting exactly', async (t) => {
  const a = createAccount(db)
  const ids = [await place(a), await place(a), await place(a)]
  t.equal(await total(a, '?status=cancelled'), 0)
  t.equal((await s.req('PUT', `/restaurants/${a.storeId}/orders/${ids[0]}/status`, { token: a.token, body: { status: 'cancelled' } })).status, 200)
  t.equal(await total(a, '?status=cancelled'), 1)
  t.equal(await total(a, '?status=new'), 2)
  t.equal(await total(a), 3)
})
