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
import { guarded } from './guard.ts'
import { feedMessages, ownerStoreUpgrade, type OwnerStoreSocket } from './feed.ts'
import { SLOW_CONSUMER_BYTES } from './hub.ts'
import { topics, type Realtime } from './realtime.ts'
import { localDay, timeZoneOf } from '../domain/business-hours.ts'
import { parseSettings } from '../storage/stores.ts'
import type { OrdersSnapshotFrame } from './order-frames.ts'

type OrdersSocket = OwnerStoreSocket

const ORDERS_ACCESS: Access = { owner: 'orders:read' }
/** A board shows a day's service; a busier day is paged over HTTP (`GET …/orders?from=&to=`). */
export const BOARD_SNAPSHOT_MAX = 200

export function mountOrdersSocket(app: TemplatedApp, svc: Services, rt: Realtime): void {
  const hub = rt.hub
  const snapshot = (ws: WebSocket<OrdersSocket>) => {
    const { storeId } = ws.getUserData()
    // Today as the store's staff see it: its local day in the store's time zone (docs/stores.md).
    const day = localDay(timeZoneOf(parseSettings(svc.stores.byId(storeId)?.settings)), new Date())
    const { data } = svc.orders.page(storeId, 1, BOARD_SNAPSHOT_MAX, { since: day.start, until: day.end })
    const frame: OrdersSnapshotFrame = { type: 'snapshot', restaurant_id: storeId, date: day.date, orders: data }
    hub.send(ws, frame)
  }

  app.ws<OrdersSocket>('/api/v1/ws/orders/:restaurantId', guarded('orders', svc, rt.sessions.track({
    maxMessageBytes: 1024,
    maxBackpressure: 4 * SLOW_CONSUMER_BYTES,
    closeOnBackpressureLimit: 0,
    // The policy decides, as for `GET /restaurants/{id}/orders` (src/ws/feed.ts).
    upgrade: ownerStoreUpgrade(svc, ORDERS_ACCESS),
    open: (ws) => {
      rt.orderSockets++ // first: `close` always runs, even when the rest of `open` fails
      hub.subscribe(ws, topics.orders(ws.getUserData().storeId))
      snapshot(ws)
    },
    message: feedMessages(hub, 'Orders', (ws) => snapshot(ws)),
    // Frames skipped while it was behind: a fresh snapshot puts the board right again.
    drain: (ws) => {
      if (ws.getBufferedAmount() <= SLOW_CONSUMER_BYTES) snapshot(ws)
    },
    close: () => {
      rt.orderSockets--
    },
  })))
}
