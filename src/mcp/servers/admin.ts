/**
 * The admin MCP server at `{site_url}/mcp` (api-v1 §4.11): an owner's agent runs the owner's
 * stores through the same operations as the owner API (§4.2). Owner bearer token; every tool needs
 * the capability its operation declares (hidden from `tools/list` otherwise) and the account needs
 * the `mcp` plan feature (403 `forbidden`, reason `feature_not_in_plan`, at the HTTP level, docs/mcp.md). Arguments
 * are the REST fields, snake_case, with the path ids as `restaurant_id`, `category_id`,
 * `item_id`, `order_id`, `coupon_id`, `customer_id`.
 */
import type { Op } from '../../ops/op.ts'
import { ApiError } from '../../errors.ts'
import { adminAdmission } from '../../ops/apps/mcp-admission.ts'
import { getMenu, listStores, salesReport } from '../../ops/stores/stores.ts'
import { listCategories } from '../../ops/menu/menu-read.ts'
import * as menu from '../../ops/menu/menu.ts'
import * as photos from '../../ops/menu/menu-photos.ts'
import { getOrder, listOrders, setOrderStatus } from '../../ops/orders/orders.ts'
import { getCustomer, listCustomers } from '../../ops/customers/customers.ts'
import { createCoupon, deleteCoupon, listCoupons, updateCoupon } from '../../ops/money/coupons.ts'
import { assignDriver } from '../../ops/delivery/deliveries.ts'
import { KITCHEN_STATUSES } from '../../domain/order-state.ts'
import { getStoreSettings, updateBusinessHours } from '../../ops/stores/store-settings.ts'
import { getDeliveryZones, setDeliveryZones } from '../../ops/delivery/delivery-zones.ts'
import { inputSchemaOf } from '../schema.ts'
import { adminCompletions, adminResources } from './admin-resources.ts'
import { tool, type McpServerDef, type ToolBinding } from '../tool.ts'

const store = { store: 'restaurant_id' } as const
const order = { store: 'restaurant_id', order: 'order_id' } as const

const MONEY = 'Amounts are decimals in the store\'s currency, as in the REST API (12.5 means 12.50), never minor units.'

/**
 * List tools take `page` as an integer (REST reads it from the query string, where it is text):
 * the op still validates it, so `page: 0` is a -32602 like any bad argument.
 */
function paged(op: Op, b: Omit<ToolBinding, 'op'>): ToolBinding {
  const t = tool(op, { ...b, args: (a) => (a.page === undefined ? a : { ...a, page: String(a.page) }) })
  const schema = inputSchemaOf(t)
  const properties = { ...(schema.properties as Record<string, unknown>), page: { type: 'integer', minimum: 1, description: 'Page number, 1-based (default 1).' } }
  return { ...t, inputSchema: { ...schema, properties } }
}

export const adminTools: ToolBinding[] = [
  paged(listStores, {
    name: 'list_restaurants', readOnly: true,
    description: 'List the restaurants (stores) this token\'s owner account has, 20 per page: `id`, `title`, `slug`, public `url`, `template`, `created_at`, in the pagination envelope (`data`, `current_page`, `last_page`, `total`). Start here: every other tool takes a `restaurant_id` from this list.',
  }),
  tool(getMenu, {
    name: 'get_menu', ids: store, readOnly: true,
    description: `The full menu of a restaurant: categories in display order, each with its items (sold-out ones included, flagged \`is_sold_out\`), their variants and extras, and each item's uploaded \`photo\` (\`url\` at most 1200 px, \`thumb_url\` 400 px; null when none; also \`images[0]\`). ${MONEY}`,
  }),
  tool(listCategories, {
    name: 'list_categories', ids: store, readOnly: true,
    description: 'The menu categories of a restaurant with `id`, `name`, `position`, kitchen `station` and `item_count`. Use it to pick a `category_id` for add_menu_item, or to see which category is empty (only empty ones can be deleted).',
  }),
  tool(menu.createCategory, {
    name: 'add_category', ids: store,
    description: 'Create a menu category. Arguments: `restaurant_id`, `name`, optional `position` (display order, lower first) and `station` (the kitchen-screen station its items go to). Returns the category with its new `id`.',
  }),
  tool(menu.updateCategory, {
    name: 'update_category', ids: store,
    description: 'Rename or reorder a category: `restaurant_id`, `category_id` and any of `name`, `position`, `station`. Fields left out stay as they are.',
  }),
  tool(menu.deleteCategory, {
    name: 'delete_category', ids: store,
    description: 'Delete a category (`restaurant_id`, `category_id`). Refused (`reason` `category_not_empty`) while it still holds items: move or delete them first (see list_categories `item_count`).',
  }),
  tool(menu.createItem, {
    name: 'add_menu_item', ids: store,
    description: `Add an item to a restaurant's menu. Required: \`restaurant_id\`, \`name\`, \`price\`. Optional: \`category_id\` (from list_categories; without it the item goes to the first category, or to a new \"Menu\" category when there is none), \`description\`, \`position\`, \`is_sold_out\`, \`is_popular\`, \`is_vegan\`, \`is_halal\`, \`calories\`, \`brand\`, \`stock\`, \`sku\`, \`images\` (URLs), \`extras\` ([{name, price, group?}]) and \`variations\` ([{name, price?, sku?, stock?}]). ${MONEY} Counts against the plan's menu-item quota: when it is full the result is an error with \`code\` \`forbidden\` and \`reason\` \`plan_limit_reached\`. Customers and storefronts see the item at once (a \`menu.updated\` event is sent).`,
  }),
  tool(menu.updateItem, {
    name: 'update_menu_item', ids: store,
    description: `Change an item: \`restaurant_id\`, \`item_id\` and any of the add_menu_item fields (\`extras\`, when given, replace the old ones). Fields left out stay. ${MONEY}`,
  }),
  tool(menu.deleteItem, {
    name: 'delete_menu_item', ids: store,
    description: 'Delete a menu item for good (`restaurant_id`, `item_id`). Past orders keep their lines. To hide an item for a while use set_item_availability instead.',
  }),
  tool(photos.setItemPhoto, {
    name: 'set_item_photo', ids: store,
    description: 'Give an item its photo: `restaurant_id`, `item_id`, `image` (base64 or a `data:image/…;base64,` URL of a JPEG, PNG or WebP; the whole call must stay within the server\'s request body limit, 1 MiB by default — larger photos go through the REST upload). The server resizes it (at most 1200 px, a 400 px thumbnail), strips its metadata and answers the item with `photo.url` and `photo.thumb_url`; a new photo replaces the old one at a new address. Not an image: an error with `code` `unsupported_media_type` or `validation_failed`.',
  }),
  tool(photos.deleteItemPhoto, {
    name: 'remove_item_photo', ids: store,
    description: 'Remove an item\'s uploaded photo (`restaurant_id`, `item_id`); image addresses set with `images` stay.',
  }),
  tool(photos.reorderCategories, {
    name: 'reorder_categories', ids: store,
    description: 'Set the display order of a restaurant\'s categories: `restaurant_id`, `ids` (every category id once, first shown first; list_categories has them). Anything else is refused with nothing changed. Returns the menu.',
  }),
  tool(photos.reorderItems, {
    name: 'reorder_items', ids: store,
    description: 'Set the display order of a category\'s items: `restaurant_id`, `category_id`, `ids` (every item id of the category once, first shown first). Anything else is refused with nothing changed. Returns the menu.',
  }),
  tool(menu.setItemSoldOut, {
    name: 'set_item_availability', ids: store,
    description: 'Mark an item sold out (`is_sold_out: true`) or available again (`is_sold_out: false`): `restaurant_id`, `item_id`, `is_sold_out`. Always pass `is_sold_out`: without it the flag is toggled. Sold-out items stay on the menu but cannot be ordered.',
  }),
  paged(listOrders, {
    name: 'list_orders', ids: store, readOnly: true,
    description: `A restaurant's orders, newest first, 30 per page, with lines, totals and status. Filters: \`status\` (kitchen status: ${KITCHEN_STATUSES.join(', ')}), \`from\` and \`to\` (creation date, \`YYYY-MM-DD\`, UTC days, inclusive), \`search\` (part of the customer name or phone, or an order id). ${MONEY}`,
  }),
  tool(getOrder, {
    name: 'get_order', ids: order, readOnly: true,
    description: `One order in full (\`restaurant_id\`, \`order_id\`): lines with variants and extras, totals, customer, driver, delivery timeline and the public tracking link. ${MONEY}`,
  }),
  tool(setOrderStatus, {
    name: 'update_order_status', ids: order,
    description: 'Set an order\'s kitchen status (`restaurant_id`, `order_id`, `status`: one of ' + KITCHEN_STATUSES.join(', ') + '). The customer\'s tracking page and webhooks (`order.status_changed`) follow at once.',
  }),
  paged(listCustomers, {
    name: 'list_customers', ids: store, readOnly: true,
    description: 'The restaurant\'s customers (CRM), newest first, 30 per page; `search` matches part of the name, email or phone. Needs the CRM feature of the plan (`feature_not_in_plan` otherwise).',
  }),
  tool(getCustomer, {
    name: 'get_customer', ids: store, readOnly: true,
    description: `One customer of the restaurant (\`restaurant_id\`, \`customer_id\` from list_customers) with profile, order count, total spent and the latest order. Needs the CRM feature of the plan. ${MONEY}`,
  }),
  tool(salesReport, {
    name: 'sales_report', ids: store, readOnly: true,
    description: `Sales summary of a restaurant for a date range: \`from\`, \`to\` (\`YYYY-MM-DD\`, default the last 30 days): order count, revenue, average order value, top items and the daily series (api-v1 §2.6). Cancelled orders count but earn nothing. Needs the analytics feature of the plan. ${MONEY}`,
  }),
  tool(getStoreSettings, {
    name: 'get_restaurant_settings', ids: store, readOnly: true,
    description: 'A restaurant\'s settings: time zone, weekly business hours, holidays, prep minutes, whether it accepts orders and is publicly listed, address/phone/email and city, plus whether it is open now and when it next opens.',
  }),
  tool(updateBusinessHours, {
    name: 'update_business_hours', ids: store,
    description: 'Set the weekly opening hours: `restaurant_id`, `business_hours` as `{mon: [["11:00","22:00"]], tue: [...], …}` (weekdays mon…sun, several intervals a day allowed, a close before the open runs past midnight; a day left out is closed; `null` = always open), optional `timezone` (IANA, e.g. Europe/Berlin) and `holidays` ([{date} or {from, to}, note?]). Storefront and customer orders outside the hours are refused.',
  }),
  tool(listCoupons, {
    name: 'list_coupons', ids: store, readOnly: true,
    description: `A restaurant's coupons with code, kind (percent or fixed), value, minimum order, validity window, usage limit, uses and whether active. ${MONEY}`,
  }),
  tool(createCoupon, {
    name: 'create_coupon', ids: store,
    description: `Create a coupon: \`restaurant_id\`, \`code\` (2-40 letters, digits, - or _; case-insensitive, unique per restaurant), \`kind\` (\`percent\` or \`fixed\`), \`value\` (a whole percent 1-100, or an amount), optional \`min_order\`, \`starts_at\`/\`ends_at\` (ISO 8601 with offset), \`usage_limit\`, \`active\`. ${MONEY}`,
  }),
  tool(updateCoupon, {
    name: 'update_coupon', ids: store,
    description: 'Change a coupon: `restaurant_id`, `coupon_id` and any create_coupon field; fields left out stay. Set `active: false` to pause it.',
  }),
  tool(deleteCoupon, {
    name: 'delete_coupon', ids: store,
    description: 'Delete a coupon (`restaurant_id`, `coupon_id`). Orders that used it keep their discount.',
  }),
  tool(assignDriver, {
    name: 'assign_driver', ids: order,
    description: 'Give a delivery order to one of your drivers: `restaurant_id`, `order_id`, `driver_id` (the driver must be yours, unbound or bound to this restaurant). Reassigning moves the order to the new driver; open offers are withdrawn. Needs the delivery feature of the plan.',
  }),
  tool(getDeliveryZones, {
    name: 'get_delivery_zones', ids: store, readOnly: true,
    description: `A restaurant's delivery zones: each a \`polygon\` (GeoJSON coordinates, [lng, lat]) or a circle (\`center\` {lat, lng} and \`radius_m\`), with its \`fee\` and \`min_order\`. No zones: any address is delivered to without a fee. ${MONEY}`,
  }),
  tool(setDeliveryZones, {
    name: 'set_delivery_zones', ids: store,
    description: `Replace a restaurant's delivery zones: \`restaurant_id\` and \`zones\` ([] removes them all), each \`{name, polygon}\` (GeoJSON Polygon coordinates: closed rings of [lng, lat], outer ring first) or \`{name, center: {lat, lng}, radius_m}\`, with \`fee\` and optional \`min_order\`. Delivery orders then need a position inside a zone and at least its minimum; the cheapest zone containing the address prices it. ${MONEY}`,
  }),
]

export const adminServer: McpServerDef = {
  path: '/mcp',
  name: 'dispatch-admin',
  title: 'Restaurant admin',
  instructions: 'Run your restaurants: menus, orders, customers, coupons, opening hours and sales. Call list_restaurants first; every other tool takes a restaurant_id from it. Amounts are decimals in the store currency. Failures come back as results with isError and the API error envelope: `code` (not_found for anything that is not yours, validation_failed with field errors, forbidden, …) and the finer `reason` (plan_limit_reached, feature_not_in_plan, category_not_empty, …).',
  auth: 'owner',
  // The plan decides whether an account may use MCP at all (docs/billing.md "Plans and entitlements");
  // a third-party app's token opens this server only with the mcp:use scope (docs/apps.md "Calling the API").
  admission: adminAdmission,
  tools: adminTools,
  resources: adminResources,
  completions: adminCompletions,
}
