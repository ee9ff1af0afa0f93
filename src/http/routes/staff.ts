/**
 * The staff app's store work (api-v1 §4.7): bindings of the operations the owner routes use too
 * (orders and their kitchen status, menu writes with the owner payloads, the sales report, the
 * customer list and creation). A staff token reaches only its own store: the policy resolves it from the
 * token, and an order or item of another store is a 404.
 */
import { bind } from '../bind.ts'
import * as orders from '../../ops/orders/orders.ts'
import * as menu from '../../ops/menu/menu.ts'
import * as photos from '../../ops/menu/menu-photos.ts'
import { rawImageDecoders } from '../../ops/schemas/image-upload.ts'
import { salesReport } from '../../ops/stores/stores.ts'
import { createCustomer, getCustomer, listCustomers } from '../../ops/customers/customers.ts'

const order = { order: 'orderId' } as const

export const staffRoutes = [
  bind(orders.listOrders, { method: 'GET', path: '/staff/orders', auth: 'staff' }),
  bind(orders.setOrderStatus, { method: 'PUT', path: '/staff/orders/{orderId}/status', auth: 'staff', ids: order }),
  bind(menu.createCategory, { method: 'POST', path: '/staff/menu/categories', auth: 'staff' }),
  bind(menu.updateCategory, { method: 'PUT', path: '/staff/menu/categories/{categoryId}', auth: 'staff', params: { categoryId: 'category_id' } }),
  bind(menu.createItem, { method: 'POST', path: '/staff/menu/items', auth: 'staff' }),
  bind(menu.updateItem, { method: 'PUT', path: '/staff/menu/items/{itemId}', auth: 'staff', params: { itemId: 'item_id' } }),
  bind(menu.deleteItem, { method: 'DELETE', path: '/staff/menu/items/{itemId}', auth: 'staff', params: { itemId: 'item_id' } }),
  bind(menu.setItemSoldOut, { method: 'PATCH', path: '/staff/menu/items/{itemId}/sold-out', auth: 'staff', params: { itemId: 'item_id' } }),
  // The item photo and the menu order (docs/menu-photos.md), as the owner routes.
  bind(photos.setItemPhoto, { method: 'POST', path: '/staff/menu/items/{itemId}/photo', auth: 'staff', params: { itemId: 'item_id' }, decoders: rawImageDecoders, bodyLimit: photos.photoBodyLimit }),
  bind(photos.deleteItemPhoto, { method: 'DELETE', path: '/staff/menu/items/{itemId}/photo', auth: 'staff', params: { itemId: 'item_id' } }),
  bind(photos.reorderCategories, { method: 'PUT', path: '/staff/menu/order', auth: 'staff' }),
  bind(photos.reorderItems, { method: 'PUT', path: '/staff/menu/categories/{categoryId}/order', auth: 'staff', params: { categoryId: 'category_id' } }),
  bind(salesReport, { method: 'GET', path: '/staff/analytics', auth: 'staff' }),
  bind(listCustomers, { method: 'GET', path: '/staff/customers', auth: 'staff' }),
  bind(createCustomer, { method: 'POST', path: '/staff/customers', auth: 'staff' }),
  bind(getCustomer, { method: 'GET', path: '/staff/customers/{customerId}', auth: 'staff', params: { customerId: 'customer_id' } }),
]
