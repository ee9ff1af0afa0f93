/**
 * Self-dispatch and offers (api-v1 §4.6 listed-only endpoints, designed in docs/drivers.md):
 * available + claim with exactly one winner, offers with expiry, accept/reject, shifts, push.
 */
import t from 'tap'
import { startServer } from './helpers/server.ts'
import { createFleet, deliveryOrder } from './helpers/delivery.ts'
import { WsClient, wsBase } from './helpers/ws-client.ts'
import type { RecordingPushProvider } from '../src/providers/push.ts'

const s = await startServer({ RATE_LIMIT_PER_MINUTE: '100000' })
t.teardown(() => s.close())
const db = s.app.svc.db
const f = createFleet(db, { driverFee: 3.25 })
const other = createFleet(db)

const shift = (token: string, action: 'start' | 'end') => s.req('POST', '/driver/shift', { token, body: { action } })

t.test('shift start/end: idempotent, recorded, shown on the profile', async (t) => {
  const d = f.addDriver()
  const r = await shift(d.token, 'start')
  t.equal(r.status, 200)
  t.match(r.body, { on_shift: true, shift: { id: Number, started_at: String, ended_at: null } })
  const again = await shift(d.token, 'start')
  t.equal(again.body.shift.id, r.body.shift.id, 'starting twice keeps the same shift')
  t.equal((await s.req('GET', '/driver/me', { token: d.token })).body.on_shift, true)
  const end = await shift(d.token, 'end')
  t.match(end.body, { on_shift: false, shift: { id: r.body.shift.id, ended_at: String } })
  t.equal((await s.req('POST', '/driver/shift', { token: d.token, body: { action: 'pause' } })).status, 422)
})

t.test('available: unassigned delivery orders of the stores the driver may serve', async (t) => {
  const st = f.addStore()
  const bound = f.addDriver({ restaurantId: st.storeId })
  const unbound = f.addDriver({ restaurantId: null })
  const here = await deliveryOrder(s, { ...f, ...st })
  const elsewhere = await deliveryOrder(s, f)
  const foreign = await deliveryOrder(s, other)
  const ids = async (token: string) => (await s.req('GET', '/driver/available', { token })).body.data.map((x: any) => x.id)
  const b = await ids(bound.token)
  t.ok(b.includes(here.id))
  t.notOk(b.includes(elsewhere.id), 'a bound driver sees only its store')
  const u = await ids(unbound.token)
  t.ok(u.includes(here.id) && u.includes(elsewhere.id), 'an unbound driver sees every store of its owner')
  t.notOk(u.includes(foreign.id), "never another owner's orders")
  const item = (await s.req('GET', '/driver/available', { token: bound.token })).body.data.find((x: any) => x.id === here.id)
  t.match(item, { delivery_status: 'pending', fee: 3.25, address: '1 Main St', phone: null })
})

t.test('claim: needs a shift, first driver wins, retries are fine, others 409', async (t) => {
  const o = await deliveryOrder(s, f)
  const d = f.addDriver()
  const off = await s.req('POST', `/driver/deliveries/${o.id}/claim`, { token: d.token })
  t.equal(off.status, 422)
  t.match(off.body, { code: 'validation_failed', reason: 'off_shift' })
  await shift(d.token, 'start')
  const won = await s.req('POST', `/driver/deliveries/${o.id}/claim`, { token: d.token })
  t.equal(won.status, 200)
  t.match(won.body, { id: o.id, delivery_status: 'assigned', fee: 3.25, phone: '+15550100' })
  t.equal((await s.req('POST', `/driver/deliveries/${o.id}/claim`, { token: d.token })).status, 200, 'the winner may retry')
  const loser = f.addDriver({ onShift: true })
  const lost = await s.req('POST', `/driver/deliveries/${o.id}/claim`, { token: loser.token })
  t.equal(lost.status, 409)
  t.equal(lost.body.code, 'already_claimed')
  const ev = db.prepare("SELECT COUNT(*) FROM outbox WHERE event = 'order.driver_assigned' AND json_extract(data, '$.order_id') = ?").pluck().get(o.id)
  t.equal(ev, 1, 'one order.driver_assigned')
})

t.test('claim race: many drivers at once, exactly one wins', async (t) => {
  const drivers = Array.from({ length: 12 }, () => f.addDriver({ restaurantId: null, onShift: true }))
  for (let round = 0; round < 3; round++) {
    const o = await deliveryOrder(s, f)
    const results = await Promise.all(drivers.map((d) => s.req('POST', `/driver/deliveries/${o.id}/claim`, { token: d.token })))
    const winners = results.filter((r) => r.status === 200)
    t.equal(winners.length, 1, `round ${round}: one winner`)
    t.ok(results.every((r) => r.status === 200 || (r.status === 409 && r.body.code === 'already_claimed')), 'everyone else: 409 already_claimed')
    const winnerIdx = results.findIndex((r) => r.status === 200)
    const row = db.prepare('SELECT driver_id, delivery_status FROM orders WHERE id = ?').get(o.id) as { driver_id: number; delivery_status: string }
    t.same(row, { driver_id: drivers[winnerIdx]!.id, delivery_status: 'assigned' }, 'the stored driver is the winner')
  }
})

t.test("claim of an order the driver may not serve is 404", async (t) => {
  const d = f.addDriver({ onShift: true })
  const foreign = await deliveryOrder(s, other)
  t.equal((await s.req('POST', `/driver/deliveries/${foreign.id}/claim`, { token: d.token })).status, 404)
  const st = f.addStore()
  const elsewhere = await deliveryOrder(s, { ...f, ...st })
  t.equal((await s.req('POST', `/driver/deliveries/${elsewhere.id}/claim`, { token: d.token })).status, 404, 'bound to another store')
  const takeaway = (await s.req('POST', `/restaurants/${f.storeId}/orders`, { token: f.ownerToken, body: { type: 'takeaway', items: [{ item_id: f.itemId, quantity: 1 }] } })).body
  t.equal((await s.req('POST', `/driver/deliveries/${takeaway.id}/claim`, { token: d.token })).status, 404, 'not a delivery')
})

t.test('offers: pushed and sent on the socket; accept assigns and withdraws the rest', async (t) => {
  const st = f.addStore()
  const d1 = f.addDriver({ restaurantId: st.storeId, onShift: true })
  const d2 = f.addDriver({ restaurantId: st.storeId, onShift: true })
  const offDuty = f.addDriver({ restaurantId: st.storeId })
  const reg = await s.req('POST', '/driver/push/register-device', { token: d1.token, body: { device_token: 'apns-device-1234', platform: 'ios' } })
  t.match(reg.body, { registered: true, platform: 'ios' })
  const sock2 = await WsClient.open(`${wsBase(s)}/ws/driver`, { token: d2.token })
  await sock2.next((x) => x.type === 'hello')

  const o = await deliveryOrder(s, { ...f, ...st })
  const made = await s.req('POST', `/restaurants/${st.storeId}/orders/${o.id}/offers`, { token: f.ownerToken, body: { expires_in: 60 } })
  t.equal(made.status, 200)
  const offeredTo = new Set(db.prepare('SELECT driver_id FROM delivery_offers WHERE order_id = ?').pluck().all(o.id) as number[])
  t.ok(offeredTo.has(d1.id) && offeredTo.has(d2.id), 'offered to the store\'s drivers on shift (and unbound ones on shift)')
  t.notOk(offeredTo.has(offDuty.id), 'not to a driver off shift')
  const pushed = (s.app.svc.push as RecordingPushProvider).sent.filter((p) => p.device_token === 'apns-device-1234')
  t.equal(pushed.length, 1)
  t.match(pushed[0], { platform: 'ios', title: 'New delivery offer', data: { type: 'offer', order_id: o.id } })
  const frame = await sock2.next((x) => x.type === 'offer')
  t.match(frame.offer, { order_id: o.id, status: 'pending', fee: 3.25 })
  t.same((await s.req('GET', '/driver/offers', { token: offDuty.token })).body.data, [], 'drivers off shift get no offers')

  const list1 = (await s.req('GET', '/driver/offers', { token: d1.token })).body.data
  t.equal(list1.length, 1)
  const offer1 = list1[0]
  t.match(offer1, { order_id: o.id, restaurant: { id: st.storeId }, address: '1 Main St', expires_in: Number })
  const acc = await s.req('POST', `/driver/offers/${offer1.id}/accept`, { token: d1.token })
  t.equal(acc.status, 200)
  t.match(acc.body, { id: o.id, delivery_status: 'assigned', fee: 3.25 })
  const withdrawn = await sock2.next((x) => x.type === 'offer_withdrawn')
  t.equal(withdrawn.order_id, o.id)
  t.same((await s.req('GET', '/driver/offers', { token: d2.token })).body.data, [])
  const offer2 = db.prepare('SELECT id, status FROM delivery_offers WHERE order_id = ? AND driver_id = ?').get(o.id, d2.id) as { id: number; status: string }
  t.equal(offer2.status, 'withdrawn')
  const late = await s.req('POST', `/driver/offers/${offer2.id}/accept`, { token: d2.token })
  t.equal(late.status, 409)
  t.equal(late.body.code, 'offer_closed')
  t.equal((await s.req('POST', `/driver/offers/${offer1.id}/accept`, { token: d1.token })).status, 409, 'an answered offer is closed')
  await sock2.close()
})

t.test('offers expire; reject; another driver\'s offer is 404', async (t) => {
  const d = f.addDriver({ onShift: true })
  const o1 = await deliveryOrder(s, f)
  const o2 = await deliveryOrder(s, f)
  const mk = async (orderId: number) => (await s.req('POST', `/restaurants/${f.storeId}/orders/${orderId}/offers`, { token: f.ownerToken, body: { driver_ids: [d.id] } })).body.data[0]
  const e = await mk(o1.id)
  db.prepare('UPDATE delivery_offers SET expires_at = ? WHERE id = ?').run('2000-01-01T00:00:00.000+00:00', e.id)
  t.same((await s.req('GET', '/driver/offers', { token: d.token })).body.data.map((x: any) => x.id).includes(e.id), false, 'an expired offer is not listed')
  const exp = await s.req('POST', `/driver/offers/${e.id}/accept`, { token: d.token })
  t.equal(exp.status, 409)
  t.equal(exp.body.code, 'offer_expired')
  t.equal((db.prepare('SELECT status FROM delivery_offers WHERE id = ?').pluck().get(e.id)), 'expired', 'recorded as expired')
  t.equal((await s.req('GET', `/track/${o1.track_token}`)).body.delivery_status, 'pending', 'nothing assigned')

  const r = await mk(o2.id)
  const stranger = f.addDriver({ onShift: true })
  t.equal((await s.req('POST', `/driver/offers/${r.id}/accept`, { token: stranger.token })).status, 404)
  t.equal((await s.req('POST', `/driver/offers/${r.id}/reject`, { token: stranger.token })).status, 404)
  const rej = await s.req('POST', `/driver/offers/${r.id}/reject`, { token: d.token })
  t.equal(rej.status, 200)
  t.equal(rej.body.status, 'rejected')
  t.equal((await s.req('POST', `/driver/offers/${r.id}/accept`, { token: d.token })).status, 409)
  await shift(d.token, 'end')
  const r2 = await mk(o2.id)
  t.equal(r2, undefined, 'no new offers once off shift')
})

t.test('ending a shift withdraws the driver\'s open offers at once (socket frame, list, accept)', async (t) => {
  const d = f.addDriver({ onShift: true })
  const o = await deliveryOrder(s, f)
  const sock = await WsClient.open(`${wsBase(s)}/ws/driver`, { token: d.token })
  await sock.next((x) => x.type === 'hello')
  const made = await s.req('POST', `/restaurants/${f.storeId}/orders/${o.id}/offers`, { token: f.ownerToken, body: { driver_ids: [d.id] } })
  const offer = made.body.data[0]
  t.equal((await sock.next((x) => x.type === 'offer')).offer.id, offer.id)
  await shift(d.token, 'end')
  t.match(await sock.next((x) => x.type === 'offer_withdrawn'), { offer_id: offer.id, order_id: o.id })
  t.same((await s.req('GET', '/driver/offers', { token: d.token })).body.data, [], 'no open offers off shift')
  await shift(d.token, 'start')
  const late = await s.req('POST', `/driver/offers/${offer.id}/accept`, { token: d.token })
  t.equal(late.status, 409, 'a withdrawn offer cannot be accepted after a new shift starts')
  t.equal(late.body.code, 'offer_closed')
  t.equal(db.prepare('SELECT status FROM delivery_offers WHERE id = ?').pluck().get(offer.id), 'withdrawn')
  await sock.close()
})

t.test('push devices: register moves a device, unregister is per driver', async (t) => {
  const a = f.addDriver()
  const b = f.addDriver()
  await s.req('POST', '/driver/push/register-device', { token: a.token, body: { device_token: 'fcm-shared-device', platform: 'android' } })
  await s.req('POST', '/driver/push/register-device', { token: b.token, body: { device_token: 'fcm-shared-device', platform: 'android' } })
  t.equal(db.prepare('SELECT driver_id FROM driver_devices WHERE device_token = ?').pluck().get('fcm-shared-device'), b.id)
  t.same((await s.req('POST', '/driver/push/unregister-device', { token: a.token, body: { device_token: 'fcm-shared-device' } })).body, { unregistered: false })
  t.same((await s.req('POST', '/driver/push/unregister-device', { token: b.token, body: { device_token: 'fcm-shared-device' } })).body, { unregistered: true })
  t.equal((await s.req('POST', '/driver/push/register-device', { token: a.token, body: { device_token: 'x', platform: 'nokia' } })).status, 422)
})
