/**
 * The store actor's coupons (ARCHITECTURE 3: a store actor owns its coupons). Create, update and
 * delete are store-actor messages, so they are serialised with each other and with the orders
 * that redeem the coupon: a PUT queued behind a DELETE finds no coupon and answers 404, never a
 * 500 (issue 10 #5). The decisions are pure (`reduceCoupon`; the rules, and `priceCoupon` for orders, are in
 * domain/coupons.ts); the shell applies the writes (`applyCouponEffect`), each durable before its
 * reply (ARCHITECTURE 5); the SQL is in storage/coupons.ts.
 */
import type { Ref, Result } from './system.ts'
import { fail, ok } from './system.ts'
import { ApiError, notFound, type FieldErrors } from '../errors.ts'
import { applyCoupon, editCoupon, type CouponFields, type CouponSettings } from '../domain/coupons.ts'
import type { Committer } from '../storage/commit.ts'
import { couponWrites, isDuplicateCode, type CouponRow } from '../storage/coupons.ts'
import type { Logger } from '../log.ts'

/** The store actor's coupon messages (part of StoreMsg). */
export type CouponMsg =
  | { type: 'coupon_create'; input: CouponFields; replyTo: Ref<Result<CouponRow>> }
  | { type: 'coupon_update'; couponId: number; input: CouponFields; replyTo: Ref<Result<CouponRow>> }
  | { type: 'coupon_delete'; couponId: number; replyTo: Ref<Result<null>> }

/** A coupon write for the shell; its outcome is the message's reply. */
export type CouponEffect =
  | { kind: 'coupon_insert'; settings: CouponSettings }
  | { kind: 'coupon_update'; couponId: number; settings: CouponSettings }
  | { kind: 'coupon_delete'; couponId: number }

export type CouponDecision = { ok: true; effect: CouponEffect } | { ok: false; error: ApiError }

const settingsOf = (r: CouponRow): CouponSettings => ({
  code: r.code, kind: r.kind, value: r.value, minOrder: r.min_order, startsAt: r.starts_at, endsAt: r.ends_at, usageLimit: r.usage_limit, active: r.active === 1,
})

const invalid = (errors: FieldErrors) => new ApiError('validation_failed', undefined, errors)

/**
 * Pure: the write a coupon message asks for, or why not. `current` is the coupon the message
 * names, read in the actor's turn (no other coupon write of the store can come in between).
 */
export function reduceCoupon(msg: CouponMsg, current: CouponRow | undefined): CouponDecision {
  switch (msg.type) {
    case 'coupon_create': {
      const edit = editCoupon(null, msg.input)
      return edit.ok ? { ok: true, effect: { kind: 'coupon_insert', settings: edit.settings } } : { ok: false, error: invalid(edit.errors) }
    }
    case 'coupon_update': {
      if (!current) return { ok: false, error: notFound('coupon') }
      const edit = editCoupon(settingsOf(current), msg.input)
      return edit.ok ? { ok: true, effect: { kind: 'coupon_update', couponId: current.id, settings: edit.settings } } : { ok: false, error: invalid(edit.errors) }
    }
    case 'coupon_delete':
      return current ? { ok: true, effect: { kind: 'coupon_delete', couponId: current.id } } : { ok: false, error: notFound('coupon') }
    default: {
      const never: never = msg
      return never
    }
  }
}

/**
 * Pure: the 422 for a redemption whose guard refused at commit time. `current` is the coupon as
 * the order's own transaction sees it: used up, deactivated or deleted since pricing (by an
 * earlier write of the same batch).
 */
export function redemptionRefused(current: CouponRow | undefined): ApiError {
  const why = !current ? 'This coupon does not exist.' : current.active !== 1 ? 'This coupon is not active.' : 'This coupon has been used up.'
  return invalid({ coupon_code: [why] })
}

/** What the coupon writes need: narrower than the store actor's dependencies (ARCHITECTURE 4). */
export interface CouponDeps { committer: Committer; log: Logger }

/** Shell: make one coupon write durable; resolves to the reply (never rejects). */
export async function applyCouponEffect(deps: CouponDeps, storeId: number, e: CouponEffect, now: string): Promise<Result<CouponRow | null>> {
  try {
    switch (e.kind) {
      case 'coupon_insert':
        return ok(await deps.committer.write((db) => couponWrites.insert(db, storeId, e.settings, now)))
      case 'coupon_update': {
        // Found in this turn; still answered 404 if the write finds it gone.
        const row = await deps.committer.write((db) => couponWrites.update(db, storeId, e.couponId, e.settings, now))
        return row ? ok(row) : fail(notFound('coupon'))
      }
      case 'coupon_delete': {
        const removed = await deps.committer.write((db) => couponWrites.remove(db, storeId, e.couponId))
        return removed ? ok(null) : fail(notFound('coupon'))
      }
      default: {
        const never: never = e
        return never
      }
    }
  } catch (err) {
    // UNIQUE (store_id, code) decides a duplicate code: the one check no read in the turn can race.
    if (isDuplicateCode(err)) return fail(invalid({ code: ['A coupon with this code already exists.'] }))
    if (err instanceof ApiError) return fail(err)
    deps.log.error({ err, storeId, effect: e.kind }, 'coupon write failed')
    return fail(new ApiError('internal_error'))
  }
}
