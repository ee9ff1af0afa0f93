/**
 * Shipments (issue 18 item 6; api-v1 §4.2; docs/verticals.md "Shipments"): a `ship` order's parcel,
 * created with the order; the owner (or staff with `orders`) adds carrier and tracking number and
 * moves it through its states (src/domain/shipments.ts). Every change refreshes the order's public
 * tracking view and socket.
 */
import * as v from 'valibot'
import { defineOp, type Access } from '../op.ts'
import { orderOf, storeOf } from '../scope.ts'
import { PageQuery, PaginatedSchema, pageOf, paginate } from '../schemas/common.ts'
import { DateStr } from './analytics-query.ts'
import { dateTime, named, str } from '../schemas/named.ts'
import { ApiError, notFound } from '../../errors.ts'
import { SHIPMENT_STATUSES, canMove, nextStatuses, type ShipmentStep } from '../../domain/shipments.ts'
import { moveShipment, setShipmentTracking, shipmentOfOrder, shipmentPage, shipmentView } from '../../storage/shipments.ts'
import { nowIso } from '../../storage/db.ts'
import type { OpCtx } from '../op.ts'

const tag = 'Shipments'
export const SHIPMENTS_PER_PAGE = 30
const read: Access = { owner: 'orders:read', staff: 'orders' }
const write: Access = { owner: 'orders:write', staff: 'orders' }

const nstr = { type: ['string', 'null'] }
const AddressSchema = {
  type: 'object', required: ['name', 'line1', 'city', 'postal_code', 'country'],
  properties: { name: str, line1: str, line2: nstr, city: str, postal_code: str, country: { type: 'string', pattern: '^[A-Z]{2}$' }, phone: nstr },
}
export const ShipmentSchema = named('Shipment', {
  type: 'object',
  required: ['id', 'restaurant_id', 'order_id', 'status', 'carrier', 'tracking_number', 'tracking_url', 'address', 'timeline', 'created_at', 'updated_at'],
  properties: {
    id: { type: 'integer' }, restaurant_id: { type: 'integer' }, order_id: { type: 'integer' },
    status: { type: 'string', enum: [...SHIPMENT_STATUSES] },
    carrier: nstr, tracking_number: nstr, tracking_url: { type: ['string', 'null'], format: 'uri' },
    address: AddressSchema,
    timeline: { type: 'array', items: { type: 'object', required: ['status', 'at'], properties: { status: str, at: dateTime, note: str } } },
    created_at: dateTime, updated_at: dateTime,
  },
})

/** The order's shipment, or 404 (an order of another mode has none). */
function shipmentOf(ctx: OpCtx) {
  const row = shipmentOfOrder(ctx.svc.db, storeOf(ctx).id, orderOf(ctx).id)
  if (!row) throw notFound('shipment')
  return row
}

export const listShipments = defineOp({
  id: 'shipments.list', tag, summary: 'List shipments, newest first (30 per page); query `status`, `carrier`, `from`, `to`',
  description: '`from` and `to` (`YYYY-MM-DD`, UTC days, inclusive) filter by creation date; `carrier` matches case-insensitively.',
  access: read, scope: ['store'],
  input: v.object({
    ...PageQuery.entries,
    status: v.optional(v.picklist(SHIPMENT_STATUSES)),
    carrier: v.optional(v.pipe(v.string(), v.trim(), v.minLength(1), v.maxLength(60))),
    from: v.optional(DateStr),
    to: v.optional(DateStr),
  }),
  output: PaginatedSchema(ShipmentSchema),
  run: (ctx, input) => {
    if (input.from && input.to && input.from > input.to) throw new ApiError('validation_failed', undefined, { from: ['`from` must not be after `to`.'] })
    const page = pageOf(input)
    const { total, data } = shipmentPage(ctx.svc.db, storeOf(ctx).id, page, SHIPMENTS_PER_PAGE, input)
    return paginate(data.map(shipmentView), page, SHIPMENTS_PER_PAGE, total)
  },
})

export const getShipment = defineOp({
  id: 'shipments.get', tag, summary: 'The shipment of a `ship` order (404 for other orders)',
  access: read, scope: ['store', 'order'], output: ShipmentSchema,
  run: (ctx) => shipmentView(shipmentOf(ctx)),
})

const Url = v.pipe(v.string(), v.maxLength(500), v.url('Use an absolute URL.'), v.check((u) => /^https?:\/\//i.test(u), 'Use an http(s) URL.'))
const Field = (max: number) => v.pipe(v.string(), v.trim(), v.minLength(1), v.maxLength(max))

export const setShipmentTrackingOp = defineOp({
  id: 'shipments.tracking.set', tag, summary: 'Set the carrier and tracking number (and link) of an order\'s shipment',
  description: 'Keys left out stay; null clears one. The public tracking view shows them at once.',
  access: write, scope: ['store', 'order'],
  input: v.object({
    carrier: v.optional(v.nullable(Field(60))),
    tracking_number: v.optional(v.nullable(Field(100))),
    tracking_url: v.optional(v.nullable(Url)),
  }),
  output: ShipmentSchema,
  run: async (ctx, input) => {
    const row = shipmentOf(ctx)
    const written = await ctx.svc.committer.write((db) => setShipmentTracking(db, row.id, input, nowIso()))
    ctx.svc.realtime.trackingChanged(row.order_id)
    return shipmentView(written)
  },
})

export const moveShipmentOp = defineOp({
  id: 'shipments.status.set', tag, summary: 'Move an order\'s shipment to its next state',
  description: 'pending → label_created → in_transit → out_for_delivery → delivered; `failed` on the way (then back to in_transit, or returned); `returned` from transit. delivered and returned are final. A cancelled order\'s shipment may only become `returned` or `failed`. Another move: 422 `invalid_transition` (`details.allowed` lists the next states); a concurrent move that won: 409 `conflict`.',
  access: write, scope: ['store', 'order'],
  input: v.object({ status: v.picklist(SHIPMENT_STATUSES), note: v.optional(v.nullable(v.pipe(v.string(), v.trim(), v.maxLength(500)))) }),
  output: ShipmentSchema,
  run: async (ctx, { status, note }) => {
    const row = shipmentOf(ctx)
    // A cancelled order's parcel does not go out any more; one already on its way can only come back.
    if (orderOf(ctx).status === 'cancelled' && status !== 'returned' && status !== 'failed') {
      throw new ApiError('invalid_transition', 'The order is cancelled: its shipment can only be marked returned or failed.', { status: ['The order is cancelled.'] }, undefined, { from: row.status, allowed: nextStatuses(row.status).filter((x) => x === 'returned' || x === 'failed') })
    }
    if (!canMove(row.status, status)) {
      throw new ApiError('invalid_transition', `A ${row.status} shipment cannot become ${status}.`, { status: [`Allowed next: ${nextStatuses(row.status).join(', ') || 'none (final)'}.`] }, undefined, { from: row.status, allowed: nextStatuses(row.status) })
    }
    const now = nowIso()
    const step: ShipmentStep = { status, at: now, ...(note ? { note } : {}) }
    const moved = await ctx.svc.committer.write((db) => moveShipment(db, row.id, row.status, status, step, now))
    if (!moved) throw new ApiError('conflict', 'The shipment changed meanwhile; read it and try again.')
    ctx.svc.realtime.trackingChanged(row.order_id)
    return shipmentView(moved)
  },
})

export const shipmentOps = [listShipments, getShipment, setShipmentTrackingOp, moveShipmentOp]
