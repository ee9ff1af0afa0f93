/**
 * Kitchen display (api-v1 §3, §4.7; docs/kds.md): the live tickets, and bump and recall of one
 * item through its order's actor (serialised per order: no lost steps). The kitchen socket
 * (src/ws/kds.ts) binds the same two operations to its `bump`/`recall` frames (src/ws/frame.ts);
 * the screen page stays a plain HTTP route.
 */
import * as v from 'valibot'
import { defineOp, type OpCtx } from '../op.ts'
import type { Services } from '../../services.ts'
import { staffOf, storeOf } from '../scope.ts'
import { Id } from '../schemas/common.ts'
import { ApiError, notFound } from '../../errors.ts'
import { group, kdsItemOfView, kdsQueriesOf, type KdsQueries } from '../../storage/kds.ts'
import { KDS_STATES } from '../../domain/order-state.ts'
import { mayStep, type KdsMember, type KdsViewLine, type KdsViewOrder } from '../../domain/kds.ts'

const tag = 'Kitchen display'
const access = { staff: 'kds' } as const

const ItemSchema = {
  type: 'object', required: ['id', 'order_id', 'name', 'quantity', 'kds_state', 'kds_timeline'],
  properties: {
    id: { type: 'integer' }, order_id: { type: 'integer' }, item_id: { type: 'integer' }, name: { type: 'string' }, variation: { type: ['string', 'null'] },
    quantity: { type: 'integer' }, extras: { type: 'array', items: { type: 'string' } }, note: { type: ['string', 'null'] }, station: { type: ['string', 'null'] },
    kds_state: { type: 'string', enum: [...KDS_STATES] }, kds_timeline: { type: 'object', additionalProperties: { type: 'string' } },
  },
}
const TicketsSchema = {
  type: 'object', required: ['station', 'tickets'],
  properties: {
    station: { type: ['string', 'null'] },
    tickets: { type: 'array', items: { type: 'object', required: ['order_id', 'status', 'items'], properties: {
      order_id: { type: 'integer' }, type: { type: 'string' }, status: { type: 'string' }, table_number: { type: ['string', 'null'] },
      customer_name: { type: ['string', 'null'] }, note: { type: ['string', 'null'] }, created_at: { type: 'string' }, items: { type: 'array', items: ItemSchema },
    } } },
  },
}
const StepSchema = { type: 'object', required: ['order_id', 'order_status', 'item'], properties: { order_id: { type: 'integer' }, order_status: { type: 'string' }, item: ItemSchema } }

const Station = v.pipe(v.string(), v.minLength(1), v.maxLength(40))

export const listTickets = defineOp({
  id: 'kds.tickets.list', feature: 'kds', tag, summary: 'Live tickets grouped by order (items still queued, preparing or ready)',
  description: 'Filtered to `station_id`, else the member\'s station, else every station. Only open orders (new, preparing, ready), oldest first.',
  access, scope: ['store'], input: v.object({ station_id: v.optional(Station) }), output: TicketsSchema,
  run: (ctx, { station_id }) => {
    const station = station_id ?? staffOf(ctx).station
    return { station, tickets: kdsQueriesOf(ctx.svc.db).tickets(storeOf(ctx).id, station) }
  },
})

/** What a bump or recall did: the order as its actor now holds it, and the line that moved. */
export interface KdsStepped { order: KdsViewOrder; item: KdsViewLine }

/**
 * Bump or recall one line of the store's orders through its order's actor: the one implementation
 * of the operations below, which the HTTP routes and the kitchen socket's `bump`/`recall` frames
 * (src/ws/kds.ts) both run, so both doors refuse the same lines the same way. Another store's line is not
 * found (404); a line of a station the member is not bound to is 403 `forbidden` (the station rule,
 * `mayStep`, docs/kds.md "Who may bump"). The line's station comes with its order from the kitchen
 * queries' line cache: no read per bump once a line was seen.
 */
async function stepItem(svc: Services, storeId: number, member: KdsMember, lineId: number, dir: 'bump' | 'recall'): Promise<KdsStepped> {
  const line = kdsQueriesOf(svc.db).lineInStore(lineId, storeId)
  if (!line) throw notFound('item')
  if (!mayStep(member, line.station)) {
    throw new ApiError('forbidden', `This item is made at ${line.station === null ? 'no station (the all-station screens)' : `station "${line.station}"`}; this member works station "${member.station}" only.`)
  }
  const order = await svc.actors.orders.ask<KdsViewOrder>(line.order_id, (replyTo) => ({ type: 'kds_step', lineId, step: dir, replyTo }))
  const item = order.items.find((l) => l.id === lineId)
  if (!item) throw notFound('item')
  return { order, item }
}

/** The input of a bump or recall, over HTTP and in a kitchen socket's frame. */
export const StepInput = v.object({ item_id: Id })

/** The answer to a step (StepSchema), over HTTP and to a kitchen socket's frame. */
const stepReply = ({ order, item }: KdsStepped) => ({ order_id: order.id, order_status: order.status, item: kdsItemOfView(order.id, item) })
export type KdsStepReply = ReturnType<typeof stepReply>
const stepOf = (ctx: OpCtx, itemId: number, dir: 'bump' | 'recall') => stepItem(ctx.svc, storeOf(ctx).id, staffOf(ctx), itemId, dir).then(stepReply)

const stationRule = 'A member bound to a station may move only that station\'s items (403 `forbidden`); a manager, or a member bound to no station, any item of the store (docs/kds.md "Who may bump").'

export const bumpItem = defineOp({
  id: 'kds.items.bump', feature: 'kds', tag, summary: 'Advance an item one step: queued → preparing → ready → served',
  description: `Re-derives the order's kitchen status (docs/kds.md "Status rule") and emits \`order.status_changed\` when it changes. A served item, or an item of a cancelled or completed order: 422 \`invalid_transition\`. ${stationRule}`,
  access, scope: ['store'], input: StepInput, output: StepSchema,
  run: (ctx, { item_id }) => stepOf(ctx, item_id, 'bump'),
})

export const recallItem = defineOp({
  id: 'kds.items.recall', feature: 'kds', tag, summary: 'Step an item back one state',
  description: `Re-derives the order's kitchen status like a bump. A queued item: 422 \`invalid_transition\`. ${stationRule}`,
  access, scope: ['store'], input: StepInput, output: StepSchema,
  run: (ctx, { item_id }) => stepOf(ctx, item_id, 'recall'),
})

/**
 * Who may watch a kitchen screen (the kitchen socket, docs/kds.md "Kitchen socket"): a staff token
 * with `kds`, its own store, the plan's `kds` feature — admitted at the upgrade and again whenever
 * credentials change (src/ops/invoke.ts `admit`). Not in `ALL_OPS`: no route binds it.
 */
export const kdsScreenAdmission = defineOp({
  id: 'kds.screen.admit', feature: 'kds', tag, summary: 'Open a kitchen screen (staff tokens with kds; the plan\'s kds feature)',
  access, scope: ['store'], output: { type: 'null' },
  run: () => null,
})

/** The kitchen's reads for the screens' live frames: the same queries (and line → order cache) as the operations above. */
export const kdsReads = (svc: Services): KdsQueries => kdsQueriesOf(svc.db)
/** Tickets of an order's lines, and an item of the order actor's view, as the screens show them. */
export { group as ticketsOf, kdsItemOfView }

export const kdsOps = [listTickets, bumpItem, recallItem]
