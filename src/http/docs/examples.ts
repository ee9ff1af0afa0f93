/**
 * Request and response examples of the main operations (issue 20 item 7), keyed by operation id,
 * taken from real answers of this server (api-v1 §2.2-2.4). test/openapi.test.ts checks each one
 * against the schema it illustrates, so an example cannot drift from the shape.
 */
const at = '2026-11-22T19:30:00.000+00:00'
const site = 'https://dispatch.example.org'

const vertical = {
  label: 'Restaurant', group: 'food',
  capabilities: { food_fields: true, goods_fields: false, kitchen_display: true, tables: true, fitment: false, age_gate: false, expiry: false },
  fulfillment_modes: ['on-table', 'takeaway', 'delivery'],
}
const store = { id: 7, title: 'Luigi\'s Trattoria', slug: 'luigis', url: `${site}/s/luigis`, template: 'classic', created_at: at, store_type: 'restaurant', vertical }

const variant = (id: number, name: string, price: number | null) => ({ id, item_id: 41, name, price, sku: null, stock: null, is_sold_out: false, position: 0, created_at: at, updated_at: at })
const burger = {
  id: 41, category_id: 3, name: 'Burger', description: 'Beef, brioche bun', price: 10, position: 0, is_sold_out: false, is_popular: true,
  is_vegan: false, is_halal: false, calories: 780, images: [], variations: [variant(90, 'Single', null), variant(91, 'Double', 15)],
  extras: [{ id: 12, name: 'Cheese', price: 1.5, group: null }],
}

const orderInput = {
  type: 'delivery', customer_name: 'Ada Lovelace', phone: '+15550100', address: '1 Main St', tip_amount: 1, note: 'Ring twice',
  items: [{ item_id: 41, quantity: 2, variation: 91, extras: [12] }],
}
const order = {
  id: 1001, restaurant_id: 7, type: 'delivery', status: 'new', delivery_status: 'pending', is_paid: false, customer_id: null,
  customer_name: 'Ada Lovelace', phone: '+15550100', table_number: null, address: '1 Main St', note: 'Ring twice', source: null, coupon_code: null,
  subtotal: 33, discount: 0, tip_amount: 1, total: 34,
  items: [{
    id: 5001, item_id: 41, name: 'Burger', variation: { id: 91, name: 'Double' }, quantity: 2, unit_price: 15,
    extras: [{ id: 12, name: 'Cheese', price: 1.5 }], line_total: 33, note: null, station: 'grill', kds_state: 'queued', kds_timeline: { queued_at: at },
  }],
  extras: [{ id: 12, name: 'Cheese', price: 1.5, line_id: 5001 }],
  driver: null, timeline: { created_at: at }, created_at: at, updated_at: at,
  track_token: 'trk_H7UQ5YcbFwAj36nj4uiKI6dm8m6TNZNrYtxDpIzxI1c', track_url: `${site}/t/trk_H7UQ5YcbFwAj36nj4uiKI6dm8m6TNZNrYtxDpIzxI1c`,
}
const page = <T>(data: T[], perPage: number) => ({ data, current_page: 1, last_page: 1, per_page: perPage, total: data.length })
const menu = [{ id: 3, name: 'Mains', position: 0, station: 'grill', items: [burger] }]

export interface Examples { request?: unknown; response?: unknown }

/** Examples by operation id (src/ops); every address that binds the operation shows them. */
export const EXAMPLES: Record<string, Examples> = {
  'stores.list': { response: page([store], 20) },
  'stores.get': { response: { ...store, currency: 'EUR', city: 'Bologna', settings: {}, item_count: 1, categories: [{ id: 3, name: 'Mains', item_count: 1 }] } },
  'menu.get': { response: menu },
  'public.menu.get': { response: menu },
  'menu.categories.create': { request: { name: 'Drinks', station: 'bar' }, response: { id: 4, name: 'Drinks', position: 1, station: 'bar', created_at: at } },
  'menu.items.create': {
    request: { category_id: 3, name: 'Burger', description: 'Beef, brioche bun', price: 10, is_popular: true, calories: 780, variations: [{ name: 'Single' }, { name: 'Double', price: 15 }], extras: [{ name: 'Cheese', price: 1.5 }] },
    response: burger,
  },
  'orders.create': { request: orderInput, response: order },
  'customer.orders.create': { request: { type: 'delivery', address: '1 Main St', items: orderInput.items }, response: { ...order, customer_id: 88 } },
  'storefront.orders.create': { request: { type: 'takeaway', customer_name: 'Ada', items: [{ item_id: 41, quantity: 1 }], coupon_code: 'WELCOME10' } },
  'orders.get': { response: order },
  'orders.list': { response: page([order], 30) },
  'orders.status.set': { request: { status: 'preparing' }, response: { ...order, status: 'preparing', timeline: { created_at: at, preparing_at: at } } },
}
