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
import type { TemplatedApp } from 'uWebSockets.js'
import type { Services } from '../services.ts'
import { mountOwnerStoreFeed, type OwnerStoreFeed } from './feed.ts'
import { topics, type Realtime } from './realtime.ts'
import { admit } from '../ops/invoke.ts'
import { boardToday, ordersBoardAdmission } from '../ops/orders/orders.ts'
import type { OrdersSnapshotFrame } from './order-frames.ts'

export { BOARD_SNAPSHOT_MAX } from '../ops/orders/orders.ts'

/** The orders board feed, as every node serves it. */
export const ordersFeed: OwnerStoreFeed = {
  kind: 'orders', label: 'Orders', counter: 'orderSockets',
  // As for `GET /restaurants/{id}/orders` (src/ops/orders/orders.ts).
  admission: (svc) => (p, ids) => admit(ordersBoardAdmission, svc, p, ids),
  topics: ({ storeId }) => [topics.orders(storeId)],
  snapshot: (svc, { storeId }): OrdersSnapshotFrame => {
    const { date, orders } = boardToday(svc, storeId)
    return { type: 'snapshot', restaurant_id: storeId, date, orders }
  },
}

export function mountOrdersSocket(app: TemplatedApp, svc: Services, rt: Realtime): void {
  mountOwnerStoreFeed(app, svc, rt, ordersFeed)
}
