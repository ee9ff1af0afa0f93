/**
 * Which item fields a store type uses (issue 18 item 1, api-v1 §2.3): the vertical's capability
 * flags decide, for every front door that writes the menu (owner, staff, MCP). Pure.
 */
import type { FieldErrors } from '../errors.ts'
import { STORE_TYPES, VERTICALS, type Vertical } from './verticals.ts'

/** Food fields (`food_fields`) and goods fields (`goods_fields`) of an item or variant write. */
export const FOOD_FIELDS = ['is_vegan', 'is_halal', 'calories'] as const
export const GOODS_FIELDS = ['brand', 'brand_id', 'stock', 'sku'] as const

const typesWith = (cap: keyof Vertical['capabilities']) => STORE_TYPES.filter((t) => VERTICALS[t].capabilities[cap]).join(', ')

/**
 * The fields of `data` the vertical does not use, with why; empty when all are fine. A field sent as
 * null (or `false` for the food flags, their default) changes nothing and is let through, so a client
 * that always sends the whole shape keeps working.
 */
export function fieldsOutsideVertical(vertical: Vertical, data: Record<string, unknown>): FieldErrors {
  const errors: FieldErrors = {}
  const given = (k: string) => data[k] !== undefined && data[k] !== null && data[k] !== false
  if (!vertical.capabilities.food_fields) {
    for (const k of FOOD_FIELDS) if (given(k)) errors[k] = [`Only ${typesWith('food_fields')} stores use ${k}.`]
  }
  if (!vertical.capabilities.goods_fields) {
    for (const k of GOODS_FIELDS) if (given(k)) errors[k] = [`Only ${typesWith('goods_fields')} stores use ${k}.`]
  }
  return errors
}

/** Why a store of this vertical cannot have expiry batches, or null when it can. */
export const batchesRefused = (vertical: Vertical): string | null =>
  vertical.capabilities.expiry ? null : `Only ${typesWith('expiry')} stores track expiry batches.`

/** Why a store of this vertical cannot have brands, or null when it can. */
export const brandsRefused = (vertical: Vertical): string | null =>
  vertical.capabilities.goods_fields ? null : `Only ${typesWith('goods_fields')} stores have brands.`
