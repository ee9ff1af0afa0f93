/** Public routes (api-v1 §4.4): bindings of the public operations (src/ops/web/public.ts). */
import { bind } from '../bind.ts'
import * as pub from '../../ops/web/public.ts'

export const publicRoutes = [
  bind(pub.getPublicMenu, { method: 'GET', path: '/menu/{restaurantId}', auth: 'none', ids: { store: 'restaurantId' } }),
  bind(pub.trackOrder, { method: 'GET', path: '/track/{token}', auth: 'none', params: { token: 'token' } }),
]
