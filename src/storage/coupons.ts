/**
 * Coupons in SQLite (docs/storefront.md "Coupons"). Reads are direct (ARCHITECTURE 7); the writes
 * are called only inside committer transactions run by the store actor that owns the coupon
 * (src/actors/store-coupons.ts) and by its order creation (redemption), so they are serialised
 * with each other and with the orders that use the coupon.
 */
import { perDb, type Db } from './db.ts'
import { normalizeCode, type Coupon, type CouponSettings, type FoundCoupon } from '../domain/coupons.ts'

export interface CouponRow {
  id: number; store_id: number; code: string; kind: 'percent' | 'fixed'; value: number; min_order: number; starts_at: string | null; ends_at: string | null
  usage_limit: number | null; uses: number; active: number; created_at: string; updated_at: string
}

/** The row as the coupon rules read it, with its id (domain/coupons.ts `priceCoupon`). */
export const foundCoupon = (c: CouponRow | undefined): FoundCoupon | undefined => (c ? Object.assign(couponOf(c), { id: c.id }) : undefined)

export const couponOf = (c: CouponRow): Coupon => ({
  code: c.code, kind: c.kind, value: c.value, minOrder: c.min_order, startsAt: c.starts_at, endsAt: c.ends_at, usageLimit: c.usage_limit, uses: c.uses, active: c.active === 1,
})

function prepare(db: Db) {
  return {
    byId: db.prepare<[number, number], CouponRow>('SELECT * FROM coupons WHERE id = ? AND store_id = ?'),
    byCode: db.prepare<[number, string], CouponRow>('SELECT * FROM coupons WHERE store_id = ? AND code = ?'),
    list: db.prepare<[number], CouponRow>('SELECT * FROM coupons WHERE store_id = ? ORDER BY id'),
    insert: db.prepare<unknown[], CouponRow>(`INSERT INTO coupons (store_id, code, kind, value, min_order, starts_at, ends_at, usage_limit, active, created_at, updated_at)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING *`),
    // Never `uses`: only redemptions change it, in the order's own transaction.
    update: db.prepare<unknown[], CouponRow>(`UPDATE coupons SET code = ?, kind = ?, value = ?, min_order = ?, starts_at = ?, ends_at = ?, usage_limit = ?, active = ?, updated_at = ?
      WHERE id = ? AND store_id = ? RETURNING *`),
    remove: db.prepare('DELETE FROM coupons WHERE id = ? AND store_id = ?'),
    use: db.prepare('UPDATE coupons SET uses = uses + 1 WHERE id = ? AND active = 1 AND (usage_limit IS NULL OR uses < usage_limit)'),
    redemption: db.prepare('INSERT INTO coupon_redemptions (coupon_id, order_id, discount, created_at) VALUES (?, ?, ?, ?)'),
  }
}

const stmts = perDb(prepare)

const columns = (c: CouponSettings) =>
  [c.code, c.kind, c.value, c.minOrder, c.startsAt, c.endsAt, c.usageLimit, c.active ? 1 : 0] as const

/** Direct reads. */
export const couponReads = (db: Db) => ({
  byId: (storeId: number, id: number): CouponRow | undefined => stmts(db).byId.get(id, storeId),
  /** Codes match case-insensitively (stored normalised). */
  byCode: (storeId: number, code: string): CouponRow | undefined => stmts(db).byCode.get(storeId, normalizeCode(code)),
  list: (storeId: number): CouponRow[] => stmts(db).list.all(storeId),
})

/** Writes, inside a committer transaction. */
export const couponWrites = {
  insert: (db: Db, storeId: number, c: CouponSettings, now: string): CouponRow =>
    stmts(db).insert.get(storeId, ...columns(c), now, now)!,
  /** The updated row; undefined when the coupon is gone. */
  update: (db: Db, storeId: number, id: number, c: CouponSettings, now: string): CouponRow | undefined =>
    stmts(db).update.get(...columns(c), now, id, storeId),
  /**
   * False when the coupon is gone. Orders that used it keep `coupon_code` and `discount` (their
   * own columns, no foreign key); its redemption rows, which only count uses of a live coupon, go
   * with it (ON DELETE CASCADE), so a coupon with past orders deletes without a constraint error.
   */
  remove: (db: Db, storeId: number, id: number): boolean => stmts(db).remove.run(id, storeId).changes > 0,
  /** Count one use for `orderId`; false when the coupon is used up, inactive or gone meanwhile. */
  redeem(db: Db, couponId: number, orderId: number, discount: number, now: string): boolean {
    const s = stmts(db)
    if (s.use.run(couponId).changes === 0) return false
    s.redemption.run(couponId, orderId, discount, now)
    return true
  },
}

/** A write refused by UNIQUE (store_id, code). */
export const isDuplicateCode = (err: unknown): boolean =>
  (err as { code?: string } | null)?.code === 'SQLITE_CONSTRAINT_UNIQUE'
