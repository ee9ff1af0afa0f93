/**
 * Public operations (api-v1 §4.4): no credential. The menu without sold-out items, and tracking
 * by the order's unguessable token (the token is the capability; an unknown one is a 404).
 */
import { VehicleQuerySchema, menuForVehicle } from './fitments.ts'
import * as v from 'valibot'
import { defineOp } from './op.ts'
import { storeOf } from './scope.ts'
import { MenuSchema, TrackingSchema } from './docs-schemas.ts'
import { notFound } from '../errors.ts'
import { storeUnavailable } from '../auth/suspension.ts'
import type { Services } from '../services.ts'
import type { OrderRow } from '../storage/orders.ts'
import { menuView } from '../storage/stores.ts'
import { trackingView } from '../storage/tracking.ts'
import { verticalOf } from '../domain/verticals.ts'

const tag = 'Public'

export const getPublicMenu = defineOp({
  id: 'public.menu.get', tag, summary: 'A store\'s active menu (sold-out items excluded)', access: { public: true }, scope: ['store'],
  description: 'Car parts stores: `?make=&model=&year=&engine=` keeps only the items fitting that vehicle, plus universal ones (docs/verticals.md "Fitments").',
  input: VehicleQuerySchema, output: MenuSchema,
  run: (ctx, input) => {
    const store = storeOf(ctx)
    return menuView(menuForVehicle(ctx.svc, store, input), verticalOf(store.store_type), false, ctx.svc.config.siteUrl)
  },
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
