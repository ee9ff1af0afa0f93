/**
 * The tenancy matrix over HTTP (issue 21 item 2; api-v1 §1 "another account's data is 404, never
 * 403", §5, §7), generated from the route table: for every route that takes an id (path parameters,
 * and the id fields of bodies and queries), every credential family of account B is sent with account
 * A's ids (test/helpers/world.ts). The answer is 404, or 401/403/303-to-sign-in where the family
 * cannot use the route at all; never a 2xx, never a 5xx, and the bytes of the answer contain none of
 * A's marker strings (store title and slug, names, phones, emails, tokens, track tokens). Nothing of
 * A's rows changes. A route whose id the world has no value for FAILS, so a new route is covered
 * without anyone writing a test for it: add its fixture in test/helpers/world.ts. Routes meant to be
 * reached by anyone holding the id (a public menu by store id, tracking by track token, the store
 * website by slug, sign-ins at a store) are listed in PUBLIC with the reason, and are still checked
 * for never answering one of A's secrets. Sockets and MCP tools: test/tenancy-realtime.test.ts.
 */
import t from 'tap'
import { startServer, type Res } from './helpers/server.ts'
import { label, liveRoutes, paramsOf, urlOf, type Route } from './helpers/routes.ts'
import { buildWorld, credentialHeaders, FAMILIES, idsOf, type Family, type Side } from './helpers/world.ts'
import { envelopeProblem } from './helpers/fixtures.ts'

const s = await startServer({ RATE_LIMIT_PER_MINUTE: '100000000', WEBHOOK_ALLOW_LOOPBACK: '1' })
t.teardown(() => s.close())
const db = s.app.svc.db
const w = await buildWorld(s)
const { a, b } = w
const routes = liveRoutes()

/**
 * Addresses anyone may reach with the id (the id or token in the path is public or is itself the
 * credential), with why. Matched against `METHOD /full/path`.
 */
const PUBLIC: Array<[RegExp, string]> = [
  [/^GET \/api\/v1\/menu\/\{restaurantId\}$/, 'the public menu of a store (api-v1 §4.4)'],
  [/^GET \/api\/v1\/track\/\{token\}$/, 'the track_token is the capability (api-v1 §2.5)'],
  [/^GET \/t\/\{token\}$/, 'the tracking page: the track_token is the capability (api-v1 §2.5)'],
  [/^(GET|POST) \/s\/\{slug\}/, 'the store website is public by slug; visitors sign in on it (docs/website.md)'],
  [/^POST \/api\/v1\/restaurants\/\{id\}\/(staff|customer)\//, 'signing in or up at a store: the store id is public, the credential is in the body (api-v1 §4.3, §4.5)'],
  [/^GET \/api\/v1\/catalog\/stores\/\{store\}$/, 'the public catalog of listed stores (api-v1 §4.10)'],
  [/^GET \/verify-email\/\{token\}$/, 'the emailed verification token is the credential (docs/dashboard.md)'],
  [/^(GET|POST) \/reset-password\/\{token\}$/, 'the emailed password-reset token is the credential (docs/dashboard.md)'],
  [/^GET \/docs\//, 'the server\'s own documentation pages and assets: they name no account\'s data'],
  [/^GET \/media\/items\/\{name\}$/, 'a menu item photo by its content hash: public like the menus that name it (docs/menu-photos.md)'],
  [/^GET \/api\/v1\/app\/handoff\/\{nonce\}$/, 'the one-time handoff nonce is the credential (docs/app-shell.md)'],
  [/^POST \/api\/v1\/payments\/webhooks\/\{provider\}$/, 'a payment provider\'s webhook: `{provider}` names a gateway, not an account; the signature over the body is the credential (docs/providers.md "Payments")'],
]
const publicReason = (r: Route): string | undefined => PUBLIC.find(([re]) => re.test(label(r)))?.[1]

/** Which credential families authenticate on a route of `auth` (an installed app's token is an owner credential). */
const fits = (auth: Route['auth'], f: Family): boolean => auth === f || (auth === 'owner' && f === 'app')

/** The id fields of a valibot object schema (top level), e.g. `category_id`, `driver_ids`, `store`. */
function idFields(schema: unknown): string[] {
  const sc = schema as { entries?: Record<string, unknown>; wrapped?: unknown; pipe?: unknown[] } | undefined
  if (!sc) return []
  if (sc.entries) return Object.keys(sc.entries).filter((k) => /(^|_)ids?$|^store$/.test(k))
  if (sc.wrapped) return idFields(sc.wrapped)
  if (Array.isArray(sc.pipe) && sc.pipe[0] !== sc) return idFields(sc.pipe[0])
  return []
}

/** Every A string found in `text` (body, plus the Location header). */
const leaks = (res: Res, markers: string[]): string[] => {
  const bytes = res.text + '\n' + (res.headers.get('location') ?? '')
  return markers.filter((m) => bytes.includes(m))
}

/** Rows B's requests could touch: any change is a tenancy leak. */
const TABLES = ['stores', 'menu_categories', 'menu_items', 'item_variants', 'orders', 'order_lines', 'drivers', 'delivery_offers', 'staff', 'customers', 'customer_addresses', 'storefront_tokens', 'staff_pin_devices', 'webhook_endpoints', 'coupons', 'owner_tokens', 'owner_sessions', 'apps', 'app_installations', 'subscriptions', 'wallet_entries']
function snapshot(): string {
  const have = new Set((db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").pluck().all() as string[]))
  return TABLES.filter((tb) => have.has(tb)).map((tb) => `${tb} ${JSON.stringify(db.prepare(`SELECT * FROM ${tb} ORDER BY rowid`).all())}`).join('\n')
}

/** Send route `r` with `ids`, presenting `who`'s credential of `family`; writes carry an empty body (tenancy is resolved first). */
function send(r: Route, ids: Record<string, string | number>, family: Family, who: Side, extra: { query?: Record<string, string>; body?: unknown } = {}): Promise<Res> {
  const headers: Record<string, string> = { ...credentialHeaders(who.tokens, family), origin: s.site }
  let url = urlOf(s.site, r, ids)
  if (extra.query) url += `?${new URLSearchParams(extra.query)}`
  if (r.method === 'GET' || r.method === 'DELETE') return request(url, r.method, { headers })
  if (r.form) {
    const form = new URLSearchParams(Object.entries((extra.body ?? {}) as Record<string, string>))
    if (family === 'session') form.set('csrf', who.tokens.session.csrf)
    return request(url, r.method, { headers: { ...headers, 'content-type': 'application/x-www-form-urlencoded' }, raw: form.toString() })
  }
  return request(url, r.method, { headers, body: extra.body ?? {} })
}

/** One request, redirects not followed (a 303 to the sign-in page is itself the answer). */
async function request(url: string, method: string, opts: { headers: Record<string, string>; body?: unknown; raw?: string }): Promise<Res> {
  const headers = { ...opts.headers }
  let body: string | undefined = opts.raw
  if (body === undefined && opts.body !== undefined) {
    body = JSON.stringify(opts.body)
    headers['content-type'] ??= 'application/json'
  }
  const r = await fetch(url, { method, headers, body, redirect: 'manual' })
  const text = await r.text()
  let parsed: unknown
  try { parsed = text ? JSON.parse(text) : undefined } catch { parsed = undefined }
  return { status: r.status, headers: r.headers, body: parsed, text }
}

/** Run `jobs` a few at a time: one server, two cores, moderate batches. */
async function batched<T>(jobs: Array<() => Promise<T>>, size = 12): Promise<T[]> {
  const out: T[] = []
  for (let i = 0; i < jobs.length; i += size) out.push(...(await Promise.all(jobs.slice(i, i + size).map((j) => j()))))
  return out
}

const counts = { pathRoutes: 0, pathCells: 0, publicRoutes: 0, publicCells: 0, bodyCases: 0, bodyCells: 0 }

t.test('every route that takes an id has a world value for each id', async (t) => {
  for (const r of routes.filter((r) => paramsOf(r.path).length > 0)) {
    const ids = idsOf(a, r)
    if (typeof ids === 'string') t.fail(`${label(r)}: ${ids}`)
  }
})

t.test("B's every credential family against A's ids on every id-bearing route: 404, or refused outright; never A's data", async (t) => {
  const idRoutes = routes.filter((r) => paramsOf(r.path).length > 0 && !publicReason(r))
  counts.pathRoutes = idRoutes.length
  const before = snapshot()
  type Cell = { r: Route; family: Family; res: Res }
  const cells: Array<() => Promise<Cell | string>> = []
  for (const r of idRoutes) {
    const ids = idsOf(a, r)
    if (typeof ids === 'string') { t.fail(`${label(r)}: ${ids}`); continue }
    for (const family of FAMILIES) cells.push(async () => ({ r, family, res: await send(r, ids, family, b) }))
  }
  const results = await batched(cells)
  counts.pathCells = results.length
  for (const cell of results) {
    if (typeof cell === 'string') continue
    const { r, family, res } = cell
    const what = `${label(r)} as B's ${family}`
    const found = leaks(res, w.markers)
    if (found.length) t.fail(`${what}: answer contains A's ${found.join(', ')}`, { status: res.status, body: res.text.slice(0, 300) })
    if (res.status >= 200 && res.status < 300) { t.fail(`${what}: ${res.status} with A's ids`, { body: res.text.slice(0, 300) }); continue }
    if (res.status >= 500) { t.fail(`${what}: ${res.status}`, { body: res.text.slice(0, 300) }); continue }
    const expected = expectedFor(r, family)
    if (!expected.includes(res.status)) {
      t.fail(`${what}: ${res.status} ${res.body?.code ?? ''} (expected ${expected.join(' or ')})`, { body: res.text.slice(0, 300) })
      continue
    }
    if (res.status === 303) {
      if (!(res.headers.get('location') ?? '').startsWith('/login')) t.fail(`${what}: 303 elsewhere than the sign-in page`)
      continue
    }
    // JSON routes answer the §7 envelope; pages may answer their own 404 page (route.pageErrors).
    if (!r.produces || res.headers.get('content-type')?.includes('json')) {
      const code = res.status === 404 ? 'not_found' : res.status === 401 ? 'unauthenticated' : 'forbidden'
      const problem = envelopeProblem(res.body, code)
      if (problem) t.fail(`${what}: ${problem}`)
    }
  }
  t.equal(snapshot(), before, "none of A's rows (nor anyone's) changed")
  t.comment(`HTTP path-id matrix: ${counts.pathRoutes} routes × ${FAMILIES.length} families = ${counts.pathCells} cells`)
})

/**
 * What a cell may answer: 404 for a family that authenticates on the route (or 403 when that family
 * is refused before tenancy: an app's scopes, a staff permission or storefront scope), 401 for one
 * that does not, and for the dashboard's session routes the redirect to sign in (303) or 401.
 */
function expectedFor(r: Route, family: Family): number[] {
  if (fits(r.auth, family)) return family === 'owner' || family === 'session' ? [404] : [404, 403]
  if (r.auth === 'session') return r.method === 'GET' || r.form ? [303] : [401]
  return [401]
}

t.test('public id addresses (listed with their reason) never answer one of A\'s secrets to B', async (t) => {
  const pub = routes.filter((r) => paramsOf(r.path).length > 0 && publicReason(r))
  counts.publicRoutes = pub.length
  const jobs: Array<() => Promise<void>> = []
  for (const r of pub) {
    const ids = idsOf(a, r)
    if (typeof ids === 'string') { t.fail(`${label(r)}: ${ids}`); continue }
    // The credential in the address is the caller's to see; every other secret of A is not.
    const inPath = new Set(Object.values(ids).map(String))
    const secrets = [...w.secrets, ...Object.values(a.orders).map((o) => o.track_token)].filter((x) => !inPath.has(x))
    for (const family of FAMILIES) {
      jobs.push(async () => {
        // The handoff nonce is good once: redeem it only at the end, as one family.
        if (r.path.includes('{nonce}') && family !== 'none') return
        const res = await send(r, ids, family, b)
        counts.publicCells++
        const what = `${label(r)} (public: ${publicReason(r)}) as B's ${family}`
        if (res.status >= 500) t.fail(`${what}: ${res.status}`, { body: res.text.slice(0, 300) })
        const found = leaks(res, secrets)
        if (found.length) t.fail(`${what}: answer contains A's secret ${found.join(', ')}`)
      })
    }
  }
  await batched(jobs)
  t.pass(`${counts.publicRoutes} public id routes checked`)
  t.comment(`HTTP public id routes: ${counts.publicRoutes} routes, ${counts.publicCells} cells`)
})

/**
 * Ids in bodies and queries: B names its own store, order or driver in the path and one of A's in
 * the body (`category_id`, `driver_id`, `address_id`, an order line's `item_id`, …). Every route
 * whose body or query schema has an id field must have a case here or an exemption with a reason.
 */
/** The ids a case puts in the body or query: A's (the probe), B's own (the control), or ids that never existed. */
interface V { store: number; category: number; driver: number; address: number; customer: number; order: number; customerOrder: number; item: number; plan: number; coupon: string; table: number }
/** `emptyOk`: a filter, so an empty list is the refusal; `answerOk(body)`: a 2xx that itself says no (with the reason in `why`). */
interface BodyCase { who: Family; make: (v: V) => { query?: Record<string, string>; body?: unknown }; emptyOk?: string; answerOk?: (body: any) => boolean; why?: string }
const valuesOf = (x: Side): V => ({
  store: x.storeId, category: x.menu.categoryId, driver: x.driverId, address: x.addressId, customer: x.customerId,
  order: x.orders.takeaway.id, customerOrder: x.orders.customer.id, item: x.menu.fries, plan: x.resellerPlanId, coupon: db.prepare('SELECT code FROM coupons WHERE id = ?').pluck().get(x.couponId) as string,
  table: x.tableId,
})
const GHOST: V = { store: 99_999_001, category: 99_999_002, driver: 99_999_003, address: 99_999_004, customer: 99_999_005, order: 99_999_006, customerOrder: 99_999_009, item: 99_999_007, plan: 99_999_008, coupon: 'NOSUCHCOUPON', table: 99_999_010 }
const lines = (v: V) => [{ item_id: v.item, quantity: 1 }]
const categoriesOf = (storeId: number) => db.prepare('SELECT id FROM menu_categories WHERE store_id = ? ORDER BY position, id').pluck().all(storeId) as number[]
const itemsOf = (categoryId: number) => db.prepare('SELECT id FROM menu_items WHERE category_id = ? ORDER BY position, id').pluck().all(categoryId) as number[]
/** B's own list as it is (the control), or with `id` in place of its first entry (the probes). */
const ownOrWith = (own: number[], v: V, id: number) => (v.store === b.storeId ? own : [id, ...own.slice(1)])
/** A UTC start `days` ahead on the default 30-minute booking grid. */
const bookAt = (days: number, hhmm: string) => `${new Date(Date.now() + days * 86_400_000).toISOString().slice(0, 10)}T${hhmm}:00Z`
const BODY_CASES: Record<string, BodyCase> = {
  'POST /api/v1/restaurants/{id}/menu/items': { who: 'owner', make: (v) => ({ body: { category_id: v.category, name: 'Probe', price: 1 } }) },
  'PUT /api/v1/restaurants/{id}/menu/items/{itemId}': { who: 'owner', make: (v) => ({ body: { category_id: v.category } }) },
  'GET /api/v1/account/setup': { who: 'owner', make: (v) => ({ query: { restaurant_id: String(v.store) } }) },
  'PUT /api/v1/account/setup': { who: 'owner', make: (v) => ({ body: { dismissed: true, restaurant_id: v.store } }) },
  'GET /api/v1/drivers': { who: 'owner', make: (v) => ({ query: { restaurant_id: String(v.store) } }), emptyOk: 'a filter: another account\'s store matches none of your drivers' },
  'POST /api/v1/drivers': { who: 'owner', make: (v) => ({ body: { name: 'Probe', phone: `+1555${String(v.store).padStart(7, '0').slice(-7)}`, restaurant_id: v.store } }) },
  'PUT /api/v1/drivers/{id}': { who: 'owner', make: (v) => ({ body: { restaurant_id: v.store } }) },
  'GET /api/v1/restaurants/{id}/deliveries': { who: 'owner', make: (v) => ({ query: { driver_id: String(v.driver) } }), emptyOk: 'a filter: another account\'s driver has none of your deliveries' },
  'POST /api/v1/restaurants/{id}/orders/{orderId}/assign': { who: 'owner', make: (v) => ({ body: { driver_id: v.driver } }) },
  'POST /api/v1/restaurants/{id}/orders/{orderId}/offers': { who: 'owner', make: (v) => ({ body: { driver_ids: [v.driver] } }) },
  'POST /api/v1/driver/login/verify': { who: 'none', make: (v) => ({ body: { driver_id: v.driver, code: '000000' } }) },
  'POST /api/v1/staff/menu/items': { who: 'staff', make: (v) => ({ body: { category_id: v.category, name: 'Probe', price: 1 } }) },
  'PUT /api/v1/staff/menu/items/{itemId}': { who: 'staff', make: (v) => ({ body: { category_id: v.category } }) },
  // The menu's order (docs/menu-photos.md): B's full list with one of A's in place of one of B's; the control sends B's list.
  'PUT /api/v1/restaurants/{id}/menu/order': { who: 'owner', make: (v) => ({ body: { ids: ownOrWith(categoriesOf(b.storeId), v, v.category) } }) },
  'PUT /api/v1/staff/menu/order': { who: 'staff', make: (v) => ({ body: { ids: ownOrWith(categoriesOf(b.storeId), v, v.category) } }) },
  'PUT /api/v1/restaurants/{id}/menu/categories/{categoryId}/order': { who: 'owner', make: (v) => ({ body: { ids: ownOrWith(itemsOf(b.menu.categoryId), v, v.item) } }) },
  'PUT /api/v1/staff/menu/categories/{categoryId}/order': { who: 'staff', make: (v) => ({ body: { ids: ownOrWith(itemsOf(b.menu.categoryId), v, v.item) } }) },
  'POST /api/v1/customer/orders': { who: 'customer', make: (v) => ({ body: { type: 'delivery', address_id: v.address, items: [{ item_id: b.menu.fries, quantity: 1 }] } }) },
  'POST /api/v1/storefront/menu/search': { who: 'storefront', make: (v) => ({ body: { category_id: v.category } }), emptyOk: 'a filter: another store\'s category matches none of this store\'s items' },
  'GET /api/v1/customer/orders/track': { who: 'customer', make: (v) => ({ query: { order_id: String(v.customerOrder) } }) },
  'POST /api/v1/restaurants/{id}/gift-cards': { who: 'owner', make: (v) => ({ body: { amount: 10, customer_id: v.customer } }) },
  'POST /api/v1/restaurants/{id}/gift-cards/{giftCardId}/redeem': { who: 'owner', make: (v) => ({ body: { amount: 1, order_id: v.order } }) },
  'POST /api/v1/reseller/customers': { who: 'owner', make: (v) => ({ body: { name: 'Probe', email: `probe${v.plan}@test.local`, plan_id: v.plan } }) },
  'GET /apps/{appId}/session-token': { who: 'session', make: (v) => ({ query: { store: String(v.store) } }) },
  'GET /apps/{appId}/embed': {
    who: 'session', make: (v) => ({ query: { store: String(v.store) } }), answerOk: (body) => body === undefined,
    why: 'the page of B\'s own app only forwards `store` to /session-token, which answers 404 for another account\'s store (the row above)',
  },
  // Tables named in bookings (docs/operations.md "Reservations"): A's table in B's store is no bookable table.
  // Each control books a time of its own; PUT runs before seat (the seat control seats the booking).
  'POST /api/v1/restaurants/{id}/reservations': { who: 'owner', make: (v) => ({ body: { name: 'Probe', party_size: 2, starts_at: bookAt(3, '19:00'), table_id: v.table } }) },
  'PUT /api/v1/restaurants/{id}/reservations/{reservationId}': { who: 'owner', make: (v) => ({ body: { table_id: v.table } }) },
  'POST /api/v1/restaurants/{id}/reservations/{reservationId}/seat': { who: 'owner', make: (v) => ({ body: { table_id: v.table } }) },
  'POST /api/v1/staff/reservations': { who: 'staff', make: (v) => ({ body: { name: 'Probe', party_size: 2, starts_at: bookAt(3, '21:00'), table_id: v.table } }) },
  'PUT /api/v1/staff/reservations/{reservationId}': { who: 'staff', make: (v) => ({ body: { table_id: v.table } }) },
  'POST /api/v1/staff/reservations/{reservationId}/seat': { who: 'staff', make: (v) => ({ body: { table_id: v.table } }) },
  // The theme preview's item page (issue 34 item 12): A's item is on no menu of B's store.
  'POST /api/v1/restaurants/{id}/theme/preview': { who: 'owner', make: (v) => ({ body: { page: 'item', item_id: v.item } }) },
  // Ids nested in order lines and cart bodies: A's menu items, A's coupon code, in B's store.
  'POST /api/v1/restaurants/{id}/orders': { who: 'owner', make: (v) => ({ body: { type: 'takeaway', items: lines(v) } }) },
  'POST /api/v1/storefront/orders': { who: 'storefront', make: (v) => ({ body: { type: 'takeaway', customer_name: 'Probe', phone: '+15559990002', items: lines(v) } }) },
  'POST /api/v1/storefront/cart/price': { who: 'storefront', make: (v) => ({ body: { type: 'takeaway', items: lines(v) } }) },
  'POST /api/v1/storefront/cart/coupon': { who: 'storefront', make: (v) => ({ body: { coupon_code: v.coupon, type: 'takeaway', items: [{ item_id: b.menu.fries, quantity: 1 }] } }), answerOk: (body) => body?.valid === false && body?.discount === 0, why: 'a coupon check answers 200 with valid: false; another store\'s code must read as nonexistent' },
}
/** Id-named fields that name nothing of another account, with why. */
const BODY_EXEMPT: Record<string, string> = {
  'GET /api/v1/staff/kds': '`station_id` is a station name of the member\'s own store, not a row of anyone',
  'POST /api/v1/driver/push/register-device': '`device_token` is the caller\'s own push token',
  'POST /api/v1/driver/push/unregister-device': '`device_token` is the caller\'s own push token',
  'POST /api/v1/staff/push/register-device': '`device_token` is the caller\'s own push token',
  'POST /api/v1/staff/push/unregister-device': '`device_token` is the caller\'s own push token',
  'PUT /api/v1/restaurants/{id}/menu/items/{itemId}/fitments': '`fitment_ids` only exist in car parts stores and the world\'s stores are restaurants (the route is 422 `not_for_store_type` there); test/fitments.test.ts checks another store\'s fitment id is 422 keyed `fitment_ids.N`, like one that never existed',
  'GET /oauth/authorize': '`client_id` names a published app: any account may install it (docs/apps.md)',
  'POST /api/v1/app/devices': '`push_token` is the caller\'s own push token',
  'POST /api/v1/app/devices/unregister': '`push_token` is the caller\'s own push token',
}

t.test("ids in bodies and queries: B's own path with one of A's ids inside is refused like an id that never existed, and shows nothing of A", async (t) => {
  const before = snapshot()
  for (const r of routes.filter((r) => idFields(r.query).length > 0 || idFields(r.body).length > 0)) {
    if (!BODY_CASES[label(r)] && !BODY_EXEMPT[label(r)]) t.fail(`${label(r)} takes ${[...idFields(r.query), ...idFields(r.body)].join(', ')}: add a BODY_CASES row (or a BODY_EXEMPT reason) in this file`)
  }
  const va = valuesOf(a)
  const probes: Array<{ key: string; r: Route; c: BodyCase; own: Record<string, string | number> }> = []
  for (const [key, c] of Object.entries(BODY_CASES)) {
    const r = routes.find((x) => label(x) === key)
    if (!r) { t.fail(`${key}: no such route any more; drop its row`); continue }
    counts.bodyCases++
    const own = idsOf(b, r)
    if (typeof own === 'string') { t.fail(`${key}: ${own}`); continue }
    // B's own delivery is unassigned for the assign/offer cases (A's driver must not take it).
    if (/assign|offers/.test(r.path)) own.orderId = b.orders.offered.id
    probes.push({ key, r, c, own })
    const withA = await send(r, own, c.who, b, c.make(va))
    const withGhost = await send(r, own, c.who, b, c.make(GHOST))
    counts.bodyCells += 2
    const what = `${key} as B's ${c.who} with A's ids inside`
    // What B sent (A's coupon code) may be echoed back; anything else of A may not.
    const sent = JSON.stringify(c.make(va))
    const found = leaks(withA, w.markers.filter((m) => !sent.includes(m)))
    if (found.length) t.fail(`${what}: answer contains A's ${found.join(', ')}`, { body: withA.text.slice(0, 300) })
    if (withA.status >= 500) t.fail(`${what}: ${withA.status}`, { body: withA.text.slice(0, 300) })
    else if (withA.status < 300 && !(c.emptyOk && isEmptyList(withA.body)) && !c.answerOk?.(withA.body)) t.fail(`${what}: ${withA.status}`, { body: withA.text.slice(0, 300) })
    // Indistinguishable from an id that never existed: B learns nothing about A's rows (api-v1 §1).
    // The id itself may be echoed in a field message ("Item 2 does not belong to this store"): numbers are masked.
    const shape = (res: Res) => JSON.stringify([res.status, res.body?.code, res.body?.errors]).replace(/\d+/g, '#')
    t.equal(shape(withA), shape(withGhost), `${what}: ${withA.status} ${withA.body?.code ?? ''}, the same as for an id that never existed`)
  }
  t.equal(snapshot(), before, "none of A's rows changed")
  // The control: the same requests with B's own ids succeed, so the refusals above are about A's ids
  // and not about a body this test got wrong.
  const vb = valuesOf(b)
  for (const { key, r, c, own } of probes) {
    if (c.who === 'none') continue // the driver sign-in's code is one-time and unknown here
    // Assigning and offering need an unassigned delivery of B's each time.
    if (/assign|offers/.test(r.path)) {
      const fresh = await s.req('POST', `/restaurants/${b.storeId}/orders`, { token: b.tokens.owner, body: { type: 'delivery', address: '2 Probe St', items: [{ item_id: b.menu.fries, quantity: 1 }] } })
      own.orderId = (fresh.body as { id: number }).id
    }
    const res = await send(r, own, c.who, b, c.make(vb))
    counts.bodyCells++
    t.ok(res.status < 300, `control: ${key} with B's own ids → ${res.status} ${res.body?.code ?? ''}`, { body: res.text.slice(0, 200) })
  }
  t.comment(`HTTP body/query ids: ${counts.bodyCases} routes, ${counts.bodyCells} cells (A's ids, never-existing ids, B's own ids)`)
})

const isEmptyList = (body: any): boolean =>
  Array.isArray(body) ? body.length === 0 : !!body && typeof body === 'object' && Object.values(body).some((v) => Array.isArray(v) && v.length === 0) && !Object.values(body).some((v) => Array.isArray(v) && v.length > 0)

t.test('matrix size', async (t) => {
  t.comment(`tenancy matrix (HTTP): ${counts.pathCells + counts.publicCells + counts.bodyCells} cells — path ids ${counts.pathCells}, public ${counts.publicCells}, body/query ids ${counts.bodyCells}`)
  t.ok(counts.pathCells > 0)
})
