/** Public routes (api-v1 §4.4): the menu without sold-out items, and tracking by token. */
import { route } from '../route.ts'
import { MenuSchema, TrackingSchema } from '../docs-schemas.ts'
import { notFound } from '../../errors.ts'
import { menuView } from '../../storage/stores.ts'
import { verticalOf } from '../../domain/verticals.ts'
import { trackingView } from '../../storage/tracking.ts'

/** The public tracking view (api-v1 §2.5); built in storage/tracking.ts, shared with the tracking socket and page. */
export { trackingView }

export const publicRoutes = [
  route({
    method: 'GET', path: '/menu/{restaurantId}', tag: 'Public', summary: 'A store\'s active menu (sold-out items excluded)', auth: 'none',
    response: MenuSchema,
    handler: ({ svc, params }) => {
      const store = svc.stores.byId(Number(params.restaurantId))
      if (!store) throw notFound('restaurant')
      return menuView(svc.stores.menu(store.id), verticalOf(store.store_type), false)
    },
  }),
  route({
    method: 'GET', path: '/track/{token}', tag: 'Public', summary: 'Track an order by its unguessable token', auth: 'none', response: TrackingSchema,
    handler: ({ svc, params }) => {
      const o = params.token ? svc.orders.rowByTrackToken(params.token) : undefined
      if (!o) throw notFound('order')
      return trackingView(svc, o)
    },
  }),
]
