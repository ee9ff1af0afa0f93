/** Reading what the policy resolved: an operation that declared a scope always finds it here. */
import { ApiError } from '../errors.ts'
import type { OpCtx } from './op.ts'
import type { StoreRow } from '../storage/stores.ts'
import type { OrderRow } from '../storage/orders.ts'

/** The store the policy resolved; a missing one is a declaration bug (scope not listed), not a 404. */
export function storeOf(ctx: OpCtx): StoreRow {
  if (!ctx.scope.store) throw new ApiError('internal_error', 'Operation ran without its store scope.')
  return ctx.scope.store
}

export function orderOf(ctx: OpCtx): OrderRow {
  if (!ctx.scope.order) throw new ApiError('internal_error', 'Operation ran without its order scope.')
  return ctx.scope.order
}
