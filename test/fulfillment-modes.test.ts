/**
 * Every fulfillment mode through the owner API (issue 18 item 5; docs/verticals.md "Fulfillment
 * modes"): each mode's required fields (422), modes outside the vertical (422), the shipping fee in
 * the total, a full pickup slot refused also under concurrent orders, appointment overlap, the
 * availability reads, and the tracking view showing each mode.
 */
import t from 'tap'
import { startServer } from './helpers/server.ts'
import { createMenu, createOwner, createStore, isError, postOrder, tokenFor } from './helpers/fixtures.ts'

const s = await startServer({ RATE_LIMIT_PER_MINUTE: '100000' })
t.teardown(() => s.close())
const db = s.app.svc.db
const ownerId = createOwner(db)
const token = tokenFor(db, ownerId, ['*'])
const storeOf = (type: string, settings: Record<string, unknown> = {}) => {
  const st = createStore(db, ownerId, { type, settings })
  return { id: st.id, menu: createMenu(db, st.id) }
}
const hotel = storeOf('hotel')
const shop = storeOf('clothing', { shipping: { flat_fee: 4.9, free_over: 50 } })
const laundry = storeOf('laundry', { pickup_slots: { slot_minutes: 30, capacity: 2, lead_minutes: 60, days_ahead: 14 }, appointments: { duration_minutes: 60, slot_minutes: 30, capacity: 1 } })
const restaurant = storeOf('restaurant')

// Tomorrow at 10:00 UTC (no business hours set: always open) and its neighbours.
const day = new Date(Date.now() + 86_400_000).toISOString().slice(0, 10)
const at = (hhmm: string) => `${day}T${hhmm}:00Z`
const line = (m: { fries: number }) => [{ item_id: m.fries, quantity: 1 }]
const address = { name: 'Ada Lovelace', line1: '1 Main St', city: 'London', postal_code: 'N1 9GU', country: 'gb' }

t.test('room_service needs a room number; it is stored, shown and tracked', async (t) => {
  isError(t, await postOrder(s, token, hotel.id, { type: 'room_service', items: line(hotel.menu) }), 422, 'validation_failed', 'no room')
  const r = await postOrder(s, token, hotel.id, { type: 'room_service', room_number: 412, items: line(hotel.menu) })
  t.equal(r.status, 200)
  t.equal(r.body.room_number, '412')
  t.equal((await s.req('GET', `/restaurants/${hotel.id}/orders/${r.body.id}`, { token })).body.room_number, '412', 'read back')
  const track = await s.req('GET', `/track/${r.body.track_token}`)
  t.equal(track.body.room_number, '412', 'the tracking view shows the room')
})

t.test('a mode outside the store\'s vertical is 422 and writes nothing', async (t) => {
  const before = db.prepare('SELECT COUNT(*) AS n FROM orders').get() as { n: number }
  const r = await postOrder(s, token, restaurant.id, { type: 'ship', shipping_address: address, items: line(restaurant.menu) })
  isError(t, r, 422, 'validation_failed')
  t.ok(r.body.errors.type, 'names the type')
  isError(t, await postOrder(s, token, hotel.id, { type: 'pickup_slot', slot_start: at('10:00'), items: line(hotel.menu) }), 422, 'validation_failed', 'hotel pickup slot')
  t.equal((db.prepare('SELECT COUNT(*) AS n FROM orders').get() as { n: number }).n, before.n)
})

t.test('ship: address required and validated; the fee is in the total; a shipment is created', async (t) => {
  isError(t, await postOrder(s, token, shop.id, { type: 'ship', items: line(shop.menu) }), 422, 'validation_failed', 'no address')
  isError(t, await postOrder(s, token, shop.id, { type: 'ship', shipping_address: { ...address, country: 'GBR' }, items: line(shop.menu) }), 422, 'validation_failed', 'country not alpha-2')
  isError(t, await postOrder(s, token, shop.id, { type: 'ship', shipping_address: { ...address, city: '' }, items: line(shop.menu) }), 422, 'validation_failed', 'empty city')
  const r = await postOrder(s, token, shop.id, { type: 'ship', shipping_address: address, items: line(shop.menu) })
  t.equal(r.status, 200)
  t.equal(r.body.shipping_fee, 4.9)
  t.equal(r.body.total, 3 + 4.9, 'fries 3.00 + shipping 4.90')
  t.equal(r.body.shipping_address.country, 'GB', 'country upper-cased')
  const sh = await s.req('GET', `/restaurants/${shop.id}/orders/${r.body.id}/shipment`, { token })
  t.equal(sh.status, 200)
  t.equal(sh.body.status, 'pending')
  t.same(sh.body.address.city, 'London')
  // Free from 50.00 of goods.
  const big = await postOrder(s, token, shop.id, { type: 'ship', shipping_address: address, items: [{ item_id: shop.menu.burger.id, quantity: 5 }] })
  t.equal(big.body.shipping_fee, 0)
  t.equal(big.body.total, 50)
})

t.test('pickup_slot: slot required, on the grid, ahead of time; a full slot is refused', async (t) => {
  isError(t, await postOrder(s, token, laundry.id, { type: 'pickup_slot', items: line(laundry.menu) }), 422, 'validation_failed', 'no slot')
  isError(t, await postOrder(s, token, laundry.id, { type: 'pickup_slot', slot_start: at('10:10'), items: line(laundry.menu) }), 422, 'validation_failed', 'off the grid')
  isError(t, await postOrder(s, token, laundry.id, { type: 'pickup_slot', slot_start: new Date(Date.now() - 3_600_000).toISOString(), items: line(laundry.menu) }), 422, 'validation_failed', 'in the past')
  const ok = await postOrder(s, token, laundry.id, { type: 'pickup_slot', slot_start: at('09:00'), items: line(laundry.menu) })
  t.equal(ok.status, 200)
  t.same(ok.body.slot, { start: `${day}T09:00:00.000+00:00`, end: `${day}T09:30:00.000+00:00`, kind: 'pickup' })
  const track = await s.req('GET', `/track/${ok.body.track_token}`)
  t.equal(track.body.slot.start, ok.body.slot.start, 'the tracking view shows the slot')
})

t.test('capacity 2, 6 concurrent orders for one slot: exactly 2 succeed, the rest 409 slot_full', async (t) => {
  const body = { type: 'pickup_slot', slot_start: at('11:00'), items: line(laundry.menu) }
  const rs = await Promise.all(Array.from({ length: 6 }, () => postOrder(s, token, laundry.id, body)))
  t.equal(rs.filter((r) => r.status === 200).length, 2)
  for (const r of rs.filter((x) => x.status !== 200)) isError(t, r, 409, 'slot_full')
  t.equal((db.prepare('SELECT COUNT(*) AS n FROM orders WHERE store_id = ? AND slot_start = ?').get(laundry.id, `${day}T11:00:00.000+00:00`) as { n: number }).n, 2, 'two stored')
  // The other kind (laundry drop-off) has its own capacity.
  const drop = await postOrder(s, token, laundry.id, { ...body, slot_kind: 'dropoff' })
  t.equal(drop.status, 200)
  t.equal(drop.body.slot.kind, 'dropoff')
  const slots = await s.req('GET', `/restaurants/${laundry.id}/pickup-slots?date=${day}`, { token })
  t.equal(slots.status, 200)
  const eleven = slots.body.slots.find((x: { start: string }) => x.start === `${day}T11:00:00.000+00:00`)
  t.same([eleven.booked, eleven.available], [2, 0], 'the availability read shows the slot full')
  isError(t, await s.req('GET', `/restaurants/${hotel.id}/pickup-slots?date=${day}`, { token }), 422, 'validation_failed', 'a hotel has no slots')
})

t.test('appointment: time required; overlaps beyond capacity refused; back-to-back fine', async (t) => {
  isError(t, await postOrder(s, token, laundry.id, { type: 'appointment', items: line(laundry.menu) }), 422, 'validation_failed', 'no time')
  const a = await postOrder(s, token, laundry.id, { type: 'appointment', appointment_start: at('14:00'), items: line(laundry.menu) })
  t.equal(a.status, 200)
  t.same(a.body.appointment, { start: `${day}T14:00:00.000+00:00`, end: `${day}T15:00:00.000+00:00` })
  isError(t, await postOrder(s, token, laundry.id, { type: 'appointment', appointment_start: at('14:30'), items: line(laundry.menu) }), 409, 'slot_full', 'overlapping')
  const next = await postOrder(s, token, laundry.id, { type: 'appointment', appointment_start: at('15:00'), items: line(laundry.menu) })
  t.equal(next.status, 200, 'starting as the other ends does not overlap')
  const track = await s.req('GET', `/track/${a.body.track_token}`)
  t.equal(track.body.appointment.start, a.body.appointment.start, 'the tracking view shows the appointment')
  const slots = await s.req('GET', `/restaurants/${laundry.id}/appointment-slots?date=${day}`, { token })
  t.equal(slots.body.slots.find((x: { start: string }) => x.start === `${day}T14:30:00.000+00:00`).available, 0)
})

t.test('in_store needs nothing extra', async (t) => {
  const r = await postOrder(s, token, shop.id, { type: 'in_store', items: line(shop.menu) })
  t.equal(r.status, 200)
  t.same([r.body.room_number, r.body.slot, r.body.appointment, r.body.shipping_fee], [null, null, null, 0])
})

t.test('settings: the mode keys are validated', async (t) => {
  isError(t, await s.req('PUT', `/restaurants/${laundry.id}/settings`, { token, body: { pickup_slots: { slot_minutes: 0, capacity: 1 } } }), 422, 'validation_failed')
  // Fees are money: at most two decimals (src/domain/money.ts hasAtMostTwoDecimals).
  isError(t, await s.req('PUT', `/restaurants/${laundry.id}/settings`, { token, body: { shipping: { flat_fee: 2.555 } } }), 422, 'validation_failed')
  isError(t, await s.req('PUT', `/restaurants/${laundry.id}/settings`, { token, body: { shipping: { flat_fee: 2, free_over: 10.001 } } }), 422, 'validation_failed')
  const r = await s.req('PUT', `/restaurants/${laundry.id}/settings`, { token, body: { shipping: { flat_fee: 2.5 } } })
  t.equal(r.status, 200)
})
