/**
 * The storefront MCP server at `{site_url}/mcp/storefront` (api-v1 §4.11, issue 12 item 4;
 * docs/mcp-storefront.md): an agent ordering on a diner's behalf at the store of its
 * `X-Storefront-Token`. The token needs the `agent` scope to come in at all; each tool then needs
 * the scope of its operation (`menu:read` to browse and price, `order:write` to place and follow
 * orders), so a token without `order:write` sees no order tools. Every tool binds an operation.
 */
import { storefrontAdmission } from '../../ops/apps/mcp-admission.ts'
import * as storefront from '../../ops/web/storefront.ts'
import * as agent from '../../ops/web/storefront-agent.ts'
import { tool, type McpServerDef } from '../tool.ts'
import { startingWith } from '../resources.ts'

type MenuView = Array<{ items: Array<{ id: number }> }>

export const storefrontServer: McpServerDef = {
  path: '/mcp/storefront',
  name: 'storefront',
  title: 'Store ordering agent',
  instructions: [
    'You order for a diner at one store: the store of your storefront token. No tool takes a store id.',
    'Start with get_store_info (open now, how to order), browse with list_categories, search_menu or get_menu, and read get_item for variations and extras.',
    'Build the cart with price_cart (and apply_coupon to check a code): prices are always the server\'s; what you send as a price is ignored.',
    'place_order creates an unpaid takeaway or on-table order (at most 40 items, 30 per line) and answers its track_token and continue_url: give the diner the continue_url, and follow the order with track_order.',
    'Failures come back as results with isError and the API error envelope: `code` (validation_failed with field errors, not_found) and the finer `reason` (store_closed, out_of_stock, …).',
  ].join(' '),
  auth: 'storefront',
  // The storefront API's tokens do not reach agents unless the owner issued them for it (docs/storefront.md "Tokens").
  admission: storefrontAdmission,
  tools: [
    tool(agent.getStoreInfo, { name: 'get_store_info', readOnly: true }),
    tool(agent.getOpeningHours, { name: 'get_opening_hours', readOnly: true }),
    tool(agent.listFulfillmentModes, { name: 'list_fulfillment_modes', readOnly: true }),
    tool(storefront.getStorefrontMenu, { name: 'get_menu', readOnly: true }),
    tool(agent.listStorefrontCategories, { name: 'list_categories', readOnly: true }),
    tool(agent.searchStorefrontMenu, { name: 'search_menu', readOnly: true }),
    tool(agent.getStorefrontItem, { name: 'get_item', readOnly: true }),
    tool(agent.priceStorefrontCart, { name: 'price_cart', readOnly: true }),
    tool(agent.checkStorefrontCoupon, { name: 'apply_coupon', readOnly: true }),
    tool(storefront.createStorefrontOrder, {
      name: 'place_order',
      description: `${storefront.createStorefrontOrder.summary}. ${storefront.createStorefrontOrder.description} Send the same \`client_uuid\` again to retry safely.`,
    }),
    tool(agent.trackStorefrontOrder, { name: 'track_order', readOnly: true }),
    tool(agent.getStorefrontOrder, { name: 'get_order', readOnly: true }),
  ],
  // The store's menu and facts as resources, read through the same operations as the tools (issue 36 item 4).
  resources: [
    {
      uriTemplate: 'dispatch://store/menu', name: 'menu', title: 'The store\'s menu', mimeType: 'application/json',
      description: 'Categories with their items, variations and grouped extras; sold-out items flagged. As get_menu.',
      op: storefront.getStorefrontMenu,
    },
    {
      uriTemplate: 'dispatch://store/info', name: 'store-info', title: 'About the store', mimeType: 'application/json',
      description: 'Name, address, whether it is open now, how to order. As get_store_info.',
      op: agent.getStoreInfo,
    },
    {
      uriTemplate: 'dispatch://store/items/{item_id}', name: 'item', title: 'One menu item', mimeType: 'application/json',
      description: 'An item with its variations and extras grouped as the storefront shows them. As get_item.',
      op: agent.getStorefrontItem, input: (vars) => ({ item_id: /^[1-9]\d{0,15}$/.test(vars.item_id ?? '') ? Number(vars.item_id) : 0 }),
    },
  ],
  completions: {
    item_id: async (run, value) => startingWith(((await run(storefront.getStorefrontMenu, {})) as MenuView).flatMap((c) => c.items.map((i) => String(i.id))), value),
  },
}
