/** Owner menu writes (api-v1 §4.2): bindings of the menu operations (src/ops/menu.ts). */
import { bind } from '../bind.ts'
import * as menu from '../../ops/menu.ts'
import { listCategories } from '../../ops/menu-read.ts'

const store = { store: 'id' } as const

export const menuRoutes = [
  bind(listCategories, { method: 'GET', path: '/restaurants/{id}/menu/categories', auth: 'owner', ids: store }),
  bind(menu.createCategory, { method: 'POST', path: '/restaurants/{id}/menu/categories', auth: 'owner', ids: store }),
  bind(menu.updateCategory, { method: 'PUT', path: '/restaurants/{id}/menu/categories/{categoryId}', auth: 'owner', ids: store, params: { categoryId: 'category_id' } }),
  bind(menu.deleteCategory, { method: 'DELETE', path: '/restaurants/{id}/menu/categories/{categoryId}', auth: 'owner', ids: store, params: { categoryId: 'category_id' } }),
  bind(menu.createItem, { method: 'POST', path: '/restaurants/{id}/menu/items', auth: 'owner', ids: store }),
  bind(menu.updateItem, { method: 'PUT', path: '/restaurants/{id}/menu/items/{itemId}', auth: 'owner', ids: store, params: { itemId: 'item_id' } }),
  bind(menu.deleteItem, { method: 'DELETE', path: '/restaurants/{id}/menu/items/{itemId}', auth: 'owner', ids: store, params: { itemId: 'item_id' } }),
  bind(menu.setItemSoldOut, { method: 'PATCH', path: '/restaurants/{id}/menu/items/{itemId}/sold-out', auth: 'owner', ids: store, params: { itemId: 'item_id' } }),
  bind(menu.listVariants, { method: 'GET', path: '/restaurants/{id}/menu/items/{itemId}/variants', auth: 'owner', ids: store, params: { itemId: 'item_id' } }),
  bind(menu.createVariant, { method: 'POST', path: '/restaurants/{id}/menu/items/{itemId}/variants', auth: 'owner', ids: store, params: { itemId: 'item_id' } }),
  bind(menu.getVariant, { method: 'GET', path: '/restaurants/{id}/menu/items/{itemId}/variants/{variantId}', auth: 'owner', ids: store, params: { itemId: 'item_id', variantId: 'variant_id' } }),
  bind(menu.updateVariant, { method: 'PUT', path: '/restaurants/{id}/menu/items/{itemId}/variants/{variantId}', auth: 'owner', ids: store, params: { itemId: 'item_id', variantId: 'variant_id' } }),
  bind(menu.deleteVariant, { method: 'DELETE', path: '/restaurants/{id}/menu/items/{itemId}/variants/{variantId}', auth: 'owner', ids: store, params: { itemId: 'item_id', variantId: 'variant_id' } }),
]
