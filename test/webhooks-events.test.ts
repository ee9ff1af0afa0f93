/**
 * The event catalog (api-v1 §3, §6; issue 4 item 5): every emitter that exists reaches a webhook
 * receiver with the event name and `data` the catalog documents (order created, kitchen status,
 * driver assigned — by the owner and by a driver's claim —, out for delivery, delivered, delivery
 * failed — from the driver app and the owner override —, menu updated, customer created, ping);
 * and every catalog event is documented in docs/webhooks.md and in the OpenAPI `webhooks` section.
 */
import t, { type Test } from 'tap'
import { readFileSync } from 'node:fs'
import { Validator } from '@seriousme/openapi-schema-validator'
import { startServer } from './helpers/server.ts'
import { assign, createFleet, deliveryOrder, driverStatus } from './helpers/delivery.ts'
import { conformsToCatalog, createEndpoint, startReceiver, type Received } from './helpers/webhook-receiver.ts'
import { checkSchema } from './helpers/jsonschema.ts'
import { EVENT_CATALOG, EVENT_NAMES } from '../src/domain/webhook-events.ts'
import { runBillingDurable } from '../src/billing/run.ts'
import { DEFAULT_POLICY } from '../src/domain/subscription.ts'
import { credit } from '../src/storage/wallet.ts'

const s = await startServer({ WEBHOOK_ALLOW_LOOPBACK: '1', WEBHOOK_RETRY_SCHEDULE: '0.2', RATE_LIMIT_PER_MINUTE: '100000' })
const rcv = await startReceiver()
t.teardown(async () => { await s.close(); await rcv.close() })
const f = createFleet(s.app.svc.db)
const ep = await createEndpoint(s.base, f.ownerToken, `${rcv.url}/all`, ['*'])
const ok = (status: number, what: string) => { if (status >= 300) throw new Error(`${what}: ${status}`) }

/** The delivery of `event` whose data matches `where`, waiting for it. */
async function delivered(event: string, where: Record<string, unknown>): Promise<Received> {
  const match = (r: Received) => r.body.event === event && Object.entries(where).every(([k, v]) => r.body.data[k] === v)
  await rcv.until((all) => all.some(match), 5000, `${event} ${JSON.stringify(where)}`)
  return rcv.received.find(match)!
}

/** The payload conforms to the catalog schema and carries no undocumented key. */
const conforms = (t: Test, r: Received) => conformsToCatalog(t, r, ep.secret)

t.test('order lifecycle events from the owner API and the driver app', async (t) => {
  const o = await deliveryOrder(s, f)
  const created = await delivered('order.created', { order_id: o.id })
  t.same(created.body.data, { order_id: o.id, restaurant_id: f.storeId, type: 'delivery', status: 'new', total: o.total.toFixed(2), delivery_fee: '0.00' }, 'total and the delivery fee are decimal strings')
  conforms(t, created)

  ok((await s.req('PUT', `/restaurants/${f.storeId}/orders/${o.id}/status`, { token: f.ownerToken, body: { status: 'preparing' } })).status, 'status')
  const st = await delivered('order.status_changed', { order_id: o.id })
  t.same(st.body.data, { order_id: o.id, restaurant_id: f.storeId, status: 'preparing', previous_status: 'new' })
  conforms(t, st)

  const driver = f.drivers[0]!
  await assign(s, f, o.id, driver.id)
  const as = await delivered('order.driver_assigned', { order_id: o.id })
  t.same(as.body.data, { order_id: o.id, restaurant_id: f.storeId, driver_id: driver.id })
  conforms(t, as)

  ok((await driverStatus(s, driver, o.id, 'picked_up')).status, 'picked_up')
  ok((await driverStatus(s, driver, o.id, 'out_for_delivery')).status, 'out_for_delivery')
  const ofd = await delivered('order.out_for_delivery', { order_id: o.id })
  t.same(ofd.body.data, { order_id: o.id, restaurant_id: f.storeId, delivery_status: 'out_for_delivery', driver_id: driver.id, note: null })
  conforms(t, ofd)
  ok((await s.req('PUT', `/driver/deliveries/${o.id}/status`, { token: driver.token, body: { delivery_status: 'delivered', note: 'At the door' } })).status, 'delivered')
  const dl = await delivered('order.delivered', { order_id: o.id })
  t.same(dl.body.data, { order_id: o.id, restaurant_id: f.storeId, delivery_status: 'delivered', driver_id: driver.id, note: 'At the door' })
  conforms(t, dl)
  t.notOk(rcv.received.some((r) => r.body.data.order_id === o.id && r.body.data.delivery_status === 'picked_up'), 'picked_up is not an event (api-v1 §3)')

  const o2 = await deliveryOrder(s, f)
  await assign(s, f, o2.id, driver.id)
  ok((await s.req('PUT', `/restaurants/${f.storeId}/orders/${o2.id}/delivery-status`, { token: f.ownerToken, body: { delivery_status: 'failed' } })).status, 'owner failed')
  const fl = await delivered('order.delivery_failed', { order_id: o2.id })
  t.same(fl.body.data, { order_id: o2.id, restaurant_id: f.storeId, delivery_status: 'failed', driver_id: driver.id, note: null })
  conforms(t, fl)

  // A driver's own claim is an assignment too.
  const o3 = await deliveryOrder(s, f)
  const claimer = f.addDriver({ onShift: true })
  const claim = await s.req('POST', `/driver/deliveries/${o3.id}/claim`, { token: claimer.token })
  ok(claim.status, 'claim')
  conforms(t, await delivered('order.driver_assigned', { order_id: o3.id, driver_id: claimer.id }))
})

t.test('order.paid from a card payment that covers the total (docs/operations.md "Payments")', async (t) => {
  const o = await deliveryOrder(s, f)
  ok((await s.req('POST', `/restaurants/${f.storeId}/orders/${o.id}/payments`, { token: f.ownerToken, body: { amount: o.total, method: 'card', tip_amount: 1 } })).status, 'payment')
  const paid = await delivered('order.paid', { order_id: o.id })
  t.match(paid.body.data, { order_id: o.id, restaurant_id: f.storeId, total: o.total.toFixed(2), amount_paid: o.total.toFixed(2), tips: '1.00', methods: ['card'] })
  conforms(t, paid)
})

t.test('shift.opened, refund.completed, shift.closed from a cash shift with a refund (docs/operations.md "Cash shifts", "Refunds")', async (t) => {
  const sh = await s.req('POST', `/restaurants/${f.storeId}/shifts`, { token: f.ownerToken, body: { opening_float: 50, register: 'events' } })
  ok(sh.status, 'open shift')
  conforms(t, await delivered('shift.opened', { shift_id: sh.body.id }))
  // 'menu.updated' above marked the item sold out.
  ok((await s.req('PATCH', `/restaurants/${f.storeId}/menu/items/${f.itemId}/sold-out`, { token: f.ownerToken, body: { is_sold_out: false } })).status, 'back on sale')
  const o = await deliveryOrder(s, f)
  ok((await s.req('POST', `/restaurants/${f.storeId}/orders/${o.id}/payments`, { token: f.ownerToken, body: { amount: o.total, method: 'cash', register: 'events' } })).status, 'cash payment')
  const rf = await s.req('POST', `/restaurants/${f.storeId}/orders/${o.id}/refunds`, { token: f.ownerToken, body: { amount: 1, register: 'events' } })
  ok(rf.status, 'refund')
  conforms(t, await delivered('refund.completed', { refund_id: rf.body.data[0].id }))
  ok((await s.req('POST', `/restaurants/${f.storeId}/shifts/${sh.body.id}/close`, { token: f.ownerToken, body: { counted_cash: 50 + o.total - 1 } })).status, 'close shift')
  const closed = await delivered('shift.closed', { shift_id: sh.body.id })
  t.match(closed.body.data, { over_short: '0.00', register: 'events' })
  conforms(t, closed)
})

t.test('reservation.created and reservation.cancelled from a booking (docs/operations.md "Reservations")', async (t) => {
  ok((await s.req('POST', `/restaurants/${f.storeId}/tables`, { token: f.ownerToken, body: { name: 'Ev1', capacity: 4 } })).status, 'table')
  const starts = `${new Date(Date.now() + 2 * 86_400_000).toISOString().slice(0, 10)}T19:00:00Z`
  const r = await s.req('POST', `/restaurants/${f.storeId}/reservations`, { token: f.ownerToken, body: { name: 'Ada', party_size: 2, starts_at: starts } })
  ok(r.status, 'booking')
  conforms(t, await delivered('reservation.created', { reservation_id: r.body.id }))
  ok((await s.req('POST', `/restaurants/${f.storeId}/reservations/${r.body.id}/cancel`, { token: f.ownerToken, body: { reason: 'rain' } })).status, 'cancel')
  const c = await delivered('reservation.cancelled', { reservation_id: r.body.id })
  t.match(c.body.data, { reason: 'rain', source: 'owner' })
  conforms(t, c)
})

t.test('menu.updated from menu writes', async (t) => {
  const cat = await s.req('POST', `/restaurants/${f.storeId}/menu/categories`, { token: f.ownerToken, body: { name: 'Soups' } })
  ok(cat.status, 'category')
  const m = await delivered('menu.updated', { entity: 'category', id: cat.body.id })
  t.same(m.body.data, { restaurant_id: f.storeId, change: 'created', entity: 'category', id: cat.body.id })
  conforms(t, m)
  ok((await s.req('PATCH', `/restaurants/${f.storeId}/menu/items/${f.itemId}/sold-out`, { token: f.ownerToken, body: { is_sold_out: true } })).status, 'sold out')
  const so = await delivered('menu.updated', { entity: 'item', id: f.itemId })
  t.same(so.body.data, { restaurant_id: f.storeId, change: 'updated', entity: 'item', id: f.itemId })
  conforms(t, so)
})

t.test('customer.created from customer registration', async (t) => {
  const r = await s.req('POST', `/restaurants/${f.storeId}/customer/register`, { body: { name: 'Grace', email: `grace-${Date.now()}@example.test`, password: 'correct horse', device: 'phone' } })
  t.equal(r.status, 200)
  const c = await delivered('customer.created', { customer_id: r.body.customer.id })
  t.same(c.body.data, { customer_id: r.body.customer.id, restaurant_id: f.storeId, source: 'register' })
  conforms(t, c)
})

t.test('ping', async (t) => {
  const p = await s.req('POST', `/webhook-endpoints/${ep.id}/ping`, { token: f.ownerToken })
  t.equal(p.status, 200)
  conforms(t, await delivered('ping', { endpoint_id: ep.id }))
})

t.test('subscription.* from the owner\'s subscription actions and the billing run (docs/billing.md)', async (t) => {
  const svc = s.app.svc
  const billing = (at: string) => runBillingDurable((fn) => svc.committer.write(fn), svc.db, new Date(at), DEFAULT_POLICY, (e) => svc.events.publish(e))
  const post = async (path: string, body?: unknown) => {
    const r = await s.req('POST', path, { token: f.ownerToken, ...(body ? { body } : {}) })
    ok(r.status, path)
    return r.body
  }
  const day = (iso: string, n: number) => new Date(Date.parse(iso) + n * 86_400_000).toISOString()
  const sub = await post('/subscription/pause')
  conforms(t, await delivered('subscription.paused', { subscription_id: sub.id }))
  conforms(t, await delivered('subscription.resumed', { subscription_id: (await post('/subscription/resume')).id }))
  // A downgrade applies at the period end: plan_changed, then renewed.
  const down = await post('/subscription/plan', { plan_key: 'growth' })
  await svc.committer.write((db) => credit(db, f.ownerId, 2900, 'top_up', null, 'test'))
  await billing(down.current_period_end)
  const changed = await delivered('subscription.plan_changed', { subscription_id: sub.id })
  t.match(changed.body.data, { plan_key: 'growth', previous_plan_key: 'pro' })
  conforms(t, changed)
  conforms(t, await delivered('subscription.renewed', { subscription_id: sub.id }))
  // The wallet is empty now: the next period does not renew.
  const { current_period_end: end } = await post('/subscription/cancel')
  await billing(day(end, -7))
  conforms(t, await delivered('subscription.expiring', { subscription_id: sub.id }))
  await post('/subscription/resume-renewal')
  await billing(end)
  conforms(t, await delivered('subscription.past_due', { subscription_id: sub.id }))
  await billing(day(end, 8))
  conforms(t, await delivered('subscription.expired', { subscription_id: sub.id, status: 'expired' }))
  // A new subscription with a trial (this account never had one).
  const trial = await post('/subscription/plan', { plan_key: 'growth' })
  await billing(day(trial.trial_end, -3))
  conforms(t, await delivered('subscription.trial_ending', { subscription_id: trial.id }))
})

t.test('every event received so far is a catalog event with its documented payload', async (t) => {
  t.ok(rcv.received.length >= 12)
  for (const r of rcv.received) t.ok(r.body.event in EVENT_CATALOG, `${r.body.event} is documented`)
  const emitted = new Set(rcv.received.map((r) => r.body.event))
  const missing = EVENT_NAMES.filter((n) => EVENT_CATALOG[n]!.emitted && !emitted.has(n))
  t.same(missing, [], 'every event marked as emitted was seen in this test')
})

t.test('every catalog event is documented in docs/webhooks.md and in the OpenAPI webhooks section', async (t) => {
  const md = readFileSync(new URL('../docs/webhooks.md', import.meta.url), 'utf8')
  for (const name of EVENT_NAMES) t.ok(md.includes(`\`${name}\``), `docs/webhooks.md documents ${name}`)
  for (const v of ['WEBHOOK_ALLOW_LOOPBACK', 'WEBHOOK_RETRY_SCHEDULE', 'WEBHOOK_TIMEOUT_MS', 'WEBHOOK_CONCURRENCY']) t.ok(md.includes(v), `docs/webhooks.md documents ${v}`)
  const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8')
  for (const v of ['WEBHOOK_ALLOW_LOOPBACK', 'WEBHOOK_RETRY_SCHEDULE', 'WEBHOOK_TIMEOUT_MS', 'WEBHOOK_CONCURRENCY']) t.ok(readme.includes(`\`${v}\``), `README configuration documents ${v}`)

  const doc = (await s.req('GET', '/openapi.json')).body
  const validator = new Validator()
  const result = await validator.validate(structuredClone(doc))
  t.ok(result.valid, `the OpenAPI document is valid: ${JSON.stringify(result.errors)?.slice(0, 1000)}`)
  t.same(Object.keys(doc.webhooks).sort(), [...EVENT_NAMES].sort(), 'one webhook entry per catalog event')
  for (const name of EVENT_NAMES) {
    const op = doc.webhooks[name].post
    const schema = op.requestBody.content['application/json'].schema
    t.same(schema.required, ['id', 'event', 'created_at', 'data'], `${name}: body {id, event, created_at, data}`)
    t.same(schema.properties.data, EVENT_CATALOG[name]!.data, `${name}: data schema from the catalog`)
    t.same(checkSchema(schema, op.requestBody.content['application/json'].example, {}), [], `${name}: the example matches the schema`)
    t.same(op.parameters.map((p: { name: string }) => p.name), ['webhook-id', 'webhook-timestamp', 'webhook-signature', 'X-Webhook-Event', 'X-Webhook-Signature'], `${name}: signature headers documented`)
  }
  const routes = ['/webhook-endpoints', '/webhook-endpoints/{id}', '/webhook-endpoints/{id}/ping', '/webhook-endpoints/{id}/pause', '/webhook-endpoints/{id}/resume', '/webhook-endpoints/{id}/deliveries', '/webhook-endpoints/{id}/deliveries/{deliveryId}', '/webhook-endpoints/{id}/deliveries/{deliveryId}/requeue']
  for (const p of routes) t.ok(doc.paths[p], `${p} is in the OpenAPI paths`)
})
