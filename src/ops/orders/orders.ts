/**
 * Orders (api-v1 §4.2; staff §4.7): list, detail and the kitchen status. The owner routes and the
 * staff routes bind to the same operations; the create-order operations of every front door share
 * one core (src/ops/orders/order-create.ts `placeOrder`).
 */
import { keyCaller } from '../../domain/idempotency.ts'
import * as v from 'valibot'
import { defineOp } from '../op.ts'
import { orderOf, ownerOf, storeOf } from '../scope.ts'
import { OrderInputSchema, PageQuery, PaginatedSchema, pageOf, paginate } from '../schemas/common.ts'
import { placeOrder } from './order-create.ts'
import { OrderSchema } from '../schemas/named.ts'
import { KITCHEN_STATUSES } from '../../domain/order-state.ts'
import { DateStr } from './analytics-query.ts'
import { ApiError } from '../../errors.ts'
import type { Services } from '../../services.ts'
import { localDay, timeZoneOf } from '../../domain/business-hours.ts'
import { parseSettings } from '../../storage/stores.ts'

const tag = 'Orders'
export const ORDERS_PER_PAGE = 30

export const StatusBody = v.object({ status: v.picklist(KITCHEN_STATUSES) })

export const listOrders = defineOp({
  id: 'orders.list', tag, summary: 'List orders, newest first (30 per page); query `status`, `from`, `to`, `search`',
  description: '`status` filters by kitchen status; `from` and `to` (`YYYY-MM-DD`, UTC days, both inclusive) by creation date; `search` matches the customer name or phone (containing the text) or the order id.',
  access: { owner: 'orders:read', staff: 'orders' }, scope: ['store'],
  input: v.object({
    ...PageQuery.entries,
    status: v.optional(v.picklist(KITCHEN_STATUSES)),
    from: v.optional(DateStr),
    to: v.optional(DateStr),
    search: v.optional(v.pipe(v.string(), v.trim(), v.minLength(1), v.maxLength(100))),
  }),
  output: PaginatedSchema(OrderSchema),
  run: (ctx, input) => {
    const page = pageOf(input)
    if (input.from && input.to && input.from > input.to) throw new ApiError('validation_failed', undefined, { from: ['`from` must not be after `to`.'] })
    const { status, from, to, search } = input
    const { data, total } = ctx.svc.orders.page(storeOf(ctx).id, page, ORDERS_PER_PAGE, { status, from, to, search })
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
  description: 'Accepted outside business hours too (the store\'s own order, e.g. by phone; docs/stores.md). Returns the order and its `track_token`. A replay of the same `Idempotency-Key` (or `client_uuid`) returns the original order with `Idempotent-Replayed: true`.',
  access: { owner: 'orders:write' }, scope: ['store'],
  input: OrderInputSchema, output: OrderSchema,
  run: (ctx, input) => placeOrder(ctx.svc, { storeId: storeOf(ctx).id, caller: keyCaller.owner(ownerOf(ctx).ownerId), input, idempotencyKey: ctx.idempotencyKey, ignoreHours: true }),
})

export const setOrderStatus = defineOp({
  id: 'orders.status.set', tag, summary: 'Set the kitchen status (override)',
  description: 'Any kitchen status may be set; a change emits `order.status_changed`. Setting a cancelled order back to a live status takes its lines\' stock again (docs/verticals.md "Stock and variants"); if it is no longer there the change is refused whole with 422 `out_of_stock` (`errors["items.N.quantity"]`, N the order\'s Nth line) and the order stays cancelled.',
  access: { owner: 'orders:write', staff: 'orders' }, scope: ['store', 'order'],
  input: StatusBody, output: OrderSchema,
  run: (ctx, { status }) => ctx.svc.actors.orders.ask(orderOf(ctx).id, (replyTo) => ({ type: 'set_status', status, replyTo })),
})

/**
 * Who may watch a store's orders board (the orders socket, docs/orders.md): as for
 * `GET /restaurants/{id}/orders`, an owner token with `orders:read` and its own store. Admitted at
 * the upgrade and whenever credentials change (src/ops/invoke.ts `admit`); not in `ALL_OPS`.
 */
export const ordersBoardAdmission = defineOp({
  id: 'orders.board.admit', tag, summary: 'Watch a store\'s orders board (owner tokens with orders:read)',
  access: { owner: 'orders:read' }, scope: ['store'], output: { type: 'null' },
  run: () => null,
})

/** A board shows a day's service; a busier day is paged over HTTP (`GET …/orders?from=&to=`). */
export const BOARD_SNAPSHOT_MAX = 200

/** The board as it opens: today as the store's staff see it, its local day in the store's time zone (docs/stores.md). */
export function boardToday(svc: Services, storeId: number) {
  const day = localDay(timeZoneOf(parseSettings(svc.stores.byId(storeId)?.settings)), new Date())
  const { data } = svc.orders.page(storeId, 1, BOARD_SNAPSHOT_MAX, { since: day.start, until: day.end })
  return { date: day.date, orders: data }
}

export const orderOps = [listOrders, getOrder, createOrder, setOrderStatus]
