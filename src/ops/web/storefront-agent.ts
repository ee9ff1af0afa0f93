/**
 * What an agent ordering for a diner needs beyond the storefront API (issue 12 item 4;
 * docs/mcp-storefront.md): store facts and hours, browsing and searching the menu, one item in
 * detail, pricing a cart and checking a coupon without writing anything, and following an order by
 * its track token. Bound to the storefront MCP server and to `/storefront/…` routes. Every one is
 * limited to the token's store (no input names a store); reads need `menu:read`, anything about
 * orders `order:write` (the scope that places them).
 */
import * as v from 'valibot'
import { defineOp, type Access } from '../op.ts'
import { storeOf, storefrontOf } from '../scope.ts'
import { Id, Money, Nullable } from '../schemas/common.ts'
import { bool, int, ItemSchema, nullable, OrderSchema, str, TrackingSchema } from '../schemas/named.ts'
import { STOREFRONT_ORDER_TYPES, StorefrontOrderSchema, storefrontTypes } from './storefront.ts'
import { CartSchema, cartView, couponOnDraft, draftCart } from '../orders/cart.ts'
import { ApiError, notFound } from '../../errors.ts'
import { fromCents, toCents } from '../../domain/money.ts'
import { verticalOf } from '../../domain/verticals.ts'
import { basePrepMinutes, integrationStatus } from '../../domain/integration.ts'
import { integrationRow } from '../../storage/staff.ts'
import { itemView, parseSettings, soldOut, storeUrl, type StoreRow } from '../../storage/stores.ts'
import { trackingView } from '../../storage/tracking.ts'
import { searchMenu } from '../../storage/menu-search.ts'
import { nowIso } from '../../storage/db.ts'
import type { OpCtx } from '../op.ts'
import type { OrderRow } from '../../storage/orders.ts'
import { hoursStatus } from '../stores/store-settings.ts'

const tag = 'Storefront'
const read: Access = { storefront: 'menu:read' }
const orders: Access = { storefront: 'order:write' }



const prepMinutes = (ctx: OpCtx, store: StoreRow): number =>
  integrationStatus(integrationRow(ctx.svc.db, store.id), basePrepMinutes(store.settings), Date.now()).prep_minutes

/**
 * The store's hours as a diner reads them (docs/stores.md "Business hours"), judged by the same
 * rules that refuse an order while the store is closed (src/domain/business-hours.ts).
 */
function hoursOf(settings: Record<string, unknown>, at: Date) {
  const h = hoursStatus(settings, at)
  return {
    timezone: h.timezone,
    business_hours: h.business_hours,
    holidays: h.holidays,
    always_open: settings.business_hours == null && h.holidays.length === 0,
    accepting_orders: h.accepting_orders,
    open_now: h.open_now,
    closed_reason: h.closed_reason,
    next_opening: h.next_opening,
  }
}

const HoursSchema = {
  type: 'object', required: ['timezone', 'business_hours', 'holidays', 'always_open', 'open_now', 'next_opening'],
  properties: {
    timezone: str, business_hours: { description: 'Weekly hours, `{mon: [["11:00", "22:00"]], …}`; null when none are set (always open).' },
    holidays: { type: 'array', items: { type: 'object' } }, always_open: bool, accepting_orders: bool,
    open_now: bool, closed_reason: nullable({ type: 'string', enum: ['not_accepting', 'holiday', 'hours'] }), next_opening: nullable({ type: 'string', format: 'date-time' }),
  },
}

export const getStoreInfo = defineOp({
  id: 'storefront.info.get', tag, access: read, scope: ['store'],
  summary: 'The store as a diner needs it: name, address, city, hours, open now, how to order',
  description: '`order_types` are the storefront order types the store takes (takeaway, on-table); `open_now` is false outside the opening hours or while the store is not accepting orders, when orders are refused. Owner contact details are not included.',
  output: { type: 'object', required: ['id', 'title', 'url', 'currency', 'city', 'address', 'order_types', 'prep_minutes', 'open_now'], properties: {
    id: int, title: str, slug: str, url: { type: 'string', format: 'uri' }, currency: str, city: nullable(str), address: nullable(str),
    store_type: str, order_types: { type: 'array', items: str }, prep_minutes: int, hours: HoursSchema, open_now: bool,
  } },
  run: (ctx) => {
    const store = storeOf(ctx)
    const settings = parseSettings(store.settings)
    const hours = hoursOf(settings, new Date())
    return {
      id: store.id, title: store.title, slug: store.slug, url: storeUrl(ctx.svc.config.siteUrl, store.slug), currency: store.currency,
      city: store.city, address: typeof settings.address === 'string' ? settings.address : null, store_type: store.store_type,
      order_types: storefrontTypes(store), prep_minutes: prepMinutes(ctx, store), hours, open_now: hours.open_now,
    }
  },
})

export const getOpeningHours = defineOp({
  id: 'storefront.hours.get', tag, access: read, scope: ['store'], output: HoursSchema,
  summary: 'Opening hours: weekly hours, holiday closures, time zone, open now and the next opening',
  description: 'A store with no hours set is always open. `next_opening` is null while open (or when the store never opens again on its calendar).',
  run: (ctx) => hoursOf(parseSettings(storeOf(ctx).settings), new Date()),
})

export const listFulfillmentModes = defineOp({
  id: 'storefront.fulfillment_modes.list', tag, access: read, scope: ['store'],
  summary: 'How a diner can receive an order here (takeaway, on-table) and what each needs',
  output: { type: 'array', items: { type: 'object', required: ['type', 'requires', 'description'], properties: { type: str, requires: { type: 'array', items: str }, description: str, prep_minutes: int } } },
  run: (ctx) => {
    const store = storeOf(ctx)
    const prep = prepMinutes(ctx, store)
    const about: Record<string, { requires: string[]; description: string }> = {
      takeaway: { requires: [], description: `Collected at the counter, ready in about ${prep} minutes; paid at pickup.` },
      'on-table': { requires: ['table_number'], description: 'Served at the diner\'s table; paid at the table.' },
    }
    return storefrontTypes(store).map((type) => ({ type, ...about[type]!, prep_minutes: prep }))
  },
})

export const listStorefrontCategories = defineOp({
  id: 'storefront.categories.list', tag, access: read, scope: ['store'],
  summary: 'Menu categories in display order, with how many items each has and how many are available',
  output: { type: 'array', items: { type: 'object', required: ['id', 'name', 'item_count', 'available_count'], properties: { id: int, name: str, item_count: int, available_count: int } } },
  run: (ctx) => {
    const menu = ctx.svc.stores.menu(storeOf(ctx).id)
    return menu.categories.map((c) => {
      const items = menu.items.filter((i) => i.category_id === c.id)
      return { id: c.id, name: c.name, item_count: items.length, available_count: items.filter((i) => !soldOut(i, menu.variants.get(i.id))).length }
    })
  },
})

export const DIETARY = ['vegan', 'halal'] as const
const SEARCH_MAX = 50

export const searchStorefrontMenu = defineOp({
  id: 'storefront.menu.search', tag, access: read, scope: ['store'],
  summary: 'Search the menu by words, dietary needs and a price ceiling',
  description: `\`query\` matches words of an item's name, category and description exactly as the public catalog's item search does (src/storage/menu-search.ts: every word must match, case and accents ignored, English stems; when whole words find nothing, the last word, 3+ letters, also as a prefix), best first: name matches, then category, then anywhere, shortest names first; without \`query\`, every item in menu order. \`dietary\` lists needs every result meets (${DIETARY.join(', ')}); \`max_price\` keeps items whose lowest price (base or a variation) is at most that; sold-out items are left out unless \`include_sold_out\`. At most ${SEARCH_MAX} results, each with its category and \`from_price\`.`,
  input: v.object({
    query: v.optional(v.pipe(v.string(), v.trim(), v.maxLength(100))),
    dietary: v.optional(v.pipe(v.array(v.picklist(DIETARY)), v.maxLength(DIETARY.length))),
    max_price: v.optional(Money),
    category_id: v.optional(Id),
    include_sold_out: v.optional(v.boolean(), false),
  }),
  output: { type: 'array', items: { ...ItemSchema, required: [...ItemSchema.required, 'category', 'from_price'], properties: { ...ItemSchema.properties, category: { type: 'object', properties: { id: int, name: str } }, from_price: { type: 'number' } } } },
  run: (ctx, q) => {
    const store = storeOf(ctx)
    const menu = ctx.svc.stores.menu(store.id)
    const vertical = verticalOf(store.store_type)
    const categories = new Map(menu.categories.map((c) => [c.id, c]))
    const ceiling = q.max_price === undefined ? null : toCents(q.max_price)
    const fromPrice = (i: (typeof menu.items)[number]) => Math.min(i.price, ...(menu.variants.get(i.id) ?? []).map((x) => x.price ?? i.price))
    const keep = (i: (typeof menu.items)[number]) =>
      (q.include_sold_out || !soldOut(i, menu.variants.get(i.id))) && (q.category_id === undefined || i.category_id === q.category_id)
      && !q.dietary?.some((d) => (d === 'vegan' ? i.is_vegan : i.is_halal) !== 1) && (ceiling === null || fromPrice(i) <= ceiling)
    // One search with the catalog (issue 36 item 6); no words: the menu as it is, filtered.
    const hits = (q.query ?? '').trim() ? searchMenu(store.id, menu, q.query!, q.dietary ?? [], keep) : menu.items.filter(keep)
    return hits.slice(0, SEARCH_MAX).map((i) => {
      const c = categories.get(i.category_id)
      return { ...itemView(i, vertical, ctx.svc.config.siteUrl, menu.variants.get(i.id) ?? [], menu.extras.get(i.id)), category: { id: i.category_id, name: c?.name ?? '' }, from_price: fromCents(fromPrice(i)) }
    })
  },
})

export const getStorefrontItem = defineOp({
  id: 'storefront.items.get', tag, access: read, scope: ['store'],
  summary: 'One menu item in detail: variations, extras grouped as the storefront shows them, sold-out flag',
  description: 'An item of another store, or none, is 404 `not_found`. Order lines name `variation` (one variation id) and `extras` (extra ids) from here.',
  input: v.object({ item_id: Id }),
  output: { ...ItemSchema, properties: { ...ItemSchema.properties, category: { type: 'object', properties: { id: int, name: str } }, groups: { type: 'array', items: { type: 'object', properties: { name: str, extras: ItemSchema.properties.extras } } } } },
  run: (ctx, { item_id }) => {
    const store = storeOf(ctx)
    const found = ctx.svc.stores.item(store.id, item_id)
    if (!found) throw notFound('item')
    const view = itemView(found.item, verticalOf(store.store_type), ctx.svc.config.siteUrl, found.variants, found.extras)
    const groups = new Map<string, typeof view.extras>()
    for (const e of view.extras) groups.set(e.group ?? 'Extras', [...(groups.get(e.group ?? 'Extras') ?? []), e])
    const category = ctx.svc.stores.category(store.id, found.item.category_id)
    return { ...view, category: { id: found.item.category_id, name: category?.name ?? '' }, groups: [...groups].map(([name, extras]) => ({ name, extras })) }
  },
})

/** A cart: the storefront order's lines and limits (40 items, 30 per line), type and tip optional. */
const CartInput = v.object({
  type: v.optional(StorefrontOrderSchema.entries.type),
  table_number: StorefrontOrderSchema.entries.table_number,
  tip_amount: StorefrontOrderSchema.entries.tip_amount,
  items: StorefrontOrderSchema.entries.items,
})
const CouponCode = v.pipe(v.string(), v.trim(), v.minLength(1), v.maxLength(40))

export const priceStorefrontCart = defineOp({
  id: 'storefront.cart.price', tag, access: read, scope: ['store'],
  summary: 'Price a cart as an order would be priced, without placing it',
  description: 'Same input limits as placing an order (at most 40 items, 30 per line) and the same server-side pricing on the live menu: sold-out or unknown items, variations or extras are 422 `validation_failed` keyed like the order (`items.0.item_id`). `coupon_code` is applied by the server with the order\'s rules (422 keyed `coupon_code` when it does not apply). Prices in the request are never read. Nothing is written and the coupon is not used up.',
  input: v.object({ ...CartInput.entries, coupon_code: Nullable(CouponCode) }),
  output: CartSchema,
  run: (ctx, { coupon_code, ...cart }) => {
    const store = storeOf(ctx)
    const now = nowIso()
    let draft = draftCart(ctx.svc, store, cart, now)
    if (coupon_code) {
      const c = couponOnDraft(ctx.svc, store, draft, coupon_code, now)
      if (!c.ok) throw invalidCoupon(c.reason)
      draft = c.draft
    }
    return cartView(store, draft)
  },
})

/** The order's own refusal of a coupon (422 keyed `coupon_code`, docs/storefront.md "Coupons"). */
const invalidCoupon = (reason: string) => new ApiError('validation_failed', undefined, { coupon_code: [reason] })

export const checkStorefrontCoupon = defineOp({
  id: 'storefront.cart.coupon', tag, access: read, scope: ['store'],
  summary: 'Check a coupon code against a cart: whether it applies, why not, and the discounted cart',
  description: 'The coupon rules of an order (active, validity window, usage limit, minimum subtotal; the discount never exceeds the subtotal and never touches the tip). A coupon that does not apply is `valid: false` with the `reason`, not an error; a cart that cannot be priced is 422. Nothing is written.',
  input: v.object({ ...CartInput.entries, coupon_code: CouponCode }),
  output: { type: 'object', required: ['coupon_code', 'valid', 'reason', 'discount', 'cart'], properties: { coupon_code: str, valid: bool, reason: nullable(str), discount: { type: 'number' }, cart: CartSchema } },
  run: (ctx, { coupon_code, ...cart }) => {
    const store = storeOf(ctx)
    const now = nowIso()
    const draft = draftCart(ctx.svc, store, cart, now)
    const c = couponOnDraft(ctx.svc, store, draft, coupon_code, now)
    if (!c.ok) return { coupon_code, valid: false, reason: c.reason, discount: 0, cart: cartView(store, draft) }
    return { coupon_code: c.draft.coupon_code ?? coupon_code, valid: true, reason: null, discount: fromCents(c.draft.discount), cart: cartView(store, c.draft) }
  },
})

const TrackToken = v.object({ track_token: v.pipe(v.string(), v.minLength(1), v.maxLength(100)) })

/** The token's store's order with this track token; any other (or none) is the same 404 (api-v1 §1). */
function orderByTrackToken(ctx: OpCtx, token: string): OrderRow {
  const row = ctx.svc.orders.rowByTrackToken(token)
  if (!row || row.store_id !== storefrontOf(ctx).storeId) throw notFound('order')
  return row
}

export const trackStorefrontOrder = defineOp({
  id: 'storefront.orders.track', tag, access: orders, scope: ['store'], input: TrackToken,
  summary: 'Live status of an order placed here, by its track token',
  description: 'Kitchen status, delivery status, timeline and lines, as the public tracking page shows them, plus `continue_url`. An order of another store is 404 `not_found`.',
  output: { ...TrackingSchema, properties: { ...TrackingSchema.properties, continue_url: { type: 'string', format: 'uri' } } },
  run: (ctx, { track_token }) => {
    const row = orderByTrackToken(ctx, track_token)
    return { ...trackingView(ctx.svc, row), continue_url: ctx.svc.orders.full(row).track_url }
  },
})

export const getStorefrontOrder = defineOp({
  id: 'storefront.orders.get', tag, access: orders, scope: ['store'], input: TrackToken,
  summary: 'An order placed here, in full (lines, totals, paid or not), by its track token',
  description: 'An order of another store is 404 `not_found`.',
  output: { ...OrderSchema, properties: { ...OrderSchema.properties, continue_url: { type: 'string', format: 'uri' } } },
  run: (ctx, { track_token }) => {
    const view = ctx.svc.orders.full(orderByTrackToken(ctx, track_token))
    return { ...view, continue_url: view.track_url }
  },
})

/** Storefront agent operations, in ALL_OPS (src/ops/index.ts). */
export const storefrontAgentOps = [
  getStoreInfo, getOpeningHours, listFulfillmentModes, listStorefrontCategories, searchStorefrontMenu, getStorefrontItem,
  priceStorefrontCart, checkStorefrontCoupon, trackStorefrontOrder, getStorefrontOrder,
]
