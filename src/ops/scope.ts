/** Reading what the policy resolved: an operation that declared a scope always finds it here. */
import { ApiError } from '../errors.ts'
import type { OpCtx } from './op.ts'
import type { StoreRow } from '../storage/stores.ts'
import type { OrderRow } from '../storage/orders.ts'
import type { DriverRow } from '../storage/drivers.ts'

/** The store the policy resolved; a missing one is a declaration bug (scope not listed), not a 404. */
export function storeOf(ctx: OpCtx): StoreRow {
  if (!ctx.scope.store) throw new ApiError('internal_error', 'Operation ran without its store scope.')
  return ctx.scope.store
}

export function orderOf(ctx: OpCtx): OrderRow {
  if (!ctx.scope.order) throw new ApiError('internal_error', 'Operation ran without its order scope.')
  return ctx.scope.order
}

type PrincipalOf<K extends string> = Extract<import('../auth/principals.ts').Principal, { kind: K }>
const principalOf = <K extends import('../auth/principals.ts').Principal['kind']>(ctx: OpCtx, kind: K): PrincipalOf<K> => {
  // The access declaration admits the family; another one here is a declaration bug, not a 403.
  if (ctx.principal?.kind !== kind) throw new ApiError('internal_error', `Operation needs a ${kind} principal.`)
  return ctx.principal as PrincipalOf<K>
}
/** The owner calling an owner-only operation. */
export const ownerOf = (ctx: OpCtx) => principalOf(ctx, 'owner')
/** The customer calling a customer-only operation (identity only from the token, api-v1 §4.5). */
export const customerOf = (ctx: OpCtx) => principalOf(ctx, 'customer')
/** The storefront token calling a storefront-only operation. */
export const storefrontOf = (ctx: OpCtx) => principalOf(ctx, 'storefront')
/** The driver calling a driver-app operation (identity only from the token, api-v1 §4.6). */
export const driverOf = (ctx: OpCtx) => principalOf(ctx, 'driver')
/** The staff member calling a staff-only operation (their store is the one the policy resolved). */
export const staffOf = (ctx: OpCtx) => principalOf(ctx, 'staff')

/** The driver the policy resolved for an owner (`scope: ['driver']`). */
export function scopedDriverOf(ctx: OpCtx): DriverRow {
  if (!ctx.scope.driver) throw new ApiError('internal_error', 'Operation ran without its driver scope.')
  return ctx.scope.driver
}
