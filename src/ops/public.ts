/**
 * Public operations (api-v1 §4.4): no credential. The menu without sold-out items, and tracking
 * by the order's unguessable token (the token is the capability; an unknown one is a 404).
 */
import * as v from 'valibot'
import { defineOp } from './op.ts'
import { storeOf } from './scope.ts'
import { MenuSchema, TrackingSchema } from './docs-schemas.ts'
import { notFound } from '../errors.ts'
import { menuView } from '../storage/stores.ts'
import { trackingView } from '../storage/tracking.ts'
import { verticalOf } from '../domain/verticals.ts'

const tag = 'Public'

export const getPublicMenu = defineOp({
  id: 'public.menu.get', tag, summary: 'A store\'s active menu (sold-out items excluded)', access: { public: true }, scope: ['store'],
  output: MenuSchema,
  run: (ctx) => {
    const store = storeOf(ctx)
    return menuView(ctx.svc.stores.menu(store.id), verticalOf(store.store_type), false)
  },
})

export const trackOrder = defineOp({
  id: 'public.track.get', tag, summary: 'Track an order by its unguessable token', access: { public: true }, scope: [],
  input: v.object({ token: v.string() }), output: TrackingSchema,
  run: (ctx, { token }) => {
    const o = token ? ctx.svc.orders.rowByTrackToken(token) : undefined
    if (!o) throw notFound('order')
    return trackingView(ctx.svc, o)
  },
})

export const publicOps = [getPublicMenu, trackOrder]
