/**
 * Public operations (api-v1 §4.4): no credential. The menu without sold-out items, and tracking
 * by the order's unguessable token (the token is the capability; an unknown one is a 404).
 */
import { VEHICLE_FILTER_DOC, VehicleQuerySchema, vehicleMenuView } from '../menu/fitments.ts'
import * as v from 'valibot'
import { defineOp } from '../op.ts'
import { MenuSchema, TrackingSchema } from '../schemas/named.ts'
import { notFound } from '../../errors.ts'
import { storeUnavailable } from '../../auth/suspension.ts'
import type { Services } from '../../services.ts'
import type { OrderRow } from '../../storage/orders.ts'
import { trackingView } from '../../storage/tracking.ts'

/** What every tracking door shows of an order (this route, the `/t/` page, the tracking socket's frames). */
export { trackingView }

const tag = 'Public'

export const getPublicMenu = defineOp({
  id: 'public.menu.get', tag, summary: 'A store\'s active menu (sold-out items excluded)', access: { public: true }, scope: ['store'],
  description: VEHICLE_FILTER_DOC,
  input: VehicleQuerySchema, output: MenuSchema,
  run: (ctx, input) => vehicleMenuView(ctx, input, false),
})

export const trackOrder = defineOp({
  id: 'public.track.get', tag, summary: 'Track an order by its unguessable token', access: { public: true }, scope: [],
  input: v.object({ token: v.string() }), output: TrackingSchema,
  run: (ctx, { token }) => {
    return trackingView(ctx.svc, trackedOrder(ctx.svc, token))
  },
})

/**
 * The order behind a tracking token, for every tracking door (this route, the `/t/` page, the
 * tracking socket): unknown → 404; a suspended account's store → 403 `account_suspended`, "this
 * store is unavailable", like its other public pages (docs/billing.md "Suspension").
 */
export function trackedOrder(svc: Pick<Services, 'orders' | 'stores' | 'accounts'>, token: string | undefined): OrderRow {
  const o = token ? svc.orders.rowByTrackToken(token) : undefined
  if (!o) throw notFound('order')
  const store = svc.stores.byId(o.store_id)
  if (store && svc.accounts.suspended(store.owner_id)) throw storeUnavailable()
  return o
}

export const publicOps = [getPublicMenu, trackOrder]
