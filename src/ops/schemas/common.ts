/** Request schemas shared by several route families (valibot; also rendered into OpenAPI). */
import * as v from 'valibot'
import { ORDER_TYPES } from '../../domain/verticals.ts'
import { hasAtMostTwoDecimals } from '../../domain/money.ts'
import { envelopeOf, named } from './named.ts'
import { fulfillmentFields } from './fulfillment.ts'

export const Id = v.pipe(v.number(), v.integer(), v.minValue(1))
export const Money = v.pipe(v.number(), v.minValue(0), v.maxValue(1_000_000), v.check(hasAtMostTwoDecimals, 'Use at most two decimals.'))
export const ShortText = (max = 255) => v.pipe(v.string(), v.maxLength(max))
export const Nullable = <S extends v.GenericSchema>(s: S) => v.optional(v.nullable(s))

/** What every sign-out of a device answers (customer, staff, mobile shell): 200 `{revoked: true}`. */
export const RevokedSchema = { type: 'object', required: ['revoked'], properties: { revoked: { type: 'boolean' } } }

/** `?page=N`, 1-based. */
export const PageQuery = v.object({
  page: v.optional(v.pipe(v.string(), v.regex(/^[1-9]\d{0,6}$/, 'page must be a positive integer'))),
})
export const pageOf = (q: { page?: string }): number => (q.page ? Number(q.page) : 1)

/** The pagination envelope (api-v1 §2.1). */
export function paginate<T>(data: T[], page: number, perPage: number, total: number) {
  return { data, current_page: page, last_page: Math.max(1, Math.ceil(total / perPage)), per_page: perPage, total }
}
/** Named `<Item>Page` in OpenAPI when the item is named (issue 20 item 7). */
export const PaginatedSchema = (item: Record<string, unknown>) => envelopeOf(item, 'Page', {
  type: 'object',
  required: ['data', 'current_page', 'last_page', 'per_page', 'total'],
  properties: {
    data: { type: 'array', items: item },
    current_page: { type: 'integer' },
    last_page: { type: 'integer' },
    per_page: { type: 'integer' },
    total: { type: 'integer' },
  },
})

export const OrderLineInput = v.object({
  item_id: Id,
  quantity: v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(999)),
  variation: Nullable(Id),
  extras: v.optional(v.pipe(v.array(Id), v.maxLength(50))),
  note: Nullable(ShortText(500)),
})
named('OrderLineInput', OrderLineInput)

const orderFields = {
  type: v.picklist(ORDER_TYPES),
  customer_name: Nullable(ShortText(120)),
  phone: Nullable(ShortText(40)),
  table_number: Nullable(v.union([ShortText(20), v.pipe(v.number(), v.integer(), v.minValue(0))])),
  address: Nullable(ShortText(500)),
  delivery_notes: Nullable(v.pipe(v.string(), v.trim(), v.maxLength(500), v.description('Delivery orders: notes for the driver (gate code, floor, where to leave it); shown to the driver, not on the kitchen screen. A saved address (`address_id`) brings its own `notes` unless this is given.'))),
  lat: Nullable(v.pipe(v.number(), v.minValue(-90), v.maxValue(90), v.description('Where a delivery goes, with `lng`; required for delivery orders once the store has delivery zones (docs/dispatch.md).'))),
  lng: Nullable(v.pipe(v.number(), v.minValue(-180), v.maxValue(180), v.description('Where a delivery goes, with `lat`.'))),
  tip_amount: Nullable(Money),
  note: Nullable(ShortText(1000)),
  source: Nullable(ShortText(60)),
  client_uuid: Nullable(v.pipe(v.string(), v.minLength(1), v.maxLength(255))),
  /** The buyer is old enough for the order's age-restricted items (`min_age`); without it such an order is 422 `age_confirmation_required`. */
  age_confirmed: Nullable(v.pipe(v.boolean(), v.description('The buyer is at least the highest `min_age` of the order\'s items (age-restricted items, docs/verticals.md). Required as `true` when any item has a `min_age`, else 422 `age_confirmation_required`.'))),
  ...fulfillmentFields,
}

/** Create-order input (api-v1 §2.4), owner and customer routes. */
export const OrderInputSchema = v.object({
  ...orderFields,
  items: v.pipe(v.array(OrderLineInput), v.minLength(1), v.maxLength(100)),
})
named('OrderInput', OrderInputSchema)
