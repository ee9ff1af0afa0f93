/** The route table: every HTTP route of the server, in one list. */
import type { Route } from '../route.ts'
import { discoveryRoutes } from './discovery.ts'
import { meRoutes } from './me.ts'
import { restaurantRoutes } from './restaurants.ts'
import { menuRoutes } from './menu.ts'
import { orderRoutes } from './orders.ts'
import { analyticsRoutes } from './analytics.ts'
import { publicRoutes } from './public.ts'
import { pageRoutes } from './pages.ts'

export function allRoutes(): Route[] {
  const routes: Route[] = []
  routes.push(
    ...(discoveryRoutes(() => routes) as Route[]),
    ...(meRoutes as Route[]),
    ...(restaurantRoutes as Route[]),
    ...(menuRoutes as Route[]),
    ...(orderRoutes as Route[]),
    ...(analyticsRoutes as Route[]),
    ...(publicRoutes as Route[]),
    ...(pageRoutes(() => routes) as Route[]),
  )
  return routes
}
