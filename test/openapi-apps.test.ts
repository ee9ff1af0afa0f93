/**
 * The OpenAPI document describes the staff app, kitchen display, storefront, coupon and customer
 * app routes as they really answer (api-v1 §4.1): each real response below is checked against the
 * schema the document gives for that operation and status.
 */
import t, { type Test } from 'tap'
import { startServer } from './helpers/server.ts'
import { createAccount } from './helpers/fixtures.ts'
import { checkSchema } from './helpers/jsonschema.ts'
import { responseOf } from './helpers/openapi.ts'
import { createCustomer, createStaff, createStorefrontToken } from './helpers/people.ts'

const s = await startServer({ RATE_LIMIT_PER_MINUTE: '100000' })
t.teardown(() => s.close())
const db = s.app.svc.db
const a = createAccount(db)
const doc = (await s.req('GET', '/openapi.json')).body as Record<string, any>
const manager = createStaff(db, a.storeId, { role: 'manager', station: 'grill' })
const customer = createCustomer(db, a.storeId)
const sfToken = createStorefrontToken(db, a.storeId)

/** Call `method url` and check the body against the documented response of `docPath`. */
async function check(t: Test, docPath: string, method: string, url: string, opts: { token?: string; body?: unknown; headers?: Record<string, string> } = {}) {
  const r = await s.req(method, url, opts)
  const op = doc.paths[docPath]?.[method.toLowerCase()]
  if (!t.ok(op, `${method} ${docPath} is documented`)) return r
  const res = responseOf(doc, op, r.status)
  if (!t.ok(res, `${method} ${docPath} documents the ${r.status} it answered (${r.text.slice(0, 200)})`)) return r
  if (r.status !== 204) t.same(checkSchema(res.content['application/json'].schema, r.body, doc), [], `${method} ${docPath} ${r.status} matches its schema`)
  return r
}

t.test('staff app and kitchen display', async (t) => {
  const tk = { token: manager.token }
  await check(t, '/staff/me', 'GET', '/staff/me', tk)
  const order = await check(t, '/storefront/orders', 'POST', '/storefront/orders', { headers: { 'x-storefront-token': sfToken }, body: { type: 'takeaway', items: [{ item_id: a.menu.burger.id, quantity: 1 }] } })
  await check(t, '/staff/orders', 'GET', '/staff/orders', tk)
  await check(t, '/staff/orders/{orderId}/status', 'PUT', `/staff/orders/${order.body.id}/status`, { ...tk, body: { status: 'preparing' } })
  await check(t, '/staff/kds', 'GET', '/staff/kds', tk)
  const line = order.body.items[0].id
  await check(t, '/staff/kds/items/{itemId}/bump', 'PUT', `/staff/kds/items/${line}/bump`, tk)
  await check(t, '/staff/kds/items/{itemId}/recall', 'PUT', `/staff/kds/items/${line}/recall`, tk)
  await check(t, '/staff/analytics', 'GET', '/staff/analytics', tk)
  await check(t, '/staff/customers', 'GET', '/staff/customers', tk)
  await check(t, '/staff/coupons', 'POST', '/staff/coupons', { ...tk, body: { code: 'DOC10', kind: 'percent', value: 10 } })
  await check(t, '/staff/coupons', 'GET', '/staff/coupons', tk)
  const cat = await check(t, '/staff/menu/categories', 'POST', '/staff/menu/categories', { ...tk, body: { name: 'Docs', station: 'grill' } })
  const item = await check(t, '/staff/menu/items', 'POST', '/staff/menu/items', { ...tk, body: { category_id: cat.body.id, name: 'Doc dish', price: 4.5 } })
  await check(t, '/staff/menu/items/{itemId}', 'PUT', `/staff/menu/items/${item.body.id}`, { ...tk, body: { name: 'Doc dish 2', price: 5 } })
  await check(t, '/staff/menu/items/{itemId}/sold-out', 'PATCH', `/staff/menu/items/${item.body.id}/sold-out`, tk)
  // The item photo (a 1×1 PNG as base64) and the menu order, as the owner's (docs/menu-photos.md).
  const png = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=='
  const shot = await check(t, '/staff/menu/items/{itemId}/photo', 'POST', `/staff/menu/items/${item.body.id}/photo`, { ...tk, body: { image: png } })
  t.match(shot.body.photo, { url: String, thumb_url: String }, 'the staff upload is the item\'s photo')
  await check(t, '/staff/menu/items/{itemId}/photo', 'DELETE', `/staff/menu/items/${item.body.id}/photo`, tk)
  await check(t, '/staff/menu/categories/{categoryId}/order', 'PUT', `/staff/menu/categories/${cat.body.id}/order`, { ...tk, body: { ids: [item.body.id] } })
  const cats = (await s.req('GET', `/restaurants/${a.storeId}/menu/categories`, { token: a.token })).body as Array<{ id: number }>
  await check(t, '/staff/menu/order', 'PUT', '/staff/menu/order', { ...tk, body: { ids: cats.map((c) => c.id).reverse() } })
  await check(t, '/staff/integration/busy', 'POST', '/staff/integration/busy', { ...tk, body: { minutes: 20 } })
  await check(t, '/staff/integration/snooze', 'POST', '/staff/integration/snooze', { ...tk, body: {} })
  await check(t, '/staff/integration/status', 'GET', '/staff/integration/status', tk)
  await check(t, '/staff/push/register-device', 'POST', '/staff/push/register-device', { ...tk, body: { device_token: 'device-token-1', platform: 'ios' } })
  await check(t, '/staff/push/unregister-device', 'POST', '/staff/push/unregister-device', { ...tk, body: { device_token: 'device-token-1' } })
  await check(t, '/staff/2fa/setup', 'POST', '/staff/2fa/setup', tk)
  await check(t, '/staff/2fa/confirm', 'POST', '/staff/2fa/confirm', { ...tk, body: { code: '000000' } })
  await check(t, '/restaurants/{id}/staff/login', 'POST', `/restaurants/${a.storeId}/staff/login`, { body: { email: manager.email, password: manager.password, device: 'docs' } })
  const device = await check(t, '/staff/pin-devices', 'POST', '/staff/pin-devices', { ...tk, body: { name: 'Docs screen' } })
  await check(t, '/staff/pin-devices', 'GET', '/staff/pin-devices', tk)
  await check(t, '/restaurants/{id}/staff/pin', 'POST', `/restaurants/${a.storeId}/staff/pin`, { body: { pin: manager.pin, device: device.body.key } })
  await check(t, '/restaurants/{id}/staff/pin', 'POST', `/restaurants/${a.storeId}/staff/pin`, { body: { pin: manager.pin, device: 'not-enrolled' } })
  await check(t, '/staff/pin-devices/{deviceId}', 'DELETE', `/staff/pin-devices/${device.body.id}`, tk)
  await check(t, '/staff/logout', 'POST', '/staff/logout', tk)
})

t.test('owner management: staff, storefront tokens, coupons, balances', async (t) => {
  const tk = { token: a.token }
  const base = `/restaurants/${a.storeId}`
  const m = await check(t, '/restaurants/{id}/staff', 'POST', `${base}/staff`, { ...tk, body: { name: 'Doc', email: 'doc@staff.test', role: 'waiter', password: 'long-password', pin: '8080' } })
  await check(t, '/restaurants/{id}/staff', 'GET', `${base}/staff`, tk)
  await check(t, '/restaurants/{id}/staff/{staffId}', 'PUT', `${base}/staff/${m.body.id}`, { ...tk, body: { station: 'bar' } })
  const dev = await check(t, '/restaurants/{id}/pin-devices', 'POST', `${base}/pin-devices`, { ...tk, body: { name: 'Till' } })
  await check(t, '/restaurants/{id}/pin-devices', 'GET', `${base}/pin-devices`, tk)
  await check(t, '/restaurants/{id}/pin-devices/{deviceId}', 'DELETE', `${base}/pin-devices/${dev.body.id}`, tk)
  const sf = await check(t, '/restaurants/{id}/storefront-tokens', 'POST', `${base}/storefront-tokens`, tk)
  await check(t, '/restaurants/{id}/storefront-tokens', 'GET', `${base}/storefront-tokens`, tk)
  await check(t, '/restaurants/{id}/storefront-tokens/{tokenId}', 'DELETE', `${base}/storefront-tokens/${sf.body.id}`, tk)
  const c = await check(t, '/restaurants/{id}/coupons', 'POST', `${base}/coupons`, { ...tk, body: { code: 'OWN5', kind: 'fixed', value: 5 } })
  await check(t, '/restaurants/{id}/coupons/{couponId}', 'PUT', `${base}/coupons/${c.body.id}`, { ...tk, body: { active: false } })
  await check(t, '/restaurants/{id}/coupons', 'GET', `${base}/coupons`, tk)
  await check(t, '/restaurants/{id}/customers/{customerId}/store-credit', 'POST', `${base}/customers/${customer.id}/store-credit`, { ...tk, body: { amount: 3, reason: 'docs' } })
  const g = await check(t, '/restaurants/{id}/gift-cards', 'POST', `${base}/gift-cards`, { ...tk, body: { amount: 10, customer_id: customer.id } })
  await check(t, '/restaurants/{id}/gift-cards/{giftCardId}/redeem', 'POST', `${base}/gift-cards/${g.body.id}/redeem`, { ...tk, body: { amount: 4 } })
  await check(t, '/restaurants/{id}/staff/{staffId}', 'DELETE', `${base}/staff/${m.body.id}`, tk)
})

t.test('storefront and customer app', async (t) => {
  const sf = { headers: { 'x-storefront-token': sfToken } }
  await check(t, '/storefront/menu', 'GET', '/storefront/menu', sf)
  await check(t, '/storefront/restaurant', 'GET', '/storefront/restaurant', sf)
  const tk = { token: customer.token }
  const store = `/restaurants/${a.storeId}/customer`
  await check(t, '/restaurants/{id}/customer/register', 'POST', `${store}/register`, { body: { name: 'Doc', email: 'doc@customer.test', password: 'long-password' } })
  await check(t, '/restaurants/{id}/customer/login', 'POST', `${store}/login`, { body: { email: 'doc@customer.test', password: 'long-password', device: 'docs' } })
  await check(t, '/restaurants/{id}/customer/otp/request', 'POST', `${store}/otp/request`, { body: { phone: '+15550107070' } })
  await check(t, '/restaurants/{id}/customer/otp/verify', 'POST', `${store}/otp/verify`, { body: { phone: '+15550107070', code: '000000' } })
  await check(t, '/customer/me', 'GET', '/customer/me', tk)
  await check(t, '/customer/me', 'PUT', '/customer/me', { ...tk, body: { name: 'Doc C.', consents: { marketing_email: false } } })
  await check(t, '/customer/orders', 'POST', '/customer/orders', { ...tk, body: { type: 'takeaway', items: [{ item_id: a.menu.fries, quantity: 1 }] } })
  await check(t, '/customer/orders', 'GET', '/customer/orders', tk)
  const addr = await check(t, '/customer/addresses', 'POST', '/customer/addresses', { ...tk, body: { address: '1 Doc St', lat: 1, lng: 2 } })
  await check(t, '/customer/addresses/{addressId}', 'PUT', `/customer/addresses/${addr.body.id}`, { ...tk, body: { label: 'Home' } })
  await check(t, '/customer/addresses', 'GET', '/customer/addresses', tk)
  await check(t, '/customer/addresses/{addressId}', 'DELETE', `/customer/addresses/${addr.body.id}`, tk)
  await check(t, '/customer/gift-cards', 'GET', '/customer/gift-cards', tk)
  await check(t, '/customer/store-credit', 'GET', '/customer/store-credit', tk)
  await check(t, '/customer/logout', 'POST', '/customer/logout', tk)
})
