/** Owner menu writes (api-v1 §4.2): categories, items, sold-out, variants. Each emits `menu.updated`. */
import { route, Reply } from '../route.ts'
import { notFound } from '../../errors.ts'
import { ItemSchema, VariantSchema } from '../docs-schemas.ts'
import {
  CategoryCreate, CategoryUpdate, ItemCreate, ItemUpdate, SoldOutBody, VariantCreate, VariantUpdate,
  categoryOut, itemOut, menuOps, runMenuOp, variantOut,
} from '../menu-payloads.ts'
import { variantView } from '../../storage/stores.ts'
import { ownedStore } from './owner-access.ts'

const CategorySchema = {
  type: 'object', required: ['id', 'name', 'position'],
  properties: { id: { type: 'integer' }, name: { type: 'string' }, position: { type: 'integer' }, station: { anyOf: [{ type: 'string' }, { type: 'null' }] }, created_at: { type: 'string', format: 'date-time' } },
}
const tag = 'Menu'
const read = 'menu:read' as const
const write = 'menu:write' as const
const num = (s: string | undefined) => Number(s)

export const menuRoutes = [
  route({
    method: 'POST', path: '/restaurants/{id}/menu/categories', tag, summary: 'Create a category', auth: 'owner', capability: write,
    body: CategoryCreate, status: 201, response: CategorySchema,
    handler: async ({ svc, principal, params, body }) => {
      const store = ownedStore(svc, principal, params.id)
      const c = await runMenuOp(svc, store.id, menuOps.createCategory(body))
      return categoryOut(svc, store.id, c.id)
    },
  }),
  route({
    method: 'PUT', path: '/restaurants/{id}/menu/categories/{categoryId}', tag, summary: 'Update a category', auth: 'owner', capability: write,
    body: CategoryUpdate, response: CategorySchema,
    handler: async ({ svc, principal, params, body }) => {
      const store = ownedStore(svc, principal, params.id)
      await runMenuOp(svc, store.id, menuOps.updateCategory(num(params.categoryId), body))
      return categoryOut(svc, store.id, num(params.categoryId))
    },
  }),
  route({
    method: 'DELETE', path: '/restaurants/{id}/menu/categories/{categoryId}', tag, auth: 'owner', capability: write, status: 204,
    summary: 'Delete an empty category', description: 'Refused with 422 `category_not_empty` while the category still has items.',
    handler: async ({ svc, principal, params }) => {
      const store = ownedStore(svc, principal, params.id)
      await runMenuOp(svc, store.id, { op: 'category.delete', id: num(params.categoryId) })
      return null
    },
  }),
  route({
    method: 'POST', path: '/restaurants/{id}/menu/items', tag, summary: 'Create an item (with optional extras and variations)', auth: 'owner',
    capability: write, body: ItemCreate, status: 201, response: ItemSchema,
    handler: async ({ svc, principal, params, body }) => {
      const store = ownedStore(svc, principal, params.id)
      const c = await runMenuOp(svc, store.id, menuOps.createItem(body))
      return itemOut(svc, store, c.id)
    },
  }),
  route({
    method: 'PUT', path: '/restaurants/{id}/menu/items/{itemId}', tag, summary: 'Update an item (extras, when given, are replaced)', auth: 'owner',
    capability: write, body: ItemUpdate, response: ItemSchema,
    handler: async ({ svc, principal, params, body }) => {
      const store = ownedStore(svc, principal, params.id)
      await runMenuOp(svc, store.id, menuOps.updateItem(num(params.itemId), body))
      return itemOut(svc, store, num(params.itemId))
    },
  }),
  route({
    method: 'DELETE', path: '/restaurants/{id}/menu/items/{itemId}', tag, summary: 'Delete an item', auth: 'owner', capability: write, status: 204,
    handler: async ({ svc, principal, params }) => {
      const store = ownedStore(svc, principal, params.id)
      await runMenuOp(svc, store.id, { op: 'item.delete', id: num(params.itemId) })
      return null
    },
  }),
  route({
    method: 'PATCH', path: '/restaurants/{id}/menu/items/{itemId}/sold-out', tag, auth: 'owner', capability: write, body: SoldOutBody,
    summary: 'Toggle sold-out', description: 'Without a body the flag is toggled; `{"is_sold_out": true|false}` sets it.', response: ItemSchema,
    handler: async ({ svc, principal, params, body }) => {
      const store = ownedStore(svc, principal, params.id)
      await runMenuOp(svc, store.id, { op: 'item.sold_out', id: num(params.itemId), value: body?.is_sold_out ?? null })
      return itemOut(svc, store, num(params.itemId))
    },
  }),
  route({
    method: 'GET', path: '/restaurants/{id}/menu/items/{itemId}/variants', tag, summary: 'List an item\'s variants', auth: 'owner', capability: read,
    response: { type: 'array', items: VariantSchema },
    handler: ({ svc, principal, params }) => {
      const store = ownedStore(svc, principal, params.id)
      const found = svc.stores.item(store.id, num(params.itemId))
      if (!found) throw notFound('item')
      return found.variants.map(variantView)
    },
  }),
  route({
    method: 'POST', path: '/restaurants/{id}/menu/items/{itemId}/variants', tag, summary: 'Create a variant', auth: 'owner', capability: write,
    body: VariantCreate, status: 201, response: VariantSchema,
    handler: async ({ svc, principal, params, body }) => {
      const store = ownedStore(svc, principal, params.id)
      const c = await runMenuOp(svc, store.id, menuOps.createVariant(num(params.itemId), body))
      return variantOut(svc, num(params.itemId), c.id)
    },
  }),
  route({
    method: 'GET', path: '/restaurants/{id}/menu/items/{itemId}/variants/{variantId}', tag, summary: 'Read a variant', auth: 'owner', capability: read,
    response: VariantSchema,
    handler: ({ svc, principal, params }) => {
      const store = ownedStore(svc, principal, params.id)
      if (!svc.stores.item(store.id, num(params.itemId))) throw notFound('item')
      return variantOut(svc, num(params.itemId), num(params.variantId))
    },
  }),
  route({
    method: 'PUT', path: '/restaurants/{id}/menu/items/{itemId}/variants/{variantId}', tag, summary: 'Update a variant', auth: 'owner', capability: write,
    body: VariantUpdate, response: VariantSchema,
    handler: async ({ svc, principal, params, body }) => {
      const store = ownedStore(svc, principal, params.id)
      await runMenuOp(svc, store.id, menuOps.updateVariant(num(params.itemId), num(params.variantId), body))
      return variantOut(svc, num(params.itemId), num(params.variantId))
    },
  }),
  route({
    method: 'DELETE', path: '/restaurants/{id}/menu/items/{itemId}/variants/{variantId}', tag, summary: 'Delete a variant', auth: 'owner',
    capability: write, status: 204,
    handler: async ({ svc, principal, params }) => {
      const store = ownedStore(svc, principal, params.id)
      await runMenuOp(svc, store.id, { op: 'variant.delete', itemId: num(params.itemId), id: num(params.variantId) })
      return new Reply(204, null)
    },
  }),
]
