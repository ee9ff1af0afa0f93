/**
 * Tenancy (api-v1 §1, §7; ARCHITECTURE 7), derived from the live route table: another owner's
 * resources answer 404 `not_found` — never 403, never data — on every id-bearing owner route, and
 * an id of one store used under another store's path is not found either. Nothing is written.
 */
import t, { type Test } from 'tap'
import { startServer, request } from './helpers/server.ts'
import { createAccount, createMenu, createStore, envelopeProblem, postOrder } from './helpers/fixtures.ts'
import { label, ownerRoutes, paramsOf, urlOf, type Route } from './helpers/routes.ts'
import { nowIso } from '../src/storage/db.ts'

const s = await startServer({ RATE_LIMIT_PER_MINUTE: '100000' })
t.teardown(() => s.close())
const db = s.app.svc.db

// Owner A: two stores with menus and an order each. Owner B: one store of its own.
const a = createAccount(db)
const a2 = createStore(db, a.ownerId)
const a2menu = createMenu(db, a2.id)
const b = createAccount(db)
const aDriver = Number(db.prepare('INSERT INTO drivers (owner_id, restaurant_id, name, phone, created_at) VALUES (?, ?, ?, ?, ?)').run(a.ownerId, a.storeId, 'A driver', '+15550001', nowIso()).lastInsertRowid)
const line = (item: number) => ({ type: 'takeaway', items: [{ item_id: item, quantity: 1 }] })
const aOrder = (await postOrder(s, a.token, a.storeId, line(a.menu.fries))).body
const a2Order = (await postOrder(s, a.token, a2.id, line(a2menu.fries))).body
t.ok(aOrder.id && a2Order.id, 'fixture orders created')

/** Ids of A's first store (and A's driver) by parameter name. */
function aIds(r: Route, storeId: number, menu = a.menu, orderId = aOrder.id as number): Record<string, number> | null {
  const ids: Record<string, number> = { categoryId: menu.categoryId, itemId: menu.burger.id, variantId: menu.burger.double, orderId, restaurantId: storeId }
  if (r.path.startsWith('/restaurants/{id}')) ids.id = storeId
  else if (r.path.startsWith('/drivers/{id}')) ids.id = aDriver
  return paramsOf(r.path).every((p) => p in ids) ? ids : null
}

/** A body that passes validation, so the answer is decided by tenancy and not by the schema. */
function validBody(r: Route, menu = a.menu): unknown {
  const bodies: Record<string, unknown> = {
    'POST /restaurants/{id}/menu/categories': { name: 'Intruder' },
    'PUT /restaurants/{id}/menu/categories/{categoryId}': { name: 'Intruder' },
    'POST /restaurants/{id}/menu/items': { category_id: menu.categoryId, name: 'Intruder', price: 1 },
    'PUT /restaurants/{id}/menu/items/{itemId}': { name: 'Intruder', price: 0.01 },
    'PATCH /restaurants/{id}/menu/items/{itemId}/sold-out': { is_sold_out: true },
    'POST /restaurants/{id}/menu/items/{itemId}/variants': { name: 'Intruder', price: 0.01 },
    'PUT /restaurants/{id}/menu/items/{itemId}/variants/{variantId}': { name: 'Intruder', price: 0.01 },
    'POST /restaurants/{id}/orders': line(menu.fries),
    'PUT /restaurants/{id}/orders/{orderId}/status': { status: 'cancelled' },
  }
  return bodies[`${r.method} ${r.path}`] ?? (r.body ? {} : undefined)
}
const hasFixtureBody = (r: Route) => !r.body || validBody(r) !== undefined && JSON.stringify(validBody(r)) !== '{}'

function snapshot() {
  const q = (sql: string) => JSON.stringify(db.prepare(sql).all())
  return [
    q('SELECT * FROM menu_categories ORDER BY id'), q('SELECT * FROM menu_items ORDER BY id'), q('SELECT * FROM item_variants ORDER BY id'),
    q('SELECT * FROM item_extras ORDER BY id'), q('SELECT * FROM orders ORDER BY id'), q('SELECT * FROM order_lines ORDER BY id'),
    q('SELECT * FROM outbox ORDER BY id'), q('SELECT * FROM drivers ORDER BY id'),
  ].join('\n')
}

const idRoutes = ownerRoutes().filter((r) => paramsOf(r.path).length > 0)

function expectNotFound(t: Test, r: Route, res: { status: number; body: any }, what: string) {
  // Without a known-valid body the schema may answer first (422), which confirms nothing either.
  const ok = res.status === 404 || (!hasFixtureBody(r) && res.status === 422)
  t.ok(ok, `${label(r)} ${what}: 404 (got ${res.status} ${res.body?.code ?? ''})`)
  if (res.status === 404) t.equal(envelopeProblem(res.body, 'not_found'), null, `${label(r)} ${what}: not_found envelope`)
  t.not(res.status, 403, `${label(r)} ${what}: never 403`)
}

t.test('the table has id-bearing owner routes to check', async (t) => {
  t.ok(idRoutes.length >= 15, `${idRoutes.length} id-bearing owner routes`)
})

t.test("a second owner gets 404 on every id-bearing route of the first owner's resources", async (t) => {
  const before = snapshot()
  for (const r of idRoutes) {
    const ids = aIds(r, a.storeId)
    if (!ids) { t.comment(`no fixture ids for ${label(r)}; not checked here`); continue }
    const res = await request(urlOf(s.site, r, ids), r.method, { token: b.token, body: validBody(r) })
    expectNotFound(t, r, res, "with the other owner's ids")
  }
  t.equal(snapshot(), before, "nothing of the first owner's data changed")
})

t.test("a second owner gets 404 for the first owner's child ids under its own store", async (t) => {
  const before = snapshot()
  for (const r of idRoutes.filter((r) => r.path.startsWith('/restaurants/{id}/') && paramsOf(r.path).length > 1)) {
    const ids = aIds(r, a.storeId)
    if (!ids) { t.comment(`no fixture ids for ${label(r)}; not checked here`); continue }
    const res = await request(urlOf(s.site, r, { ...ids, id: b.storeId }), r.method, { token: b.token, body: validBody(r, b.menu) })
    expectNotFound(t, r, res, "under its own store with the other owner's child ids")
  }
  t.equal(snapshot(), before, 'nothing changed')
})

t.test("an owner's ids of one store are not found under another of its stores", async (t) => {
  const before = snapshot()
  for (const r of idRoutes.filter((r) => r.path.startsWith('/restaurants/{id}/') && paramsOf(r.path).length > 1)) {
    const ids = aIds(r, a.storeId, a2menu, a2Order.id)
    if (!ids) { t.comment(`no fixture ids for ${label(r)}; not checked here`); continue }
    const res = await request(urlOf(s.site, r, ids), r.method, { token: a.token, body: validBody(r) })
    expectNotFound(t, r, res, 'with ids of a sibling store')
  }
  t.equal(snapshot(), before, 'nothing changed')
})

t.test('a variant id of another item of the same store is not found', async (t) => {
  const other = db.prepare('INSERT INTO item_variants (item_id, name, price, position, created_at, updated_at) VALUES (?, ?, NULL, 0, ?, ?)')
    .run(a.menu.fries, 'Large fries', nowIso(), nowIso()).lastInsertRowid
  const path = `/restaurants/${a.storeId}/menu/items/${a.menu.burger.id}/variants/${other}`
  t.equal((await s.req('GET', path, { token: a.token })).status, 404)
  t.equal((await s.req('PUT', path, { token: a.token, body: { name: 'x' } })).status, 404)
  t.equal((await s.req('DELETE', path, { token: a.token })).status, 404)
  t.ok(db.prepare('SELECT 1 FROM item_variants WHERE id = ? AND name = ?').get(other, 'Large fries'), 'untouched')
})

t.test("lists and bodies never reach another owner's data", async (t) => {
  const list = await s.req('GET', '/restaurants', { token: b.token })
  t.same(list.body.data.map((x: { id: number }) => x.id), [b.storeId], 'the store list holds only own stores')
  const item = await s.req('POST', `/restaurants/${b.storeId}/menu/items`, { token: b.token, body: { category_id: a.menu.categoryId, name: 'x', price: 1 } })
  t.equal(item.status, 422, "a body naming another store's category is a validation failure")
  t.ok(item.body.errors?.category_id, 'keyed by category_id')
  const foreign = await postOrder(s, b.token, b.storeId, line(a.menu.fries))
  t.equal(foreign.status, 422, "an order for another owner's item is rejected")
  t.ok(foreign.body.errors?.['items.0.item_id'])
  const moved = await s.req('PUT', `/restaurants/${a.storeId}/menu/items/${a.menu.fries}`, { token: a.token, body: { category_id: a2menu.categoryId } })
  t.equal(moved.status, 422, "an item cannot be moved into a sibling store's category")
})
