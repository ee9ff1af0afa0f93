/**
 * The policy, derived from the operation list (src/ops/index.ts `ALL_OPS`; api-v1 §1, §5, §7):
 * every operation is bound somewhere; for every owner binding, another owner gets 404 `not_found`
 * — before its body is even validated (a deliberately invalid body still answers 404) — and
 * nothing is written; a token lacking the operation's capability gets 403; a staff member lacking
 * the operation's permission gets 403. An operation this test has no fixture for FAILS the test
 * instead of being skipped: add its ids to `fixtureIds` below.
 */
import { createTestApp, installTestApp } from './helpers/apps.ts'
import t from 'tap'
import { startServer, request } from './helpers/server.ts'
import { createAccount, createBatch, createBrand, createFitment, createMenu, createStore, envelopeProblem, postOrder, tokenFor } from './helpers/fixtures.ts'
import { createCustomer, createStaff, createStorefrontToken } from './helpers/people.ts'
import { label, liveRoutes, paramsOf, urlOf, type Route } from './helpers/routes.ts'
import { ALL_OPS } from '../src/ops/index.ts'
import { nowIso } from '../src/storage/db.ts'
import { grantReseller, insertAccount } from '../src/storage/reseller.ts'
import { RESOURCES } from '../src/domain/capabilities.ts'
import { STAFF_PERMISSIONS } from '../src/domain/permissions.ts'
import { sha256Hex } from '../src/auth/tokens.ts'

const s = await startServer({ RATE_LIMIT_PER_MINUTE: '1000000', WEBHOOK_ALLOW_LOOPBACK: '1' })
t.teardown(() => s.close())
const db = s.app.svc.db

// Owner A owns everything the ids below name; owner B has a store of its own and nothing else.
const a = createAccount(db)
const b = createAccount(db)
const line = (item: number) => ({ type: 'takeaway', items: [{ item_id: item, quantity: 1 }] })
const aOrder = (await postOrder(s, a.token, a.storeId, line(a.menu.fries))).body as { id: number }
const aDelivery = (await postOrder(s, a.token, a.storeId, { type: 'delivery', address: '1 Main St', items: [{ item_id: a.menu.fries, quantity: 1 }] })).body as { id: number }
const insert = (sql: string, ...args: unknown[]) => Number(db.prepare(sql).run(...args).lastInsertRowid)
const now = nowIso()
const aDriver = insert('INSERT INTO drivers (owner_id, restaurant_id, name, phone, created_at) VALUES (?, ?, ?, ?, ?)', a.ownerId, a.storeId, 'A driver', '+15550001', now)
const aStaff = createStaff(db, a.storeId, { role: 'cashier' })
const aCustomer = createCustomer(db, a.storeId)
createStorefrontToken(db, a.storeId)
const aStorefrontTokenId = db.prepare('SELECT MAX(id) FROM storefront_tokens WHERE store_id = ?').pluck().get(a.storeId) as number
const viaApi = async (method: string, path: string, body: unknown) => {
  const r = await s.req(method, path, { token: a.token, body })
  if (r.status >= 300) throw new Error(`fixture ${method} ${path}: ${r.status} ${r.text}`)
  return r.body as Record<string, any>
}
const aCoupon = await viaApi('POST', `/restaurants/${a.storeId}/coupons`, { code: `A${Date.now()}`, kind: 'percent', value: 10 }).catch(() => null)
const aGiftCard = await viaApi('POST', `/restaurants/${a.storeId}/gift-cards`, { amount: 10 }).catch(() => null)
const aShift = await viaApi('POST', `/restaurants/${a.storeId}/shifts`, { opening_float: 100 }).catch(() => null)
const aDevice = await viaApi('POST', `/restaurants/${a.storeId}/pin-devices`, { name: 'Till' }).catch(() => null)
const aEndpoint = await viaApi('POST', '/webhook-endpoints', { url: 'http://127.0.0.1:9/hook', events: ['*'] }).catch(() => null)
// The reseller area (api-v1 §4.8) is for reseller accounts: A and B are both resellers, A manages an
// account (with its subscription), so B reaching A's customer is the 404 case.
grantReseller(db, a.ownerId)
grantReseller(db, b.ownerId)
const aManaged = insertAccount(db, { name: 'Managed', email: 'managed@test.local', resellerId: a.ownerId })
const aManagedSub = db.prepare('SELECT id FROM subscriptions WHERE owner_id = ?').pluck().get(aManaged) as number
// One of A's API tokens (issue 14): B revoking it is the 404 case.
const aOwnerTokenId = db.prepare('SELECT id FROM owner_tokens WHERE token_hash = ?').pluck().get(sha256Hex(tokenFor(db, a.ownerId, ['orders:read']))) as number
// Third-party apps (issue 16): A's app (A as its developer) installed for A; B reaching either is the 404 case.
const aApp = createTestApp(db, a.ownerId)
const aInstallation = installTestApp(db, aApp.id, a.ownerId).installation.id
// A fitment row of A's store (docs/verticals.md "Fitments").
const aFitment = createFitment(db, a.storeId)
// Goods and store operations (issues 17, 18): a brand, an expiry batch, a table, a booking and a guest of A's.
const aBrand = createBrand(db, a.storeId, 'A Brand')
const aBatch = createBatch(db, a.menu.burger.id, '2999-12-31', 1000)
const aTable = await viaApi('POST', `/restaurants/${a.storeId}/tables`, { name: 'A1', capacity: 4 })
const aPayment = await viaApi('POST', `/restaurants/${a.storeId}/orders/${aOrder.id}/payments`, { amount: 0.01, method: 'cash' })
const aReservation = await viaApi('POST', `/restaurants/${a.storeId}/reservations`, { name: 'A Booker', party_size: 2, starts_at: `${new Date(Date.now() + 2 * 86_400_000).toISOString().slice(0, 10)}T19:00:00Z` })

/** A's ids by path parameter; `{id}` depends on the family of the path. */
function fixtureIds(r: Route): Record<string, number | string> | string {
  const ids: Record<string, number | string | undefined> = {
    orderId: r.path.includes('/deliveries') || r.path.includes('/assign') || r.path.includes('/offers') || r.path.includes('delivery-status') ? aDelivery.id : aOrder.id,
    categoryId: a.menu.categoryId, itemId: a.menu.burger.id, variantId: a.menu.burger.double, restaurantId: a.storeId,
    staffId: aStaff.id, customerId: aCustomer.id, tokenId: aStorefrontTokenId,
    couponId: aCoupon?.id, giftCardId: aGiftCard?.id, deviceId: aDevice?.id, shiftId: aShift?.id, fitmentId: aFitment,
    brandId: aBrand, batchId: aBatch, tableId: aTable.id, reservationId: aReservation.id, paymentId: aPayment.payment.id, guest: `c${aCustomer.id}`,
    deliveryId: 1,
  }
  if (r.path.startsWith('/restaurants/{id}')) ids.id = a.storeId
  else if (r.path.startsWith('/drivers/{id}')) ids.id = aDriver
  else if (r.path.startsWith('/webhook-endpoints/{id}')) ids.id = aEndpoint?.id
  else if (r.path.startsWith('/reseller/customers/{id}')) ids.id = aManaged
  else if (r.path.startsWith('/reseller/subscriptions/{id}')) ids.id = aManagedSub
  else if (r.path.startsWith('/tokens/{id}')) ids.id = aOwnerTokenId
  else if (r.path.startsWith('/developer/apps/{id}')) ids.id = aApp.id
  else if (r.path.startsWith('/apps/installations/{id}')) ids.id = aInstallation
  const missing = paramsOf(r.path).filter((p) => ids[p] === undefined)
  if (missing.length) return `no fixture id for {${missing.join('}, {')}}`
  return ids as Record<string, number | string>
}

/** Rows an owner's writes could touch: any change is a tenancy leak. */
function snapshot(): string {
  const tables = ['menu_categories', 'menu_items', 'item_variants', 'item_extras', 'orders', 'order_lines', 'outbox', 'drivers', 'staff', 'customers', 'storefront_tokens', 'owners', 'subscriptions', 'wallet_entries']
  return tables.map((tb) => JSON.stringify(db.prepare(`SELECT * FROM ${tb} ORDER BY id`).all())).join('\n')
}

const routes = liveRoutes()
const bindingsOf = (id: string) => routes.filter((r) => r.op?.id === id)
/** Not an object, so it fails every input schema: a 422 here would mean validation ran before tenancy. */
const INVALID_BODY = [0]
const sendAs = (r: Route, token: string, ids: Record<string, number | string>) =>
  request(urlOf(s.site, r, ids), r.method, { token, body: r.body || (r.method !== 'GET' && r.method !== 'DELETE') ? INVALID_BODY : undefined })

t.test('every operation has at least one binding, and op ids are unique', async (t) => {
  t.ok(ALL_OPS.length > 0)
  t.equal(new Set(ALL_OPS.map((o) => o.id)).size, ALL_OPS.length, 'unique ids')
  for (const op of ALL_OPS) t.ok(bindingsOf(op.id).length > 0, `${op.id} is bound`)
})

t.test("another owner gets 404 on every owner binding of every operation, whatever the body, and nothing changes", async (t) => {
  const before = snapshot()
  for (const op of ALL_OPS) {
    for (const r of bindingsOf(op.id).filter((r) => r.auth === 'owner' && paramsOf(r.path).length > 0)) {
      const ids = fixtureIds(r)
      if (typeof ids === 'string') { t.fail(`${op.id} (${label(r)}): ${ids}`); continue }
      const res = await sendAs(r, b.token, ids)
      t.equal(res.status, 404, `${op.id} ${label(r)} with another owner's ids → 404 (got ${res.status} ${res.body?.code ?? ''})`)
      t.equal(envelopeProblem(res.body, 'not_found'), null, `${op.id}: not_found envelope`)
    }
  }
  t.equal(snapshot(), before, "nothing of the first owner's data changed")
})

t.test("an owner's ids of one store are not found under another of its stores", async (t) => {
  const sibling = createStore(db, a.ownerId)
  createMenu(db, sibling.id)
  const before = snapshot()
  for (const op of ALL_OPS.filter((o) => o.scope.includes('order'))) {
    for (const r of bindingsOf(op.id).filter((r) => r.auth === 'owner' && r.path.startsWith('/restaurants/{id}/'))) {
      const ids = fixtureIds(r)
      if (typeof ids === 'string') { t.fail(`${op.id}: ${ids}`); continue }
      const res = await sendAs(r, a.token, { ...ids, id: sibling.id })
      t.equal(res.status, 404, `${op.id} ${label(r)} with an order of a sibling store → 404`)
    }
  }
  t.equal(snapshot(), before, 'nothing changed')
})

t.test('a token lacking the operation capability gets 403 on every owner binding', async (t) => {
  for (const op of ALL_OPS.filter((o) => o.access.owner && o.access.owner !== 'any')) {
    const [resource, action] = op.access.owner!.split(':') as [string, string]
    const lacking = RESOURCES.filter((x) => x !== resource).map((x) => `${x}:write`)
    const token = tokenFor(db, a.ownerId, action === 'write' ? [...lacking, `${resource}:read`] : lacking)
    for (const r of bindingsOf(op.id).filter((r) => r.auth === 'owner')) {
      const ids = fixtureIds(r)
      if (typeof ids === 'string') { t.fail(`${op.id}: ${ids}`); continue }
      const res = await sendAs(r, token, ids)
      t.equal(res.status, 403, `${op.id} ${label(r)} without ${op.access.owner} → 403`)
      t.equal(envelopeProblem(res.body, 'forbidden'), null, `${op.id}: forbidden envelope`)
    }
  }
})

t.test('a staff member lacking the operation permission gets 403 on every staff binding', async (t) => {
  for (const op of ALL_OPS.filter((o) => o.access.staff && o.access.staff !== 'any')) {
    const revoke = STAFF_PERMISSIONS.filter((p) => p === op.access.staff)
    const member = createStaff(db, a.storeId, { role: 'manager', permissions: { revoke } })
    for (const r of bindingsOf(op.id).filter((r) => r.auth === 'staff')) {
      const ids = fixtureIds(r)
      if (typeof ids === 'string') { t.fail(`${op.id}: ${ids}`); continue }
      const res = await sendAs(r, member.token, ids)
      t.equal(res.status, 403, `${op.id} ${label(r)} without ${op.access.staff} → 403`)
    }
  }
})

t.test("a staff member of another store gets 404 for this store's orders", async (t) => {
  const other = createStaff(db, b.storeId, { role: 'manager' })
  for (const op of ALL_OPS.filter((o) => o.scope.includes('order'))) {
    for (const r of bindingsOf(op.id).filter((r) => r.auth === 'staff')) {
      const ids = fixtureIds(r)
      if (typeof ids === 'string') { t.fail(`${op.id}: ${ids}`); continue }
      const res = await sendAs(r, other.token, ids)
      t.equal(res.status, 404, `${op.id} ${label(r)} from another store's staff → 404`)
    }
  }
})
