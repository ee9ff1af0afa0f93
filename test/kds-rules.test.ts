/**
 * The pure KDS rules (api-v1 §3 KDS rows; docs/kds.md): one step per bump/recall, timestamps that
 * follow the item's path, the status rule, the station rule, and the order reducer applying two bumps in turn.
 */
import t from 'tap'
import { kitchenStatusFor, mayStep, nextKds, prevKds, stepLine, changedKdsLines, type KdsLine } from '../src/domain/kds.ts'
import { reduceOrder, type OrderState } from '../src/actors/order.ts'
import type { Result } from '../src/actors/system.ts'

const line = (id: number, state: KdsLine['state'] = 'queued'): KdsLine => ({ id, station: 'grill', state, timeline: { queued_at: 't0' } })

t.test('items move one step at a time in the order queued → preparing → ready → served', async (t) => {
  t.equal(nextKds('queued'), 'preparing')
  t.equal(nextKds('preparing'), 'ready')
  t.equal(nextKds('ready'), 'served')
  t.equal(nextKds('served'), null, 'nothing after served')
  t.equal(prevKds('served'), 'ready')
  t.equal(prevKds('queued'), null, 'nothing before queued')
})

t.test('timestamps: entering a state stamps it, a recall drops the stamp of the state left', async (t) => {
  const a = stepLine(line(1), 'bump', 't1')!
  t.same(a.timeline, { queued_at: 't0', preparing_at: 't1' })
  const b = stepLine(a, 'bump', 't2')!
  t.same(b.timeline, { queued_at: 't0', preparing_at: 't1', ready_at: 't2' })
  const c = stepLine(b, 'recall', 't3')!
  t.equal(c.state, 'preparing')
  t.same(c.timeline, { queued_at: 't0', preparing_at: 't3' }, 'ready_at gone, preparing_at re-stamped')
  t.equal(stepLine(line(1), 'recall', 't'), null)
  t.equal(stepLine(line(1, 'served'), 'bump', 't'), null)
})

t.test('the status rule derives the kitchen status from the items', async (t) => {
  t.equal(kitchenStatusFor('takeaway', ['queued', 'queued'], 'new'), 'new')
  t.equal(kitchenStatusFor('takeaway', ['preparing', 'queued'], 'new'), 'preparing')
  t.equal(kitchenStatusFor('takeaway', ['ready', 'queued'], 'new'), 'preparing', 'one item done, one not started: preparing')
  t.equal(kitchenStatusFor('takeaway', ['ready', 'served'], 'preparing'), 'ready')
  t.equal(kitchenStatusFor('takeaway', ['served', 'served'], 'ready'), 'ready', 'takeaway: the counter records the handover')
  t.equal(kitchenStatusFor('on-table', ['served', 'served'], 'ready'), 'delivered', 'on-table: served at the table')
  t.equal(kitchenStatusFor('on-table', ['queued', 'queued'], 'ready'), 'new', 'recalling everything goes back to new')
  t.equal(kitchenStatusFor('takeaway', [], 'preparing'), 'preparing', 'no items: unchanged')
})

t.test('the station rule: a bound member moves its own station\'s lines; a manager or an unbound member, any', async (t) => {
  const cook = { role: 'kitchen', station: 'grill' }
  t.ok(mayStep(cook, 'grill'))
  t.notOk(mayStep(cook, 'bar'), 'another station')
  t.notOk(mayStep(cook, null), 'a line of no station belongs to the all-station screens')
  for (const line of ['grill', 'bar', null]) {
    t.ok(mayStep({ role: 'kitchen', station: null }, line), `unbound: ${line}`)
    t.ok(mayStep({ role: 'manager', station: 'bar' }, line), `a bound manager: ${line}`)
  }
})

t.test('the order reducer applies two bumps of one item in turn and emits status changes', async (t) => {
  const s0: OrderState = { id: 7, storeId: 3, ownerId: 1, type: 'takeaway', status: 'new', deliveryStatus: null, driverId: null, timeline: {}, kds: [line(1), line(2)] }
  const replyTo = null as unknown as import('../src/actors/system.ts').Ref<Result<never>>
  const d1 = reduceOrder(s0, { type: 'kds_step', lineId: 1, step: 'bump', replyTo }, 'n1')
  t.ok(d1.ok)
  if (!d1.ok) return
  t.equal(d1.state.status, 'preparing')
  t.same(d1.events.map((e) => [e.event, e.data.status, e.data.previous_status]), [['order.status_changed', 'preparing', 'new']])
  t.same(changedKdsLines(s0.kds, d1.state.kds).map((l) => l.id), [1], 'only the bumped line changed')
  const d2 = reduceOrder(d1.state, { type: 'kds_step', lineId: 1, step: 'bump', replyTo }, 'n2')
  t.ok(d2.ok)
  if (!d2.ok) return
  t.equal(d2.state.kds!.find((l) => l.id === 1)!.state, 'ready', 'the second bump built on the first')
  t.same(d2.events, [], 'still preparing: no event')
  const bad = reduceOrder({ ...s0, status: 'cancelled' }, { type: 'kds_step', lineId: 1, step: 'bump', replyTo }, 'n')
  t.notOk(bad.ok, 'a cancelled order\'s items cannot move')
  const missing = reduceOrder(s0, { type: 'kds_step', lineId: 99, step: 'bump', replyTo }, 'n')
  t.match(missing, { ok: false, error: { code: 'not_found' } })
})
