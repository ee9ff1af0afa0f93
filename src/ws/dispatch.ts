/**
 * The owner's dispatch feed for one store: `{base_url}/ws/dispatch/{restaurantId}` (docs/realtime.md),
 * authenticated by an owner token holding `drivers:read` (header, or `?token=`). Another owner's
 * store is refused with 404, as over HTTP (api-v1 §1).
 *
 * First a `snapshot` (the drivers who may serve the store and its open deliveries), then `location`
 * frames of those drivers, `driver` frames (shift, connection) and `delivery` frames for every
 * change of the store's delivery orders.
 */
import type { TemplatedApp } from 'uWebSockets.js'
import type { Services } from '../services.ts'
import { mountOwnerStoreFeed, type OwnerStoreFeed } from './feed.ts'
import { dispatchDeliveryView, topics, type Realtime } from './realtime.ts'
import type { Access } from '../ops/op.ts'
import { authorize, resolveScope } from '../auth/policy.ts'

export const DISPATCH_CAPABILITY = 'drivers:read' as const
const DISPATCH_ACCESS: Access = { owner: DISPATCH_CAPABILITY }

/** The dispatch feed, as every node serves it. */
export const dispatchFeed: OwnerStoreFeed = {
  kind: 'dispatch', label: 'Dispatch', counter: 'dispatchSockets',
  // As for every HTTP operation that needs `drivers:read`.
  admission: (svc) => (p, ids) => { authorize(p, DISPATCH_ACCESS); return resolveScope(svc, p, ['store'], ids) },
  topics: ({ storeId, ownerId }) => [topics.dispatch(storeId), topics.fleet(ownerId)],
  snapshot: (svc, { storeId, ownerId }, connected) => {
    const drivers = svc.drivers.fleetFor(ownerId, storeId).map((d) => ({
      id: d.id, name: d.name, restaurant_id: d.restaurant_id, on_shift: d.on_shift === 1, connected: connected(d.id),
      location: d.lat == null || d.lng == null ? null : { lat: d.lat, lng: d.lng, location_updated_at: d.location_updated_at },
    }))
    return { type: 'snapshot', restaurant_id: storeId, drivers, deliveries: svc.drivers.activeForStore(storeId).map(dispatchDeliveryView) }
  },
}

export function mountDispatchSocket(app: TemplatedApp, svc: Services, rt: Realtime): void {
  mountOwnerStoreFeed(app, svc, rt, dispatchFeed)
}
