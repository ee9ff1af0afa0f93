/**
 * Menu writes (api-v1 §4.2; staff §4.7 with the same payloads): categories, items, sold-out and
 * variants. Every write goes through the store actor (serialised with order pricing) and emits
 * `menu.updated`; the owner routes, the staff routes and (next) MCP tools bind to these.
 */
import * as v from 'valibot'
import { defineOp, type Access } from '../op.ts'
import { storeOf } from '../scope.ts'
import { Id } from '../schemas/common.ts'
import { ItemSchema, VariantSchema, named } from '../schemas/named.ts'
import {
  CategoryCreate, CategoryUpdate, ItemCreate, ItemUpdate, SoldOutBody, VariantCreate, VariantUpdate,
  categoryOut, itemOut, menuOps, runMenuOp, variantOut,
} from './menu-payloads.ts'
import { externalImages, variantView } from '../../storage/stores.ts'
import { notFound } from '../../errors.ts'

const tag = 'Menu'
const read: Access = { owner: 'menu:read' }
const write: Access = { owner: 'menu:write', staff: 'menu_edit' }

export const CategorySchema = {
  type: 'object', required: ['id', 'name', 'position'],
  properties: { id: { type: 'integer' }, name: { type: 'string' }, position: { type: 'integer' }, station: { anyOf: [{ type: 'string' }, { type: 'null' }] }, created_at: { type: 'string', format: 'date-time' } },
}
named('Category', CategorySchema)

const categoryId = { category_id: Id }
const itemId = { item_id: Id }
const variantId = { item_id: Id, variant_id: Id }

export const createCategory = defineOp({
  id: 'menu.categories.create', tag, summary: 'Create a category', access: write, scope: ['store'],
  description: '`station` routes the category\'s items to a kitchen-screen station.',
  input: CategoryCreate, output: CategorySchema,
  run: async (ctx, input) => {
    const store = storeOf(ctx)
    const c = await runMenuOp(ctx.svc, store.id, menuOps.createCategory(input))
    return categoryOut(ctx.svc, store.id, c.id)
  },
})

export const updateCategory = defineOp({
  id: 'menu.categories.update', tag, summary: 'Update a category', access: write, scope: ['store'],
  input: v.object({ ...categoryId, ...CategoryUpdate.entries }), output: CategorySchema,
  run: async (ctx, { category_id, ...changes }) => {
    const store = storeOf(ctx)
    await runMenuOp(ctx.svc, store.id, menuOps.updateCategory(category_id, changes))
    return categoryOut(ctx.svc, store.id, category_id)
  },
})

export const deleteCategory = defineOp({
  id: 'menu.categories.delete', tag, summary: 'Delete an empty category', access: write, scope: ['store'], empty: true,
  description: 'Refused with 422 `category_not_empty` while the category still has items.',
  input: v.object(categoryId),
  run: async (ctx, { category_id }) => {
    await runMenuOp(ctx.svc, storeOf(ctx).id, { op: 'category.delete', id: category_id })
  },
})

export const createItem = defineOp({
  id: 'menu.items.create', tag, summary: 'Create an item (with optional extras and variations)', access: write, scope: ['store'],
  input: ItemCreate, output: ItemSchema,
  run: async (ctx, input) => {
    const store = storeOf(ctx)
    const c = await runMenuOp(ctx.svc, store.id, menuOps.createItem({ ...input, images: externalImages(ctx.svc.config.siteUrl, input.images) }))
    return itemOut(ctx.svc, store, c.id)
  },
})

export const updateItem = defineOp({
  id: 'menu.items.update', tag, summary: 'Update an item (extras, when given, are replaced)', access: write, scope: ['store'],
  input: v.object({ ...itemId, ...ItemUpdate.entries }), output: ItemSchema,
  run: async (ctx, { item_id, ...changes }) => {
    const store = storeOf(ctx)
    await runMenuOp(ctx.svc, store.id, menuOps.updateItem(item_id, { ...changes, images: externalImages(ctx.svc.config.siteUrl, changes.images) }))
    return itemOut(ctx.svc, store, item_id)
  },
})

export const deleteItem = defineOp({
  id: 'menu.items.delete', tag, summary: 'Delete an item', access: write, scope: ['store'], empty: true,
  input: v.object(itemId),
  run: async (ctx, { item_id }) => {
    await runMenuOp(ctx.svc, storeOf(ctx).id, { op: 'item.delete', id: item_id })
  },
})

export const setItemSoldOut = defineOp({
  id: 'menu.items.sold_out', tag, summary: 'Toggle sold-out', access: write, scope: ['store'],
  description: 'Without `is_sold_out` the flag is toggled; `{"is_sold_out": true|false}` sets it.',
  input: v.object({ ...itemId, ...v.unwrap(SoldOutBody).entries }), output: ItemSchema,
  run: async (ctx, { item_id, is_sold_out }) => {
    const store = storeOf(ctx)
    await runMenuOp(ctx.svc, store.id, { op: 'item.sold_out', id: item_id, value: is_sold_out ?? null })
    return itemOut(ctx.svc, store, item_id)
  },
})

export const listVariants = defineOp({
  id: 'menu.variants.list', tag, summary: 'List an item\'s variants', access: read, scope: ['store'],
  input: v.object(itemId), output: { type: 'array', items: VariantSchema },
  run: (ctx, { item_id }) => {
    const found = ctx.svc.stores.item(storeOf(ctx).id, item_id)
    if (!found) throw notFound('item')
    return found.variants.map(variantView)
  },
})

export const createVariant = defineOp({
  id: 'menu.variants.create', tag, summary: 'Create a variant', access: write, scope: ['store'],
  input: v.object({ ...itemId, ...VariantCreate.entries }), output: VariantSchema,
  run: async (ctx, { item_id, ...data }) => {
    const c = await runMenuOp(ctx.svc, storeOf(ctx).id, menuOps.createVariant(item_id, data))
    return variantOut(ctx.svc, item_id, c.id)
  },
})

export const getVariant = defineOp({
  id: 'menu.variants.get', tag, summary: 'Read a variant', access: read, scope: ['store'],
  input: v.object(variantId), output: VariantSchema,
  run: (ctx, { item_id, variant_id }) => {
    if (!ctx.svc.stores.item(storeOf(ctx).id, item_id)) throw notFound('item')
    return variantOut(ctx.svc, item_id, variant_id)
  },
})

export const updateVariant = defineOp({
  id: 'menu.variants.update', tag, summary: 'Update a variant', access: write, scope: ['store'],
  input: v.object({ ...variantId, ...VariantUpdate.entries }), output: VariantSchema,
  run: async (ctx, { item_id, variant_id, ...changes }) => {
    await runMenuOp(ctx.svc, storeOf(ctx).id, menuOps.updateVariant(item_id, variant_id, changes))
    return variantOut(ctx.svc, item_id, variant_id)
  },
})

export const deleteVariant = defineOp({
  id: 'menu.variants.delete', tag, summary: 'Delete a variant', access: write, scope: ['store'], empty: true,
  input: v.object(variantId),
  run: async (ctx, { item_id, variant_id }) => {
    await runMenuOp(ctx.svc, storeOf(ctx).id, { op: 'variant.delete', itemId: item_id, id: variant_id })
  },
})

export const menuOpsList = [
  createCategory, updateCategory, deleteCategory, createItem, updateItem, deleteItem, setItemSoldOut,
  listVariants, createVariant, getVariant, updateVariant, deleteVariant,
]
