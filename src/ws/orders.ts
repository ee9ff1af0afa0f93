/**
 * The owner's orders board feed for one store: `{base_url}/ws/orders/{restaurantId}` (docs/realtime.md
 * "Orders feed", docs/dashboard.md "Orders"), authenticated by an owner token holding `orders:read`
 * (header, or `?token=` from a browser). Another owner's store is refused with 404, as over HTTP.
 *
 * First a `snapshot` of today's orders (the store's local day, newest first, at most 200, each the full order as
 * `GET /restaurants/{id}/orders/{orderId}` answers), then an `order` frame with the full order after
 * every durable change of one of the store's orders: a new order, a kitchen or delivery status, an
 * assignment. In: `{"type":"ping"}`, `{"type":"refresh"}` (a new snapshot).
 */
import type { TemplatedApp, WebSocket } from 'uWebSockets.js'
import type { Services } from '../services.ts'
import type { Access } from '../ops/op.ts'
import { mountOwnerStoreFeed, type OwnerStoreSocket } from './feed.ts'
import { topics, type Realtime } from './realtime.ts'
import { localDay, timeZoneOf } from '../domain/business-hours.ts'
import { parseSettings } from '../storage/stores.ts'
import type { OrdersSnapshotFrame } from './order-frames.ts'

const ORDERS_ACCESS: Access = { owner: 'orders:read' }
/** A board shows a day's service; a busier day is paged over HTTP (`GET …/orders?from=&to=`). */
export const BOARD_SNAPSHOT_MAX = 200

export function mountOrdersSocket(app: TemplatedApp, svc: Services, rt: Realtime): void {
  const hub = rt.hub
  const snapshot = (ws: WebSocket<OwnerStoreSocket>) => {
    const { storeId } = ws.getUserData()
    // Today as the store's staff see it: its local day in the store's time zone (docs/stores.md).
    const day = localDay(timeZoneOf(parseSettings(svc.stores.byId(storeId)?.settings)), new Date())
    const { data } = svc.orders.page(storeId, 1, BOARD_SNAPSHOT_MAX, { since: day.start, until: day.end })
    const frame: OrdersSnapshotFrame = { type: 'snapshot', restaurant_id: storeId, date: day.date, orders: data }
    hub.send(ws, frame)
  }

  mountOwnerStoreFeed(app, svc, rt, {
    kind: 'orders', label: 'Orders', access: ORDERS_ACCESS, counter: 'orderSockets',
    topics: ({ storeId }) => [topics.orders(storeId)],
    snapshot,
  })
}
