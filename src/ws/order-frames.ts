/**
 * The frames of the owner's orders board socket `{base_url}/ws/orders/{restaurantId}` (src/ws/orders.ts,
 * docs/realtime.md "Orders feed"), as the server builds them and the dashboard's orders board reads
 * them (src/browser/dashboard/app.ts, a type-only import): each order is the order view of
 * `GET /restaurants/{id}/orders/{orderId}`, so a renamed field fails the type check of both.
 */
import type { OrderView } from '../storage/orders.ts'

export type { OrderView }

export interface OrdersSnapshotFrame { type: 'snapshot'; restaurant_id: number; date: string; orders: OrderView[] }
export interface OrdersOrderFrame { type: 'order'; order: OrderView }
export type OrdersFeedFrame = OrdersSnapshotFrame | OrdersOrderFrame
