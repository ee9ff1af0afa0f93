/** Public routes (api-v1 §4.4): the menu without sold-out items, and tracking by token. */
import { route } from '../route.ts'
import { MenuSchema, TrackingSchema } from '../docs-schemas.ts'
import { notFound } from '../../errors.ts'
import { menuView } from '../../storage/stores.ts'
import { verticalOf } from '../../domain/verticals.ts'
import { driverVisible, type DeliveryStatus } from '../../domain/order-state.ts'
import { fromCents } from '../../domain/money.ts'
import type { Services } from '../../services.ts'
import type { OrderRow } from '../../storage/orders.ts'

/** The public tracking view (api-v1 §2.5); the driver appears only while picked up or out for delivery. */
export function trackingView(svc: Services, o: OrderRow) {
  const view: Record<string, unknown> = {
    id: o.id,
    status: o.status,
    delivery_status: o.delivery_status,
    is_paid: o.is_paid === 1,
    total: fromCents(o.total),
    timeline: JSON.parse(o.timeline) as Record<string, string>,
    items: svc.orders.lines(o.id).map((l) => ({ name: l.name, quantity: l.quantity })),
  }
  if (o.driver_id != null && driverVisible(o.delivery_status as DeliveryStatus | null)) {
    const d = svc.db.prepare<[number], { name: string; lat: number | null; lng: number | null; location_updated_at: string | null }>(
      'SELECT name, lat, lng, location_updated_at FROM drivers WHERE id = ?',
    ).get(o.driver_id)
    if (d) view.driver = d
  }
  return view
}

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
