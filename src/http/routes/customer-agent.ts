/**
 * The customer agent's extra routes (issue 12 item 5; docs/mcp-customer.md "Over HTTP"): bindings
 * of src/ops/customers/customer-agent.ts, the same operations the customer MCP server's tools bind.
 */
import { bind } from '../bind.ts'
import * as agent from '../../ops/customers/customer-agent.ts'

export const customerAgentRoutes = [
  bind(agent.listRecentCustomerOrders, { method: 'GET', path: '/customer/orders/recent', auth: 'customer' }),
  bind(agent.trackCustomerOrder, { method: 'GET', path: '/customer/orders/track', auth: 'customer' }),
  bind(agent.getCustomerOrder, { method: 'GET', path: '/customer/orders/{orderId}', auth: 'customer', ids: { order: 'orderId' } }),
  bind(agent.reorderCustomerOrder, { method: 'GET', path: '/customer/orders/{orderId}/reorder', auth: 'customer', ids: { order: 'orderId' } }),
  bind(agent.listCustomerBookings, { method: 'GET', path: '/customer/bookings', auth: 'customer' }),
]
