/**
 * Owner delivery routes (api-v1 §3 delivery rows, §4.2, §6): the deliveries list and its filters,
 * assignment rules, the delivery-status override and the events each emits, offering to drivers.
 */
import t from 'tap'
import { startServer } from './helpers/server.ts'
import { assign, createFleet, deliveryOrder } from './helpers/delivery.ts'

const s = await startServer({ RATE_LIMIT_PER_MINUTE: '100000' })
t.teardown(() => s.close())
const db = s.app.svc.db
const a = createFleet(db, { driverFee: 4.5 })
const b = createFleet(db)

const eventsOf = (orderId: number) =>
  (db.prepare('SELECT event, data FROM outbox ORDER BY id').all() as Array<{ event: string; data: string }>)
    .map((e) => ({ event: e.event, data: JSON.parse(e.data) }))
    .filter((e) => e.data.order_id === orderId)

t.test('assign: sets assigned, fixes the fee, emits order.driver_assigned', async (t) => {
  const o = await deliveryOrder(s, a)
  const d = a.drivers[0]!
  const r = await s.req('POST', `/restaurants/${a.storeId}/orders/${o.id}/assign`, { token: a.ownerToken, body: { driver_id: d.id } })
  t.equal(r.status, 200)
  t.match(r.body, { id: o.id, delivery_status: 'assigned', driver: { id: d.id, name: d.name } })
  t.match(r.body.timeline, { assigned_at: String })
  t.match(eventsOf(o.id).map((e) => e.event), ['order.created', 'order.driver_assigned'])
  t.match(eventsOf(o.id)[1]!.data, { order_id: o.id, restaurant_id: a.storeId, driver_id: d.id })

  const list = await s.req('GET', `/restaurants/${a.storeId}/deliveries?driver_id=${d.id}`, { token: a.ownerToken })
  t.equal(list.status, 200)
  const row = list.body.data.find((x: any) => x.id === o.id)
  t.match(row, { delivery_status: 'assigned', delivery: { fee: 4.5, note: null, proof: { code_verified_at: null, photo: null } } })

  const mine = await s.req('GET', '/driver/deliveries?active=1', { token: d.token })
  t.ok(mine.body.data.some((x: any) => x.id === o.id && x.fee === 4.5), 'the driver sees it with its fee')
})

t.test('assign rules: the driver must be yours and unbound or bound to this store', async (t) => {
  const o = await deliveryOrder(s, a)
  const foreign = await s.req('POST', `/restaurants/${a.storeId}/orders/${o.id}/assign`, { token: a.ownerToken, body: { driver_id: b.drivers[0]!.id } })
  t.equal(foreign.status, 422)
  t.ok(foreign.body.errors.driver_id)
  const other = a.addStore()
  const boundElsewhere = a.addDriver({ restaurantId: other.storeId })
  const r2 = await s.req('POST', `/restaurants/${a.storeId}/orders/${o.id}/assign`, { token: a.ownerToken, body: { driver_id: boundElsewhere.id } })
  t.equal(r2.status, 422)
  t.match(r2.body.errors.driver_id, [/another restaurant/])
  const unbound = a.addDriver({ restaurantId: null })
  const r3 = await s.req('POST', `/restaurants/${a.storeId}/orders/${o.id}/assign`, { token: a.ownerToken, body: { driver_id: unbound.id } })
  t.equal(r3.status, 200, 'an unbound driver serves every store of its owner')
  const takeaway = (await s.req('POST', `/restaurants/${a.storeId}/orders`, { token: a.ownerToken, body: { type: 'takeaway', items: [{ item_id: a.itemId, quantity: 1 }] } })).body
  const r4 = await s.req('POST', `/restaurants/${a.storeId}/orders/${takeaway.id}/assign`, { token: a.ownerToken, body: { driver_id: unbound.id } })
  t.equal(r4.status, 422, 'only delivery orders take a driver')
  t.match(r4.body, { code: 'validation_failed', reason: 'invalid_transition' })
})

t.test('reassigning moves the order between drivers', async (t) => {
  const o = await deliveryOrder(s, a)
  const [d1, d2] = a.drivers as [typeof a.drivers[0], typeof a.drivers[0]]
  await assign(s, a, o.id, d1.id)
  await assign(s, a, o.id, d2.id)
  const list1 = await s.req('GET', '/driver/deliveries', { token: d1.token })
  t.notOk(list1.body.data.some((x: any) => x.id === o.id), 'gone from the first driver')
  t.equal((await s.req('GET', `/driver/deliveries/${o.id}`, { token: d1.token })).status, 404)
  t.equal((await s.req('GET', `/driver/deliveries/${o.id}`, { token: d2.token })).status, 200)
  const me1 = await s.req('GET', '/driver/me', { token: d1.token })
  t.notOk(me1.body.active_deliveries.includes(o.id), "the first driver's actor dropped it")
  const me2 = await s.req('GET', '/driver/me', { token: d2.token })
  t.ok(me2.body.active_deliveries.includes(o.id), "the second driver's actor has it")
})

t.test('delivery-status override: any status, delivery events per api-v1 §6, pending un-assigns', async (t) => {
  const o = await deliveryOrder(s, a)
  const d = a.drivers[0]!
  await assign(s, a, o.id, d.id)
  const put = (delivery_status: string, note?: string) =>
    s.req('PUT', `/restaurants/${a.storeId}/orders/${o.id}/delivery-status`, { token: a.ownerToken, body: { delivery_status, note } })
  t.equal((await put('picked_up')).status, 200)
  t.equal((await put('out_for_delivery')).status, 200)
  const failed = await put('failed', 'nobody home')
  t.equal(failed.status, 200)
  t.equal(failed.body.delivery_status, 'failed')
  t.equal((await put('delivered')).body.delivery_status, 'delivered', 'an override may go anywhere')
  const evs = eventsOf(o.id).map((e) => e.event)
  // picked_up has no delivery event; the kitchen status it implies (new → ready) and delivered's (ready → delivered) are order.status_changed (docs/orders.md).
  t.same(evs, ['order.created', 'order.driver_assigned', 'order.status_changed', 'order.out_for_delivery', 'order.delivery_failed', 'order.delivered', 'order.status_changed'], 'picked_up emits no delivery event')
  t.match(eventsOf(o.id).find((e) => e.event === 'order.delivery_failed')!.data, { delivery_status: 'failed', driver_id: d.id, note: 'nobody home' })
  const back = await put('pending')
  t.match(back.body, { delivery_status: 'pending', driver: null })
  const avail = await s.req('GET', '/driver/available', { token: d.token })
  t.ok(avail.body.data.some((x: any) => x.id === o.id), 'back in the pool')
  const bad = await put('teleported')
  t.equal(bad.status, 422)
  t.ok(bad.body.errors.delivery_status)
})

t.test('deliveries list: only delivery orders, filters, paginated envelope', async (t) => {
  const st = a.addStore()
  const f = { ...a, ...st }
  const o1 = await deliveryOrder(s, f)
  const o2 = await deliveryOrder(s, f)
  await s.req('POST', `/restaurants/${st.storeId}/orders`, { token: a.ownerToken, body: { type: 'takeaway', items: [{ item_id: st.itemId, quantity: 1 }] } })
  const unbound = a.addDriver({ restaurantId: null })
  await s.req('POST', `/restaurants/${st.storeId}/orders/${o2.id}/assign`, { token: a.ownerToken, body: { driver_id: unbound.id } })
  const all = await s.req('GET', `/restaurants/${st.storeId}/deliveries`, { token: a.ownerToken })
  t.match(all.body, { current_page: 1, per_page: 30, total: 2, last_page: 1 })
  t.same(all.body.data.map((x: any) => x.id), [o2.id, o1.id], 'newest first, takeaway left out')
  const pending = await s.req('GET', `/restaurants/${st.storeId}/deliveries?delivery_status=pending`, { token: a.ownerToken })
  t.same(pending.body.data.map((x: any) => x.id), [o1.id])
  const byDriver = await s.req('GET', `/restaurants/${st.storeId}/deliveries?driver_id=${unbound.id}`, { token: a.ownerToken })
  t.same(byDriver.body.data.map((x: any) => x.id), [o2.id])
  t.equal((await s.req('GET', `/restaurants/${st.storeId}/deliveries?delivery_status=nope`, { token: a.ownerToken })).status, 422)
})

t.test("another owner's store or order is 404 on every delivery route", async (t) => {
  const theirs = await deliveryOrder(s, b)
  const routes: Array<[string, string, unknown]> = [
    ['GET', `/restaurants/${b.storeId}/deliveries`, undefined],
    ['POST', `/restaurants/${b.storeId}/orders/${theirs.id}/assign`, { driver_id: a.drivers[0]!.id }],
    ['POST', `/restaurants/${a.storeId}/orders/${theirs.id}/assign`, { driver_id: a.drivers[0]!.id }],
    ['PUT', `/restaurants/${b.storeId}/orders/${theirs.id}/delivery-status`, { delivery_status: 'failed' }],
    ['PUT', `/restaurants/${a.storeId}/orders/${theirs.id}/delivery-status`, { delivery_status: 'failed' }],
    ['POST', `/restaurants/${b.storeId}/orders/${theirs.id}/offers`, {}],
    ['GET', `/restaurants/${b.storeId}/orders/${theirs.id}/pod-photo`, undefined],
  ]
  for (const [method, path, body] of routes) {
    const r = await s.req(method, path, { token: a.ownerToken, body })
    t.equal(r.status, 404, `${method} ${path}`)
  }
  t.equal((await s.req('GET', `/track/${theirs.track_token}`)).body.delivery_status, 'pending', 'untouched')
})

t.test("another owner's store or order with an invalid body is 404, not 422 (404 before 422)", async (t) => {
  const theirs = await deliveryOrder(s, b)
  const mine = await deliveryOrder(s, a)
  const cases: Array<[string, string, unknown]> = [
    ['POST', `/orders/${theirs.id}/assign`, { driver_id: 'nobody' }],
    ['PUT', `/orders/${theirs.id}/delivery-status`, { delivery_status: 'teleported' }],
    ['POST', `/orders/${theirs.id}/offers`, { expires_in: -1 }],
  ]
  for (const [method, rest, body] of cases) {
    for (const storeId of [b.storeId, a.storeId]) {
      const r = await s.req(method, `/restaurants/${storeId}${rest}`, { token: a.ownerToken, body })
      t.equal(r.status, 404, `${method} store ${storeId === a.storeId ? 'own' : 'theirs'} ${rest}`)
      t.equal(r.body.code, 'not_found')
    }
    const own = await s.req(method, `/restaurants/${a.storeId}${rest.replace(String(theirs.id), String(mine.id))}`, { token: a.ownerToken, body })
    t.equal(own.status, 422, `${method} ${rest}: the same body on an own order is a validation error`)
  }
})

t.test('offers: to on-shift drivers only, one open offer per driver, refused once assigned', async (t) => {
  const st = a.addStore()
  const on = a.addDriver({ restaurantId: st.storeId, onShift: true })
  const off = a.addDriver({ restaurantId: st.storeId })
  const o = await deliveryOrder(s, { ...a, ...st })
  const r = await s.req('POST', `/restaurants/${st.storeId}/orders/${o.id}/offers`, { token: a.ownerToken, body: { driver_ids: [on.id, off.id], expires_in: 30 } })
  t.equal(r.status, 200, 'creating offers answers 200 (api-v1 §4)')
  t.equal(r.body.data.length, 1)
  t.match(r.body.data[0], { order_id: o.id, status: 'pending', fee: 4.5, expires_in: Number })
  t.same(r.body.skipped, [{ driver_id: off.id, reason: 'off_shift' }])
  const again = await s.req('POST', `/restaurants/${st.storeId}/orders/${o.id}/offers`, { token: a.ownerToken, body: {} })
  t.same(again.body.skipped.filter((x: any) => x.driver_id === on.id), [{ driver_id: on.id, reason: 'already_offered' }])
  const tooShort = await s.req('POST', `/restaurants/${st.storeId}/orders/${o.id}/offers`, { token: a.ownerToken, body: { expires_in: 1 } })
  t.equal(tooShort.status, 422)
  await s.req('POST', `/restaurants/${st.storeId}/orders/${o.id}/assign`, { token: a.ownerToken, body: { driver_id: off.id } })
  t.same((await s.req('GET', '/driver/offers', { token: on.token })).body.data, [], 'assignment withdrew the open offer')
  const late = await s.req('POST', `/restaurants/${st.storeId}/orders/${o.id}/offers`, { token: a.ownerToken, body: { driver_ids: [on.id] } })
  t.equal(late.status, 409)
  t.equal(late.body.code, 'already_claimed')
})
