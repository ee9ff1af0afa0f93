/**
 * Orders (api-v1 §4.2; staff §4.7): list, detail and the kitchen status. The owner routes and the
 * staff routes bind to the same operations; the create-order operations of every front door share
 * one core (src/ops/order-create.ts `placeOrder`).
 */
import * as v from 'valibot'
import { defineOp } from './op.ts'
import { orderOf, ownerOf, storeOf } from './scope.ts'
import { OrderInputSchema, PageQuery, PaginatedSchema, pageOf, paginate } from './schemas.ts'
import { placeOrder } from './order-create.ts'
import { OrderSchema } from './docs-schemas.ts'
import { KITCHEN_STATUSES } from '../domain/order-state.ts'

const tag = 'Orders'
export const ORDERS_PER_PAGE = 30

export const StatusBody = v.object({ status: v.picklist(KITCHEN_STATUSES) })

export const listOrders = defineOp({
  id: 'orders.list', tag, summary: 'List orders, newest first (30 per page); query `status`',
  access: { owner: 'orders:read', staff: 'orders' }, scope: ['store'],
  input: v.object({ ...PageQuery.entries, status: v.optional(v.picklist(KITCHEN_STATUSES)) }), output: PaginatedSchema(OrderSchema),
  run: (ctx, input) => {
    const page = pageOf(input)
    const { data, total } = ctx.svc.orders.page(storeOf(ctx).id, page, ORDERS_PER_PAGE, input.status)
    return paginate(data, page, ORDERS_PER_PAGE, total)
  },
})

export const getOrder = defineOp({
  id: 'orders.get', tag, summary: 'An order with lines, extras, driver and timeline',
  access: { owner: 'orders:read' }, scope: ['store', 'order'], output: OrderSchema,
  run: (ctx) => ctx.svc.orders.full(orderOf(ctx)),
})

export const createOrder = defineOp({
  id: 'orders.create', tag, summary: 'Create an order (priced server-side)',
  description: 'Returns the order and its `track_token`. A replay of the same `Idempotency-Key` (or `client_uuid`) returns the original order with `Idempotent-Replayed: true`.',
  access: { owner: 'orders:write' }, scope: ['store'],
  input: OrderInputSchema, output: OrderSchema,
  run: (ctx, input) => placeOrder(ctx.svc, { storeId: storeOf(ctx).id, caller: `owner:${ownerOf(ctx).ownerId}`, input, idempotencyKey: ctx.idempotencyKey }),
})

export const setOrderStatus = defineOp({
  id: 'orders.status.set', tag, summary: 'Set the kitchen status (override)',
  description: 'Any kitchen status may be set; a change emits `order.status_changed`.',
  access: { owner: 'orders:write', staff: 'orders' }, scope: ['store', 'order'],
  input: StatusBody, output: OrderSchema,
  run: (ctx, { status }) => ctx.svc.actors.orders.ask(orderOf(ctx).id, (replyTo) => ({ type: 'set_status', status, replyTo })),
})

export const orderOps = [listOrders, getOrder, createOrder, setOrderStatus]
