/**
 * Coupons (docs/storefront.md "Coupons"): pure pricing of a discount. Percent or fixed amount, a
 * minimum order, a validity window and a usage limit; the discount never exceeds the subtotal and
 * never touches the tip.
 */

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
