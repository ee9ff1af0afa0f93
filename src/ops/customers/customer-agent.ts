/**
 * What an agent acting for a signed-in customer needs beyond the customer app's API (issue 12
 * item 5, api-v1 §4.11; docs/mcp-customer.md): recent orders, one order, tracking, a reorder draft
 * and bookings. Identity comes only from the customer token (api-v1 §4.5): no input names a
 * customer or a phone, and an order of anyone else is 404 `not_found` like one that does not exist.
 */
import * as v from 'valibot'
import { defineOp, type Access, type OpCtx } from '../op.ts'
import { customerOf, orderOf, storeOf } from '../scope.ts'
import { Id } from '../schemas/common.ts'
import { OrderSchema, TrackingSchema } from '../schemas/named.ts'
import { CartSchema, cartView, defaultCartType, draftCart } from '../orders/cart.ts'
import { resolveScope } from '../../auth/policy.ts'
import { notFound } from '../../errors.ts'
import { verticalOf } from '../../domain/verticals.ts'
import { pricingIndex, type StoreRow } from '../../storage/stores.ts'
import { trackingView } from '../../storage/tracking.ts'
import { nowIso } from '../../storage/db.ts'
import type { OrderRow } from '../../storage/orders.ts'
import { reservationReads } from '../../storage/reservations.ts'
import { ReservationSchema, reservationView } from '../stores/reservations.ts'

/** my_bookings answers at most this many (upcoming ones first). */
const BOOKINGS_MAX = 50

const tag = 'Customer app'
const customer: Access = { customer: true }
const RECENT_MAX = 50

/** An id as a JSON number (MCP arguments, bodies) or as the digits of a query string. */
const IdArg = v.union([Id, v.pipe(v.string(), v.regex(/^[1-9]\d{0,15}$/, 'Use a positive integer.'))])

export const listRecentCustomerOrders = defineOp({
  id: 'customer.orders.recent', tag, access: customer, scope: [],
  summary: 'Own latest orders, newest first (`limit`, 10 by default, at most 50)',
  input: v.object({ limit: v.optional(v.union([v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(RECENT_MAX)), v.pipe(v.string(), v.regex(/^([1-9]|[1-4]\d|50)$/, `Use 1 to ${RECENT_MAX}.`))])) }),
  output: { type: 'array', items: OrderSchema },
  run: (ctx, { limit }) => {
    const me = customerOf(ctx)
    return ctx.svc.orders.customerPage(me.storeId, me.customerId, 1, limit === undefined ? 10 : Number(limit)).data
  },
})

export const getCustomerOrder = defineOp({
  id: 'customer.orders.get', tag, access: customer, scope: ['store', 'order'], output: OrderSchema,
  summary: 'One of the customer\'s own orders in full',
  description: 'Anyone else\'s order, or none, is 404 `not_found`.',
  run: (ctx) => ctx.svc.orders.full(orderOf(ctx)),
})

/** Own order with this track token: another customer's (or none) is the same 404 as by id. */
function ownOrderByToken(ctx: OpCtx, token: string): OrderRow {
  const row = ctx.svc.orders.rowByTrackToken(token)
  if (!row) throw notFound('order')
  // The one tenancy rule (src/auth/policy.ts): the store of the token, the customer of the token.
  return resolveScope(ctx.svc, ctx.principal, ['store', 'order'], { order: row.id }).order!
}

export const trackCustomerOrder = defineOp({
  id: 'customer.orders.track', tag, access: customer, scope: [],
  summary: 'Live status of one of the customer\'s own orders, by `order_id` or `track_token`',
  description: 'Exactly one of `order_id` and `track_token`. Kitchen and delivery status, timeline, lines and, while the order is on its way, the driver\'s position, as the tracking page shows them, plus `track_url`. Anyone else\'s order is 404 `not_found`, even with its track token.',
  input: v.pipe(
    v.object({ order_id: v.optional(IdArg), track_token: v.optional(v.pipe(v.string(), v.minLength(1), v.maxLength(100))) }),
    v.check((x) => (x.order_id === undefined) !== (x.track_token === undefined), 'Send exactly one of order_id and track_token.'),
  ),
  output: { ...TrackingSchema, properties: { ...TrackingSchema.properties, track_url: { type: 'string', format: 'uri' } } },
  run: (ctx, q) => {
    const row = q.track_token !== undefined
      ? ownOrderByToken(ctx, q.track_token)
      : resolveScope(ctx.svc, ctx.principal, ['store', 'order'], { order: q.order_id }).order!
    return { ...trackingView(ctx.svc, row), track_url: ctx.svc.orders.full(row).track_url }
  },
})

interface Skipped { item_id: number; name: string; reason: string; extra_id?: number }

/**
 * Past lines → today's cart lines: a line whose item is gone or sold out, or whose variation is no
 * longer offered, is left out; an extra no longer offered is dropped from its line. Each says why.
 */
function rebuildLines(store: StoreRow, svc: OpCtx['svc'], order: OrderRow) {
  const menu = pricingIndex(svc.stores.menu(store.id))
  const items: Array<{ item_id: number; quantity: number; variation: number | null; extras: number[]; note: string | null }> = []
  const skipped: Skipped[] = []
  for (const l of svc.orders.lines(order.id)) {
    const item = menu.get(l.item_id)
    if (!item) { skipped.push({ item_id: l.item_id, name: l.name, reason: 'no longer on the menu' }); continue }
    if (item.is_sold_out) { skipped.push({ item_id: item.id, name: item.name, reason: 'sold out' }); continue }
    if (l.variant_id != null && !item.variants.some((x) => x.id === l.variant_id)) {
      skipped.push({ item_id: item.id, name: item.name, reason: `the ${l.variant_name ?? 'chosen'} variation is no longer offered` }); continue
    }
    const extras: number[] = []
    for (const e of JSON.parse(l.extras) as Array<{ id: number; name: string }>) {
      if (item.extras.some((x) => x.id === e.id)) extras.push(e.id)
      else skipped.push({ item_id: item.id, name: item.name, extra_id: e.id, reason: `extra ${e.name} is no longer offered (the item is kept without it)` })
    }
    items.push({ item_id: item.id, quantity: l.quantity, variation: l.variant_id, extras, note: l.note })
  }
  return { items, skipped }
}

export const reorderCustomerOrder = defineOp({
  id: 'customer.orders.reorder', tag, access: customer, scope: ['store', 'order'],
  summary: 'Rebuild one of the customer\'s past orders as a cart draft priced now (nothing is ordered)',
  description: 'Lines whose item was deleted or is sold out, or whose variation is no longer offered, are left out and listed in `skipped` with the reason; an extra no longer offered is dropped from its line (also listed). `cart` is ready to send to `POST /customer/orders` (with the order type of the past order when the store still takes it); `priced` is that cart priced on today\'s menu, as the order would be. Anyone else\'s order is 404 `not_found`.',
  output: { type: 'object', required: ['from_order_id', 'cart', 'priced', 'skipped'], properties: {
    from_order_id: { type: 'integer' },
    cart: { type: 'object', properties: { type: { type: 'string' }, table_number: { anyOf: [{ type: 'string' }, { type: 'null' }] }, address: { anyOf: [{ type: 'string' }, { type: 'null' }] }, items: { type: 'array', items: { type: 'object' } } } },
    priced: CartSchema,
    skipped: { type: 'array', items: { type: 'object', required: ['item_id', 'name', 'reason'], properties: { item_id: { type: 'integer' }, name: { type: 'string' }, extra_id: { type: 'integer' }, reason: { type: 'string' } } } },
  } },
  run: (ctx) => {
    const store = storeOf(ctx)
    const order = orderOf(ctx)
    const { items, skipped } = rebuildLines(store, ctx.svc, order)
    const type = (verticalOf(store.store_type).fulfillment_modes as readonly string[]).includes(order.type) ? order.type : defaultCartType(store)
    const cart = { type, table_number: type === 'on-table' ? order.table_number : null, address: type === 'delivery' ? order.address : null, items }
    const draft = draftCart(ctx.svc, store, cart, nowIso())
    return { from_order_id: order.id, cart, priced: cartView(store, draft), skipped }
  },
})

export const listCustomerBookings = defineOp({
  id: 'customer.bookings.list', tag, access: customer, scope: [],
  summary: 'The customer\'s own table bookings: upcoming first (soonest first), then past ones (latest first)',
  description: 'At most 50. Each is a reservation as the customer app shows it (`GET /customer/reservations`): table, party size, start and end in the store\'s time zone, status (booked, seated, completed, cancelled, no_show).',
  output: { type: 'array', items: ReservationSchema },
  run: (ctx) => {
    const me = customerOf(ctx)
    const store = ctx.svc.stores.byId(me.storeId)
    if (!store) throw notFound('restaurant')
    return reservationReads.ofCustomer(ctx.svc.db, store.id, me.customerId, nowIso(), BOOKINGS_MAX).map((r) => reservationView(ctx.svc.db, store, r))
  },
})

/** Customer agent operations, in ALL_OPS (src/ops/index.ts). */
export const customerAgentOps = [listRecentCustomerOrders, getCustomerOrder, trackCustomerOrder, reorderCustomerOrder, listCustomerBookings]
