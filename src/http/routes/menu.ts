/** Owner menu writes (api-v1 §4.2): bindings of the menu operations (src/ops/menu/menu.ts). */
import { bind } from '../bind.ts'
import * as menu from '../../ops/menu/menu.ts'
import { listCategories } from '../../ops/menu/menu-read.ts'
import * as photos from '../../ops/menu/menu-photos.ts'
import { rawImageDecoders } from '../../ops/schemas/image-upload.ts'
import { route, Reply } from '../route.ts'

const store = { store: 'id' } as const
const item = { ids: store, params: { itemId: 'item_id' } }

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
  bind(photos.setItemPhoto, {
    method: 'POST', path: '/restaurants/{id}/menu/items/{itemId}/photo', auth: 'owner', ...item,
    decoders: rawImageDecoders, bodyLimit: photos.photoBodyLimit,
  }),
  bind(photos.deleteItemPhoto, { method: 'DELETE', path: '/restaurants/{id}/menu/items/{itemId}/photo', auth: 'owner', ...item }),
  bind(photos.reorderCategories, { method: 'PUT', path: '/restaurants/{id}/menu/order', auth: 'owner', ids: store }),
  bind(photos.reorderItems, { method: 'PUT', path: '/restaurants/{id}/menu/categories/{categoryId}/order', auth: 'owner', ids: store, params: { categoryId: 'category_id' } }),
]

/**
 * The photos themselves, public like the menus that show them (docs/menu-photos.md): a plain route,
 * since it answers image bytes; the address is the content's hash, so it is cached as immutable.
 */
export const mediaRoutes = [
  route({
    method: 'GET', path: '/media/items/{name}', site: true, tag: 'Public', summary: 'A menu item photo (content-hashed address)', auth: 'none',
    // A lookup by primary key, cached a year by browsers: not counted against a visitor's page budget
    // (a menu of many thumbnails would use it up).
    rateLimit: false,
    produces: 'image/jpeg', response: { type: 'string', format: 'binary' },
    description: '`{key}.jpg` (at most 1200 px) or `{key}-thumb.jpg` (400 px), as an item\'s `photo` names them. Cached for a year as immutable: a new photo has a new key.',
    handler: ({ svc, params }) => {
      const photo = photos.mediaPhoto(svc, params.name!)
      return new Reply(200, photo.bytes, { 'Cache-Control': 'public, max-age=31536000, immutable', 'X-Content-Type-Options': 'nosniff' }, photo.type)
    },
  }),
]
