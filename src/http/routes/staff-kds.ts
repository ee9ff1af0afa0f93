/**
 * Kitchen display over HTTP (api-v1 §3, §4.7; docs/kds.md): live tickets, bump and recall through
 * the order actor, and the kitchen screen page at `{site_url}/kds`. The socket is src/ws/kds.ts.
 */
import { randomBytes } from 'node:crypto'
import * as v from 'valibot'
import { route, Reply } from '../route.ts'
import { notFound } from '../../errors.ts'
import { createKdsQueries, kdsItemOfView } from '../../storage/kds.ts'
import { KDS_STATES } from '../../domain/order-state.ts'
import type { Services } from '../../services.ts'
import type { StaffPrincipal } from '../../auth/principals.ts'
import type { OrderView } from '../../storage/orders.ts'
import { kdsPage, kdsPageHeaders } from '../pages/kds.ts'

const tag = 'Kitchen display'
const kdsQueries = new WeakMap<Services, ReturnType<typeof createKdsQueries>>()
const kdsOf = (svc: Services) => kdsQueries.get(svc) ?? kdsQueries.set(svc, createKdsQueries(svc.db)).get(svc)!

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

/** Bump or recall one line through its order's actor (serialised per order: no lost steps). */
async function step(svc: Services, p: StaffPrincipal, itemId: string | undefined, dir: 'bump' | 'recall') {
  const lineId = Number(itemId)
  const line = kdsOf(svc).lineInStore(lineId, p.storeId)
  if (!line) throw notFound('item')
  const order = await svc.actors.orders.ask<OrderView>(line.order_id, (replyTo) => ({ type: 'kds_step', lineId, step: dir, replyTo }))
  return { order_id: order.id, order_status: order.status, item: kdsItemOfView(order.id, order.items.find((l) => l.id === lineId)!) }
}

export const staffKdsRoutes = [
  route({
    method: 'GET', path: '/staff/kds', tag, auth: 'staff', permission: 'kds', response: TicketsSchema,
    query: v.object({ station_id: v.optional(Station) }),
    summary: 'Live tickets grouped by order (items still queued, preparing or ready)',
    description: 'Filtered to `station_id`, else the member\'s station, else every station. Only open orders (new, preparing, ready), oldest first.',
    handler: ({ svc, principal, query }) => {
      const station = query.station_id ?? principal.station
      return { station, tickets: kdsOf(svc).tickets(principal.storeId, station) }
    },
  }),
  route({
    method: 'PUT', path: '/staff/kds/items/{itemId}/bump', tag, auth: 'staff', permission: 'kds', response: StepSchema,
    summary: 'Advance an item one step: queued → preparing → ready → served',
    description: 'Re-derives the order\'s kitchen status (docs/kds.md "Status rule") and emits `order.status_changed` when it changes. A served item, or an item of a cancelled or completed order: 422 `invalid_transition`.',
    handler: ({ svc, principal, params }) => step(svc, principal, params.itemId, 'bump'),
  }),
  route({
    method: 'PUT', path: '/staff/kds/items/{itemId}/recall', tag, auth: 'staff', permission: 'kds', response: StepSchema,
    summary: 'Step an item back one state', description: 'Re-derives the order\'s kitchen status like a bump. A queued item: 422 `invalid_transition`.',
    handler: ({ svc, principal, params }) => step(svc, principal, params.itemId, 'recall'),
  }),
  route({
    method: 'GET', path: '/kds', site: true, tag, auth: 'none', produces: 'text/html; charset=utf-8',
    summary: 'Kitchen screen: PIN sign-in, live ticket cards, tap an item to bump it',
    description: 'Self-contained HTML (no external assets). Signs in with `POST /restaurants/{id}/staff/pin` and follows `{base_url}/ws/kds`; a tap on an item sends a `bump` frame.',
    handler: ({ headers }) => {
      const nonce = randomBytes(16).toString('base64')
      return new Reply(200, kdsPage(nonce), kdsPageHeaders(nonce, headers.host), 'text/html; charset=utf-8')
    },
  }),
]
