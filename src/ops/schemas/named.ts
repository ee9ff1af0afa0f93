/** JSON Schemas of response bodies, for the OpenAPI document (api-v1 §2). */
import { tableInWords, WHOLE_REQUEST } from '../../errors.ts'
import { STORE_TYPES, ORDER_TYPES } from '../../domain/verticals.ts'
import { DELIVERY_STATUSES, KITCHEN_STATUSES, KDS_STATES } from '../../domain/order-state.ts'

/** The small JSON Schema builders every hand-written response schema is made of (here and in the operations' files). */
export const str = { type: 'string' }
export const int = { type: 'integer' }
export const num = { type: 'number' }
export const bool = { type: 'boolean' }
export const nullable = (s: Record<string, unknown>) => ({ anyOf: [s, { type: 'null' }] })
export const obj = (properties: Record<string, unknown>, required = Object.keys(properties)) => ({ type: 'object', required, properties })
export const arr = (items: Record<string, unknown>) => ({ type: 'array', items })
export const dateTime = { type: 'string', format: 'date-time' }

/** Names given to shared shapes: schema object → component name (identity, so a spread copy is a new shape). */
const NAMES = new WeakMap<object, string>()

/**
 * Name a shared shape where it is defined (issue 20 item 7): the OpenAPI document lists it once
 * under `components.schemas.<name>` and every operation refers to it by `$ref`, so generated
 * clients get an `Order` type. Works for JSON Schema objects and valibot schemas; returns `schema`.
 */
export function named<S extends object>(name: string, schema: S): S {
  NAMES.set(schema, name)
  return schema
}

/** The name `named` gave this schema object, if any. */
export const schemaName = (schema: unknown): string | undefined =>
  typeof schema === 'object' && schema !== null ? NAMES.get(schema) : undefined

/** An envelope around `item` (a page, a list), named `<Item><suffix>` when the item is named. */
export function envelopeOf<S extends object>(item: unknown, suffix: string, envelope: S): S {
  const name = schemaName(item)
  return name ? named(`${name}${suffix}`, envelope) : envelope
}

export const ErrorSchema = named('Error', obj(
  {
    message: { type: 'string', description: 'For people; may be reworded or localised.' },
    code: { type: 'string', description: `What to branch on (api-v1 §7): always ${tableInWords('`')}; for other statuses the catalog code (\`conflict\`, \`insufficient_funds\`, …).` },
    reason: { type: 'string', description: 'The catalog code: the finer cause (`store_closed`, `plan_limit_reached`, …); the same as `code` where no finer one applies (docs/errors.md).' },
    errors: { type: 'object', additionalProperties: arr(str), description: `On every 422 (never empty) and where a code documents it: field path → messages; \`${WHOLE_REQUEST}\` for a rule about the request as a whole.` },
    details: { type: 'object', additionalProperties: true, description: 'Machine-readable facts of some refusals (which plan limit, when the store opens), as docs/errors.md documents per reason.' },
  },
  ['message', 'code', 'reason'],
))

export const VerticalSchema = named('Vertical', obj({
  label: str,
  group: { type: 'string', enum: ['food', 'goods', 'services', 'stays'] },
  capabilities: { type: 'object', additionalProperties: bool },
  fulfillment_modes: arr({ type: 'string', enum: [...ORDER_TYPES] }),
}))

export const StoreSummarySchema = named('Store', obj({
  id: int, title: str, slug: str, url: { type: 'string', format: 'uri' }, template: str, created_at: dateTime,
  store_type: { type: 'string', enum: [...STORE_TYPES] }, vertical: VerticalSchema,
}))

export const StoreDetailSchema = named('StoreDetail', {
  ...StoreSummarySchema,
  required: [...StoreSummarySchema.required, 'categories', 'item_count'],
  properties: {
    ...StoreSummarySchema.properties,
    currency: str,
    city: nullable(str),
    settings: { type: 'object' },
    item_count: int,
    categories: arr(obj({ id: int, name: str, item_count: int })),
  },
})

export const VariantSchema = named('MenuItemVariant', obj({
  id: int, item_id: int, name: str, price: nullable(num), sku: nullable(str), stock: nullable(int), is_sold_out: bool, position: int, created_at: dateTime, updated_at: dateTime,
}))
export const ExtraSchema = named('MenuItemExtra', obj({ id: int, name: str, price: num, group: nullable(str) }))

export const PhotoSchema = named('MenuItemPhoto', obj(
  { url: { type: 'string', format: 'uri', description: 'JPEG, at most 1200 px on its long side' }, thumb_url: { type: 'string', format: 'uri', description: 'JPEG, at most 400 px on its long side' } },
  ['url', 'thumb_url'],
))

export const ItemSchema = named('MenuItem', obj(
  {
    id: int, category_id: int, name: str, description: str, price: num, position: int, is_sold_out: bool, is_popular: bool,
    is_vegan: bool, is_halal: bool, calories: nullable(int), brand: nullable(str), brand_id: nullable(int), stock: { ...nullable(int), description: 'Goods stores: units left (null: untracked); for an item with expiry batches, the unexpired quantity. At 0 the item is sold out.' }, sku: nullable(str), variant_count: int,
    min_age: { ...nullable(int), description: 'Age-restricted item (age_gate verticals): orders holding it need `age_confirmed: true`.' },
    images: { ...arr(str), description: 'Image addresses; an uploaded photo comes first (its `photo.url`), then the addresses set with `images`.' },
    photo: { ...nullable(PhotoSchema), description: 'The photo uploaded with `POST …/menu/items/{itemId}/photo`, served by this server at content-hashed addresses (docs/menu-photos.md); null: none.' },
    variations: arr(VariantSchema), extras: arr(ExtraSchema),
  },
  ['id', 'category_id', 'name', 'price', 'is_sold_out', 'is_popular', 'variations', 'extras'],
))

export const MenuCategorySchema = named('MenuCategory', obj({ id: int, name: str, position: int, station: nullable(str), items: arr(ItemSchema) }))
export const MenuSchema = arr(MenuCategorySchema)

export const MenuChangeSchema = named('MenuChange', obj({ entity: { type: 'string', enum: ['menu', 'category', 'item', 'variant', 'batch'] }, change: { type: 'string', enum: ['created', 'updated', 'deleted'] }, id: int }))

const LineSchema = named('OrderLine', obj({
  id: int, item_id: int, name: str, variation: nullable(obj({ id: int, name: str })), quantity: int, unit_price: num,
  extras: arr(obj({ id: int, name: str, price: num })), line_total: num, note: nullable(str), station: nullable(str),
  kds_state: { type: 'string', enum: [...KDS_STATES] }, kds_timeline: { type: 'object', additionalProperties: str },
}))

export const OrderSchema = named('Order', obj(
  {
    id: int, restaurant_id: int, type: { type: 'string', enum: [...ORDER_TYPES] },
    status: { type: 'string', enum: [...KITCHEN_STATUSES] },
    delivery_status: nullable({ type: 'string', enum: [...DELIVERY_STATUSES] }),
    is_paid: bool, customer_id: nullable(int), customer_name: nullable(str), phone: nullable(str), table_number: nullable(str), address: nullable(str),
    delivery_notes: { ...nullable(str), description: 'Delivery orders: notes for the driver, from the saved address or the order input (an addition to api-v1 §2.4)' },
    note: nullable(str), source: nullable(str), coupon_code: nullable(str), subtotal: num, discount: num, tip_amount: num,
    delivery_fee: { type: 'number', description: 'Delivery orders: the delivery zone\'s fee, included in `total`; 0 without zones (docs/dispatch.md "Zones")' },
    total: num,
    refunded: { type: 'number', description: 'What completed refunds gave back (docs/operations.md "Refunds").' },
    items: arr(LineSchema), extras: arr(obj({ id: int, name: str, price: num, line_id: int })),
    driver: nullable(obj({ id: int, name: str, phone: str })), timeline: { type: 'object', additionalProperties: str },
    eta: { ...nullable(obj({ ready_at: dateTime, pickup_at: dateTime, dropoff_at: dateTime })), description: 'Delivery orders: the estimate promised when placed (docs/dispatch.md "Quotes"); null for other types' },
    created_at: dateTime, updated_at: dateTime,
    track_token: { type: 'string', description: 'Capability for the public tracking view and socket.' },
    track_url: { type: 'string', format: 'uri', description: 'Public tracking page.' },
    // Fulfillment modes (docs/verticals.md "Fulfillment modes"): null where the order's mode has none.
    room_number: nullable(str),
    shipping_address: nullable(obj({ name: str, line1: str, line2: nullable(str), city: str, postal_code: str, country: str, phone: nullable(str) }, ['name', 'line1', 'city', 'postal_code', 'country'])),
    shipping_fee: { type: 'number', description: '`ship` orders: the shipping fee (store settings `shipping`), included in `total`' },
    slot: nullable(obj({ start: dateTime, end: nullable(dateTime), kind: { type: 'string', enum: ['pickup', 'dropoff'] } })),
    appointment: nullable(obj({ start: dateTime, end: nullable(dateTime) })),
  },
  ['id', 'restaurant_id', 'type', 'status', 'delivery_status', 'is_paid', 'total', 'items', 'extras', 'driver', 'timeline', 'created_at'],
))

export const TrackingSchema = named('Tracking', obj(
  {
    id: int, status: { type: 'string', enum: [...KITCHEN_STATUSES] }, delivery_status: nullable({ type: 'string', enum: [...DELIVERY_STATUSES] }),
    is_paid: bool, total: num,
    // The breakdown of total (total = subtotal − discount + tip_amount + delivery_fee) and its currency.
    subtotal: num, discount: num, tip_amount: num, delivery_fee: num, currency: { type: 'string', description: 'the store\'s currency, ISO 4217' },
    timeline: { type: 'object', additionalProperties: str },
    items: arr(obj({ name: str, quantity: int, variation: { ...nullable(str), description: 'the chosen variation (size), or null' }, extras: { ...arr(str), description: 'names of the chosen extras' } })),
    driver: obj({ name: str, lat: nullable(num), lng: nullable(num), location_updated_at: nullable(dateTime) }),
    // For the tracking page's map (docs/tracking-page.md): the store always, the destination while the driver is visible.
    store: obj({ name: str, lat: nullable(num), lng: nullable(num) }),
    destination: obj({ lat: num, lng: num }),
    destination_address: { type: 'string', description: 'the delivery\'s street address, present with `destination` (while the driver is visible)' },
    // Fulfillment modes (docs/verticals.md): present when the order's mode has them.
    order_type: { type: 'string', enum: [...ORDER_TYPES] }, room_number: str, slot: obj({ start: dateTime, end: nullable(dateTime), kind: { type: 'string', enum: ['pickup', 'dropoff'] } }),
    appointment: obj({ start: dateTime, end: nullable(dateTime) }),
    eta: { ...obj({ ready_at: dateTime, pickup_at: dateTime, dropoff_at: dateTime }), description: 'Delivery orders: the estimate promised when placed (docs/dispatch.md "Estimates"); the socket\'s live `eta` replaces it once the driver is on the way' },
    shipment: nullable(obj({ status: str, carrier: nullable(str), tracking_number: nullable(str), tracking_url: nullable(str), timeline: arr(obj({ status: str, at: dateTime }, ['status', 'at'])), updated_at: dateTime })),
  },
  ['id', 'status', 'delivery_status', 'is_paid', 'total', 'subtotal', 'discount', 'tip_amount', 'delivery_fee', 'currency', 'timeline', 'items'],
))

export const AnalyticsSchema = named('Analytics', obj({
  range: obj({ from: { type: 'string', format: 'date' }, to: { type: 'string', format: 'date' } }),
  orders: obj({ total: int, paid: int, by_status: { type: 'object', additionalProperties: int }, by_type: { type: 'object', additionalProperties: int } }),
  revenue: obj({ gross: num, paid: num, refunded: num, net: num, avg_order_value: num, delivery_fees: { type: 'number', description: 'delivery zones\' fees of the range\'s orders, part of gross (docs/dispatch.md)' } }, ['gross', 'paid', 'avg_order_value']),
  top_items: arr(obj({ item_id: int, name: str, quantity: int })),
}))

export const MeSchema = named('Me', obj({
  kind: { type: 'string', enum: ['owner'] },
  owner: obj({ id: int, name: str, email: str, created_at: dateTime }),
  token: obj({ id: int, name: str, prefix: str, capabilities: arr(str), expires_at: nullable(dateTime), created_at: dateTime }),
}))

/** `GET {base_url}`: the machine-readable index (api-v1 §4.1). */
export const DiscoveryIndexSchema = named('DiscoveryIndex', obj(
  {
    name: str, version: str, base_url: { type: 'string', format: 'uri' }, authentication: str,
    docs: { type: 'string', format: 'uri' }, openapi: { type: 'string', format: 'uri' },
    groups: {
      type: 'object', description: 'Routes by tag.',
      additionalProperties: arr(obj({ method: str, path: str, summary: str, auth: str, operation: { type: 'string', description: 'The operation (src/ops) the route binds.' } }, ['method', 'path', 'summary', 'auth'])),
    },
    mcp_servers: arr(obj({ name: str, title: str, url: { type: 'string', format: 'uri' }, auth: str, tools: int }, ['name', 'url', 'auth'])),
  },
  ['name', 'version', 'base_url', 'groups', 'mcp_servers'],
))

/** `GET {base_url}/openapi.json`: this kind of document. */
export const OpenApiDocumentSchema = obj(
  { openapi: { type: 'string', const: '3.1.0' }, info: { type: 'object' }, paths: { type: 'object' } },
  ['openapi', 'info', 'paths'],
)
