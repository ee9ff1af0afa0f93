/**
 * Coupons (docs/storefront.md "Coupons"): the owner and staff with `coupons` manage them through
 * the same operations (src/ops/money/coupons.ts); storefront orders redeem them in the store actor
 * (actors/store.ts), so the usage limit holds even when the last use is raced.
 */
import { ownerAndStaff } from '../bind.ts'
import * as coupons from '../../ops/money/coupons.ts'

const coupon = { couponId: 'coupon_id' }

export const couponRoutes = ownerAndStaff([
  { op: coupons.listCoupons, method: 'GET', path: '/coupons' },
  { op: coupons.createCoupon, method: 'POST', path: '/coupons' },
  { op: coupons.updateCoupon, method: 'PUT', path: '/coupons/{couponId}', params: coupon },
  { op: coupons.deleteCoupon, method: 'DELETE', path: '/coupons/{couponId}', params: coupon },
])
