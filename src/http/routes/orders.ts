/** Owner orders (api-v1 §4.2): list, detail, create (priced server-side, idempotent), kitchen status. */
import * as v from 'valibot'
import { createHash } from 'node:crypto'
import { route, Reply } from '../route.ts'
import { OrderInputSchema, PageQuery, PaginatedSchema, pageOf, paginate } from '../schemas.ts'
import { OrderSchema } from '../docs-schemas.ts'
import { ApiError, notFound } from '../../errors.ts'
import { KITCHEN_STATUSES } from '../../domain/order-state.ts'
import { newToken } from '../../auth/tokens.ts'
import type { OrderInput } from '../../domain/orders.ts'
import type { Services } from '../../services.ts'
import type { CreatedOrder, OrderHooks } from '../../actors/store.ts'
import { ownedStore } from './owner-access.ts'

const ORDERS_PER_PAGE = 30
const tag = 'Orders'

/** Stable JSON (sorted keys) so the same request always hashes the same. */
function stableJson(x: unknown): string {
  if (Array.isArray(x)) return `[${x.map(stableJson).join(',')}]`
  if (x && typeof x === 'object') {
    return `{${Object.keys(x).sort().map((k) => `${JSON.stringify(k)}:${stableJson((x as Record<string, unknown>)[k])}`).join(',')}}`
  }
  return JSON.stringify(x) ?? 'null'
}

/**
 * Create an order through the store actor; shared by every create-order front door.
 * Idempotency: the `Idempotency-Key` header, else `client_uuid`; same key + same body replays the
 * original order, same key + different body is 422 `idempotency_key_reused`, a retry while the
 * first is still in flight is 409 `idempotency_in_flight`.
 */
export async function createOrder(
  svc: Services, storeId: number, scope: string, input: OrderInput, idemHeader: string | undefined, customerId: number | null = null,
  /** Front-door extensions run by the store actor (coupons on storefront orders). */
  hooks?: OrderHooks,
): Promise<CreatedOrder> {
  const key = idemHeader ?? input.client_uuid ?? null
  if (key !== null && (key.length === 0 || key.length > 255)) {
    throw new ApiError('validation_failed', undefined, { 'Idempotency-Key': ['Use a key of 1 to 255 characters.'] })
  }
  const idem = key === null ? null : { scope: `${scope}/store:${storeId}`, key, hash: createHash('sha256').update(stableJson(input)).digest('hex') }
  return svc.actors.stores.ask(storeId, (replyTo) => ({
    type: 'create_order', input, customerId, idem, trackToken: newToken('track'), hooks, replyTo,
  }))
}

export const createdReply = (c: CreatedOrder) =>
  new Reply(c.replayed ? 200 : 201, c.order, c.replayed ? { 'Idempotent-Replayed': 'true' } : {})

function ownedOrder(svc: Services, storeId: number, orderId: string | undefined) {
  const row = svc.orders.rowInStore(Number(orderId), storeId)
  if (!row) throw notFound('order')
  return row
}

export const StatusBody = v.object({ status: v.picklist(KITCHEN_STATUSES) })

export const orderRoutes = [
  route({
    method: 'GET', path: '/restaurants/{id}/orders', tag, summary: 'List orders, newest first (30 per page)', auth: 'owner', capability: 'orders:read',
    query: v.object({ ...PageQuery.entries, status: v.optional(v.picklist(KITCHEN_STATUSES)) }), response: PaginatedSchema(OrderSchema),
    handler: ({ svc, principal, params, query }) => {
      const store = ownedStore(svc, principal, params.id)
      const page = pageOf(query)
      const { data, total } = svc.orders.page(store.id, page, ORDERS_PER_PAGE, query.status)
      return paginate(data, page, ORDERS_PER_PAGE, total)
    },
  }),
  route({
    method: 'GET', path: '/restaurants/{id}/orders/{orderId}', tag, summary: 'An order with lines, extras, driver and timeline', auth: 'owner',
    capability: 'orders:read', response: OrderSchema,
    handler: ({ svc, principal, params }) => {
      const store = ownedStore(svc, principal, params.id)
      return svc.orders.full(ownedOrder(svc, store.id, params.orderId))
    },
  }),
  route({
    method: 'POST', path: '/restaurants/{id}/orders', tag, auth: 'owner', capability: 'orders:write', body: OrderInputSchema, status: 201,
    summary: 'Create an order (priced server-side)', response: OrderSchema,
    description: 'Returns 201 with the order and its `track_token`. A replay of the same `Idempotency-Key` (or `client_uuid`) returns the original order with 200 and `Idempotent-Replayed: true`.',
    headers: [{ name: 'Idempotency-Key', description: 'Makes the request safe to retry (same key + same body → the original order).' }],
    handler: async ({ svc, principal, params, body, headers }) => {
      const store = ownedStore(svc, principal, params.id)
      return createdReply(await createOrder(svc, store.id, `owner:${principal.ownerId}`, body, headers['idempotency-key']))
    },
  }),
  route({
    method: 'PUT', path: '/restaurants/{id}/orders/{orderId}/status', tag, auth: 'owner', capability: 'orders:write', body: StatusBody,
    summary: 'Set the kitchen status (override)', response: OrderSchema, description: 'Any kitchen status may be set; a change emits `order.status_changed`.',
    handler: async ({ svc, principal, params, body }) => {
      const store = ownedStore(svc, principal, params.id)
      const row = ownedOrder(svc, store.id, params.orderId)
      return svc.actors.orders.ask(row.id, (replyTo) => ({ type: 'set_status', status: body.status, replyTo }))
    },
  }),
]
