/**
 * api-v1 §7's error table, over real HTTP (issue 32 item 1; docs/errors.md): for 401, 403, 404, 422
 * and 429 the envelope's `code` is exactly the spec's (`unauthenticated`, `forbidden`, `not_found`,
 * `validation_failed`, `rate_limited`) whatever the cause, the catalog's finer cause is `reason`, and
 * every 422 has a non-empty `errors` map naming its fields (`body` for a rule about the request as a
 * whole). One representative request per catalog code of those statuses; the last test checks that
 * none was left out. MCP results, the kitchen socket's frames and the OAuth token address follow the
 * same rule.
 */
import t, { type Test } from 'tap'
import { refusal, startServer, type Res } from './helpers/server.ts'
import {
  createAccount, createCategory, createCustomer, createDriver, createItem, createPlan, createStaff, createStore, createStorefrontToken, isError, postOrder, tokenFor,
} from './helpers/fixtures.ts'
import { assign, createFleet, deliveryOrder, driverStatus } from './helpers/delivery.ts'
import { enrollDevice } from './helpers/pin-devices.ts'
import { callTool, connectMcp, bearer } from './helpers/mcp.ts'
import { WsClient, wsBase } from './helpers/ws-client.ts'
import { SPEC_TABLE } from './helpers/spec-errors.ts'
import { ERROR_CATALOG } from '../src/errors.ts'
import { PIN_LOCKOUT } from '../src/auth/pin-devices.ts'
import { POD_MAX_ATTEMPTS } from '../src/domain/delivery.ts'
import { hashSecretSync } from '../src/auth/passwords.ts'
import { runCli } from '../src/cli.ts'
import type { RecordingSmsProvider } from '../src/providers/sms.ts'

const s = await startServer({ RATE_LIMIT_PER_MINUTE: '100000', WEBHOOK_ALLOW_LOOPBACK: '1', WEBHOOK_MAX_ENDPOINTS: '1', WS_MAX_PER_TOKEN: '1' })
t.teardown(() => s.close())
const db = s.app.svc.db
const a = createAccount(db)

/** Reasons walked here; each must be a catalog code of a table status (checked at the end). */
const walked = new Set<string>()

/** Status, spec `code`, `reason`, and on a 422 the `errors` map (with `keys` among its keys). */
function refused(t: Test, r: Res, status: number, reason: string, keys: string[] = []): void {
  walked.add(reason)
  isError(t, r, status, reason, reason)
  t.equal(r.body?.code, SPEC_TABLE[status], `${reason}: code is the spec's ${SPEC_TABLE[status]}`)
  if (status !== 422) return
  const errors = (r.body?.errors ?? {}) as Record<string, string[]>
  t.ok(Object.keys(errors).length > 0, `${reason}: a non-empty errors map`)
  for (const k of keys) t.ok(errors[k]?.length, `${reason}: errors names ${k} (got ${Object.keys(errors).join(', ')})`)
}

const owner = (method: string, path: string, body?: unknown, token = a.token) => s.req(method, path, { token, body })
const takeaway = (itemId: number, extra: Record<string, unknown> = {}) => ({ type: 'takeaway', items: [{ item_id: itemId, quantity: 1 }], ...extra })

t.test('401 unauthenticated', async (t) => {
  refused(t, await s.req('GET', '/restaurants'), 401, 'unauthenticated')

  const store = createStore(db, a.ownerId).id
  const m = createStaff(db, store, { role: 'manager' })
  db.prepare('UPDATE staff SET totp_secret = ? WHERE id = ?').run('JBSWY3DPEHPK3PXP', m.id)
  refused(t, await s.req('POST', `/restaurants/${store}/staff/login`, { body: { email: m.email, password: m.password } }), 401, 'two_factor_required')
  refused(t, await s.req('POST', `/restaurants/${store}/staff/pin`, { body: { pin: m.pin, device: 'not-enrolled' } }), 401, 'device_not_enrolled')

  // The OAuth token address adds RFC 6749's `error` and `error_description` to the same envelope.
  const r = await fetch(`${s.site}/oauth/token`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'grant_type=authorization_code&code=x&client_id=nobody&client_secret=nothing' })
  t.equal(r.status, 401)
  t.match(await r.json(), { error: 'invalid_client', code: 'unauthenticated', reason: 'invalid_client', message: String })
  walked.add('invalid_client')
})

t.test('403 forbidden', async (t) => {
  refused(t, await owner('POST', `/restaurants/${a.storeId}/menu/categories`, { name: 'X' }, tokenFor(db, a.ownerId, ['orders:read'])), 403, 'forbidden')

  const noBookings = createAccount(db, { plan: createPlan(db, ['kds']) })
  refused(t, await owner('GET', `/restaurants/${noBookings.storeId}/reservations`, undefined, noBookings.token), 403, 'feature_not_in_plan')

  const small = createAccount(db, { plan: createPlan(db, ['kds'], { menu_items: 1 }) })
  refused(t, await owner('POST', `/restaurants/${small.storeId}/menu/items`, { name: 'One more', price: 1 }, small.token), 403, 'plan_limit_reached')

  const suspended = createAccount(db)
  runCli(['account', 'suspend', '--owner', String(suspended.ownerId), '--reason', 'unpaid', '--json'], { DB_PATH: s.dbPath, LOG_LEVEL: 'silent' })
  refused(t, await owner('GET', `/restaurants/${suspended.storeId}/menu`, undefined, suspended.token), 403, 'account_suspended')

  const email = `unverified-${Date.now()}@owners.test`
  db.prepare('UPDATE owners SET email = ?, password_hash = ?, email_verified_at = NULL WHERE id = ?').run(email, hashSecretSync('a long password'), createAccount(db).ownerId)
  refused(t, await s.req('POST', '/app/auth/login', { body: { email, password: 'a long password', device: 'phone' } }), 403, 'email_not_verified')
})

t.test('404 not_found', async (t) => {
  refused(t, await owner('GET', `/restaurants/${createAccount(db).storeId}/menu`), 404, 'not_found')
  refused(t, await owner('GET', '/no-such-route'), 404, 'route_not_found')
})

t.test('422 validation_failed: field paths, and `body` for the request as a whole', async (t) => {
  refused(t, await postOrder(s, a.token, a.storeId, { type: 'takeaway', items: [{ item_id: a.menu.fries, quantity: 0 }] }), 422, 'validation_failed', ['items.0.quantity'])
  const notAnObject = await s.req('POST', `/restaurants/${a.storeId}/orders`, { token: a.token, raw: 'null', headers: { 'content-type': 'application/json' } })
  refused(t, notAnObject, 422, 'validation_failed', ['body'])

  refused(t, await owner('DELETE', `/restaurants/${a.storeId}/menu/categories/${a.menu.categoryId}`), 422, 'category_not_empty', ['body'])

  const key = { 'Idempotency-Key': `key-${Date.now()}` }
  t.equal((await postOrder(s, a.token, a.storeId, takeaway(a.menu.fries), key)).status, 200)
  refused(t, await postOrder(s, a.token, a.storeId, takeaway(a.menu.burger.id), key), 422, 'idempotency_key_reused', ['Idempotency-Key'])

  const takeawayOrder = (await postOrder(s, a.token, a.storeId, takeaway(a.menu.fries))).body
  refused(t, await owner('POST', `/restaurants/${a.storeId}/orders/${takeawayOrder.id}/assign`, { driver_id: createDriver(db, a.ownerId, a.storeId).id }), 422, 'invalid_transition', ['driver_id'])
  refused(t, await owner('PUT', `/restaurants/${a.storeId}/menu/items/${a.menu.fries}`, { min_age: 18 }), 422, 'not_for_store_type', ['min_age'])
  refused(t, await owner('POST', `/restaurants/${a.storeId}/brands`, { name: 'Acme' }), 422, 'not_for_store_type', ['body'])
  refused(t, await owner('POST', `/restaurants/${a.storeId}/orders/${takeawayOrder.id}/payments`, { amount: 100, method: 'cash' }), 422, 'overpayment', ['amount'])
  refused(t, await owner('POST', `/restaurants/${a.storeId}/orders/${takeawayOrder.id}/payments`, { amount: 1, method: 'online' }), 422, 'online_payments_unavailable', ['method'])
  refused(t, await owner('POST', `/restaurants/${a.storeId}/orders/${takeawayOrder.id}/refunds`, {}), 422, 'refund_exceeds_paid', ['amount'])
})

t.test('422: orders refused whole (stock, hours, age)', async (t) => {
  const retail = createAccount(db, { type: 'retail' })
  const item = await owner('POST', `/restaurants/${retail.storeId}/menu/items`, { name: 'Kettle', price: 5, stock: 1, category_id: createCategory(db, retail.storeId, 'Goods') }, retail.token)
  refused(t, await postOrder(s, retail.token, retail.storeId, { type: 'delivery', address: '1 Main St', items: [{ item_id: item.body.id, quantity: 2 }] }), 422, 'out_of_stock', ['items.0.quantity'])

  const closed = createAccount(db)
  t.equal((await owner('PUT', `/restaurants/${closed.storeId}/settings`, { accepting_orders: false }, closed.token)).status, 200)
  const sf = createStorefrontToken(db, closed.storeId)
  refused(t, await s.req('POST', '/storefront/orders', { headers: { 'x-storefront-token': sf }, body: takeaway(closed.menu.fries) }), 422, 'store_closed', ['body'])

  const bar = createAccount(db)
  const whisky = createItem(db, bar.storeId, createCategory(db, bar.storeId, 'Drinks'), 'Whisky', 4000)
  db.prepare('UPDATE menu_items SET min_age = 21 WHERE id = ?').run(whisky)
  refused(t, await postOrder(s, bar.token, bar.storeId, takeaway(whisky)), 422, 'age_confirmation_required', ['age_confirmed'])

  // Delivery zones (docs/dispatch.md): a 1 km circle with a 50.00 minimum.
  const zoned = createAccount(db)
  t.equal((await owner('PUT', `/restaurants/${zoned.storeId}/delivery-zones`, { zones: [{ name: 'Near', center: { lat: 10, lng: 10 }, radius_m: 1000, fee: 2, min_order: 50 }] }, zoned.token)).status, 200)
  const delivery = (lat: number) => ({ type: 'delivery', address: '1 Main St', lat, lng: 10, items: [{ item_id: zoned.menu.fries, quantity: 1 }] })
  refused(t, await postOrder(s, zoned.token, zoned.storeId, delivery(11)), 422, 'outside_delivery_zone', ['address'])
  refused(t, await postOrder(s, zoned.token, zoned.storeId, delivery(10)), 422, 'below_minimum_order', ['items'])
})

t.test('422: sign-in codes, drivers, bookings, quotas, themes', async (t) => {
  const store = createStore(db, a.ownerId).id
  const phone = '+15550142424'
  refused(t, await s.req('POST', `/restaurants/${store}/customer/otp/verify`, { body: { phone, code: '123456' } }), 422, 'otp_expired', ['code'])
  t.equal((await s.req('POST', `/restaurants/${store}/customer/otp/request`, { body: { phone } })).status, 200)
  const sent = /\b(\d{6})\b/.exec((s.app.svc.sms as RecordingSmsProvider).lastTo(phone)!.body)![1]!
  refused(t, await s.req('POST', `/restaurants/${store}/customer/otp/verify`, { body: { phone, code: sent === '000000' ? '000001' : '000000' } }), 422, 'otp_invalid', ['code'])

  const f = createFleet(db)
  const [d] = f.drivers
  refused(t, await s.req('POST', `/driver/deliveries/${(await deliveryOrder(s, f)).id}/claim`, { token: d!.token }), 422, 'off_shift', ['body'])
  const o = await deliveryOrder(s, f)
  await assign(s, f, o.id, d!.id)
  await driverStatus(s, d!, o.id, 'picked_up')
  const code = (await s.req('GET', `/track/${o.track_token}`)).body.delivery_code as string
  const wrong = code === '0000' ? '0001' : '0000'
  const pod = () => s.req('POST', `/driver/deliveries/${o.id}/pod-otp`, { token: d!.token, body: { code: wrong } })
  refused(t, await pod(), 422, 'pod_code_invalid', ['code'])
  for (let i = 2; i < POD_MAX_ATTEMPTS; i++) await pod()
  refused(t, await pod(), 422, 'pod_code_locked', ['code'])

  const b = createAccount(db)
  t.equal((await owner('PUT', `/restaurants/${b.storeId}/settings`, { reservations: { enabled: false } }, b.token)).status, 200)
  const guest = createCustomer(db, b.storeId)
  const starts = new Date(Date.now() + 2 * 86_400_000).toISOString().slice(0, 10) + 'T19:00:00Z'
  refused(t, await s.req('POST', '/customer/reservations', { token: guest.token, body: { party_size: 2, starts_at: starts } }), 422, 'bookings_disabled', ['body'])

  const hook = () => owner('POST', '/webhook-endpoints', { url: 'http://127.0.0.1:9/hook', events: ['*'] }, b.token)
  t.equal((await hook()).status, 201)
  refused(t, await hook(), 422, 'quota_exceeded', ['body'])

  refused(t, await owner('PUT', `/restaurants/${b.storeId}/theme/custom`, { files: { 'templates/menu.liquid': '{% if %}' } }, b.token), 422, 'theme_invalid', ['files.templates/menu.liquid'])
})

t.test('429 rate_limited', async (t) => {
  const store = createStore(db, a.ownerId).id
  const login = () => s.req('POST', `/restaurants/${store}/customer/login`, { body: { email: 'nobody@example.com', password: 'nope', device: 'd' } })
  let r = await login()
  for (let i = 0; i < 20 && r.status !== 429; i++) r = await login()
  refused(t, r, 429, 'rate_limited')

  createStaff(db, store, { role: 'waiter', pin: '919191' })
  const device = enrollDevice(db, store)
  for (let i = 0; i < PIN_LOCKOUT.deviceFailures; i++) await s.req('POST', `/restaurants/${store}/staff/pin`, { body: { pin: String(200000 + i), device: device.key } })
  refused(t, await s.req('POST', `/restaurants/${store}/staff/pin`, { body: { pin: '919191', device: device.key } }), 429, 'locked_out')

  const f = createFleet(db)
  const first = await WsClient.open(`${wsBase(s)}/ws/driver`, { token: f.drivers[0]!.token })
  t.teardown(() => first.close())
  const second = await refusal(WsClient.open(`${wsBase(s)}/ws/driver`, { token: f.drivers[0]!.token }))
  refused(t, { status: second?.status ?? 0, body: second?.body, headers: new Headers(), text: '' }, 429, 'too_many_connections')
})

t.test('MCP results and -32602 data carry the same code, reason and errors', async (t) => {
  const client = await connectMcp(s, '/mcp', bearer(a.token))
  t.teardown(() => client.close())
  const r = await callTool(client, 'delete_category', { restaurant_id: a.storeId, category_id: a.menu.categoryId })
  t.equal(r.isError, true)
  t.match(r.json, { code: 'validation_failed', reason: 'category_not_empty', errors: { body: [String] } })
  t.match(r.raw.structuredContent, { code: 'validation_failed', reason: 'category_not_empty' }, 'structuredContent is the envelope')
  const bad = await client.callTool({ name: 'delete_category', arguments: { restaurant_id: 'x', category_id: a.menu.categoryId } }).catch((e: unknown) => e)
  t.match(bad, { code: -32602, data: { code: 'validation_failed', reason: 'validation_failed', errors: { restaurant_id: [String] } } })
})

t.test('the kitchen socket answers a refused frame with the same code, reason and errors', async (t) => {
  const cook = createStaff(db, a.storeId, { role: 'kitchen' })
  const o = (await postOrder(s, a.token, a.storeId, takeaway(a.menu.fries))).body
  const ws = await WsClient.open(`${wsBase(s)}/ws/kds`, { token: cook.token })
  t.teardown(() => ws.close())
  await ws.next((f) => f.type === 'snapshot')
  ws.send({ type: 'recall', item_id: o.items[0].id, seq: 1 })
  t.match(await ws.next((f) => f.seq === 1), { type: 'error', code: 'validation_failed', reason: 'invalid_transition', errors: { kds_state: [String] } })
})

t.test('every catalog code of a table status was walked, and nothing else', async (t) => {
  const table = Object.entries(ERROR_CATALOG).filter(([, e]) => e.status in SPEC_TABLE).map(([c]) => c).sort()
  t.same([...walked].sort(), table)
})
