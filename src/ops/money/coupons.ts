/**
 * Coupons (docs/storefront.md "Coupons"): the owner (capability orders:read / orders:write, as the
 * spec's MCP coupon tools) and staff with `coupons` manage them through the same operations. Writes
 * are store-actor messages (actors/store-coupons.ts), serialised with the orders that redeem the
 * coupon; reads are direct. Codes are case-insensitive and unique per store.
 */
import * as v from 'valibot'
import { defineOp, type Access } from '../op.ts'
import { storeOf } from '../scope.ts'
import { Id, Money } from '../schemas/common.ts'
import { fromCents } from '../../domain/money.ts'
import { COUPON_KINDS } from '../../domain/coupons.ts'
import { couponReads, type CouponRow } from '../../storage/coupons.ts'
import { named } from '../schemas/named.ts'

const tag = 'Coupons'
const read: Access = { owner: 'orders:read', staff: 'coupons' }
const write: Access = { owner: 'orders:write', staff: 'coupons' }
const description = 'Body `{code, kind: percent|fixed, value, min_order?, starts_at?, ends_at?, usage_limit?, active?}`; `value` is a whole percent (1–100) or an amount. Codes are case-insensitive and unique per store.'

const IsoTime = v.pipe(v.string(), v.isoTimestamp('Use an ISO 8601 timestamp with offset, e.g. 2026-01-01T00:00:00Z.'))
const fields = {
  code: v.pipe(v.string(), v.trim(), v.regex(/^[A-Za-z0-9_-]{2,40}$/, 'Use 2 to 40 letters, digits, - or _.')),
  kind: v.picklist(COUPON_KINDS),
  /** percent: 1..100; fixed: an amount. */
  value: v.pipe(v.number(), v.minValue(0.01), v.maxValue(1_000_000)),
  min_order: v.optional(Money),
  starts_at: v.optional(v.nullable(IsoTime)),
  ends_at: v.optional(v.nullable(IsoTime)),
  usage_limit: v.optional(v.nullable(v.pipe(v.number(), v.integer(), v.minValue(1)))),
  active: v.optional(v.boolean()),
}
export const CouponCreate = v.object(fields)
export const CouponUpdate = v.partial(v.object(fields))
const couponId = { coupon_id: Id }

export const CouponSchema = {
  type: 'object', required: ['id', 'code', 'kind', 'value', 'min_order', 'uses', 'active'],
  properties: {
    id: { type: 'integer' }, code: { type: 'string' }, kind: { type: 'string', enum: [...COUPON_KINDS] }, value: { type: 'number' },
    min_order: { type: 'number' }, starts_at: { type: ['string', 'null'] }, ends_at: { type: ['string', 'null'] }, usage_limit: { type: ['integer', 'null'] },
    uses: { type: 'integer' }, active: { type: 'boolean' }, created_at: { type: 'string' }, updated_at: { type: 'string' },
  },
}
named('Coupon', CouponSchema)

export const couponView = (c: CouponRow) => ({
  id: c.id, code: c.code, kind: c.kind, value: c.kind === 'percent' ? c.value : fromCents(c.value), min_order: fromCents(c.min_order),
  starts_at: c.starts_at, ends_at: c.ends_at, usage_limit: c.usage_limit, uses: c.uses, active: c.active === 1, created_at: c.created_at, updated_at: c.updated_at,
})

export const listCoupons = defineOp({
  id: 'coupons.list', tag, summary: 'A store\'s coupons', access: read, scope: ['store'],
  output: { type: 'array', items: CouponSchema },
  run: (ctx) => couponReads(ctx.svc.db).list(storeOf(ctx).id).map(couponView),
})

export const createCoupon = defineOp({
  id: 'coupons.create', tag, summary: 'Create a coupon', description, access: write, scope: ['store'],
  input: CouponCreate, output: CouponSchema,
  run: async (ctx, input) =>
    couponView(await ctx.svc.actors.stores.ask<CouponRow>(storeOf(ctx).id, (replyTo) => ({ type: 'coupon_create', input, replyTo }))),
})

export const updateCoupon = defineOp({
  id: 'coupons.update', tag, summary: 'Update a coupon', description, access: write, scope: ['store'],
  input: v.object({ ...couponId, ...CouponUpdate.entries }), output: CouponSchema,
  run: async (ctx, { coupon_id, ...input }) =>
    couponView(await ctx.svc.actors.stores.ask<CouponRow>(storeOf(ctx).id, (replyTo) => ({ type: 'coupon_update', couponId: coupon_id, input, replyTo }))),
})

export const deleteCoupon = defineOp({
  id: 'coupons.delete', tag, summary: 'Delete a coupon', access: write, scope: ['store'], empty: true,
  input: v.object(couponId),
  run: async (ctx, { coupon_id }) => {
    await ctx.svc.actors.stores.ask<null>(storeOf(ctx).id, (replyTo) => ({ type: 'coupon_delete', couponId: coupon_id, replyTo }))
  },
})

export const couponOps = [listCoupons, createCoupon, updateCoupon, deleteCoupon]
