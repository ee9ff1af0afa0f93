/**
 * Coupons (docs/storefront.md "Coupons"), pure: the pricing of a discount (percent or fixed amount,
 * a minimum order, a validity window and a usage limit; the discount never exceeds the subtotal and
 * never touches the tip) and the rules of a manager's edit.
 */
import { hasAtMostTwoDecimals, toCents } from './money.ts'
import type { FieldErrors } from '../errors.ts'
import type { OrderDraft } from './orders.ts'

export const COUPON_KINDS = ['percent', 'fixed'] as const
export type CouponKind = (typeof COUPON_KINDS)[number]

export interface Coupon {
  code: string
  kind: CouponKind
  /** percent: 1..100; fixed: cents. */
  value: number
  /** Cents of subtotal the order must reach. */
  minOrder: number
  startsAt: string | null
  endsAt: string | null
  usageLimit: number | null
  uses: number
  active: boolean
}

export type CouponResult = { ok: true; discount: number } | { ok: false; reason: string }

/** Codes are matched case-insensitively and without surrounding blanks. */
export const normalizeCode = (code: string): string => code.trim().toUpperCase()

/** The discount in cents for `subtotal` at `now` (ISO), or why the coupon does not apply. */
export function applyCoupon(c: Coupon, subtotal: number, now: string): CouponResult {
  if (!c.active) return { ok: false, reason: 'This coupon is not active.' }
  if (c.startsAt && Date.parse(now) < Date.parse(c.startsAt)) return { ok: false, reason: 'This coupon is not valid yet.' }
  if (c.endsAt && Date.parse(now) >= Date.parse(c.endsAt)) return { ok: false, reason: 'This coupon has expired.' }
  if (c.usageLimit !== null && c.uses >= c.usageLimit) return { ok: false, reason: 'This coupon has been used up.' }
  if (subtotal < c.minOrder) return { ok: false, reason: `This coupon needs an order of at least ${(c.minOrder / 100).toFixed(2)}.` }
  const raw = c.kind === 'percent' ? Math.round((subtotal * c.value) / 100) : c.value
  return { ok: true, discount: Math.max(0, Math.min(raw, subtotal)) }
}

/** A create or update request as the API takes it: `value` and `min_order` in currency units. */
export interface CouponFields {
  code?: string
  kind?: CouponKind
  value?: number
  min_order?: number
  starts_at?: string | null
  ends_at?: string | null
  usage_limit?: number | null
  active?: boolean
}

/** The settings a manager writes (everything but `uses`, which only orders change). */
export type CouponSettings = Omit<Coupon, 'uses'>

export type CouponEdit = { ok: true; settings: CouponSettings } | { ok: false; errors: Record<string, string[]> }

/**
 * The settings after applying `input` to `current` (null: a new coupon, whose `code`, `kind` and
 * `value` the request schema requires), or the field errors (422). Rules that need both the old
 * and the new values (the kind a value is checked against, the window's order) are decided here,
 * in the store actor's turn, so two writes of one coupon cannot each pass against stale values.
 */
export function editCoupon(current: CouponSettings | null, input: CouponFields): CouponEdit {
  const kind = input.kind ?? current?.kind
  const errors: Record<string, string[]> = {}
  const v = input.value
  if (v !== undefined && kind === 'percent' && !(Number.isInteger(v) && v >= 1 && v <= 100)) errors.value = ['A percent coupon takes a whole number from 1 to 100.']
  if (v !== undefined && kind === 'fixed' && !hasAtMostTwoDecimals(v)) errors.value = ['Use at most two decimals.']
  if (current && input.kind !== undefined && input.kind !== current.kind && v === undefined) errors.value = ['Send `value` when changing `kind`.']
  const startsAt = input.starts_at !== undefined ? input.starts_at : current?.startsAt ?? null
  const endsAt = input.ends_at !== undefined ? input.ends_at : current?.endsAt ?? null
  if (startsAt && endsAt && Date.parse(endsAt) <= Date.parse(startsAt)) errors.ends_at = ['`ends_at` must be after `starts_at`.']
  if (!current) for (const f of ['code', 'kind', 'value'] as const) if (input[f] === undefined) errors[f] ??= ['This field is required.']
  if (Object.keys(errors).length > 0 || !kind) return { ok: false, errors }
  return {
    ok: true,
    settings: {
      code: input.code !== undefined ? normalizeCode(input.code) : current!.code,
      kind,
      value: v === undefined ? current!.value : kind === 'percent' ? v : toCents(v),
      minOrder: input.min_order !== undefined ? toCents(input.min_order) : current?.minOrder ?? 0,
      startsAt,
      endsAt,
      usageLimit: input.usage_limit !== undefined ? input.usage_limit : current?.usageLimit ?? null,
      active: input.active ?? current?.active ?? true,
    },
  }
}

/** A coupon as an order finds it by its code: the rules plus the row's id (the redemption names it). */
export interface FoundCoupon extends Coupon { id: number }

export type CouponPricing = { ok: true; draft: OrderDraft; couponId: number } | { ok: false; errors: FieldErrors }

/**
 * The one pricing of a coupon into an order draft, for the store actor's orders and for every priced
 * cart (src/ops/orders/cart.ts): `found` is the coupon the order's code names (undefined: no such code).
 * The discount never touches the tip.
 */
export function priceCoupon(draft: OrderDraft, found: FoundCoupon | undefined, now: string): CouponPricing {
  if (!found) return { ok: false, errors: { coupon_code: ['This coupon does not exist.'] } }
  const r = applyCoupon(found, draft.subtotal, now)
  if (!r.ok) return { ok: false, errors: { coupon_code: [r.reason] } }
  return { ok: true, draft: { ...draft, coupon_code: found.code, discount: r.discount, total: draft.subtotal - r.discount + draft.tip_amount }, couponId: found.id }
}
