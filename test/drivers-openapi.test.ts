/**
 * The OpenAPI document describes every driver and delivery route as it really answers: each
 * route of the owner driver/delivery API and the driver app is called for real and its body
 * checked against the documented response schema (and its JSON request body is documented).
 */
import t, { type Test } from 'tap'
import { startServer } from './helpers/server.ts'
import { checkSchema } from './helpers/jsonschema.ts'
import { assign, createFleet, deliveryOrder, driverStatus } from './helpers/delivery.ts'
import type { RecordingSmsProvider } from '../src/providers/sms.ts'

const s = await startServer({ RATE_LIMIT_PER_MINUTE: '100000' })
t.teardown(() => s.close())
const db = s.app.svc.db
const doc = (await s.req('GET', '/openapi.json')).body as Record<string, any>
const f = createFleet(db)
const PNG_1PX = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=='

/** Every documented operation under these prefixes, as `METHOD path`. */
const documented = Object.entries(doc.paths as Record<string, Record<string, any>>)
  .filter(([p]) => p.startsWith('/driver') || (p.startsWith('/restaurants/') && /\/(deliveries|assign|delivery-status|offers|pod-photo)$/.test(p)))
  .flatMap(([p, item]) => Object.keys(item).filter((m) => ['get', 'post', 'put', 'delete', 'patch'].includes(m)).map((m) => `${m.toUpperCase()} ${p}`))
const checked = new Set<string>()

async function call(t: Test, method: string, docPath: string, url: string, opts: { token?: string; body?: unknown }, status = 200) {
  const r = await s.req(method, url, opts)
  t.equal(r.status, status, `${method} ${url} answers ${status}: ${r.text.slice(0, 300)}`)
  const op = doc.paths[docPath]?.[method.toLowerCase()]
  if (!t.ok(op, `${method} ${docPath} is documented`)) return r
  if (opts.body !== undefined) t.ok(op.requestBody?.content?.['application/json']?.schema, `${method} ${docPath} documents its request body`)
  const content = op.responses[String(status)]?.content
  if (status === 204) t.notOk(content?.['application/json'], `${method} ${docPath} 204 has no body`)
  else {
    const schema = content?.['application/json']?.schema
    if (t.ok(schema, `${method} ${docPath} documents a ${status} JSON body`)) t.same(checkSchema(schema, r.body, doc), [], `${method} ${docPath} ${status} matches its schema`)
  }
  checked.add(`${method} ${docPath}`)
  return r
}

t.test('owner driver routes', async (t) => {
  const tk = { token: f.ownerToken }
  const created = await call(t, 'POST', '/drivers', '/drivers', { ...tk, body: { name: 'Schema Sam', phone: '+15550109999', restaurant_id: f.storeId } })
  const id = created.body.id
  await call(t, 'GET', '/drivers', '/drivers', tk)
  await call(t, 'GET', '/drivers/{id}', `/drivers/${id}`, tk)
  await call(t, 'PUT', '/drivers/{id}', `/drivers/${id}`, { ...tk, body: { name: 'Schema Samantha', restaurant_id: null } })
  await call(t, 'POST', '/drivers/{id}/rotate-token', `/drivers/${id}/rotate-token`, tk)
  await call(t, 'DELETE', '/drivers/{id}', `/drivers/${id}`, tk, 204)
})

t.test('owner delivery routes', async (t) => {
  const tk = { token: f.ownerToken }
  const d = f.drivers[0]!
  const o = await deliveryOrder(s, f)
  await call(t, 'POST', '/restaurants/{id}/orders/{orderId}/assign', `/restaurants/${f.storeId}/orders/${o.id}/assign`, { ...tk, body: { driver_id: d.id } })
  await call(t, 'PUT', '/restaurants/{id}/orders/{orderId}/delivery-status', `/restaurants/${f.storeId}/orders/${o.id}/delivery-status`, { ...tk, body: { delivery_status: 'picked_up', note: 'at the door' } })
  await call(t, 'GET', '/restaurants/{id}/deliveries', `/restaurants/${f.storeId}/deliveries`, tk)
  const free = await deliveryOrder(s, f)
  const on = f.addDriver({ onShift: true })
  await call(t, 'POST', '/restaurants/{id}/orders/{orderId}/offers', `/restaurants/${f.storeId}/orders/${free.id}/offers`, { ...tk, body: { driver_ids: [on.id] } })
  await s.req('POST', `/driver/deliveries/${o.id}/pod-photo`, { token: d.token, body: { image: `data:image/png;base64,${PNG_1PX}` } })
  const photo = await s.req('GET', `/restaurants/${f.storeId}/orders/${o.id}/pod-photo`, tk)
  t.equal(photo.status, 200)
  t.match(photo.headers.get('content-type'), /^image\/png/)
  t.ok(doc.paths['/restaurants/{id}/orders/{orderId}/pod-photo']?.get?.responses['200']?.content?.['image/*'], 'the photo is documented as an image')
  checked.add('GET /restaurants/{id}/orders/{orderId}/pod-photo')
})

t.test('driver app routes', async (t) => {
  const d = f.addDriver()
  const tk = { token: d.token }
  await call(t, 'GET', '/driver/me', '/driver/me', tk)
  await call(t, 'POST', '/driver/shift', '/driver/shift', { ...tk, body: { action: 'start' } })
  await call(t, 'PUT', '/driver/location', '/driver/location', { ...tk, body: { lat: 52.52, lng: 13.405 } })

  const avail = await deliveryOrder(s, f)
  await call(t, 'GET', '/driver/available', '/driver/available', tk)
  await call(t, 'POST', '/driver/deliveries/{orderId}/claim', `/driver/deliveries/${avail.id}/claim`, tk)
  await call(t, 'GET', '/driver/deliveries', '/driver/deliveries?active=1', tk)
  await call(t, 'GET', '/driver/deliveries/{orderId}', `/driver/deliveries/${avail.id}`, tk)
  await call(t, 'PUT', '/driver/deliveries/{orderId}/status', `/driver/deliveries/${avail.id}/status`, { ...tk, body: { delivery_status: 'picked_up', note: 'bag 2' } })
  await call(t, 'POST', '/driver/deliveries/{orderId}/pod-photo', `/driver/deliveries/${avail.id}/pod-photo`, { ...tk, body: { image: PNG_1PX, content_type: 'image/png' } })
  const code = (await s.req('GET', `/track/${avail.track_token}`)).body.delivery_code as string
  await call(t, 'POST', '/driver/deliveries/{orderId}/pod-otp', `/driver/deliveries/${avail.id}/pod-otp`, { ...tk, body: { code } })
  await call(t, 'GET', '/driver/earnings', '/driver/earnings', tk)

  for (const action of ['accept', 'reject'] as const) {
    const o = await deliveryOrder(s, f)
    const made = await s.req('POST', `/restaurants/${f.storeId}/orders/${o.id}/offers`, { token: f.ownerToken, body: { driver_ids: [d.id] } })
    t.equal(made.status, 200)
    if (action === 'accept') await call(t, 'GET', '/driver/offers', '/driver/offers', tk)
    await call(t, 'POST', `/driver/offers/{offerId}/${action}`, `/driver/offers/${made.body.data[0].id}/${action}`, tk)
  }

  await call(t, 'POST', '/driver/push/register-device', '/driver/push/register-device', { ...tk, body: { device_token: 'device-token-123', platform: 'android' } })
  await call(t, 'POST', '/driver/push/unregister-device', '/driver/push/unregister-device', { ...tk, body: { device_token: 'device-token-123' } })

  await call(t, 'POST', '/driver/login/request', '/driver/login/request', { body: { phone: d.phone } })
  const sms = s.app.svc.sms as RecordingSmsProvider
  const smsCode = /\b(\d{6})\b/.exec(sms.lastTo(d.phone)?.body ?? '')?.[1]
  await call(t, 'POST', '/driver/login/verify', '/driver/login/verify', { body: { phone: d.phone, code: smsCode, device: 'Pixel' } })
  await call(t, 'POST', '/driver/shift', '/driver/shift', { ...tk, body: { action: 'end' } })
})

t.test('the driver status route answers per its schema after an owner assignment', async (t) => {
  const d = f.addDriver()
  const o = await deliveryOrder(s, f)
  await assign(s, f, o.id, d.id)
  const r = await driverStatus(s, d, o.id, 'out_for_delivery')
  t.same(checkSchema(doc.paths['/driver/deliveries/{orderId}/status'].put.responses['200'].content['application/json'].schema, r.body, doc), [])
})

t.test('every documented driver and delivery route was exercised', async (t) => {
  t.same(documented.filter((k) => !checked.has(k)).sort(), [], 'no documented driver/delivery route left unchecked')
})
