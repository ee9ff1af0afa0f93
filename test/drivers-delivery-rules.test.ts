/** The pure delivery rules (src/domain/delivery.ts) and reducers (order-delivery, driver), without I/O. */
import t from 'tap'
import {
  claimable, driverFeeCents, driverMove, earningsByDay, earningsByPeriod, periodStart, mayServe, normalizePhone, offerStatusAt, sniffImageType, validLatLng,
  DRIVER_TARGETS, POD_MAX_ATTEMPTS, type DriverTarget,
} from '../src/domain/delivery.ts'
import { DELIVERY_STATUSES, type DeliveryStatus } from '../src/domain/order-state.ts'
import { reduceOrder, type OrderState } from '../src/actors/order.ts'
import { reduceDriver, type DriverState } from '../src/actors/driver.ts'
import { deliveryCode } from '../src/auth/delivery-code.ts'

const NOW = '2026-06-01T12:00:00.000+00:00'
const replyTo = null as never

t.test('driverMove: only forward, terminal is final, repeats are no-ops', async (t) => {
  const allowed: Record<DeliveryStatus, DriverTarget[]> = {
    pending: [],
    assigned: ['picked_up', 'out_for_delivery', 'delivered', 'failed'],
    picked_up: ['out_for_delivery', 'delivered', 'failed'],
    out_for_delivery: ['delivered', 'failed'],
    delivered: [],
    failed: [],
  }
  for (const from of DELIVERY_STATUSES) {
    for (const to of DRIVER_TARGETS) {
      const r = driverMove(from, to)
      if (from === to) t.same(r, { ok: true, noop: true }, `${from} → ${to} repeats`)
      else t.equal(r.ok, allowed[from].includes(to), `${from} → ${to}`)
    }
  }
  t.same(driverMove(null, 'picked_up').ok, false)
})

t.test('mayServe, claimable', async (t) => {
  t.ok(mayServe({ ownerId: 1, restaurantId: null }, { id: 5, ownerId: 1 }))
  t.ok(mayServe({ ownerId: 1, restaurantId: 5 }, { id: 5, ownerId: 1 }))
  t.notOk(mayServe({ ownerId: 1, restaurantId: 6 }, { id: 5, ownerId: 1 }))
  t.notOk(mayServe({ ownerId: 2, restaurantId: null }, { id: 5, ownerId: 1 }))
  t.ok(claimable({ deliveryStatus: 'pending', driverId: null, status: 'preparing' }))
  t.notOk(claimable({ deliveryStatus: 'assigned', driverId: 3, status: 'new' }))
  t.notOk(claimable({ deliveryStatus: 'pending', driverId: null, status: 'cancelled' }))
})

t.test('offers expire by time alone', async (t) => {
  const o = { id: 1, orderId: 2, driverId: 3, status: 'pending' as const, expiresAt: NOW }
  t.equal(offerStatusAt(o, '2026-06-01T11:59:59.999+00:00'), 'pending')
  t.equal(offerStatusAt(o, NOW), 'expired')
  t.equal(offerStatusAt({ ...o, status: 'accepted' }, '2030-01-01T00:00:00.000+00:00'), 'accepted')
})

t.test('image sniffing, positions, phones, fees', async (t) => {
  t.equal(sniffImageType(new Uint8Array([0xff, 0xd8, 0xff, 0xdb])), 'image/jpeg')
  t.equal(sniffImageType(new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])), 'image/png')
  t.equal(sniffImageType(new TextEncoder().encode('RIFF1234WEBPVP8 ')), 'image/webp')
  t.equal(sniffImageType(new TextEncoder().encode('GIF89a')), null)
  t.equal(sniffImageType(new Uint8Array()), null)
  t.ok(validLatLng(0, 0) && validLatLng(-90, 180) && validLatLng(90, -180))
  for (const [lat, lng] of [[90.1, 0], [0, 180.5], [NaN, 0], [Infinity, 0], ['1', 2], [null, 1]]) t.notOk(validLatLng(lat, lng), `${lat},${lng}`)
  t.equal(normalizePhone(' +1 (555) 010-0200 '), '+15550100200')
  t.equal(normalizePhone('0049 30 1234567'), '0049301234567')
  t.equal(normalizePhone('12345'), null)
  t.equal(normalizePhone('+1 555 CALL'), null)
  t.equal(driverFeeCents({ driver_fee: 4.5 }), 450)
  t.equal(driverFeeCents({}), 300)
  t.equal(driverFeeCents({ driver_fee: -1 }), 300)
})

t.test('earnings group by day in cents', async (t) => {
  const r = earningsByDay([{ day: '2026-06-02', fee: 300, tip: 100 }, { day: '2026-06-01', fee: 300, tip: 0 }, { day: '2026-06-02', fee: 450, tip: 50 }])
  t.same(r.days, [
    { date: '2026-06-01', deliveries: 1, fees: 300, tips: 0, total: 300 },
    { date: '2026-06-02', deliveries: 2, fees: 750, tips: 150, total: 900 },
  ])
  t.match(r, { deliveries: 3, fees: 1050, tips: 150, total: 1200 })
})

t.test('earnings periods: ISO weeks start on Monday, months on the 1st', async (t) => {
  t.equal(periodStart('2026-11-22', 'week'), '2026-11-16', 'a Sunday belongs to the week of the Monday before')
  t.equal(periodStart('2026-11-23', 'week'), '2026-11-23', 'a Monday starts its own week')
  t.equal(periodStart('2026-03-01', 'week'), '2026-02-23', 'weeks cross month ends')
  t.equal(periodStart('2026-11-22', 'month'), '2026-11-01')
  t.equal(periodStart('2026-11-22', 'day'), '2026-11-22')
  const days = earningsByDay([
    { day: '2026-11-15', fee: 300, tip: 0 }, // Sunday: week of 11-09
    { day: '2026-11-16', fee: 300, tip: 100 }, // Monday
    { day: '2026-11-22', fee: 300, tip: 50 }, // Sunday: same week as 11-16
    { day: '2026-12-01', fee: 450, tip: 0 },
  ]).days
  t.same(earningsByPeriod(days, 'week').map((p) => [p.start, p.deliveries, p.total]), [['2026-11-09', 1, 300], ['2026-11-16', 2, 750], ['2026-11-30', 1, 450]])
  t.same(earningsByPeriod(days, 'month').map((p) => [p.start, p.deliveries, p.fees, p.tips]), [['2026-11-01', 3, 900, 150], ['2026-12-01', 1, 450, 0]])
  t.equal(earningsByPeriod(days, 'day').length, 4)
})

t.test('the delivery code is 4 digits, stable per order, different across orders', async (t) => {
  t.match(deliveryCode('trk_a'), /^\d{4}$/)
  t.equal(deliveryCode('trk_a'), deliveryCode('trk_a'))
  const codes = new Set(Array.from({ length: 50 }, (_, i) => deliveryCode(`trk_${i}`)))
  t.ok(codes.size > 40, 'spread out')
})

const order = (over: Partial<OrderState> = {}): OrderState => ({
  id: 9, storeId: 2, ownerId: 1, type: 'delivery', status: 'new', deliveryStatus: 'pending', driverId: null, timeline: { created_at: NOW }, ...over,
})

t.test('claim: serialised claims — the first wins, the second gets already_claimed', async (t) => {
  const first = reduceOrder(order(), { type: 'claim', driverId: 1, fee: 300, replyTo }, NOW)
  t.ok(first.ok)
  if (!first.ok) return
  t.match(first.state, { driverId: 1, deliveryStatus: 'assigned', delivery: { fee: 300 }, timeline: { assigned_at: NOW } })
  t.same(first.events.map((e) => e.event), ['order.driver_assigned'])
  const second = reduceOrder(first.state, { type: 'claim', driverId: 2, fee: 300, replyTo }, NOW)
  t.match(second, { ok: false, error: { code: 'already_claimed', status: 409 } })
  const retry = reduceOrder(first.state, { type: 'claim', driverId: 1, fee: 300, replyTo }, NOW)
  t.ok(retry.ok && retry.state === first.state, 'the winner retrying changes nothing')
})

t.test('offer acceptance checks owner, expiry and status; accept withdraws the rest', async (t) => {
  const offer = { id: 5, orderId: 9, driverId: 1, status: 'pending' as const, expiresAt: '2026-06-01T12:01:00.000+00:00' }
  const acc = reduceOrder(order(), { type: 'claim', driverId: 1, fee: 300, offerId: 5, replyTo }, NOW, { offer })
  t.match(acc, { ok: true, offers: [{ id: 5, status: 'accepted' }, { withdrawPendingExcept: 5 }] })
  t.match(reduceOrder(order(), { type: 'claim', driverId: 2, fee: 300, offerId: 5, replyTo }, NOW, { offer }), { ok: false, error: { code: 'not_found' } })
  const late = reduceOrder(order(), { type: 'claim', driverId: 1, fee: 300, offerId: 5, replyTo }, '2026-06-01T12:05:00.000+00:00', { offer })
  t.match(late, { ok: true, refuse: { code: 'offer_expired' }, offers: [{ id: 5, status: 'expired' }] })
  t.match(reduceOrder(order(), { type: 'claim', driverId: 1, fee: 300, offerId: 5, replyTo }, NOW, { offer: { ...offer, status: 'rejected' } }), { ok: false, error: { code: 'offer_closed' } })
  const taken = reduceOrder(order({ driverId: 3, deliveryStatus: 'assigned' }), { type: 'claim', driverId: 1, fee: 300, offerId: 5, replyTo }, NOW, { offer })
  t.match(taken, { ok: true, refuse: { code: 'already_claimed' }, offers: [{ id: 5, status: 'withdrawn' }] })
})

t.test('driver status and proof of delivery reducers', async (t) => {
  const mine = order({ driverId: 1, deliveryStatus: 'assigned' })
  t.match(reduceOrder(mine, { type: 'driver_status', driverId: 2, status: 'picked_up', replyTo }, NOW), { ok: false, error: { code: 'not_found' } })
  const picked = reduceOrder(mine, { type: 'driver_status', driverId: 1, status: 'out_for_delivery', note: 'ok', replyTo }, NOW)
  t.match(picked, { ok: true, events: [{ event: 'order.out_for_delivery', data: { driver_id: 1, note: 'ok' } }] })
  const cancelled = reduceOrder({ ...mine, status: 'cancelled' }, { type: 'driver_status', driverId: 1, status: 'picked_up', replyTo }, NOW)
  t.match(cancelled, { ok: false, error: { code: 'invalid_transition' } })

  let s = order({ driverId: 1, deliveryStatus: 'out_for_delivery' })
  for (let i = 1; i <= POD_MAX_ATTEMPTS; i++) {
    const r = reduceOrder(s, { type: 'pod_code', driverId: 1, code: '0000', expected: '1234', replyTo }, NOW)
    if (!r.ok) return t.fail('wrong codes are recorded, not rejected outright')
    t.equal(r.state.delivery!.podAttempts, i)
    t.equal(r.refuse!.code, i < POD_MAX_ATTEMPTS ? 'pod_code_invalid' : 'pod_code_locked')
    s = r.state
  }
  t.match(reduceOrder(s, { type: 'pod_code', driverId: 1, code: '1234', expected: '1234', replyTo }, NOW), { ok: false, error: { code: 'pod_code_locked' } })
  const fresh = reduceOrder(order({ driverId: 1, deliveryStatus: 'picked_up' }), { type: 'pod_code', driverId: 1, code: '1234', expected: '1234', replyTo }, NOW)
  t.match(fresh, { ok: true, state: { deliveryStatus: 'delivered', delivery: { podVerifiedAt: NOW } }, events: [{ event: 'order.delivered' }] })
})

t.test('owner override back to pending un-assigns', async (t) => {
  const r = reduceOrder(order({ driverId: 4, deliveryStatus: 'assigned' }), { type: 'set_delivery_status', status: 'pending', replyTo }, NOW)
  t.match(r, { ok: true, state: { driverId: null, deliveryStatus: 'pending' } })
})

const driver = (over: Partial<DriverState> = {}): DriverState => ({
  id: 1, ownerId: 1, restaurantId: 2, name: 'D', phone: '+1555', onShift: true, createdAt: NOW, lat: null, lng: null, locationAt: null,
  active: new Map(), connections: 0, ...over,
})

t.test('driver actor: positions go only to orders picked up or out for delivery', async (t) => {
  let s = driver()
  const change = (orderId: number, deliveryStatus: DeliveryStatus | null, driverId: number | null = 1) => {
    s = reduceDriver(s, { type: 'order_changed', orderId, storeId: 2, deliveryStatus, driverId }, NOW).state
  }
  change(10, 'assigned')
  change(11, 'picked_up')
  change(12, 'out_for_delivery')
  const loc = reduceDriver(s, { type: 'location', lat: 1, lng: 2, at: 0 }, NOW)
  t.match(loc, {
    state: { lat: 1, lng: 2, locationAt: NOW },
    reply: { ok: true, value: { lat: 1, lng: 2, location_updated_at: NOW } },
    effects: [{ kind: 'publish_location', pos: { driverId: 1, lat: 1, lng: 2, at: NOW }, visible: [11, 12] }, { kind: 'persist_location', lat: 1, lng: 2, at: NOW }],
  })
  change(11, 'delivered')
  change(12, 'out_for_delivery', 7)
  t.same([...s.active.keys()], [10], 'finished and reassigned orders leave the active set')
  t.match(reduceDriver(s, { type: 'location', lat: 1, lng: 2, at: 0 }, NOW), { effects: [{ kind: 'publish_location', visible: [] }] })
  t.match(reduceDriver(s, { type: 'delete', replyTo }, NOW), { state: s, reply: { ok: false, error: { code: 'driver_busy' } }, effects: [] })
  t.match(reduceDriver(driver(), { type: 'shift', onShift: true, replyTo }, NOW), { reply: 'shift', effects: [] }, 'repeating the shift state writes nothing')
})

t.test('driver actor: transitions are data (state, reply, effects), durable effects named for the shell', async (t) => {
  const s = driver({ onShift: false, connections: 0 })
  const up = reduceDriver(s, { type: 'update', patch: { name: 'E', restaurantId: null }, replyTo }, NOW)
  t.match(up, { state: { name: 'E', restaurantId: null }, reply: { ok: true, value: { name: 'E', restaurant_id: null } } })
  t.same(up.effects.map((e) => e.kind), ['save_profile', 'presence'])
  const shift = reduceDriver(s, { type: 'shift', onShift: true, replyTo }, NOW)
  t.match(shift, { state: { onShift: true }, reply: 'shift', effects: [{ kind: 'shift', onShift: true, at: NOW }, { kind: 'presence', presence: { onShift: true } }] })
  t.match(reduceDriver(s, { type: 'rotate_token', tokenHash: 'h', replyTo }, NOW).effects, [{ kind: 'rotate_token', tokenHash: 'h' }, { kind: 'disconnect', reason: 'token_rotated' }])
  const del = reduceDriver(s, { type: 'delete', replyTo }, NOW)
  t.match(del, { state: { deleted: true }, reply: { ok: true, value: null }, effects: [{ kind: 'delete' }, { kind: 'disconnect', reason: 'driver_deleted' }] })
  t.match(reduceDriver(del.state, { type: 'get', replyTo }, NOW), { reply: { ok: false, error: { code: 'not_found' } }, effects: [] }, 'a deleted driver answers 404')
  t.same(reduceDriver(s, { type: 'connection', count: 1 }, NOW).effects.map((e) => e.kind), ['presence'], 'connecting changes presence')
  t.same(reduceDriver(driver({ connections: 1 }), { type: 'connection', count: 2 }, NOW).effects, [], 'a second socket does not')
  // Replies and effects are plain data (ARCHITECTURE 4): they survive a serialisation round trip.
  t.same(JSON.parse(JSON.stringify({ reply: shift.reply, effects: shift.effects })), { reply: shift.reply, effects: shift.effects })
})
