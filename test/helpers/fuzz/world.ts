/**
 * The fuzzer's world: one account with one of everything (store and menu, orders, a driver with a
 * delivery, staff, a customer with an address, storefront token, coupon, gift card, PIN device,
 * webhook endpoint, an installed app, a dashboard session, a shell token) and a credential of every
 * token family, plus the ids that fill each route's `{param}`. Built from the shared fixtures;
 * rebuilt by the runner when a fuzzed request destroyed part of it (a valid DELETE, a logout).
 */
import type { TestServer } from '../server.ts'
import { createAccount, createDriver, createStaff, createCustomer, createStorefrontToken, postOrder, tokenFor } from '../fixtures.ts'
import { createShellToken, createTestApp, installTestApp, signedIn } from '../apps.ts'
import { APP_SCOPES } from '../../../src/domain/app-scopes.ts'
import type { Hints } from './arbitraries.ts'

/** Who sends a request: every principal family, plus an owner token with narrow capabilities and a garbage token. */
export const FAMILIES = ['none', 'owner', 'owner-narrow', 'staff', 'customer', 'storefront', 'driver', 'app', 'session', 'shell', 'bad-token'] as const
export type Family = (typeof FAMILIES)[number]

export interface World {
  headers: Record<Family, Record<string, string>>
  /** Values for path parameters by name; `{id}` is chosen by the path's family (see `paramValue`). */
  params: Record<string, string | number>
  ids: { store: number; driver: number; endpoint: number; app: number; installation: number; ownerTokenId: number; session: number }
  /** Known-good values by body/argument field name, for valid inputs that get past the id lookups. */
  hints: Hints
  trackToken: string
  tokens: { owner: string; staff: string; driver: string; customer: string; storefront: string; app: string }
}

const ok = async (r: Promise<{ status: number; text: string; body: any }>, what: string) => {
  const res = await r
  if (res.status >= 300) throw new Error(`fuzz world: ${what}: ${res.status} ${res.text}`)
  return res.body as Record<string, any>
}

export async function buildWorld(s: TestServer): Promise<World> {
  const db = s.app.svc.db
  const a = createAccount(db)
  const narrow = tokenFor(db, a.ownerId, ['orders:read'])
  const driver = createDriver(db, a.ownerId, a.storeId, { onShift: true })
  const staff = createStaff(db, a.storeId, { role: 'manager' })
  const customer = createCustomer(db, a.storeId)
  const storefront = createStorefrontToken(db, a.storeId, ['menu:read', 'order:write', 'agent'])
  const app = createTestApp(db, a.ownerId, { scopes: [...APP_SCOPES] })
  const installed = installTestApp(db, app.id, a.ownerId)
  const session = signedIn(db, a.ownerId)
  const shell = createShellToken(db, a.ownerId)
  const post = (path: string, body: unknown, token = a.token) => ok(s.req('POST', path, { token, body }), `POST ${path}`)

  const order = await ok(postOrder(s, a.token, a.storeId, { type: 'takeaway', items: [{ item_id: a.menu.burger.id, quantity: 1, variation: a.menu.burger.double, extras: [a.menu.burger.cheese] }] }), 'order')
  const delivery = await ok(postOrder(s, a.token, a.storeId, { type: 'delivery', address: '1 Main St', phone: '+15550100', items: [{ item_id: a.menu.fries, quantity: 1 }] }), 'delivery')
  await post(`/restaurants/${a.storeId}/orders/${delivery.id}/assign`, { driver_id: driver.id })
  const coupon = await post(`/restaurants/${a.storeId}/coupons`, { code: `FUZZ${Date.now() % 1e6}`, kind: 'percent', value: 10 })
  const giftCard = await post(`/restaurants/${a.storeId}/gift-cards`, { amount: 10 })
  const device = await post(`/restaurants/${a.storeId}/pin-devices`, { name: 'Till' })
  const endpoint = await post('/webhook-endpoints', { url: 'http://127.0.0.1:9/hook', events: ['*'] })
  // Paused, so no delivery attempt runs in the background while a refused request is being checked for writes.
  await post(`/webhook-endpoints/${endpoint.id}/pause`, undefined)
  const address = await ok(s.req('POST', '/customer/addresses', { token: customer.token, body: { label: 'Home', address: '2 Side St' } }), 'address')
  const sfTokenId = db.prepare('SELECT MAX(id) FROM storefront_tokens WHERE store_id = ?').pluck().get(a.storeId) as number
  const ownerTokenId = db.prepare('SELECT MAX(id) FROM owner_tokens WHERE owner_id = ?').pluck().get(a.ownerId) as number

  const bearer = (t: string) => ({ authorization: `Bearer ${t}` })
  const headers: World['headers'] = {
    none: {},
    owner: bearer(a.token),
    'owner-narrow': bearer(narrow),
    staff: bearer(staff.token),
    customer: bearer(customer.token),
    storefront: { 'x-storefront-token': storefront },
    driver: bearer(driver.token),
    app: bearer(installed.accessToken),
    // The dashboard's state-changing requests carry the session's CSRF token and come from the site (docs/dashboard.md).
    session: { cookie: session.cookie, 'x-csrf-token': session.csrf, origin: s.site },
    shell: bearer(shell),
    'bad-token': bearer('dso_' + 'A'.repeat(40)),
  }
  const params: World['params'] = {
    restaurantId: a.storeId, categoryId: a.menu.categoryId, itemId: a.menu.burger.id, variantId: a.menu.burger.double,
    orderId: delivery.id as number, staffId: staff.id, customerId: customer.id, tokenId: sfTokenId, couponId: coupon.id as number,
    giftCardId: giftCard.id as number, deviceId: device.id as number, deliveryId: 1, offerId: 1, addressId: address.id as number,
    token: delivery.track_token as string, trackToken: delivery.track_token as string, slug: a.slug, item: a.menu.burger.id, address: 0,
    store: a.slug, appId: app.id, nonce: 'nonce', id: a.storeId,
  }
  const hints: Hints = {
    item_id: [a.menu.burger.id, a.menu.fries, a.menu.soup], variation: [a.menu.burger.double, a.menu.burger.single],
    extras: [a.menu.burger.cheese, a.menu.burger.bacon], driver_id: [driver.id], category_id: [a.menu.categoryId, a.menu.emptyCategoryId],
    restaurant_id: [a.storeId], store_id: [a.storeId], order_id: [order.id as number, delivery.id as number], customer_id: [customer.id],
    line_id: db.prepare('SELECT id FROM order_lines WHERE order_id IN (?, ?)').pluck().all(order.id, delivery.id) as number[],
    code: [coupon.code as string], coupon_code: [coupon.code as string], track_token: [delivery.track_token as string],
  }
  return {
    headers, params, hints, trackToken: delivery.track_token as string,
    ids: { store: a.storeId, driver: driver.id, endpoint: endpoint.id as number, app: app.id, installation: installed.installation.id, ownerTokenId, session: session.sessionId },
    tokens: { owner: a.token, staff: staff.token, driver: driver.token, customer: customer.token, storefront, app: installed.accessToken },
  }
}

/** The value for `{name}` in `path` (a route's path under the API base or the site). */
export function paramValue(w: World, path: string, name: string): string | number | undefined {
  if (name === 'id') {
    if (path.startsWith('/drivers/')) return w.ids.driver
    if (path.startsWith('/webhook-endpoints/')) return w.ids.endpoint
    if (path.startsWith('/tokens/')) return w.ids.ownerTokenId
    if (path.startsWith('/developer/apps/')) return w.ids.app
    if (path.startsWith('/apps/installations/')) return w.ids.installation
    if (path.startsWith('/account/sessions/')) return w.ids.session
  }
  return w.params[name]
}

/**
 * The server environment of every fuzz run: the per-token, public-MCP and socket limits out of the
 * way (the fuzzer is one address sending thousands of requests; docs/limits.md), so the sample does
 * not turn into 429s, and loopback webhooks so the world can have an endpoint.
 */
export const FUZZ_ENV: Record<string, string> = { RATE_LIMIT_PER_MINUTE: '100000000', MCP_PUBLIC_RATE_PER_MINUTE: '100000000', WS_MAX_PER_TOKEN: '0', WS_MAX_PER_ADDRESS: '0', WS_MESSAGE_RATE: '0', WEBHOOK_ALLOW_LOOPBACK: '1' }
