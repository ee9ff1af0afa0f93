/**
 * The store actor's coupons (ARCHITECTURE 3: a store actor owns its coupons). Create, update and
 * delete are store-actor messages, so they are serialised with each other and with the orders
 * that redeem the coupon: a PUT queued behind a DELETE finds no coupon and answers 404, never a
 * 500 (issue 10 #5). Each write is durable before its reply (ARCHITECTURE 5); the rules of an
 * edit are pure (domain/coupons.ts `editCoupon`), the SQL is in storage/coupons.ts.
 */
import * as nact from 'nact'
import type { Ref, Result } from './system.ts'
import { fail, ok } from './system.ts'
import { ApiError, notFound } from '../errors.ts'
import { editCoupon, type CouponFields, type CouponSettings } from '../domain/coupons.ts'
import type { Committer } from '../storage/commit.ts'
import type { Db } from '../storage/db.ts'
import { nowIso } from '../storage/db.ts'
import { couponReads, couponWrites, isDuplicateCode, type CouponRow } from '../storage/coupons.ts'
import type { Logger } from '../log.ts'

/** The store actor's coupon messages (part of StoreMsg). */
export type CouponMsg =
  | { type: 'coupon_create'; input: CouponFields; replyTo: Ref<Result<CouponRow>> }
  | { type: 'coupon_update'; couponId: number; input: CouponFields; replyTo: Ref<Result<CouponRow>> }
  | { type: 'coupon_delete'; couponId: number; replyTo: Ref<Result<null>> }

/** What the coupon messages need: narrower than the service bag (ARCHITECTURE 4). */
export interface CouponDeps { db: Db; committer: Committer; log: Logger }

const settingsOf = (r: CouponRow): CouponSettings => ({
  code: r.code, kind: r.kind, value: r.value, minOrder: r.min_order, startsAt: r.starts_at, endsAt: r.ends_at, usageLimit: r.usage_limit, active: r.active === 1,
})

const invalid = (errors: Record<string, string[]>) => new ApiError('validation_failed', undefined, errors)

/** Handle one coupon message of store `storeId`: the reply leaves after the write is durable. */
export async function handleCouponMsg(deps: CouponDeps, storeId: number, msg: CouponMsg): Promise<void> {
  let r: Result<unknown>
  try {
    r = await run(deps, storeId, msg)
  } catch (err) {
    if (isDuplicateCode(err)) r = fail(invalid({ code: ['A coupon with this code already exists.'] }))
    else if (err instanceof ApiError) r = fail(err)
    else {
      deps.log.error({ err, storeId, msg: msg.type }, 'coupon write failed')
      r = fail(new ApiError('internal_error'))
    }
  }
  nact.dispatch(msg.replyTo as Ref<Result<unknown>>, r)
}

async function run(deps: CouponDeps, storeId: number, msg: CouponMsg): Promise<Result<unknown>> {
  switch (msg.type) {
    case 'coupon_create': {
      const edit = editCoupon(null, msg.input)
      if (!edit.ok) return fail(invalid(edit.errors))
      return ok(await deps.committer.write((db) => couponWrites.insert(db, storeId, edit.settings, nowIso())))
    }
    case 'coupon_update': {
      // Read in this actor's turn: no other coupon write of the store can come in between.
      const current = couponReads(deps.db).byId(storeId, msg.couponId)
      if (!current) return fail(notFound('coupon'))
      const edit = editCoupon(settingsOf(current), msg.input)
      if (!edit.ok) return fail(invalid(edit.errors))
      const row = await deps.committer.write((db) => couponWrites.update(db, storeId, msg.couponId, edit.settings, nowIso()))
      return row ? ok(row) : fail(notFound('coupon'))
    }
    case 'coupon_delete': {
      const removed = await deps.committer.write((db) => couponWrites.remove(db, storeId, msg.couponId))
      return removed ? ok(null) : fail(notFound('coupon'))
    }
    default: {
      const never: never = msg
      return never
    }
  }
}
