/**
 * Shipments through the API (issue 18 item 6; docs/verticals.md "Shipments"): carrier and tracking
 * number, state moves (invalid → 422 invalid_transition), the list with filters, the public
 * tracking view and socket following the parcel, cross-owner 404s and the staff `orders` permission.
 */
import t from 'tap'
import { startServer } from './helpers/server.ts'
import { createAccount, createStaff, createStore, createMenu, isError, postOrder } from './helpers/fixtures.ts'
import { WsClient, wsBase } from './helpers/ws-client.ts'

const s = await startServer({ RATE_LIMIT_PER_MINUTE: '100000' })
t.teardown(() => s.close())
const db = s.app.svc.db
const a = createAccount(db, { type: 'clothing' })
const other = createAccount(db, { type: 'clothing' })
const address = { name: 'Ada', line1: '1 Main St', city: 'Berlin', postal_code: '10115', country: 'DE' }
const ship = async (acc = a) => (await postOrder(s, acc.token, acc.storeId, { type: 'ship', shipping_address: address, items: [{ item_id: acc.menu.fries, quantity: 1 }] })).body
const base = (acc = a, orderId: number) => `/restaurants/${acc.storeId}/orders/${orderId}/shipment`

t.test('carrier, tracking and moves; the tracking view and socket follow', async (t) => {
  const o = await ship()
  const ws = await WsClient.open(`${wsBase(s)}/ws/track/${o.track_token}`)
  t.teardown(() => ws.close())
  const snap = await ws.next((x) => x.type === 'snapshot')
  t.equal(snap.shipment.status, 'pending')
  t.notOk('address' in snap.shipment, 'the public view never shows the address')

  const put = await s.req('PUT', base(a, o.id), { token: a.token, body: { carrier: 'DHL', tracking_number: 'JD0123', tracking_url: 'https://dhl.example/JD0123' } })
  t.equal(put.status, 200)
  t.same([put.body.carrier, put.body.tracking_number], ['DHL', 'JD0123'])
  isError(t, await s.req('PUT', base(a, o.id), { token: a.token, body: { tracking_url: 'javascript:alert(1)' } }), 422, 'validation_failed', 'a non-http link')

  isError(t, await s.req('POST', `${base(a, o.id)}/status`, { token: a.token, body: { status: 'delivered' } }), 422, 'invalid_transition', 'pending → delivered')
  for (const status of ['label_created', 'in_transit']) {
    const r = await s.req('POST', `${base(a, o.id)}/status`, { token: a.token, body: { status, note: `now ${status}` } })
    t.equal(r.status, 200)
    t.equal(r.body.status, status)
  }
  const frame = await ws.next((x) => x.type === 'status' && x.shipment?.status === 'in_transit')
  t.equal(frame.shipment.carrier, 'DHL', 'the socket got the move with the carrier')
  const track = await s.req('GET', `/track/${o.track_token}`)
  t.same(track.body.shipment.timeline.map((x: { status: string }) => x.status), ['pending', 'label_created', 'in_transit'])
  t.equal(track.body.shipment.tracking_number, 'JD0123')

  t.equal((await s.req('POST', `${base(a, o.id)}/status`, { token: a.token, body: { status: 'delivered' } })).status, 200)
  isError(t, await s.req('POST', `${base(a, o.id)}/status`, { token: a.token, body: { status: 'returned' } }), 422, 'invalid_transition', 'delivered is final')
})

t.test('list with filters, paginated', async (t) => {
  const o = await ship()
  await s.req('PUT', base(a, o.id), { token: a.token, body: { carrier: 'UPS' } })
  const all = await s.req('GET', `/restaurants/${a.storeId}/shipments`, { token: a.token })
  t.equal(all.status, 200)
  t.ok(all.body.total >= 2)
  t.same(Object.keys(all.body).sort(), ['current_page', 'data', 'last_page', 'per_page', 'total'])
  const ups = await s.req('GET', `/restaurants/${a.storeId}/shipments?carrier=ups`, { token: a.token })
  t.same(ups.body.data.map((x: { order_id: number }) => x.order_id), [o.id])
  const pending = await s.req('GET', `/restaurants/${a.storeId}/shipments?status=pending`, { token: a.token })
  t.ok(pending.body.data.every((x: { status: string }) => x.status === 'pending'))
  const today = new Date().toISOString().slice(0, 10)
  t.equal((await s.req('GET', `/restaurants/${a.storeId}/shipments?from=2000-01-01&to=2000-01-02`, { token: a.token })).body.total, 0)
  t.ok((await s.req('GET', `/restaurants/${a.storeId}/shipments?from=${today}&to=${today}`, { token: a.token })).body.total >= 2)
  isError(t, await s.req('GET', `/restaurants/${a.storeId}/shipments?status=lost`, { token: a.token }), 422, 'validation_failed')
})

t.test('another owner\'s shipment is 404, whatever the body; an order without one is 404', async (t) => {
  const theirs = await ship(other)
  isError(t, await s.req('GET', base(other, theirs.id).replace(`/${other.storeId}/`, `/${a.storeId}/`), { token: a.token }), 404, 'not_found', 'their order under my store')
  isError(t, await s.req('GET', base(other, theirs.id), { token: a.token }), 404, 'not_found', 'their store')
  isError(t, await s.req('POST', `${base(other, theirs.id)}/status`, { token: a.token, body: { status: 'nope' } }), 404, 'not_found', 'their store with a bad body')
  isError(t, await s.req('GET', `/restaurants/${other.storeId}/shipments`, { token: a.token }), 404, 'not_found', 'their list')
  const takeaway = (await postOrder(s, a.token, a.storeId, { type: 'in_store', items: [{ item_id: a.menu.fries, quantity: 1 }] })).body
  isError(t, await s.req('GET', base(a, takeaway.id), { token: a.token }), 404, 'not_found', 'an in-store order has no shipment')
})

t.test('staff: with `orders` they ship; without it 403', async (t) => {
  const o = await ship()
  const clerk = createStaff(db, a.storeId, { role: 'cashier' })
  const cook = createStaff(db, a.storeId, { role: 'cashier', permissions: { revoke: ['orders'] } })
  const r = await s.req('POST', `/staff/orders/${o.id}/shipment/status`, { token: clerk.token, body: { status: 'label_created' } })
  t.equal(r.status, 200)
  t.equal((await s.req('GET', '/staff/shipments', { token: clerk.token })).status, 200)
  isError(t, await s.req('POST', `/staff/orders/${o.id}/shipment/status`, { token: cook.token, body: { status: 'in_transit' } }), 403, 'forbidden')
  isError(t, await s.req('GET', '/staff/shipments', { token: cook.token }), 403, 'forbidden')
  // Another store's staff cannot see this store's order.
  const st = createStore(db, a.ownerId, { type: 'clothing' })
  createMenu(db, st.id)
  const elsewhere = createStaff(db, st.id, { role: 'cashier' })
  isError(t, await s.req('GET', `/staff/orders/${o.id}/shipment`, { token: elsewhere.token }), 404, 'not_found')
})

t.test("a cancelled order's parcel does not go out; one on its way can only come back", async (t) => {
  const o = await ship()
  const move = (status: string) => s.req('POST', `${base(a, o.id)}/status`, { token: a.token, body: { status } })
  t.equal((await move('label_created')).status, 200)
  t.equal((await s.req('PUT', `/restaurants/${a.storeId}/orders/${o.id}/status`, { token: a.token, body: { status: 'cancelled' } })).status, 200)
  const out = await move('in_transit')
  isError(t, out, 422, 'invalid_transition')
  t.equal((await s.req('GET', base(a, o.id), { token: a.token })).body.status, 'label_created', 'nothing moved')
  const back = await move('failed')
  t.equal(back.status, 200, back.text)
  t.equal((await move('returned')).status, 200)
})

t.test('the tracking page shows the parcel and follows its moves (Chromium)', async (t) => {
  const { launchChromium } = await import('./helpers/browser.ts')
  const browser = await launchChromium()
  if (!browser) return t.fail('chromium is missing')
  t.teardown(() => browser.close())
  const o = await ship()
  await s.req('PUT', base(a, o.id), { token: a.token, body: { carrier: 'DHL', tracking_number: 'JD42' } })
  const page = await browser.newPage()
  await page.goto(`${s.site}/t/${o.track_token}`)
  await page.waitForSelector('#conn.live')
  t.equal(await page.textContent('#mode-label'), 'Shipment')
  t.equal(await page.textContent('#mode-detail'), 'DHL · JD42')
  await s.req('POST', `${base(a, o.id)}/status`, { token: a.token, body: { status: 'in_transit' } })
  await page.waitForSelector('#mode-card[data-status="in_transit"]')
  t.equal(await page.textContent('#mode-text'), 'in transit')
})
