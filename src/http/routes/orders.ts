/** Owner orders (api-v1 §4.2): bindings of the order operations (src/ops/orders/orders.ts). */
import { bind } from '../bind.ts'
import * as orders from '../../ops/orders/orders.ts'

const store = { store: 'id' } as const
const order = { store: 'id', order: 'orderId' } as const

/** The request header that makes a create-order safe to retry (api-v1 §2.4); the pipeline hands it to the op. */
export const IDEMPOTENCY_HEADER = { name: 'Idempotency-Key', description: 'Makes the request safe to retry (same key + same body → the original order).' }

export const orderRoutes = [
  bind(orders.listOrders, { method: 'GET', path: '/restaurants/{id}/orders', auth: 'owner', ids: store }),
  bind(orders.getOrder, { method: 'GET', path: '/restaurants/{id}/orders/{orderId}', auth: 'owner', ids: order }),
  bind(orders.createOrder, { method: 'POST', path: '/restaurants/{id}/orders', auth: 'owner', ids: store, headers: [IDEMPOTENCY_HEADER] }),
  bind(orders.setOrderStatus, { method: 'PUT', path: '/restaurants/{id}/orders/{orderId}/status', auth: 'owner', ids: order }),
]
