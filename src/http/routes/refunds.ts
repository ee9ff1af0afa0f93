/**
 * Refunds (issue 17 item 2; docs/operations.md "Refunds"): the owner names the store and order;
 * staff act on an order of their own store. Both bind the same operations (src/ops/money/refunds.ts).
 */
import { bind } from '../bind.ts'
import * as refunds from '../../ops/money/refunds.ts'

const owner = { store: 'id', order: 'orderId' } as const
const staff = { order: 'orderId' } as const

export const refundRoutes = [
  bind(refunds.listRefunds, { method: 'GET', path: '/restaurants/{id}/orders/{orderId}/refunds', auth: 'owner', ids: owner }),
  bind(refunds.createRefund, { method: 'POST', path: '/restaurants/{id}/orders/{orderId}/refunds', auth: 'owner', ids: owner }),
  bind(refunds.listRefunds, { method: 'GET', path: '/staff/orders/{orderId}/refunds', auth: 'staff', ids: staff }),
  bind(refunds.createRefund, { method: 'POST', path: '/staff/orders/{orderId}/refunds', auth: 'staff', ids: staff }),
]
