/**
 * Split bills (issue 17 item 1; docs/operations.md "Split bills"): the bill with paid and unpaid
 * units per line, `split=N` parts that add up exactly, paying by lines (amount computed, lines
 * never paid twice) and by amount, tips per part.
 */
import t from 'tap'
import { startServer } from './helpers/server.ts'
import { createAccount, createStaff, isError, postOrder } from './helpers/fixtures.ts'

const s = await startServer({ RATE_LIMIT_PER_MINUTE: '100000' })
t.teardown(() => s.close())
const db = s.app.svc.db
const a = createAccount(db)
const staff = createStaff(db, a.storeId, { role: 'waiter' })

/** 3 burgers at 10.00 + 1 fries at 3.00, with a 1.00 tip on the order: total 34.00. */
async function tableOrder() {
  const r = await postOrder(s, a.token, a.storeId, { type: 'on-table', table_number: '9', tip_amount: 1, items: [{ item_id: a.menu.burger.id, quantity: 3 }, { item_id: a.menu.fries, quantity: 1 }] })
  if (r.status !== 200) throw new Error(r.text)
  return r.body as { id: number; total: number; items: Array<{ id: number }> }
}
const bill = (id: number, q = '') => s.req('GET', `/staff/orders/${id}/bill${q}`, { token: staff.token })
const pay = (id: number, body: unknown) => s.req('POST', `/staff/orders/${id}/payments`, { token: staff.token, body })
const count = (id: number) => db.prepare('SELECT COUNT(*) FROM payments WHERE order_id = ?').pluck().get(id) as number

t.test('split by amount: N parts that add up to the balance, each paid with its own tip', async (t) => {
  const o = await tableOrder()
  t.equal(o.total, 34)
  const b = await bill(o.id, '?split=3')
  t.equal(b.status, 200, b.text)
  t.same(b.body.split, [{ part: 1, amount: 11.34 }, { part: 2, amount: 11.33 }, { part: 3, amount: 11.33 }], 'cents distributed, summing to 34.00')
  for (const [i, part] of (b.body.split as Array<{ amount: number }>).entries()) {
    const r = await pay(o.id, { amount: part.amount, method: i === 0 ? 'cash' : 'card', tip_amount: i + 1 })
    t.equal(r.status, 200, r.text)
  }
  const after = await s.req('GET', `/restaurants/${a.storeId}/orders/${o.id}/payments`, { token: a.token })
  t.same(after.body.balance, { total: 34, paid: 34, balance_due: 0, tips: 6, is_paid: true })
  isError(t, await bill(o.id, '?split=0'), 422, 'validation_failed', 'split=0')
  isError(t, await bill(o.id, '?split=51'), 422, 'validation_failed', 'split=51')
})

t.test('split by lines: the amount is computed, lines cannot be paid twice', async (t) => {
  const o = await tableOrder()
  const [burgers, fries] = o.items
  const b0 = await s.req('GET', `/restaurants/${a.storeId}/orders/${o.id}/bill`, { token: a.token })
  t.equal(b0.status, 200)
  // Dues share the 34.00 (incl. the 1.00 order tip) in proportion to 30.00 and 3.00.
  t.match(b0.body.lines, [{ line_id: burgers!.id, quantity: 3, paid_quantity: 0, unpaid_quantity: 3, due: 30.91, unpaid_due: 30.91 }, { line_id: fries!.id, quantity: 1, due: 3.09 }])
  t.notOk('split' in b0.body)

  const one = await pay(o.id, { method: 'card', lines: [{ line_id: burgers!.id, quantity: 1 }], tip_amount: 2 })
  t.equal(one.status, 200, one.text)
  t.equal(one.body.payment.amount, 10.31, 'first unit of 30.91 / 3 carries the spare cent')
  t.same(one.body.payment.lines, [{ line_id: burgers!.id, quantity: 1 }])
  isError(t, await pay(o.id, { method: 'cash', amount: 5, lines: [{ line_id: burgers!.id, quantity: 1 }] }), 422, 'validation_failed', 'amount disagreeing with the lines')
  const two = await pay(o.id, { method: 'cash', amount: 20.6, lines: [{ line_id: burgers!.id, quantity: 2 }] })
  t.equal(two.status, 200, 'an amount equal to the lines is accepted')
  const again = await pay(o.id, { method: 'cash', lines: [{ line_id: burgers!.id, quantity: 1 }] })
  isError(t, again, 409, 'lines_already_paid', 'a paid line again')
  t.ok(again.body.errors?.['lines.0.quantity'])
  isError(t, await pay(o.id, { method: 'cash', lines: [{ line_id: 999999, quantity: 1 }] }), 422, 'validation_failed', 'a line of no order')
  isError(t, await pay(o.id, { method: 'cash', lines: [{ line_id: fries!.id, quantity: 1 }, { line_id: fries!.id, quantity: 1 }] }), 422, 'validation_failed', 'a line twice')
  t.equal(count(o.id), 2, 'refusals wrote nothing')

  const b1 = await bill(o.id)
  t.match(b1.body.lines, [{ line_id: burgers!.id, paid_quantity: 3, unpaid_quantity: 0, unpaid_due: 0 }, { line_id: fries!.id, paid_quantity: 0, unpaid_quantity: 1, unpaid_due: 3.09 }])
  t.equal(b1.body.balance.balance_due, 3.09)
  const last = await pay(o.id, { method: 'card', lines: [{ line_id: fries!.id, quantity: 1 }] })
  t.equal(last.status, 200)
  t.same(last.body.balance, { total: 34, paid: 34, balance_due: 0, tips: 2, is_paid: true }, 'paying every line pays the order exactly')
})

t.test('by lines and by amount together: the balance still caps', async (t) => {
  const o = await tableOrder()
  t.equal((await pay(o.id, { method: 'cash', amount: 30 })).status, 200)
  // The burgers owe 30.91 but only 4.00 is left.
  isError(t, await pay(o.id, { method: 'card', lines: [{ line_id: o.items[0]!.id, quantity: 3 }] }), 422, 'overpayment', 'lines above the balance')
  const rest = await pay(o.id, { method: 'card', lines: [{ line_id: o.items[1]!.id, quantity: 1 }] })
  t.equal(rest.body.payment.amount, 3.09)
  t.equal(rest.body.balance.balance_due, 0.91)
})
