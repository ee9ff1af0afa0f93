/**
 * The pure rules of shipments and fulfillment modes (docs/verticals.md): shipment transitions,
 * the shipping fee, appointment overlap arithmetic and the slot grid.
 */
import t from 'tap'
import { SHIPMENT_STATUSES, canMove, isFinal, nextStatuses } from '../../src/domain/shipments.ts'
import { fulfillmentErrors, offGrid, peakOverlap, planFulfillment, shippingFee, shippingRuleOf } from '../../src/domain/fulfillment.ts'

t.test('shipments move forward along the carrier path, fail and return; delivered and returned are final', async (t) => {
  t.ok(canMove('pending', 'label_created'))
  t.ok(canMove('label_created', 'in_transit'))
  t.ok(canMove('in_transit', 'out_for_delivery'))
  t.ok(canMove('out_for_delivery', 'delivered'))
  t.ok(canMove('in_transit', 'returned'))
  t.ok(canMove('failed', 'in_transit'), 'a failed attempt may be retried')
  t.notOk(canMove('pending', 'delivered'), 'no skipping to delivered')
  t.notOk(canMove('in_transit', 'label_created'), 'no going back')
  t.notOk(canMove('pending', 'pending'), 'no self-moves')
  for (const s of SHIPMENT_STATUSES) if (isFinal(s)) t.same(nextStatuses(s), [], `${s} is final`)
  t.same(SHIPMENT_STATUSES.filter(isFinal), ['delivered', 'returned'])
})

t.test('shipping fee: flat, waived from free_over', async (t) => {
  const rule = shippingRuleOf({ shipping: { flat_fee: 4.9, free_over: 50 } })
  t.same(rule, { flat_fee: 490, free_over: 5000 })
  t.equal(shippingFee(rule, 4999), 490)
  t.equal(shippingFee(rule, 5000), 0)
  t.equal(shippingFee(shippingRuleOf({}), 100), 0, 'no rule: free')
})

t.test('appointment overlap counts the peak, not every booking touching the window', async (t) => {
  const at = (h: number, m = 0) => `2030-01-01T${String(h).padStart(2, '0')}:${String(m).padStart(2, '0')}:00.000+00:00`
  const booked = [{ start: at(9), end: at(10) }, { start: at(10), end: at(11) }]
  t.equal(peakOverlap(booked, at(9, 30), at(10, 30)), 1, 'two back-to-back bookings never overlap each other')
  t.equal(peakOverlap([...booked, { start: at(9, 45), end: at(10, 15) }], at(9, 30), at(10, 30)), 2)
  t.equal(peakOverlap(booked, at(11), at(12)), 0, 'touching the end is free')
})

t.test('each mode names its missing field', async (t) => {
  t.same(Object.keys(fulfillmentErrors({ type: 'room_service' })), ['room_number'])
  t.same(Object.keys(fulfillmentErrors({ type: 'ship' })), ['shipping_address'])
  t.same(Object.keys(fulfillmentErrors({ type: 'pickup_slot' })), ['slot_start'])
  t.same(Object.keys(fulfillmentErrors({ type: 'appointment' })), ['appointment_start'])
  t.same(fulfillmentErrors({ type: 'in_store' }), {})
})

t.test('slot grid: aligned, ahead by the lead, within days_ahead, inside the hours', async (t) => {
  const now = Date.parse('2030-01-07T08:00:00Z') // a Monday
  const grid = { slot_minutes: 30, capacity: 2, lead_minutes: 60, days_ahead: 7 }
  const hours = { business_hours: { mon: [['09:00', '17:00']] } }
  t.equal(offGrid(hours, grid, Date.parse('2030-01-07T10:00:00Z'), 30, now), null)
  t.match(offGrid(hours, grid, Date.parse('2030-01-07T10:10:00Z'), 30, now), /grid/)
  t.match(offGrid(hours, grid, Date.parse('2030-01-07T08:30:00Z'), 30, now), /at least 60 minutes/)
  t.match(offGrid(hours, grid, Date.parse('2030-01-07T16:30:00Z'), 60, now), /closed/, 'the window must end within the hours')
  t.match(offGrid(hours, grid, Date.parse('2030-01-08T10:00:00Z'), 30, now), /closed/, 'Tuesday has no hours')
  t.match(offGrid({}, grid, Date.parse('2030-01-20T10:00:00Z'), 30, now), /days ahead/)
  const full = planFulfillment({ type: 'pickup_slot', slot_start: '2030-01-07T10:00:00Z' }, { ...hours, pickup_slots: grid }, 0, now, { kind: 'slot', count: 2 })
  t.same(full.ok ? null : [full.field, full.full], ['slot_start', true], 'a slot at capacity is full')
})
