/**
 * The owner's dispatch feed for one store: `{base_url}/ws/dispatch/{restaurantId}` (docs/realtime.md),
 * authenticated by an owner token holding `drivers:read` (header, or `?token=`). Another owner's
 * store is refused with 404, as over HTTP (api-v1 §1).
 *
 * First a `snapshot` (the drivers who may serve the store and its open deliveries), then `location`
 * frames of those drivers, `driver` frames (shift, connection) and `delivery` frames for every
 * change of the store's delivery orders.
 */
import type { TemplatedApp, WebSocket } from 'uWebSockets.js'
import type { Services } from '../services.ts'
import { guarded } from './guard.ts'
import { feedMessages, ownerStoreUpgrade, type OwnerStoreSocket } from './feed.ts'
import { SLOW_CONSUMER_BYTES } from './hub.ts'
import { dispatchDeliveryView, topics, type Realtime } from './realtime.ts'
import type { Access } from '../ops/op.ts'

type DispatchSocket = OwnerStoreSocket

export const DISPATCH_CAPABILITY = 'drivers:read' as const
const DISPATCH_ACCESS: Access = { owner: DISPATCH_CAPABILITY }

export function mountDispatchSocket(app: TemplatedApp, svc: Services, rt: Realtime): void {
  const hub = rt.hub
  const snapshot = (ws: WebSocket<DispatchSocket>) => {
    const { storeId, ownerId } = ws.getUserData()
    const drivers = svc.drivers.fleetFor(ownerId, storeId).map((d) => ({
      id: d.id, name: d.name, restaurant_id: d.restaurant_id, on_shift: d.on_shift === 1, connected: rt.connections(d.id) > 0,
      location: d.lat == null || d.lng == null ? null : { lat: d.lat, lng: d.lng, location_updated_at: d.location_updated_at },
    }))
    hub.send(ws, { type: 'snapshot', restaurant_id: storeId, drivers, deliveries: svc.drivers.activeForStore(storeId).map(dispatchDeliveryView) })
  }

  app.ws<DispatchSocket>('/api/v1/ws/dispatch/:restaurantId', guarded('dispatch', svc, rt.sessions.track({
    maxMessageBytes: 1024,
    // A dispatcher watches many drivers: allow a deeper queue before skipping, then resync.
    maxBackpressure: 4 * SLOW_CONSUMER_BYTES,
    closeOnBackpressureLimit: 0,
    // The policy decides, as for every HTTP operation that needs `drivers:read` (src/ws/feed.ts).
    upgrade: ownerStoreUpgrade(svc, DISPATCH_ACCESS),
    open: (ws) => {
      const { storeId, ownerId } = ws.getUserData()
      rt.dispatchSockets++ // first: `close` always runs, even when the rest of `open` fails
      hub.subscribe(ws, topics.dispatch(storeId))
      hub.subscribe(ws, topics.fleet(ownerId))
      snapshot(ws)
    },
    message: feedMessages(hub, 'Dispatch', (ws) => snapshot(ws)),
    drain: (ws) => {
      if (ws.getBufferedAmount() <= SLOW_CONSUMER_BYTES) snapshot(ws)
    },
    close: () => {
      rt.dispatchSockets--
    },
  })))
}
