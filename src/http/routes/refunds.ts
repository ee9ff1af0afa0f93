/**
 * Refunds (issue 17 item 2; docs/operations.md "Refunds"): the owner names the store and order;
 * staff act on an order of their own store. Both bind the same operations (src/ops/money/refunds.ts).
 */
import { ownerAndStaff } from '../bind.ts'
import * as refunds from '../../ops/money/refunds.ts'

export const refundRoutes = ownerAndStaff([
  { op: refunds.listRefunds, method: 'GET', path: '/orders/{orderId}/refunds' },
  { op: refunds.createRefund, method: 'POST', path: '/orders/{orderId}/refunds' },
])
