/**
 * Pricing a cart without writing an order (issue 12: the storefront agent's `price_cart` and
 * `apply_coupon`, the customer's `reorder`). It runs the very functions the store actor prices an
 * order with (domain/orders.ts `draftOrder`, domain/coupons.ts `priceCoupon`) on the store's
 * live menu, so a priced cart and the order placed from it come to the same totals while the menu
 * and the coupon stay as they are. Nothing here is a rule of its own.
 */
import { ApiError } from '../../errors.ts'
import { draftOrder, type OrderDraft, type OrderInput } from '../../domain/orders.ts'
import { fromCents } from '../../domain/money.ts'
import { verticalOf } from '../../domain/verticals.ts'
import { priceCoupon } from '../../domain/coupons.ts'
import { couponReads, foundCoupon } from '../../storage/coupons.ts'
import { pricingIndex, type StoreRow } from '../../storage/stores.ts'
import { pricedLineView } from '../../storage/orders.ts'
import type { Services } from '../../services.ts'
import { storefrontTypes } from '../web/storefront.ts'
import { named } from '../schemas/named.ts'

/** A cart as an agent builds it: the order's lines and money fields, no diner details. */
export interface Cart {
  type?: string | undefined
  table_number?: string | number | null | undefined
  address?: string | null | undefined
  tip_amount?: number | null | undefined
  items: OrderInput['items']
}

/** The storefront order type a cart is priced as when it names none: the first the store accepts. */
export const defaultCartType = (store: StoreRow): string => storefrontTypes(store)[0] ?? 'takeaway'


/**
 * The order draft the store actor would price for `cart` now (422 `validation_failed` keyed like
 * the order input when an item is sold out, unknown, or a variation/extra is not offered).
 */
export function draftCart(svc: Pick<Services, 'stores'>, store: StoreRow, cart: Cart, now: string): OrderDraft {
  const input: OrderInput = { type: cart.type ?? defaultCartType(store), table_number: cart.table_number ?? null, address: cart.address ?? null, tip_amount: cart.tip_amount ?? null, items: cart.items }
  const drafted = draftOrder(verticalOf(store.store_type), pricingIndex(svc.stores.menu(store.id)), input, now)
  if (!drafted.ok) throw new ApiError('validation_failed', undefined, drafted.errors)
  return drafted.draft
}

/** The coupon priced into `draft` as an order would be, or the reason it does not apply. */
export function couponOnDraft(svc: Pick<Services, 'db'>, store: StoreRow, draft: OrderDraft, code: string, now: string) {
  const priced = priceCoupon(draft, foundCoupon(couponReads(svc.db).byCode(store.id, code)), now)
  return priced.ok ? { ok: true as const, draft: priced.draft } : { ok: false as const, reason: priced.errors.coupon_code?.[0] ?? 'This coupon does not apply.' }
}

/** A priced draft as the API shows money (currency units, api-v1 §2.4). */
export function cartView(store: StoreRow, d: OrderDraft) {
  return {
    type: d.type,
    currency: store.currency,
    items: d.lines.map(pricedLineView),
    item_count: d.lines.reduce((n, l) => n + l.quantity, 0),
    subtotal: fromCents(d.subtotal),
    coupon_code: d.coupon_code,
    discount: fromCents(d.discount),
    tip_amount: fromCents(d.tip_amount),
    total: fromCents(d.total),
  }
}

const num = { type: 'number' }
const int = { type: 'integer' }
const str = { type: 'string' }
const nullable = (s: Record<string, unknown>) => ({ anyOf: [s, { type: 'null' }] })

/** JSON Schema of `cartView` (OpenAPI, MCP tool descriptions). */
export const CartSchema = {
  type: 'object',
  required: ['type', 'currency', 'items', 'item_count', 'subtotal', 'coupon_code', 'discount', 'tip_amount', 'total'],
  properties: {
    type: str, currency: str, item_count: int, subtotal: num, coupon_code: nullable(str), discount: num, tip_amount: num, total: num,
    items: { type: 'array', items: { type: 'object', required: ['item_id', 'name', 'variation', 'quantity', 'unit_price', 'extras', 'line_total', 'note'], properties: {
      item_id: int, name: str, variation: nullable({ type: 'object', required: ['id', 'name'], properties: { id: int, name: str } }), quantity: int, unit_price: num,
      extras: { type: 'array', items: { type: 'object', required: ['id', 'name', 'price'], properties: { id: int, name: str, price: num } } }, line_total: num, note: nullable(str),
    } } },
  },
}
named('Cart', CartSchema)
