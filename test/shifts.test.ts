/**
 * Cash shifts (issue 17 item 3; docs/operations.md "Cash shifts"): staff with `orders` and owners
 * open a register's shift with a float, one open shift per register (also when two front doors race),
 * closing records counted against expected cash (over/short) and cannot happen twice, totals count
 * cash payments and cash refunds of the shift, events reach a real webhook receiver, other owners'
 * and other stores' shifts are 404, staff without `orders` get 403.
 */
import t, { type Test } from 'tap'
import { startServer } from './helpers/server.ts'
import { createAccount, createStaff, createStore, isError, tokenFor } from './helpers/fixtures.ts'
import { conformsToCatalog, createEndpoint, startReceiver, type Received } from './helpers/webhook-receiver.ts'

const s = await startServer({ WEBHOOK_ALLOW_LOOPBACK: '1', RATE_LIMIT_PER_MINUTE: '100000' })
const rcv = await startReceiver()
t.teardown(async () => { await s.close(); await rcv.close() })
const db = s.app.svc.db

const a = createAccount(db)
const b = createAccount(db)
const cashier = createStaff(db, a.storeId, { role: 'cashier' })
const kitchen = createStaff(db, a.storeId, { role: 'kitchen' })
const staffB = createStaff(db, b.storeId, { role: 'manager' })
// A second store of the same owner: its staff must not reach store A's shifts either.
const a2 = createStore(db, a.ownerId)
const staffA2 = createStaff(db, a2.id, { role: 'manager' })
const ep = await createEndpoint(s.base, a.token, `${rcv.url}/shifts`, ['shift.*'])

const shiftCount = () => db.prepare('SELECT COUNT(*) FROM shifts').pluck().get() as number
const owner = (path: string) => `/restaurants/${a.storeId}${path}`

async function event(name: string, shiftId: number): Promise<Received> {
  const match = (r: Received) => r.body.event === name && r.body.data.shift_id === shiftId
  await rcv.until((all) => all.some(match), 5000, `${name} of shift ${shiftId}`)
  return rcv.received.find(match)!
}

const conforms = (t: Test, r: Received) => conformsToCatalog(t, r, ep.secret)

t.test('a cashier opens a shift; one open shift per register; the owner sees it', async (t) => {
  const open = await s.req('POST', '/staff/shifts', { token: cashier.token, body: { opening_float: 150 } })
  t.equal(open.status, 200)
  t.match(open.body, { restaurant_id: a.storeId, register: 'main', status: 'open', opened_by_staff_id: cashier.id, closed_at: null })
  t.same(open.body.totals, { opening_float: 150, cash_taken: 0, card_taken: 0, cash_refunded: 0, expected_cash: 150, counted_cash: null, over_short: null })

  isError(t, await s.req('POST', '/staff/shifts', { token: cashier.token, body: { opening_float: 10 } }), 409, 'shift_already_open', 'second open on main')
  isError(t, await s.req('POST', owner('/shifts'), { token: a.token, body: { opening_float: 10, register: 'main' } }), 409, 'shift_already_open', 'owner opening main too')
  const bar = await s.req('POST', owner('/shifts'), { token: a.token, body: { opening_float: 20, register: 'bar' } })
  t.equal(bar.status, 200, 'another register may open')
  t.equal(bar.body.opened_by_staff_id, null, 'the owner opened it')

  const list = await s.req('GET', owner('/shifts?status=open'), { token: a.token })
  t.equal(list.status, 200)
  t.same(list.body.data.map((x: { id: number }) => x.id), [bar.body.id, open.body.id], 'newest first')
  t.equal(list.body.total, 2)
  const onlyBar = await s.req('GET', '/staff/shifts?register=bar', { token: cashier.token })
  t.same(onlyBar.body.data.map((x: { id: number }) => x.id), [bar.body.id], 'register filter')
  const detail = await s.req('GET', `/staff/shifts/${open.body.id}`, { token: cashier.token })
  t.same(detail.body, open.body, 'detail as opened')

  const opened = await event('shift.opened', open.body.id)
  t.same(opened.body.data, { shift_id: open.body.id, restaurant_id: a.storeId, register: 'main', staff_id: cashier.id, opened_at: open.body.opened_at, opening_float: '150.00' })
  conforms(t, opened)

  // Leave the registers closed for the next tests.
  for (const x of [open.body, bar.body]) t.equal((await s.req('POST', owner(`/shifts/${x.id}/close`), { token: a.token, body: { counted_cash: x.totals.opening_float } })).status, 200)
})

t.test('two concurrent opens of one register from two front doors: exactly one succeeds', async (t) => {
  for (let round = 0; round < 5; round++) {
    const register = `race-${round}`
    const res = await Promise.all([
      s.req('POST', '/staff/shifts', { token: cashier.token, body: { opening_float: 1, register } }),
      s.req('POST', owner('/shifts'), { token: a.token, body: { opening_float: 2, register } }),
      s.req('POST', '/staff/shifts', { token: cashier.token, body: { opening_float: 3, register } }),
    ])
    t.same(res.map((r) => r.status).sort(), [200, 409, 409], `round ${round}: one 200, two 409`)
    for (const r of res.filter((r) => r.status === 409)) t.equal(r.body.code, 'shift_already_open')
    t.equal(db.prepare('SELECT COUNT(*) FROM shifts WHERE store_id = ? AND register = ? AND closed_at IS NULL').pluck().get(a.storeId, register), 1, 'one open row')
  }
})

t.test('closing records counted against expected; a closed shift cannot be closed again', async (t) => {
  const open = await s.req('POST', owner('/shifts'), { token: a.token, body: { opening_float: 100.5, register: 'close-test' } })
  const closed = await s.req('POST', `/staff/shifts/${open.body.id}/close`, { token: cashier.token, body: { counted_cash: 99.75, note: 'one coin short' } })
  t.equal(closed.status, 200)
  t.match(closed.body, { status: 'closed', closed_by_staff_id: cashier.id, note: 'one coin short' })
  t.same(closed.body.totals, { opening_float: 100.5, cash_taken: 0, card_taken: 0, cash_refunded: 0, expected_cash: 100.5, counted_cash: 99.75, over_short: -0.75 })
  isError(t, await s.req('POST', `/staff/shifts/${open.body.id}/close`, { token: cashier.token, body: { counted_cash: 100.5 } }), 409, 'shift_closed', 'close twice')
  const again = await s.req('GET', owner(`/shifts/${open.body.id}`), { token: a.token })
  t.same(again.body, closed.body, 'the second close changed nothing')

  const ev = await event('shift.closed', open.body.id)
  t.same(ev.body.data, {
    shift_id: open.body.id, restaurant_id: a.storeId, register: 'close-test', staff_id: cashier.id, opened_at: open.body.opened_at, closed_at: closed.body.closed_at,
    opening_float: '100.50', closing_total: '99.75', expected_cash: '100.50', counted_cash: '99.75', over_short: '-0.75',
  })
  conforms(t, ev)
  t.equal(rcv.of('shift.closed').filter((r) => r.body.data.shift_id === open.body.id).length, 1, 'shift.closed once')
  // After a close the register may open again.
  t.equal((await s.req('POST', owner('/shifts'), { token: a.token, body: { opening_float: 0, register: 'close-test' } })).status, 200)
})

t.test('bad input is 422 and writes nothing', async (t) => {
  const before = shiftCount()
  for (const body of [{}, { opening_float: -1 }, { opening_float: 1.234 }, { opening_float: 'ten' }, { opening_float: 1, register: '' }, { opening_float: 1, register: 'x'.repeat(41) }]) {
    isError(t, await s.req('POST', '/staff/shifts', { token: cashier.token, body }), 422, 'validation_failed', JSON.stringify(body))
  }
  const open = await s.req('POST', '/staff/shifts', { token: cashier.token, body: { opening_float: 5, register: 'bad-input' } })
  isError(t, await s.req('POST', `/staff/shifts/${open.body.id}/close`, { token: cashier.token, body: { counted_cash: -5 } }), 422, 'validation_failed', 'negative count')
  isError(t, await s.req('POST', `/staff/shifts/${open.body.id}/close`, { token: cashier.token, body: {} }), 422, 'validation_failed', 'no count')
  t.equal(shiftCount(), before + 1)
  t.equal((await s.req('GET', `/staff/shifts/${open.body.id}`, { token: cashier.token })).body.status, 'open', 'still open')
  isError(t, await s.req('GET', '/staff/shifts?status=maybe', { token: cashier.token }), 422, 'validation_failed', 'bad status filter')
})

t.test('another owner, another store: 404; staff without orders and read-only tokens: 403', async (t) => {
  const open = await s.req('POST', '/staff/shifts', { token: cashier.token, body: { opening_float: 5, register: 'tenancy' } })
  const id = open.body.id as number
  const before = shiftCount()
  isError(t, await s.req('GET', `/restaurants/${a.storeId}/shifts/${id}`, { token: b.token }), 404, 'not_found', "B reading A's store")
  isError(t, await s.req('GET', `/restaurants/${b.storeId}/shifts/${id}`, { token: b.token }), 404, 'not_found', "B naming A's shift under B's store")
  isError(t, await s.req('POST', `/restaurants/${b.storeId}/shifts/${id}/close`, { token: b.token, body: { counted_cash: 1 } }), 404, 'not_found', "B closing A's shift")
  isError(t, await s.req('POST', `/restaurants/${a.storeId}/shifts/${id}/close`, { token: b.token, body: [0] }), 404, 'not_found', '404 before 422')
  isError(t, await s.req('POST', `/restaurants/${a.storeId}/shifts`, { token: b.token, body: { opening_float: 1 } }), 404, 'not_found', "B opening in A's store")
  isError(t, await s.req('GET', `/staff/shifts/${id}`, { token: staffB.token }), 404, 'not_found', "B's staff")
  isError(t, await s.req('POST', `/staff/shifts/${id}/close`, { token: staffA2.token, body: { counted_cash: 1 } }), 404, 'not_found', "staff of the owner's other store")
  isError(t, await s.req('POST', `/staff/shifts/${id}/close`, { token: staffB.token, body: {} }), 404, 'not_found', "B's staff, empty body: 404 before 422")
  t.equal((await s.req('GET', '/staff/shifts', { token: staffA2.token })).body.total, 0, "the other store lists none of A's shifts")

  isError(t, await s.req('POST', '/staff/shifts', { token: kitchen.token, body: { opening_float: 1, register: 'k' } }), 403, 'forbidden', 'kitchen staff lack orders')
  isError(t, await s.req('GET', '/staff/shifts', { token: kitchen.token }), 403, 'forbidden', 'kitchen staff cannot list')
  const readOnly = tokenFor(db, a.ownerId, ['orders:read'])
  t.equal((await s.req('GET', owner(`/shifts/${id}`), { token: readOnly })).status, 200, 'orders:read reads')
  isError(t, await s.req('POST', owner(`/shifts/${id}/close`), { token: readOnly, body: { counted_cash: 1 } }), 403, 'forbidden', 'orders:read cannot close')
  t.equal(shiftCount(), before, 'nothing written')
  t.equal((await s.req('GET', `/staff/shifts/${id}`, { token: cashier.token })).body.status, 'open', 'still open')
})
