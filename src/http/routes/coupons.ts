/**
 * Coupons (docs/storefront.md "Coupons"): the owner (capability orders:read / orders:write, as the
 * spec's MCP coupon tools) and staff with `coupons` manage them; storefront orders redeem them
 * through a store-actor hook, so the usage limit holds even when the last use is raced.
 */
import * as v from 'valibot'
import { route } from '../route.ts'
import { ApiError, notFound } from '../../errors.ts'
import { Money } from '../schemas.ts'
import { toCents, fromCents } from '../../domain/money.ts'
import { applyCoupon, normalizeCode, COUPON_KINDS, type Coupon } from '../../domain/coupons.ts'
import type { Services } from '../../services.ts'
import type { Db } from '../../storage/db.ts'
import { nowIso } from '../../storage/db.ts'
import type { OrderHooks } from '../../actors/store.ts'
import { ownedStore } from './owner-access.ts'

interface CouponRow {
  id: number; store_id: number; code: string; kind: 'percent' | 'fixed'; value: number; min_order: number; starts_at: string | null; ends_at: string | null
  usage_limit: number | null; uses: number; active: number; created_at: string; updated_at: string
}

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
const CouponCreate = v.object(fields)
const CouponUpdate = v.partial(v.object(fields))
type CouponInput = Partial<v.InferOutput<typeof CouponCreate>>

export const CouponSchema = {
  type: 'object', required: ['id', 'code', 'kind', 'value', 'min_order', 'uses', 'active'],
  properties: {
    id: { type: 'integer' }, code: { type: 'string' }, kind: { type: 'string', enum: [...COUPON_KINDS] }, value: { type: 'number' },
    min_order: { type: 'number' }, starts_at: { type: ['string', 'null'] }, ends_at: { type: ['string', 'null'] }, usage_limit: { type: ['integer', 'null'] },
    uses: { type: 'integer' }, active: { type: 'boolean' }, created_at: { type: 'string' }, updated_at: { type: 'string' },
  },
}

export const couponView = (c: CouponRow) => ({
  id: c.id, code: c.code, kind: c.kind, value: c.kind === 'percent' ? c.value : fromCents(c.value), min_order: fromCents(c.min_order),
  starts_at: c.starts_at, ends_at: c.ends_at, usage_limit: c.usage_limit, uses: c.uses, active: c.active === 1, created_at: c.created_at, updated_at: c.updated_at,
})

const couponOf = (c: CouponRow): Coupon => ({
  code: c.code, kind: c.kind, value: c.value, minOrder: c.min_order, startsAt: c.starts_at, endsAt: c.ends_at, usageLimit: c.usage_limit, uses: c.uses, active: c.active === 1,
})

const byCode = (db: Db, storeId: number, code: string) =>
  db.prepare<[number, string], CouponRow>('SELECT * FROM coupons WHERE store_id = ? AND code = ?').get(storeId, normalizeCode(code))

/**
 * The store-actor hook that redeems `code` on one order: the discount is priced in the actor
 * (domain/coupons.ts), and the use is counted in the order's own transaction with a guard, so
 * two orders racing for the last use cannot both get it (the loser is rolled back with a 422).
 */
export function couponHooks(svc: Services, storeId: number, code: string): OrderHooks {
  let couponId = 0
  const refuse = (message: string) => ({ ok: false as const, errors: { coupon_code: [message] } })
  return {
    adjust(draft, now) {
      const row = byCode(svc.db, storeId, code)
      if (!row) return refuse('This coupon does not exist.')
      const r = applyCoupon(couponOf(row), draft.subtotal, now)
      if (!r.ok) return refuse(r.reason)
      couponId = row.id
      return { ok: true, draft: { ...draft, coupon_code: row.code, discount: r.discount, total: draft.subtotal - r.discount + draft.tip_amount } }
    },
    commit(db, orderId, draft) {
      const used = db.prepare('UPDATE coupons SET uses = uses + 1 WHERE id = ? AND active = 1 AND (usage_limit IS NULL OR uses < usage_limit)').run(couponId)
      if (used.changes === 0) throw new ApiError('validation_failed', undefined, { coupon_code: ['This coupon has been used up.'] })
      db.prepare('INSERT INTO coupon_redemptions (coupon_id, order_id, discount, created_at) VALUES (?, ?, ?, ?)').run(couponId, orderId, draft.discount, nowIso())
    },
  }
}

// ---- management ----------------------------------------------------------------------------------

function checkInput(b: CouponInput, current?: CouponRow) {
  const kind = b.kind ?? current?.kind
  const errors: Record<string, string[]> = {}
  if (b.value !== undefined && kind === 'percent' && !(Number.isInteger(b.value) && b.value >= 1 && b.value <= 100)) errors.value = ['A percent coupon takes a whole number from 1 to 100.']
  if (b.value !== undefined && kind === 'fixed' && Math.abs(b.value * 100 - Math.round(b.value * 100)) > 1e-6) errors.value = ['Use at most two decimals.']
  if (b.kind !== undefined && b.value === undefined && current && b.kind !== current.kind) errors.value = ['Send `value` when changing `kind`.']
  const starts = b.starts_at !== undefined ? b.starts_at : current?.starts_at ?? null
  const ends = b.ends_at !== undefined ? b.ends_at : current?.ends_at ?? null
  if (starts && ends && Date.parse(ends) <= Date.parse(starts)) errors.ends_at = ['`ends_at` must be after `starts_at`.']
  if (Object.keys(errors).length) throw new ApiError('validation_failed', undefined, errors)
  const value = b.value === undefined ? undefined : kind === 'percent' ? b.value : toCents(b.value)
  return {
    code: b.code === undefined ? undefined : normalizeCode(b.code), kind: b.kind, value,
    min_order: b.min_order === undefined ? undefined : toCents(b.min_order),
    starts_at: b.starts_at, ends_at: b.ends_at, usage_limit: b.usage_limit, active: b.active === undefined ? undefined : b.active ? 1 : 0,
  }
}

const duplicate = () => new ApiError('validation_failed', undefined, { code: ['A coupon with this code already exists.'] })
const isUnique = (err: unknown) => err instanceof Error && /UNIQUE constraint failed/.test(err.message)
const getCoupon = (svc: Services, storeId: number, id: number) => svc.db.prepare<[number, number], CouponRow>('SELECT * FROM coupons WHERE id = ? AND store_id = ?').get(id, storeId)

export const coupons = {
  list: (svc: Services, storeId: number) =>
    svc.db.prepare<[number], CouponRow>('SELECT * FROM coupons WHERE store_id = ? ORDER BY id').all(storeId).map(couponView),
  async create(svc: Services, storeId: number, b: v.InferOutput<typeof CouponCreate>) {
    const c = checkInput(b)
    const now = nowIso()
    try {
      const id = await svc.committer.write((db) => Number(db.prepare(`INSERT INTO coupons (store_id, code, kind, value, min_order, starts_at, ends_at, usage_limit, active, created_at, updated_at)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`).run(storeId, c.code, c.kind, c.value, c.min_order ?? 0, c.starts_at ?? null, c.ends_at ?? null, c.usage_limit ?? null, c.active ?? 1, now, now).lastInsertRowid))
      return couponView(getCoupon(svc, storeId, id)!)
    } catch (err) {
      throw isUnique(err) ? duplicate() : err
    }
  },
  async update(svc: Services, storeId: number, id: number, b: CouponInput) {
    const current = getCoupon(svc, storeId, id)
    if (!current) throw notFound('coupon')
    const c = checkInput(b, current)
    const cols = Object.entries({ ...c, updated_at: nowIso() }).filter(([, x]) => x !== undefined)
    try {
      await svc.committer.write((db) => db.prepare(`UPDATE coupons SET ${cols.map(([k]) => `${k} = ?`).join(', ')} WHERE id = ? AND store_id = ?`).run(...cols.map(([, x]) => x), id, storeId))
    } catch (err) {
      throw isUnique(err) ? duplicate() : err
    }
    return couponView(getCoupon(svc, storeId, id)!)
  },
  async remove(svc: Services, storeId: number, id: number) {
    const r = await svc.committer.write((db) => db.prepare('DELETE FROM coupons WHERE id = ? AND store_id = ?').run(id, storeId))
    if (r.changes === 0) throw notFound('coupon')
    return null
  },
}

const tag = 'Coupons'
const description = 'Body `{code, kind: percent|fixed, value, min_order?, starts_at?, ends_at?, usage_limit?, active?}`; `value` is a whole percent (1–100) or an amount. Codes are case-insensitive and unique per store.'

export const couponRoutes = [
  route({
    method: 'GET', path: '/restaurants/{id}/coupons', tag, auth: 'owner', capability: 'orders:read', summary: 'A store\'s coupons', response: { type: 'array', items: CouponSchema },
    handler: ({ svc, principal, params }) => coupons.list(svc, ownedStore(svc, principal, params.id).id),
  }),
  route({
    method: 'POST', path: '/restaurants/{id}/coupons', tag, auth: 'owner', capability: 'orders:write', body: CouponCreate, status: 201, response: CouponSchema,
    summary: 'Create a coupon', description,
    handler: ({ svc, principal, params, body }) => coupons.create(svc, ownedStore(svc, principal, params.id).id, body),
  }),
  route({
    method: 'PUT', path: '/restaurants/{id}/coupons/{couponId}', tag, auth: 'owner', capability: 'orders:write', body: CouponUpdate, response: CouponSchema,
    summary: 'Update a coupon', description,
    handler: ({ svc, principal, params, body }) => coupons.update(svc, ownedStore(svc, principal, params.id).id, Number(params.couponId), body),
  }),
  route({
    method: 'DELETE', path: '/restaurants/{id}/coupons/{couponId}', tag, auth: 'owner', capability: 'orders:write', status: 204, summary: 'Delete a coupon',
    handler: ({ svc, principal, params }) => coupons.remove(svc, ownedStore(svc, principal, params.id).id, Number(params.couponId)),
  }),
  route({
    method: 'GET', path: '/staff/coupons', tag, auth: 'staff', permission: 'coupons', summary: 'The store\'s coupons', response: { type: 'array', items: CouponSchema },
    handler: ({ svc, principal }) => coupons.list(svc, principal.storeId),
  }),
  route({
    method: 'POST', path: '/staff/coupons', tag, auth: 'staff', permission: 'coupons', body: CouponCreate, status: 201, response: CouponSchema,
    summary: 'Create a coupon', description,
    handler: ({ svc, principal, body }) => coupons.create(svc, principal.storeId, body),
  }),
  route({
    method: 'PUT', path: '/staff/coupons/{couponId}', tag, auth: 'staff', permission: 'coupons', body: CouponUpdate, response: CouponSchema,
    summary: 'Update a coupon', description,
    handler: ({ svc, principal, params, body }) => coupons.update(svc, principal.storeId, Number(params.couponId), body),
  }),
  route({
    method: 'DELETE', path: '/staff/coupons/{couponId}', tag, auth: 'staff', permission: 'coupons', status: 204, summary: 'Delete a coupon',
    handler: ({ svc, principal, params }) => coupons.remove(svc, principal.storeId, Number(params.couponId)),
  }),
]
