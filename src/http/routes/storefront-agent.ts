/**
 * The storefront agent's extra routes (issue 12 item 4; docs/mcp-storefront.md "Over HTTP"):
 * bindings of src/ops/web/storefront-agent.ts, the same operations the storefront MCP server's tools bind.
 */
import { bind } from '../bind.ts'
import * as agent from '../../ops/web/storefront-agent.ts'

export const storefrontAgentRoutes = [
  bind(agent.getStoreInfo, { method: 'GET', path: '/storefront/info', auth: 'storefront' }),
  bind(agent.getOpeningHours, { method: 'GET', path: '/storefront/hours', auth: 'storefront' }),
  bind(agent.listFulfillmentModes, { method: 'GET', path: '/storefront/fulfillment-modes', auth: 'storefront' }),
  bind(agent.listStorefrontCategories, { method: 'GET', path: '/storefront/categories', auth: 'storefront' }),
  // A JSON body: the filters are numbers, lists and booleans.
  bind(agent.searchStorefrontMenu, { method: 'POST', path: '/storefront/menu/search', auth: 'storefront' }),
  bind(agent.getStorefrontItem, { method: 'GET', path: '/storefront/items/{itemId}', auth: 'storefront', params: { itemId: 'item_id' } }),
  bind(agent.priceStorefrontCart, { method: 'POST', path: '/storefront/cart/price', auth: 'storefront' }),
  bind(agent.checkStorefrontCoupon, { method: 'POST', path: '/storefront/cart/coupon', auth: 'storefront' }),
  bind(agent.getStorefrontOrder, { method: 'GET', path: '/storefront/orders/{trackToken}', auth: 'storefront', params: { trackToken: 'track_token' } }),
  bind(agent.trackStorefrontOrder, { method: 'GET', path: '/storefront/orders/{trackToken}/status', auth: 'storefront', params: { trackToken: 'track_token' } }),
]
