/**
 * The staff app's store work (api-v1 §4.7): orders and their kitchen status, menu edits with the
 * owner routes' payloads (src/http/menu-payloads.ts), analytics (§2.6) and the customer list.
 * Every route is limited to the member's store and gated by a permission (403 `forbidden`).
 */
import * as v from 'valibot'
import { route } from '../route.ts'
import { PageQuery, PaginatedSchema, pageOf, paginate } from '../schemas.ts'
import { AnalyticsSchema, ItemSchema, OrderSchema } from '../docs-schemas.ts'
import { KITCHEN_STATUSES } from '../../domain/order-state.ts'
import { AnalyticsQuery, analyticsRange } from '../analytics-query.ts'
import { analyticsSummary } from '../../storage/analytics.ts'
import { CategoryCreate, CategoryUpdate, ItemCreate, ItemUpdate, SoldOutBody, categoryOut, itemOut, menuOps, runMenuOp } from '../menu-payloads.ts'
import { StatusBody } from './orders.ts'
import { staffOrder, staffStore } from './staff-access.ts'

const tag = 'Staff'
const ORDERS_PER_PAGE = 30
const CUSTOMERS_PER_PAGE = 30
const num = (s: string | undefined) => Number(s)
const CategorySchema = { type: 'object', required: ['id', 'name', 'position'], properties: { id: { type: 'integer' }, name: { type: 'string' }, position: { type: 'integer' }, station: { anyOf: [{ type: 'string' }, { type: 'null' }] } } }

export const staffRoutes = [
  route({
    method: 'GET', path: '/staff/orders', tag, auth: 'staff', permission: 'orders', summary: 'The store\'s orders, newest first (30 per page); query `status`',
    query: v.object({ ...PageQuery.entries, status: v.optional(v.picklist(KITCHEN_STATUSES)) }), response: PaginatedSchema(OrderSchema),
    handler: ({ svc, principal, query }) => {
      const page = pageOf(query)
      const { data, total } = svc.orders.page(principal.storeId, page, ORDERS_PER_PAGE, query.status)
      return paginate(data, page, ORDERS_PER_PAGE, total)
    },
  }),
  route({
    method: 'PUT', path: '/staff/orders/{orderId}/status', tag, auth: 'staff', permission: 'orders', body: StatusBody, response: OrderSchema,
    summary: 'Set the kitchen status (as the owner route); a change emits `order.status_changed`',
    handler: async ({ svc, principal, params, body }) => {
      const row = staffOrder(svc, principal, params.orderId)
      return svc.actors.orders.ask(row.id, (replyTo) => ({ type: 'set_status', status: body.status, replyTo }))
    },
  }),
  route({
    method: 'POST', path: '/staff/menu/categories', tag, auth: 'staff', permission: 'menu_edit', body: CategoryCreate, status: 201, response: CategorySchema,
    summary: 'Create a category (owner payload; `station` routes its items to a KDS station)',
    handler: async ({ svc, principal, body }) => {
      const c = await runMenuOp(svc, principal.storeId, menuOps.createCategory(body))
      return categoryOut(svc, principal.storeId, c.id)
    },
  }),
  route({
    method: 'PUT', path: '/staff/menu/categories/{categoryId}', tag, auth: 'staff', permission: 'menu_edit', body: CategoryUpdate, response: CategorySchema,
    summary: 'Update a category, e.g. its KDS `station` (owner payload)',
    handler: async ({ svc, principal, params, body }) => {
      await runMenuOp(svc, principal.storeId, menuOps.updateCategory(num(params.categoryId), body))
      return categoryOut(svc, principal.storeId, num(params.categoryId))
    },
  }),
  route({
    method: 'POST', path: '/staff/menu/items', tag, auth: 'staff', permission: 'menu_edit', body: ItemCreate, status: 201, response: ItemSchema,
    summary: 'Create an item (owner payload)',
    handler: async ({ svc, principal, body }) => {
      const c = await runMenuOp(svc, principal.storeId, menuOps.createItem(body))
      return itemOut(svc, staffStore(svc, principal), c.id)
    },
  }),
  route({
    method: 'PUT', path: '/staff/menu/items/{itemId}', tag, auth: 'staff', permission: 'menu_edit', body: ItemUpdate, response: ItemSchema,
    summary: 'Update an item (owner payload; extras, when given, are replaced)',
    handler: async ({ svc, principal, params, body }) => {
      await runMenuOp(svc, principal.storeId, menuOps.updateItem(num(params.itemId), body))
      return itemOut(svc, staffStore(svc, principal), num(params.itemId))
    },
  }),
  route({
    method: 'DELETE', path: '/staff/menu/items/{itemId}', tag, auth: 'staff', permission: 'menu_edit', status: 204, summary: 'Delete an item',
    handler: async ({ svc, principal, params }) => {
      await runMenuOp(svc, principal.storeId, { op: 'item.delete', id: num(params.itemId) })
      return null
    },
  }),
  route({
    method: 'PATCH', path: '/staff/menu/items/{itemId}/sold-out', tag, auth: 'staff', permission: 'menu_edit', body: SoldOutBody, response: ItemSchema,
    summary: 'Toggle sold-out', description: 'Without a body the flag is toggled; `{"is_sold_out": true|false}` sets it.',
    handler: async ({ svc, principal, params, body }) => {
      await runMenuOp(svc, principal.storeId, { op: 'item.sold_out', id: num(params.itemId), value: body?.is_sold_out ?? null })
      return itemOut(svc, staffStore(svc, principal), num(params.itemId))
    },
  }),
  route({
    method: 'GET', path: '/staff/analytics', tag, auth: 'staff', permission: 'analytics', query: AnalyticsQuery, response: AnalyticsSchema,
    summary: 'Sales summary of the store (api-v1 §2.6); query `from`, `to`',
    handler: ({ svc, principal, query }) => analyticsSummary(svc.db, principal.storeId, analyticsRange(query)),
  }),
  route({
    method: 'GET', path: '/staff/customers', tag, auth: 'staff', permission: 'customers', summary: 'The store\'s customers (30 per page); query `search`',
    query: v.object({ ...PageQuery.entries, search: v.optional(v.pipe(v.string(), v.maxLength(100))) }),
    response: PaginatedSchema({ type: 'object', required: ['id'], properties: { id: { type: 'integer' }, name: { type: ['string', 'null'] }, email: { type: ['string', 'null'] }, phone: { type: ['string', 'null'] } } }),
    handler: ({ svc, principal, query }) => {
      const page = pageOf(query)
      const like = `%${(query.search ?? '').replace(/[\\%_]/g, (c) => `\\${c}`)}%`
      const where = "store_id = ? AND (COALESCE(name, '') LIKE ? ESCAPE '\\' OR COALESCE(email, '') LIKE ? ESCAPE '\\' OR COALESCE(phone, '') LIKE ? ESCAPE '\\')"
      const args = [principal.storeId, like, like, like]
      const total = svc.db.prepare(`SELECT COUNT(*) FROM customers WHERE ${where}`).pluck().get(...args) as number
      const rows = svc.db.prepare(`SELECT id, name, email, phone, created_at FROM customers WHERE ${where} ORDER BY id DESC LIMIT ? OFFSET ?`)
        .all(...args, CUSTOMERS_PER_PAGE, (page - 1) * CUSTOMERS_PER_PAGE)
      return paginate(rows, page, CUSTOMERS_PER_PAGE, total)
    },
  }),
]
