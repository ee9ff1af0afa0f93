/**
 * The customer MCP server at `{site_url}/mcp/customer` (api-v1 §4.11, issue 12 item 5;
 * docs/mcp-customer.md): an agent acting for one signed-in customer, with their customer token.
 * Identity comes only from the token: no tool takes a phone or a customer id, and another
 * customer's order is `not_found`. Every tool binds an operation.
 */
import { getProfile } from '../../ops/customers/customers.ts'
import * as agent from '../../ops/customers/customer-agent.ts'
import { tool, type McpServerDef } from '../tool.ts'

export const customerServer: McpServerDef = {
  path: '/mcp/customer',
  name: 'customer',
  title: 'Customer assistant',
  instructions: [
    'You act for one customer of one store: the owner of the customer token. No tool takes a customer id or phone.',
    'my_orders lists their latest orders; order_detail and track_order follow one (by order_id, or track_token for track_order).',
    'reorder rebuilds a past order as a cart priced today, leaving out sold-out or removed items and saying which: nothing is ordered.',
    'Failures come back as results with isError and the API error envelope: `code` and the finer `reason` (not_found for any order that is not theirs).',
  ].join(' '),
  auth: 'customer',
  tools: [
    tool(agent.listRecentCustomerOrders, {
      name: 'my_orders', readOnly: true,
      inputSchema: { type: 'object', properties: { limit: { type: 'integer', minimum: 1, maximum: 50, description: 'How many of the latest orders (10 by default).' } } },
    }),
    tool(agent.getCustomerOrder, { name: 'order_detail', ids: { order: 'order_id' }, readOnly: true }),
    tool(agent.trackCustomerOrder, {
      name: 'track_order', readOnly: true,
      inputSchema: { type: 'object', properties: {
        order_id: { type: 'integer', minimum: 1, description: 'One of your orders.' },
        track_token: { type: 'string', description: 'The track token of one of your orders.' },
      } },
    }),
    tool(agent.reorderCustomerOrder, { name: 'reorder', ids: { order: 'order_id' }, readOnly: true }),
    tool(getProfile, { name: 'my_profile', readOnly: true }),
    tool(agent.listCustomerBookings, { name: 'my_bookings', readOnly: true }),
  ],
}
