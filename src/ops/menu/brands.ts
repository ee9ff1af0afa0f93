/**
 * Brands and expiry batches of a goods store (issue 18 items 2 and 4, api-v1 §4.2 `/brands`;
 * docs/verticals.md "Brands", "Expiry"). Brand writes need the store's vertical to have
 * `goods_fields`, batch writes `expiry`; batch writes go through the store actor, which prices
 * and takes stock with them.
 */
import * as v from 'valibot'
import { defineOp, type Access } from '../op.ts'
import { storeOf } from '../scope.ts'
import { Id, Nullable, PageQuery, PaginatedSchema, ShortText, pageOf, paginate } from '../schemas/common.ts'
import { ItemSchema, named } from '../schemas/named.ts'
import { runMenuOp } from './menu-payloads.ts'
import { ApiError, notFound } from '../../errors.ts'
import { nowIso } from '../../storage/db.ts'
import { brandPage, brandView, brandWithItems, createBrand, deleteBrand, updateBrand } from '../../storage/brands.ts'
import { batchView, itemBatches } from '../../storage/stock.ts'
import { itemView, storeToday } from '../../storage/stores.ts'
import { verticalOf } from '../../domain/verticals.ts'
import { brandsRefused } from '../../domain/item-fields.ts'
import { isDate } from '../../domain/business-hours.ts'
import type { OpCtx as OpContext } from '../op.ts'
import { itemsChanged } from '../../actors/store.ts'

const tag = 'Brands'
const read: Access = { owner: 'menu:read' }
const write: Access = { owner: 'menu:write', staff: 'menu_edit' }
const PER_PAGE = 20

const str = { type: 'string' }
const nstr = { anyOf: [{ type: 'string' }, { type: 'null' }] }
export const BrandSchema = named('Brand', {
  type: 'object', required: ['id', 'name', 'slug'],
  properties: { id: { type: 'integer' }, name: str, slug: str, description: nstr, logo_url: nstr, item_count: { type: 'integer' }, created_at: str, updated_at: str },
})
const BrandDetailSchema = { ...BrandSchema, properties: { ...BrandSchema.properties, items: { type: 'array', items: ItemSchema } } }

const Slug = v.pipe(v.string(), v.regex(/^[a-z0-9]+(?:-[a-z0-9]+)*$/, 'Use lowercase letters, digits and single dashes.'), v.maxLength(80))
const BrandBody = {
  name: v.pipe(v.string(), v.trim(), v.minLength(1), v.maxLength(120)),
  slug: v.optional(Slug),
  description: Nullable(ShortText(2000)),
  logo_url: Nullable(v.pipe(v.string(), v.url(), v.maxLength(2000))),
}
const brandId = { brand_id: Id }

/** Brand writes apply to stores whose vertical has goods fields (issue 18 item 1). */
function goodsStore(ctx: OpContext) {
  const store = storeOf(ctx)
  const refused = brandsRefused(verticalOf(store.store_type))
  if (refused) throw new ApiError('not_for_store_type', refused)
  return store
}

function brandOut(ctx: OpContext, id: number) {
  const store = storeOf(ctx)
  const found = brandWithItems(ctx.svc.db, store.id, id)
  if (!found) throw notFound('brand')
  const vertical = verticalOf(store.store_type)
  const items = found.itemIds.flatMap((itemId) => {
    const i = ctx.svc.stores.item(store.id, itemId)
    return i ? [itemView(i.item, vertical, ctx.svc.config.siteUrl, i.variants, i.extras)] : []
  })
  return { ...brandView(found.brand), item_count: items.length, items }
}

export const listBrands = defineOp({
  id: 'brands.list', tag, summary: 'List the store\'s brands with item counts',
  description: 'By name, 20 per page; `item_count` counts every item of the brand, sold-out included.',
  access: read, scope: ['store'], input: PageQuery, output: PaginatedSchema(BrandSchema),
  run: (ctx, q) => {
    const page = pageOf(q)
    const { total, rows } = brandPage(ctx.svc.db, storeOf(ctx).id, page, PER_PAGE)
    return paginate(rows.map((r) => ({ ...brandView(r), item_count: r.item_count })), page, PER_PAGE, total)
  },
})

export const getBrand = defineOp({
  id: 'brands.get', tag, summary: 'Read a brand with its items', access: read, scope: ['store'],
  input: v.object(brandId), output: BrandDetailSchema,
  run: (ctx, { brand_id }) => brandOut(ctx, brand_id),
})

export const createBrandOp = defineOp({
  id: 'brands.create', tag, summary: 'Create a brand',
  description: 'Goods stores only (422 `not_for_store_type` elsewhere). Without `slug` one is made from the name.',
  access: write, scope: ['store'], input: v.object(BrandBody), output: BrandDetailSchema,
  run: async (ctx, body) => {
    const store = goodsStore(ctx)
    const id = await ctx.svc.committer.write((db) => createBrand(db, store.id, body, nowIso()))
    return brandOut(ctx, id)
  },
})

export const updateBrandOp = defineOp({
  id: 'brands.update', tag, summary: 'Update a brand (a new name shows on its items at once)', access: write, scope: ['store'],
  input: v.object({ ...brandId, ...v.partial(v.object(BrandBody)).entries }), output: BrandDetailSchema,
  run: async (ctx, { brand_id, ...body }) => {
    const store = goodsStore(ctx)
    const items = await ctx.svc.committer.write((db) => updateBrand(db, store.id, brand_id, body, nowIso()))
    // Written beside the store actor: its held menu re-reads them, so menus and orders show the new name.
    await itemsChanged(ctx.svc, store.id, items)
    return brandOut(ctx, brand_id)
  },
})

export const deleteBrandOp = defineOp({
  id: 'brands.delete', tag, summary: 'Delete a brand (its items stay, without a brand)', access: write, scope: ['store'], empty: true,
  input: v.object(brandId),
  run: async (ctx, { brand_id }) => {
    const store = storeOf(ctx)
    const items = await ctx.svc.committer.write((db) => deleteBrand(db, store.id, brand_id, nowIso()))
    await itemsChanged(ctx.svc, store.id, items)
  },
})

const BatchSchema = named('ExpiryBatch', {
  type: 'object', required: ['id', 'item_id', 'expires_on', 'quantity'],
  properties: { id: { type: 'integer' }, item_id: { type: 'integer' }, batch_code: nstr, expires_on: { type: 'string', format: 'date' }, quantity: { type: 'integer' }, expired: { type: 'boolean' }, created_at: str },
})
const itemId = { item_id: Id }

function batchesOut(ctx: OpContext, itemIdValue: number) {
  const store = storeOf(ctx)
  if (!ctx.svc.stores.item(store.id, itemIdValue)) throw notFound('item')
  const today = storeToday(store)
  return itemBatches(ctx.svc.db, itemIdValue).map((b) => batchView(b, today))
}

export const listBatches = defineOp({
  id: 'menu.batches.list', tag: 'Menu', summary: 'List an item\'s expiry batches',
  description: 'First-expiring first; `expired` compares `expires_on` with the store\'s local date.',
  access: read, scope: ['store'], input: v.object(itemId), output: { type: 'array', items: BatchSchema },
  run: (ctx, { item_id }) => batchesOut(ctx, item_id),
})

export const createBatch = defineOp({
  id: 'menu.batches.create', tag: 'Menu', summary: 'Add an expiry batch to an item',
  description: '`expiry` stores only (pharmacy, cosmetic; 422 `not_for_store_type` elsewhere). Once an item has batches it sells only their unexpired quantities, first-expiring first.',
  access: write, scope: ['store'],
  input: v.object({
    ...itemId,
    batch_code: Nullable(ShortText(80)),
    expires_on: v.pipe(v.string(), v.check((s: string) => isDate(s), 'Use a date YYYY-MM-DD.')),
    quantity: v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(10_000_000)),
  }),
  output: BatchSchema,
  run: async (ctx, { item_id, ...data }) => {
    const c = await runMenuOp(ctx.svc, storeOf(ctx).id, { op: 'batch.create', itemId: item_id, data })
    const b = batchesOut(ctx, item_id).find((x) => x.id === c.id)
    if (!b) throw notFound('batch')
    return b
  },
})

export const deleteBatchOp = defineOp({
  id: 'menu.batches.delete', tag: 'Menu', summary: 'Delete an expiry batch', access: write, scope: ['store'], empty: true,
  input: v.object({ ...itemId, batch_id: Id }),
  run: async (ctx, { item_id, batch_id }) => {
    await runMenuOp(ctx.svc, storeOf(ctx).id, { op: 'batch.delete', itemId: item_id, id: batch_id })
  },
})

export const brandOps = [listBrands, getBrand, createBrandOp, updateBrandOp, deleteBrandOp, listBatches, createBatch, deleteBatchOp]
