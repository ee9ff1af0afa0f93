/**
 * The staff push reaction keeps each store's push targets under the auth epoch (migrations 025 and
 * 027, src/reactions/staff-push.ts): a device removed, a member removed or stripped of the orders
 * and kitchen permissions, or a device added — on another SQLite connection, as the CLI or an
 * operator would — must count from the very next order. Each case warms the cache with an order
 * first, so it fails without the invalidation. A new order's pushes are sent before its reply.
 */
import t, { type Test } from 'tap'
import Database from 'better-sqlite3'
import { startServer } from './helpers/server.ts'
import { createAccount, postOrder } from './helpers/fixtures.ts'
import { createStaff } from './helpers/people.ts'
import { nowIso } from '../src/storage/db.ts'
import type { RecordingPushProvider } from '../src/providers/push.ts'

const s = await startServer({ RATE_LIMIT_PER_MINUTE: '100000' })
t.teardown(() => s.close())
const push = s.app.svc.push as RecordingPushProvider
const other = new Database(s.dbPath)
other.pragma('busy_timeout = 5000')
t.teardown(() => other.close())

const acct = createAccount(s.app.svc.db)
let n = 0
const addDevice = (staffId: number) => {
  const token = `device-${++n}`
  other.prepare('INSERT INTO staff_devices (staff_id, device_token, platform, created_at, updated_at) VALUES (?, ?, ?, ?, ?)').run(staffId, token, 'ios', nowIso(), nowIso())
  return token
}
/** Place an order; the device tokens its new-order alert went to. */
async function alerted(t: Test): Promise<string[]> {
  const r = await postOrder(s, acct.token, acct.storeId, { type: 'takeaway', items: [{ item_id: acct.menu.fries, quantity: 1 }] })
  t.equal(r.status, 200)
  return push.sent.filter((m) => m.data.order_id === r.body.id).map((m) => m.device_token)
}

t.test('a device added on another connection gets the next order', async (t) => {
  const waiter = createStaff(s.app.svc.db, acct.storeId, { role: 'waiter' })
  const first = addDevice(waiter.id)
  t.ok((await alerted(t)).includes(first), 'warm: the first device is alerted')
  const second = addDevice(waiter.id)
  t.ok((await alerted(t)).includes(second), 'the added device is alerted at once')
})

t.test('a device removed on another connection is not alerted any more', async (t) => {
  const waiter = createStaff(s.app.svc.db, acct.storeId, { role: 'waiter' })
  const device = addDevice(waiter.id)
  t.ok((await alerted(t)).includes(device))
  t.ok((await alerted(t)).includes(device), 'answered from the cache')
  other.prepare('DELETE FROM staff_devices WHERE device_token = ?').run(device)
  t.notOk((await alerted(t)).includes(device))
})

t.test('a member stripped of orders and kds on another connection is not alerted any more', async (t) => {
  const waiter = createStaff(s.app.svc.db, acct.storeId, { role: 'waiter' })
  const device = addDevice(waiter.id)
  t.ok((await alerted(t)).includes(device))
  other.prepare('UPDATE staff SET permissions = ? WHERE id = ?').run(JSON.stringify({ revoke: ['orders', 'kds'] }), waiter.id)
  t.notOk((await alerted(t)).includes(device))
})

t.test('a member removed on another connection is not alerted any more', async (t) => {
  const cook = createStaff(s.app.svc.db, acct.storeId, { role: 'kitchen' })
  const device = addDevice(cook.id)
  t.ok((await alerted(t)).includes(device))
  other.prepare('DELETE FROM staff WHERE id = ?').run(cook.id)
  t.notOk((await alerted(t)).includes(device))
})
