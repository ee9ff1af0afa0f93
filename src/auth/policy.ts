/**
 * Authorization and tenancy as functions (ARCHITECTURE "The shape" 2), shared by every front door:
 * the HTTP pipeline, WebSocket upgrades and MCP tools call these and nothing else decides who may
 * do what. Someone else's store or order is a 404, never a 403 (api-v1 §1), and it is resolved
 * before the input is validated, so a bad body sent to another owner's store still answers 404.
 */
import { ApiError, notFound } from '../errors.ts'
import { grants } from '../domain/capabilities.ts'
import type { Principal, VisitorPrincipal } from './principals.ts'
import { storeUnavailable } from './suspension.ts'
import type { Access, Scope, ScopeIds, ScopeNeed } from '../ops/op.ts'
import type { StoreRow } from '../storage/stores.ts'
import type { OrderRow } from '../storage/orders.ts'
import type { DriverRow } from '../storage/drivers.ts'
import type { EndpointRow } from '../storage/webhooks.ts'
import type { AppRow } from '../storage/apps.ts'
import type { ResellerQueries, ResellerRow } from '../storage/reseller.ts'

/** What resolving a scope reads; narrow so it can be faked in unit tests. */
export interface ScopeReader {
  stores: { byId(id: number): StoreRow | undefined; ownedBy(id: number, ownerId: number): StoreRow | undefined }
  orders: { rowInStore(orderId: number, storeId: number): OrderRow | undefined; row(orderId: number): OrderRow | undefined }
  drivers: { byId(id: number): DriverRow | undefined; ownedBy(id: number, ownerId: number): DriverRow | undefined }
  endpoints: { ownedBy(id: number, ownerId: number): EndpointRow | undefined }
  /** Suspended accounts (docs/billing.md "Suspension"); absent in unit tests that fake the reader. */
  accounts?: { suspended(ownerId: number): boolean }
  /** Reseller role and the accounts a reseller manages (src/storage/reseller.ts); absent in faked readers. */
  resellers?: ResellerQueries
  /** Developers' apps (src/storage/apps.ts); absent in faked readers. */
  apps?: { ownedBy(id: number, developerId: number): AppRow | undefined }
}

/** Ids that leave the server are positive integers; anything else cannot exist (api-v1 §7: 404). */
export const isIdString = (s: string): boolean => /^[1-9]\d{0,15}$/.test(s)

const parseId = (raw: string | number | undefined): number | null => {
  if (raw === undefined) return null
  const s = String(raw)
  return isIdString(s) ? Number(s) : NaN
}

/**
 * May `principal` call an operation with this access declaration? Throws 403 `forbidden` when the
 * family may call it but the token lacks the capability, permission or scope (api-v1 §5, §4.3,
 * §4.7), and 401 when no credential was presented to an operation that needs one.
 */
export function authorize(principal: Principal | null, access: Access): void {
  if (!principal) {
    if (access.public) return
    throw new ApiError('unauthenticated')
  }
  switch (principal.kind) {
    case 'owner':
      if (!access.owner) break
      // A third-party app's token also needs the granted scope the operation names (docs/apps.md "Calling the API").
      if (access.appScope && principal.app && !principal.app.scopes.includes(access.appScope)) throw new ApiError('forbidden', `This app token was not granted the ${access.appScope} scope.`)
      if (access.owner === 'any' || grants(principal.capabilities, access.owner)) return
      throw new ApiError('forbidden', `This token needs the ${access.owner} capability.`)
    case 'staff':
      if (!access.staff) break
      if (access.staff === 'any' || principal.permissions.includes(access.staff)) return
      throw new ApiError('forbidden', `This staff token needs the ${access.staff} permission.`)
    case 'storefront':
      if (!access.storefront) break
      if (principal.scopes.includes(access.storefront)) return
      throw new ApiError('forbidden', `This storefront token needs the ${access.storefront} scope.`)
    case 'customer':
      if (access.customer) return
      break
    case 'driver':
      if (access.driver) return
      break
    case 'shell':
      if (access.shell) return
      break
    case 'session':
      if (access.session) return
      break
    case 'visitor':
      if (access.visitor) return
      break
  }
  throw new ApiError('forbidden', `A ${principal.kind} token cannot do this.`)
}

/** The store a principal acts in: owners name it (and must own it); everyone else has exactly one. */
function resolveStore(reader: ScopeReader, principal: Principal | null, raw: string | number | undefined): StoreRow {
  const id = parseId(raw)
  let store: StoreRow | undefined
  if (!principal) store = id ? reader.stores.byId(id) : undefined
  // The owner's web session acts for the same account (the few operations whose access admits a
  // session: the dashboard's theme preview, which a frame loads without a bearer token).
  else if (principal.kind === 'owner' || principal.kind === 'session') store = id ? reader.stores.ownedBy(id, principal.ownerId) : undefined
  // Drivers and shell tokens name no store of their own.
  else if (principal.kind === 'driver' || !('storeId' in principal)) store = undefined
  else if (id === null || id === principal.storeId) store = reader.stores.byId(principal.storeId)
  if (!store) throw notFound('restaurant')
  // Public routes of a suspended account's store (menu, sign-ins) and its website's visitors say it
  // is unavailable; tokens of that account never get here (their authenticators refuse them first,
  // src/auth/suspension.ts).
  if ((!principal || principal.kind === 'visitor') && reader.accounts?.suspended(store.owner_id)) throw storeUnavailable()
  return store
}

/**
 * The visitor of a store's own website (src/auth/visitor.ts): the website's pages and forms act as
 * this principal. A suspended account's website admits no one: 403 `account_suspended` ("This store
 * is unavailable"), which the website answers as its own page.
 */
export function admitVisitor(reader: ScopeReader, store: StoreRow): VisitorPrincipal {
  if (reader.accounts?.suspended(store.owner_id)) throw storeUnavailable()
  return { kind: 'visitor', storeId: store.id, ownerId: store.owner_id }
}

function resolveOrder(reader: ScopeReader, principal: Principal | null, store: StoreRow, raw: string | number | undefined): OrderRow {
  const id = parseId(raw)
  const row = id ? reader.orders.rowInStore(id, store.id) : undefined
  // A customer sees only their own orders (api-v1 §4.5: identity comes only from the token).
  if (!row || (principal?.kind === 'customer' && row.customer_id !== principal.customerId)) throw notFound('order')
  return row
}

/** A driver reaches only the orders assigned to it (api-v1 §4.6): any other reads as none. */
function resolveDelivery(reader: ScopeReader, driverId: number, raw: string | number | undefined): OrderRow {
  const id = parseId(raw)
  const row = id ? reader.orders.row(id) : undefined
  if (!row || row.driver_id !== driverId) throw notFound('delivery')
  return row
}

/** Owners name one of their drivers (another owner's is a 404); a driver token is its own driver. */
function resolveDriver(reader: ScopeReader, principal: Principal | null, raw: string | number | undefined): DriverRow {
  const id = parseId(raw)
  let driver: DriverRow | undefined
  if (principal?.kind === 'owner') driver = id ? reader.drivers.ownedBy(id, principal.ownerId) : undefined
  else if (principal?.kind === 'driver' && (id === null || id === principal.driverId)) driver = reader.drivers.byId(principal.driverId)
  if (!driver) throw notFound('driver')
  return driver
}

/** Webhook endpoints belong to an owner account (api-v1 §6): anyone else's is a 404. */
function resolveEndpoint(reader: ScopeReader, principal: Principal | null, raw: string | number | undefined): EndpointRow {
  const id = parseId(raw)
  const endpoint = principal?.kind === 'owner' && id ? reader.endpoints.ownedBy(id, principal.ownerId) : undefined
  if (!endpoint) throw notFound('webhook endpoint')
  return endpoint
}

/** A third-party app belongs to its developer's account (docs/apps.md): anyone else's is a 404. */
function resolveApp(reader: ScopeReader, principal: Principal | null, raw: string | number | undefined): AppRow {
  const id = parseId(raw)
  const app = principal?.kind === 'owner' && id ? reader.apps?.ownedBy(id, principal.ownerId) : undefined
  if (!app) throw notFound('app')
  return app
}

/**
 * The reseller area (api-v1 §4.8) is open to owner tokens of reseller accounts only: any other
 * account gets 403 `forbidden` (it is not someone else's resource, it is a role the account lacks).
 */
function resolveReseller(reader: ScopeReader, principal: Principal | null): ResellerRow {
  const row = principal?.kind === 'owner' ? reader.resellers?.reseller(principal.ownerId) : undefined
  if (!row) throw new ApiError('forbidden', 'Only reseller accounts can use the reseller area.')
  return row
}

/** A reseller reaches only the accounts it manages and their subscriptions: anything else is a 404. */
function resolveManaged<T>(reseller: ResellerRow, raw: string | number | undefined, find: (id: number, resellerId: number) => T | undefined, what: string): T {
  const id = parseId(raw)
  const row = id ? find(id, reseller.id) : undefined
  if (!row) throw notFound(what)
  return row
}

/** Resolve what an operation needs, in order; the first miss is a 404 `not_found`. */
export function resolveScope(reader: ScopeReader, principal: Principal | null, needs: readonly ScopeNeed[], ids: ScopeIds): Scope {
  const scope: Scope = {}
  for (const need of needs) {
    if (need === 'store') scope.store = resolveStore(reader, principal, ids.store)
    else if (need === 'order' && principal?.kind === 'driver') scope.order = resolveDelivery(reader, principal.driverId, ids.order)
    else if (need === 'order') scope.order = resolveOrder(reader, principal, scope.store ?? resolveStore(reader, principal, ids.store), ids.order)
    else if (need === 'driver') scope.driver = resolveDriver(reader, principal, ids.driver)
    else if (need === 'endpoint') scope.endpoint = resolveEndpoint(reader, principal, ids.endpoint)
    else if (need === 'app') scope.app = resolveApp(reader, principal, ids.app)
    else if (need === 'reseller') scope.reseller = resolveReseller(reader, principal)
    else if (need === 'account') scope.account = resolveManaged(scope.reseller ?? resolveReseller(reader, principal), ids.account, (id, r) => reader.resellers?.account(id, r), 'customer')
    else if (need === 'subscription') scope.subscription = resolveManaged(scope.reseller ?? resolveReseller(reader, principal), ids.subscription, (id, r) => reader.resellers?.subscription(id, r), 'subscription')
  }
  return scope
}
