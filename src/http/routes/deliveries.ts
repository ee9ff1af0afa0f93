/**
 * Owner delivery routes (api-v1 §4.2): the store's delivery orders, assignment, the delivery-status
 * override, offering a delivery to drivers (docs/drivers.md "Offers") and the proof-of-delivery
 * photo. Every change goes through the order's actor.
 */
import { readFile } from 'node:fs/promises'
import { route, Reply } from '../route.ts'
import { paginate, PaginatedSchema } from '../schemas.ts'
import { OrderSchema } from '../docs-schemas.ts'
import { AssignBody, DeliveriesQuery, DeliveryStatusBody, OfferCreate, OfferCreatedSchema, OwnerDeliverySchema } from '../delivery-schemas.ts'
import { ApiError, notFound } from '../../errors.ts'
import { mayServe, OFFER_TTL } from '../../domain/delivery.ts'
import { fromCents } from '../../domain/money.ts'
import { nowIso } from '../../storage/db.ts'
import { offerView, proofView } from '../../storage/drivers.ts'
import type { OrderRow, OrderView } from '../../storage/orders.ts'
import type { StoreRow } from '../../storage/stores.ts'
import type { Services } from '../../services.ts'
import { ownedStore } from './owner-access.ts'
import { feeOf, photoPath } from './delivery-common.ts'

const DELIVERIES_PER_PAGE = 30
const tag = 'Deliveries'

function ownedOrder(svc: Services, storeId: number, orderId: string | undefined): OrderRow {
  const row = svc.orders.rowInStore(Number(orderId), storeId)
  if (!row) throw notFound('order')
  return row
}

const photoUrl = (svc: Services, o: OrderRow) => `${svc.config.baseUrl}/restaurants/${o.store_id}/orders/${o.id}/pod-photo`

/** The full order plus its delivery side: fee, the driver's note and proof of delivery. */
export function ownerDeliveryView(svc: Services, o: OrderRow) {
  const d = svc.drivers.delivery(o.id)
  return { ...svc.orders.full(o), delivery: { fee: fromCents(d?.driver_fee ?? 0), note: d?.note ?? null, proof: proofView(d, photoUrl(svc, o)) } }
}

/** A driver named in a body: the owner's, unbound or bound to this store — else a field error. */
function assignableDriver(svc: Services, store: StoreRow, driverId: number, field = 'driver_id') {
  const d = svc.drivers.ownedBy(driverId, store.owner_id)
  if (!d) throw new ApiError('validation_failed', undefined, { [field]: ['The driver does not exist.'] })
  if (!mayServe({ ownerId: d.owner_id, restaurantId: d.restaurant_id }, { id: store.id, ownerId: store.owner_id })) {
    throw new ApiError('validation_failed', undefined, { [field]: ['The driver is bound to another restaurant.'] })
  }
  return d
}

export const deliveryRoutes = [
  route({
    method: 'GET', path: '/restaurants/{id}/deliveries', tag, summary: 'Delivery orders, newest first (30 per page)', auth: 'owner',
    capability: 'orders:read', query: DeliveriesQuery, response: PaginatedSchema(OwnerDeliverySchema),
    description: 'Filters: `delivery_status`, `driver_id`. Each order carries `delivery {fee, note, proof}`.',
    handler: ({ svc, principal, params, query }) => {
      const store = ownedStore(svc, principal, params.id)
      const page = query.page ? Number(query.page) : 1
      const { rows, total } = svc.drivers.forStore(store.id, { delivery_status: query.delivery_status, driver_id: query.driver_id ? Number(query.driver_id) : undefined }, page, DELIVERIES_PER_PAGE)
      return paginate(rows.map((o) => ownerDeliveryView(svc, o)), page, DELIVERIES_PER_PAGE, total)
    },
  }),
  route({
    method: 'POST', path: '/restaurants/{id}/orders/{orderId}/assign', tag, summary: 'Assign a driver', auth: 'owner', capability: 'orders:write',
    body: AssignBody, response: OrderSchema,
    description: 'The driver must be yours and unbound or bound to this store. Sets `assigned`, emits `order.driver_assigned`, withdraws open offers. Reassigning moves the order to the new driver.',
    handler: async ({ svc, principal, params, body }) => {
      const store = ownedStore(svc, principal, params.id)
      const order = ownedOrder(svc, store.id, params.orderId)
      const driver = assignableDriver(svc, store, body.driver_id)
      return svc.actors.orders.ask<OrderView>(order.id, (replyTo) => ({ type: 'assign_driver', driverId: driver.id, fee: feeOf(store), replyTo }))
    },
  }),
  route({
    method: 'PUT', path: '/restaurants/{id}/orders/{orderId}/delivery-status', tag, summary: 'Set the delivery status (override)', auth: 'owner',
    capability: 'orders:write', body: DeliveryStatusBody, response: OrderSchema,
    description: 'Any delivery status may be set. `out_for_delivery`, `delivered`, `failed` emit `order.out_for_delivery`, `order.delivered`, `order.delivery_failed`. `pending` un-assigns the driver.',
    handler: async ({ svc, principal, params, body }) => {
      const store = ownedStore(svc, principal, params.id)
      const order = ownedOrder(svc, store.id, params.orderId)
      return svc.actors.orders.ask<OrderView>(order.id, (replyTo) => ({ type: 'set_delivery_status', status: body.delivery_status, note: body.note ?? null, replyTo }))
    },
  }),
  route({
    method: 'POST', path: '/restaurants/{id}/orders/{orderId}/offers', tag, summary: 'Offer an unassigned delivery to drivers', auth: 'owner',
    capability: 'orders:write', body: OfferCreate, status: 201, response: OfferCreatedSchema,
    description: `Without \`driver_ids\`, every on-shift driver who may serve the store is offered the delivery. Drivers off shift are skipped. Offers expire after \`expires_in\` seconds (${OFFER_TTL.min}–${OFFER_TTL.max}, default ${OFFER_TTL.default}); the first driver to accept gets the order and the other offers are withdrawn.`,
    handler: async ({ svc, principal, params, body }) => {
      const store = ownedStore(svc, principal, params.id)
      const order = ownedOrder(svc, store.id, params.orderId)
      const skipped: Array<{ driver_id: number; reason: string }> = []
      let drivers: number[]
      if (body?.driver_ids) {
        drivers = []
        body.driver_ids.forEach((id, i) => {
          const d = assignableDriver(svc, store, id, `driver_ids.${i}`)
          if (d.on_shift === 1) drivers.push(d.id)
          else skipped.push({ driver_id: d.id, reason: 'off_shift' })
        })
      } else {
        drivers = svc.drivers.fleetFor(store.owner_id, store.id).filter((d) => d.on_shift === 1).map((d) => d.id)
      }
      // One open offer per driver and order: a second round does not pester those still deciding.
      const open = new Set(svc.drivers.pendingOfferDrivers(order.id, nowIso()))
      drivers = drivers.filter((id) => {
        if (!open.has(id)) return true
        skipped.push({ driver_id: id, reason: 'already_offered' })
        return false
      })
      const fee = feeOf(store)
      const expiresAt = nowIso(Date.now() + (body?.expires_in ?? OFFER_TTL.default) * 1000)
      const uniq = [...new Set(drivers)]
      if (uniq.length > 0) {
        await svc.actors.orders.ask<OrderView>(order.id, (replyTo) => ({ type: 'make_offers', offers: uniq.map((driverId) => ({ driverId, fee })), expiresAt, replyTo }))
      }
      const now = nowIso()
      const data = svc.db.prepare<[number, string], Parameters<typeof offerView>[0]>("SELECT * FROM delivery_offers WHERE order_id = ? AND status = 'pending' AND expires_at > ? ORDER BY id")
        .all(order.id, now).map((r) => offerView(r, order, { id: store.id, title: store.title }, now))
      return new Reply(201, { data, skipped })
    },
  }),
  route({
    method: 'GET', path: '/restaurants/{id}/orders/{orderId}/pod-photo', tag, summary: 'The proof-of-delivery photo', auth: 'owner',
    capability: 'orders:read', produces: 'image/*', response: { type: 'string', format: 'binary' },
    handler: async ({ svc, principal, params }) => {
      const store = ownedStore(svc, principal, params.id)
      const order = ownedOrder(svc, store.id, params.orderId)
      const d = svc.drivers.delivery(order.id)
      if (!d?.photo_path || !d.photo_type) throw notFound('photo')
      const bytes = await readFile(photoPath(svc, d.photo_path)).catch(() => { throw notFound('photo') })
      return new Reply(200, bytes, { 'Cache-Control': 'private, max-age=300', 'X-Content-Type-Options': 'nosniff' }, d.photo_type)
    },
  }),
]
