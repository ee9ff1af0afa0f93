/** The order actor's pure transition (api-v1 §3): reduceOrder(state, msg, now) without I/O. */
import t from 'tap'
import { reduceOrder, type OrderState, type OrderMsg } from '../../src/actors/order.ts'

const now = '2026-01-01T10:00:00.000+00:00'
const later = '2026-01-01T10:05:00.000+00:00'
const base = (over: Partial<OrderState> = {}): OrderState => ({
  id: 7, storeId: 3, ownerId: 1, type: 'delivery', status: 'new', deliveryStatus: 'pending', driverId: null,
  timeline: { created_at: '2026-01-01T09:00:00.000+00:00' }, ...over,
})
// The reducer never calls replyTo; a placeholder satisfies the type.
const replyTo = {} as never
const msg = (m: Record<string, unknown>) => ({ ...m, replyTo }) as unknown as OrderMsg

t.test('set_status moves the kitchen status, stamps the timeline, emits order.status_changed', async (t) => {
  const s = base()
  const frozen = JSON.stringify(s)
  const d = reduceOrder(s, msg({ type: 'set_status', status: 'preparing' }), now)
  if (!d.ok) return t.fail('refused')
  t.equal(d.state.status, 'preparing')
  t.same(d.state.timeline, { created_at: s.timeline.created_at, preparing_at: now })
  t.same(d.events, [{ event: 'order.status_changed', data: { order_id: 7, restaurant_id: 3, status: 'preparing', previous_status: 'new' } }])
  t.equal(JSON.stringify(s), frozen, 'the input state is not mutated')

  const back = reduceOrder(d.state, msg({ type: 'set_status', status: 'new' }), later)
  t.ok(back.ok && back.state.status === 'new', 'the owner override accepts any kitchen status')
  const again = back.ok && reduceOrder(back.state, msg({ type: 'set_status', status: 'preparing' }), later)
  t.ok(again && again.ok && again.state.timeline.preparing_at === now, 're-entering a stage keeps the first moment')
})

t.test('setting the current status is a no-op without events', async (t) => {
  const s = base({ status: 'ready' })
  const d = reduceOrder(s, msg({ type: 'set_status', status: 'ready' }), now)
  t.ok(d.ok)
  if (d.ok) {
    t.equal(d.state, s, 'the very same state')
    t.same(d.events, [])
  }
})

t.test('delivery status and assignment', async (t) => {
  const assigned = reduceOrder(base(), msg({ type: 'assign_driver', driverId: 5 }), now)
  if (!assigned.ok) return t.fail('refused')
  t.match(assigned.state, { driverId: 5, deliveryStatus: 'assigned', timeline: { assigned_at: now } })
  t.same(assigned.events.map((e) => e.event), ['order.driver_assigned'])
  t.match(assigned.events[0]!.data, { order_id: 7, driver_id: 5 })

  const expected: Record<string, string | null> = { picked_up: null, out_for_delivery: 'order.out_for_delivery', delivered: 'order.delivered', failed: 'order.delivery_failed' }
  for (const [st, ev] of Object.entries(expected)) {
    const d = reduceOrder(assigned.state, msg({ type: 'set_delivery_status', status: st }), later)
    if (!d.ok) { t.fail(`${st} refused`); continue }
    t.equal(d.state.deliveryStatus, st)
    t.equal(d.state.timeline[`${st}_at`], later)
    // The kitchen status follows (docs/orders.md): the order was `new`, so every move but failed also emits its kitchen change.
    const kitchen = st === 'failed' ? [] : ['order.status_changed']
    t.same(d.events.map((e) => e.event), [...(ev ? [ev] : []), ...kitchen], `${st} emits ${ev ?? 'no delivery event'}${kitchen.length ? ' and the kitchen change' : ''}`)
  }
})

t.test('delivery messages on a non-delivery order are refused', async (t) => {
  const s = base({ type: 'takeaway', deliveryStatus: null })
  for (const m of [msg({ type: 'set_delivery_status', status: 'delivered' }), msg({ type: 'assign_driver', driverId: 1 })]) {
    const d = reduceOrder(s, m, now)
    t.notOk(d.ok)
    if (!d.ok) {
      t.equal(d.error.code, 'invalid_transition')
      t.equal(d.error.status, 422)
    }
  }
})
