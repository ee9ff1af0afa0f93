/**
 * "Two accounts with one of everything" (issue 21 item 2): accounts A and B, each with an owner and
 * its `*` token, a store with a menu, takeaway and delivery orders (one assigned to a driver, one
 * offered), a driver, a staff member, a customer with a saved address, a storefront token, an
 * enrolled PIN device, a webhook endpoint with a delivery, a coupon, a gift card, a developer app
 * installed with an access token, a dashboard session, a mobile-shell token with a handoff nonce,
 * a reseller-managed account with its subscription, and a pending email-verification token.
 *
 * `ids` maps every path-parameter name of the route table to A's value; `idsFor(route)` resolves the
 * names whose meaning depends on the address (`{id}` is a store, driver, endpoint, token… by path
 * prefix; `{itemId}` is a kitchen line under /staff/kds). `markers` are A's identifying strings
 * (titles, names, phones, emails, tokens, order numbers): none may appear in an answer to B.
 * Build it once per server with `buildWorld(s)`; the server should allow loopback webhooks
 * (WEBHOOK_ALLOW_LOOPBACK=1) and a high RATE_LIMIT_PER_MINUTE.
 */
import { randomBytes } from 'node:crypto'
import type { TestServer } from './server.ts'
import { createBatch, createBrand, createFitment, createCustomer, createDriver, createMenu, createOwner, createStaff, createStore, createStorefrontToken, tokenFor, type FixtureMenu } from './fixtures.ts'
import { enrollDevice } from './pin-devices.ts'
import { createShellToken, createTestApp, installTestApp, signedIn } from './apps.ts'
import { paramsOf, type Route } from './routes.ts'
import { grantReseller, insertAccount } from '../../src/storage/reseller.ts'
import { insertEmailToken } from '../../src/storage/owner-auth.ts'
import { APP_SCOPES } from '../../src/domain/app-scopes.ts'
import { STOREFRONT_SCOPES } from '../../src/auth/storefront.ts'
import { newToken, sha256Hex } from '../../src/auth/tokens.ts'
import { nowIso } from '../../src/storage/db.ts'
import sharp from 'sharp'

/** The credential families of api-v1 §5 a caller can hold (`app`: an installed app's OAuth access token, on owner routes). */
export const FAMILIES = ['owner', 'app', 'staff', 'customer', 'storefront', 'driver', 'session', 'shell', 'none'] as const
export type Family = (typeof FAMILIES)[number]

/** One account's credentials, by family (`none`: no credential at all). */
export interface Tokens {
  owner: string
  app: string
  staff: string
  customer: string
  storefront: string
  driver: string
  session: { cookie: string; csrf: string }
  shell: string
}

/** Request headers that present `family`'s credential the way its routes read it (src/app.ts `auth`). */
export function credentialHeaders(tokens: Tokens, family: Family): Record<string, string> {
  switch (family) {
    case 'none': return {}
    case 'storefront': return { 'x-storefront-token': tokens.storefront }
    case 'session': return { cookie: tokens.session.cookie, 'x-csrf-token': tokens.session.csrf }
    default: return { authorization: `Bearer ${tokens[family]}` }
  }
}

export interface Side {
  ownerId: number
  storeId: number
  slug: string
  title: string
  menu: FixtureMenu
  orders: { takeaway: Order; delivery: Order; offered: Order; customer: Order }
  driverId: number
  staffId: number
  customerId: number
  addressId: number
  storefrontTokenId: number
  deviceId: number
  endpointId: number
  webhookDeliveryId: number
  couponId: number
  giftCardId: number
  /** An open cash shift of the store (docs/operations.md "Cash shifts"). */
  shiftId: number
  /** A table of the store and a customer's booking on it (docs/operations.md "Reservations"). */
  tableId: number
  reservationId: number
  /** A second booking, for the staff routes (so owner and staff controls each have a booked one). */
  staffReservationId: number
  appId: number
  installationId: number
  ownerTokenId: number
  sessionId: number
  managedAccountId: number
  managedSubscriptionId: number
  /** A reseller plan of this account (`plan_id` of POST /reseller/customers). */
  resellerPlanId: number
  offerId: number
  /** A brand of the store and an expiry batch of its burger (docs/verticals.md). */
  brandId: number
  batchId: number
  /** A fitment (vehicle) row of the store (its routes answer only for car parts stores). */
  fitmentId: number
  /** A (cash, one cent) payment of `orders.takeaway` (`{paymentId}`, docs/operations.md "Payments"). */
  paymentId: number
  /** An order line of `orders.takeaway` (the kitchen display's `{itemId}`). */
  kdsLineId: number
  handoffNonce: string
  verifyEmailToken: string
  /** A pending password-reset token (the emailed credential of /reset-password/{token}). */
  resetPasswordToken: string
  tokens: Tokens
  /** Strings only this account's data contains (plus its secrets). */
  markers: string[]
  /** Its credentials and signing secrets alone: never in any answer to anyone else, even on public pages. */
  secrets: string[]
}

export interface Order { id: number; track_token: string; number?: unknown; [k: string]: unknown }

export interface World {
  a: Side
  b: Side
  /** Path-parameter name → A's value (`id` is A's store; use `idsFor` for routes where it names something else). */
  ids: Record<string, string | number>
  /** A's values for every parameter of `r`'s path, or a reason string naming the parameters the world has no value for. */
  idsFor(r: Pick<Route, 'path'>): Record<string, string | number> | string
  tokens: { a: Tokens; b: Tokens }
  /** A's identifying strings and secrets: none may appear in an answer given to B. */
  markers: string[]
  /** A's credentials and secrets: none may appear in any answer to B, public pages included. */
  secrets: string[]
}

const tag = () => randomBytes(5).toString('hex')

async function buildSide(s: TestServer, letter: 'A' | 'B'): Promise<Side> {
  const db = s.app.svc.db
  const m = `${letter}mark${tag()}` // unique marker stem: grep-able in any answer
  const ownerId = createOwner(db, `${m} Owner`)
  db.prepare('UPDATE owners SET email = ? WHERE id = ?').run(`${m}-owner@test.local`, ownerId)
  const owner = tokenFor(db, ownerId, ['*'])
  const ownerTokenId = db.prepare('SELECT id FROM owner_tokens WHERE token_hash = ?').pluck().get(sha256Hex(owner)) as number
  const title = `${m} Bistro`
  const store = createStore(db, ownerId, { title, settings: { driver_fee: 2 } })
  const menu = createMenu(db, store.id)
  const brandId = createBrand(db, store.id, `${m} Brand`)
  const batchId = createBatch(db, menu.burger.id, '2999-12-31', 10_000_000)
  // A fitment row of the store (docs/verticals.md "Fitments"): B's tokens must get 404 for it like for anything of A's.
  const fitmentId = createFitment(db, store.id)
  const driver = createDriver(db, ownerId, store.id, { onShift: true })
  db.prepare('UPDATE drivers SET name = ? WHERE id = ?').run(`${m} Driver`, driver.id)
  const staff = createStaff(db, store.id, { role: 'manager' })
  const customer = createCustomer(db, store.id, { email: `${m}-cust@customer.test` })
  db.prepare('UPDATE customers SET name = ? WHERE id = ?').run(`${m} Customer`, customer.id)
  // Every scope (the MCP storefront server needs `agent`): the widest storefront token reaches furthest.
  const storefront = createStorefrontToken(db, store.id, [...STOREFRONT_SCOPES])
  const storefrontTokenId = db.prepare('SELECT id FROM storefront_tokens WHERE token_hash = ?').pluck().get(sha256Hex(storefront)) as number
  const device = enrollDevice(db, store.id, `${m} Till`)
  const app = createTestApp(db, ownerId, { name: `${m} App`, scopes: [...APP_SCOPES], embedUrl: 'https://app.example/embed' })
  const installed = installTestApp(db, app.id, ownerId)
  const session = signedIn(db, ownerId)
  const shell = createShellToken(db, ownerId)
  grantReseller(db, ownerId)
  const managedAccountId = insertAccount(db, { name: `${m} Managed`, email: `${m}-managed@test.local`, resellerId: ownerId })
  const managedSubscriptionId = db.prepare('SELECT id FROM subscriptions WHERE owner_id = ?').pluck().get(managedAccountId) as number
  const verifyEmailToken = newToken('owner')
  insertEmailToken(db, ownerId, sha256Hex(verifyEmailToken), nowIso(Date.now() + 86_400_000))
  const resetPasswordToken = newToken('owner')
  insertEmailToken(db, ownerId, sha256Hex(resetPasswordToken), nowIso(Date.now() + 3_600_000), 'reset_password')

  const api = async (method: string, path: string, body?: unknown, token: string | Record<string, string> = owner) => {
    const r = await s.req(method, path, typeof token === 'string' ? { token, body } : { headers: token, body })
    if (r.status >= 300) throw new Error(`world ${letter}: ${method} ${path} → ${r.status} ${r.text}`)
    return r.body as Record<string, any>
  }
  const phone = `+1555${String(Math.floor(Math.random() * 1e7)).padStart(7, '0')}`
  const who = { customer_name: `${m} Guest`, phone }
  const takeaway = await api('POST', `/restaurants/${store.id}/orders`, { type: 'takeaway', ...who, items: [{ item_id: menu.fries, quantity: 1 }] }) as Order
  const delivery = await api('POST', `/restaurants/${store.id}/orders`, { type: 'delivery', ...who, address: `${m} Street 1`, items: [{ item_id: menu.fries, quantity: 1 }] }) as Order
  const offered = await api('POST', `/restaurants/${store.id}/orders`, { type: 'delivery', ...who, address: `${m} Street 2`, items: [{ item_id: menu.fries, quantity: 1 }] }) as Order
  await api('POST', `/restaurants/${store.id}/orders/${delivery.id}/assign`, { driver_id: driver.id })
  await api('POST', `/restaurants/${store.id}/orders/${offered.id}/offers`, { driver_ids: [driver.id] })
  const offerId = db.prepare('SELECT MAX(id) FROM delivery_offers WHERE order_id = ?').pluck().get(offered.id) as number
  const kdsLineId = db.prepare('SELECT MIN(id) FROM order_lines WHERE order_id = ?').pluck().get(takeaway.id) as number
  const paymentId = Number((await api('POST', `/restaurants/${store.id}/orders/${takeaway.id}/payments`, { method: 'cash', amount: 0.01 })).payment.id)
  const address = await api('POST', '/customer/addresses', { address: `${m} Home Lane 3`, label: `${m} home` }, customer.token)
  const customerOrder = await api('POST', '/customer/orders', { type: 'takeaway', items: [{ item_id: menu.fries, quantity: 1 }] }, customer.token) as Order
  const coupon = await api('POST', `/restaurants/${store.id}/coupons`, { code: `${letter}${tag()}`, kind: 'percent', value: 10 })
  // An item photo: its renditions are bytes in SQLite (menu_photos), which the cluster replicates too.
  const png = await sharp({ create: { width: 40, height: 30, channels: 3, background: '#c33' } }).png().toBuffer()
  await api('POST', `/restaurants/${store.id}/menu/items/${menu.fries}/photo`, { image: png.toString('base64') })
  const giftCard = await api('POST', `/restaurants/${store.id}/gift-cards`, { amount: 10 })
  const shift = await api('POST', `/restaurants/${store.id}/shifts`, { opening_float: 100 })
  const table = await api('POST', `/restaurants/${store.id}/tables`, { name: `${letter}1`, capacity: 4 })
  const reservation = await api('POST', '/customer/reservations', { party_size: 2, starts_at: `${new Date(Date.now() + 2 * 86_400_000).toISOString().slice(0, 10)}T19:00:00Z` }, customer.token)
  const staffReservation = await api('POST', `/restaurants/${store.id}/reservations`, { name: `${m} Booker`, party_size: 2, starts_at: `${new Date(Date.now() + 2 * 86_400_000).toISOString().slice(0, 10)}T21:00:00Z` })
  const endpoint = await api('POST', '/webhook-endpoints', { url: 'http://127.0.0.1:9/hook', events: ['*'] })
  // The ping queues a delivery on the endpoint: its id is the `{deliveryId}` of the delivery routes.
  await api('POST', `/webhook-endpoints/${endpoint.id}/ping`)
  const webhookDeliveryId = db.prepare('SELECT MAX(id) FROM webhook_deliveries WHERE endpoint_id = ?').pluck().get(endpoint.id) as number
  const plan = await api('POST', '/reseller/plans', { name: `${m} Plan`, base_plan: 'pro', price: 999 })
  const handoff = await api('POST', '/app/session', undefined, shell)
  const handoffNonce = String(handoff.nonce ?? handoff.url?.split('/handoff/')[1]?.split('?')[0] ?? '')

  const tokens: Tokens = { owner, app: installed.accessToken, staff: staff.token, customer: customer.token, storefront, driver: driver.token, session: { cookie: session.cookie, csrf: session.csrf }, shell }
  const orders = { takeaway, delivery, offered, customer: customerOrder }
  const long = (x: unknown): x is string => typeof x === 'string' && x.length >= 6
  const secrets = [
    endpoint.secret, owner, installed.accessToken, installed.refreshToken, staff.token, customer.token, storefront, driver.token, shell,
    session.cookie.split('=')[1]!, session.csrf, device.key, handoffNonce, verifyEmailToken, resetPasswordToken, app.client_secret,
  ].filter(long)
  const markers = [
    m, title, store.slug, staff.email, customer.email, customer.phone, phone, driver.phone, String(coupon.code), app.client_id,
    ...Object.values(orders).map((o) => o.track_token), ...secrets,
  ].filter(long)

  return {
    ownerId, storeId: store.id, slug: store.slug, title, menu, orders, driverId: driver.id, staffId: staff.id, customerId: customer.id,
    addressId: Number(address.id), storefrontTokenId, deviceId: device.id, endpointId: Number(endpoint.id), webhookDeliveryId,
    couponId: Number(coupon.id), giftCardId: Number(giftCard.id), shiftId: Number(shift.id), tableId: Number(table.id), reservationId: Number(reservation.id), staffReservationId: Number(staffReservation.id), appId: app.id, installationId: installed.installation.id, ownerTokenId,
    sessionId: session.sessionId, managedAccountId, managedSubscriptionId,
    resellerPlanId: Number(plan.id), brandId, batchId, fitmentId, offerId, kdsLineId, paymentId, handoffNonce, verifyEmailToken, resetPasswordToken, tokens, markers, secrets,
  }
}

/** What `{id}` names, by the path it leads (first match wins); anything else under `{id}` is a store. */
const ID_BY_PREFIX: Array<[RegExp, (x: Side) => number]> = [
  [/^\/drivers\/\{id\}/, (x) => x.driverId],
  [/^\/webhook-endpoints\/\{id\}/, (x) => x.endpointId],
  [/^\/reseller\/customers\/\{id\}/, (x) => x.managedAccountId],
  [/^\/reseller\/subscriptions\/\{id\}/, (x) => x.managedSubscriptionId],
  [/^\/tokens\/\{id\}/, (x) => x.ownerTokenId],
  [/^\/developer\/apps\/\{id\}/, (x) => x.appId],
  [/^\/apps\/installations\/\{id\}/, (x) => x.installationId],
  [/^\/account\/sessions\/\{id\}/, (x) => x.sessionId],
  [/^\/restaurants\/\{id\}/, (x) => x.storeId],
  // The dashboard's theme preview frame (issue 34 item 12): a store of the session's account.
  [/^\/dashboard\/stores\/\{id\}/, (x) => x.storeId],
]

/** Every path-parameter name of the route table → this side's value. */
function baseIds(x: Side): Record<string, string | number> {
  return {
    id: x.storeId, restaurantId: x.storeId, store: x.slug, slug: x.slug,
    categoryId: x.menu.categoryId, itemId: x.menu.burger.id, item: x.menu.burger.id, variantId: x.menu.burger.double,
    orderId: x.orders.takeaway.id, offerId: x.offerId, customerId: x.customerId, staffId: x.staffId, couponId: x.couponId,
    giftCardId: x.giftCardId, brandId: x.brandId, batchId: x.batchId, fitmentId: x.fitmentId, shiftId: x.shiftId, tableId: x.tableId, reservationId: x.reservationId, deviceId: x.deviceId, tokenId: x.storefrontTokenId, deliveryId: x.webhookDeliveryId,
    addressId: x.addressId, address: x.addressId, appId: x.appId, paymentId: x.paymentId,
    // A guest (docs/operations.md "Guests and segments"): the account's customer as a guest id.
    guest: `c${x.customerId}`,
    trackToken: x.orders.delivery.track_token, nonce: x.handoffNonce,
    // The documentation pages (/docs/guides/{name}, /docs/assets/{file}) name no account's data: any value.
    name: 'index', file: 'index.css',
    // The payment provider of a webhook address (/payments/webhooks/{provider}): the development one.
    provider: 'dev',
  }
}

/** `side`'s values for `r`'s path parameters (A's by default), or why some are missing. */
export function idsOf(x: Side, r: Pick<Route, 'path'>): Record<string, string | number> | string {
  const ids = baseIds(x)
  const byPrefix = ID_BY_PREFIX.find(([re]) => re.test(r.path))
  if (byPrefix) ids.id = byPrefix[1](x)
  else delete ids.id // an `{id}` under an address this table does not know: the author must add it
  // The delivery routes (assign, offers, delivery status, pod photo, the driver app) take the assigned delivery.
  if (/deliver|assign|offers|pod-|claim/.test(r.path)) ids.orderId = x.orders.delivery.id
  if (r.path.startsWith('/customer/orders/')) ids.orderId = x.orders.customer.id
  if (r.path.startsWith('/staff/kds/items/')) ids.itemId = x.kdsLineId
  if (r.path.startsWith('/staff/reservations/')) ids.reservationId = x.staffReservationId
  // `{token}` is whatever credential the address is about: a track token, an emailed link's token.
  if (/^\/(track|t)\/\{token\}/.test(r.path)) ids.token = x.orders.delivery.track_token
  if (r.path.startsWith('/verify-email/')) ids.token = x.verifyEmailToken
  if (r.path.startsWith('/reset-password/')) ids.token = x.resetPasswordToken
  const missing = paramsOf(r.path).filter((p) => ids[p] === undefined || ids[p] === '' || Number.isNaN(ids[p]))
  return missing.length ? `no world id for {${missing.join('}, {')}} in ${r.path}: add it to test/helpers/world.ts` : ids
}

/** Builds accounts A and B on a running server (through SQLite fixtures and the real API). */
export async function buildWorld(s: TestServer): Promise<World> {
  const a = await buildSide(s, 'A')
  const b = await buildSide(s, 'B')
  return { a, b, ids: baseIds(a), idsFor: (r) => idsOf(a, r), tokens: { a: a.tokens, b: b.tokens }, markers: a.markers, secrets: a.secrets }
}
