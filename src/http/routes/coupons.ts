/**
 * Coupons (docs/storefront.md "Coupons"): the owner and staff with `coupons` manage them through
 * the same operations (src/ops/money/coupons.ts); storefront orders redeem them in the store actor
 * (actors/store.ts), so the usage limit holds even when the last use is raced.
 */
import { bind } from '../bind.ts'
import * as coupons from '../../ops/money/coupons.ts'

const store = { store: 'id' } as const
const coupon = { couponId: 'coupon_id' }

export const couponRoutes = [
  bind(coupons.listCoupons, { method: 'GET', path: '/restaurants/{id}/coupons', auth: 'owner', ids: store }),
  bind(coupons.createCoupon, { method: 'POST', path: '/restaurants/{id}/coupons', auth: 'owner', ids: store }),
  bind(coupons.updateCoupon, { method: 'PUT', path: '/restaurants/{id}/coupons/{couponId}', auth: 'owner', ids: store, params: coupon }),
  bind(coupons.deleteCoupon, { method: 'DELETE', path: '/restaurants/{id}/coupons/{couponId}', auth: 'owner', ids: store, params: coupon }),
  bind(coupons.listCoupons, { method: 'GET', path: '/staff/coupons', auth: 'staff' }),
  bind(coupons.createCoupon, { method: 'POST', path: '/staff/coupons', auth: 'staff' }),
  bind(coupons.updateCoupon, { method: 'PUT', path: '/staff/coupons/{couponId}', auth: 'staff', params: coupon }),
  bind(coupons.deleteCoupon, { method: 'DELETE', path: '/staff/coupons/{couponId}', auth: 'staff', params: coupon }),
]
