/**
 * The store website's visitor is a principal family of its own (src/auth/visitor.ts, issue 33 item 1),
 * decided in the policy (src/auth/policy.ts) like every other: it may run only what names it
 * (`visitor: true`, the storefront order), only at its own store, and a suspended account's website
 * admits no one. Pure: the scope reader is faked.
 */
import t from 'tap'
import { admitVisitor, authorize, resolveScope, type ScopeReader } from '../../src/auth/policy.ts'
import { createStorefrontOrder, getStorefrontMenu } from '../../src/ops/web/storefront.ts'
import { ApiError } from '../../src/errors.ts'
import type { StoreRow } from '../../src/storage/stores.ts'

const store = (id: number, owner: number) => ({ id, owner_id: owner }) as StoreRow
const stores = new Map([[1, store(1, 10)], [2, store(2, 20)]])
const suspended = new Set<number>()
const reader = {
  stores: { byId: (id: number) => stores.get(id), ownedBy: () => undefined },
  orders: { rowInStore: () => undefined, row: () => undefined },
  drivers: { byId: () => undefined, ownedBy: () => undefined },
  endpoints: { ownedBy: () => undefined },
  accounts: { suspended: (owner: number) => suspended.has(owner) },
} as ScopeReader

const code = (fn: () => unknown): string | null => {
  try { fn(); return null } catch (e) { return e instanceof ApiError ? `${e.status} ${e.code}` : String(e) }
}

t.test('the visitor may place the storefront order and nothing a token family alone is admitted to', async (t) => {
  const v = admitVisitor(reader, stores.get(1)!)
  t.same(v, { kind: 'visitor', storeId: 1, ownerId: 10 })
  t.equal(code(() => authorize(v, createStorefrontOrder.access)), null, 'storefront.orders.create names the visitor')
  t.equal(code(() => authorize(v, getStorefrontMenu.access)), '403 forbidden', 'the storefront token\'s menu read does not')
  t.equal(code(() => authorize(v, { owner: 'orders:write', staff: 'orders', customer: true })), '403 forbidden')
})

t.test('the visitor acts at its own store only', async (t) => {
  const v = admitVisitor(reader, stores.get(1)!)
  t.equal(resolveScope(reader, v, ['store'], { store: 1 }).store?.id, 1)
  t.equal(resolveScope(reader, v, ['store'], {}).store?.id, 1, 'no id: its store')
  t.equal(code(() => resolveScope(reader, v, ['store'], { store: 2 })), '404 not_found', 'another store is not found')
})

t.test('a suspended account\'s website admits no visitor, and one admitted before is refused', async (t) => {
  const v = admitVisitor(reader, stores.get(2)!)
  suspended.add(20)
  t.teardown(() => suspended.delete(20))
  t.equal(code(() => admitVisitor(reader, stores.get(2)!)), '403 account_suspended')
  t.equal(code(() => resolveScope(reader, v, ['store'], { store: 2 })), '403 account_suspended', 'the policy refuses its scope')
})
