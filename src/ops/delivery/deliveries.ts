/**
 * Owner delivery operations (api-v1 §4.2): the store's delivery orders, assignment, the
 * delivery-status override, offering a delivery to drivers (docs/drivers.md "Offers") and the
 * proof-of-delivery photo. Every change goes through the order's actor; the store and order are
 * resolved by the policy (`scope: ['store', 'order']`), so another owner's is a 404 whatever the input.
 */
import { defineOp, type Access } from '../op.ts'
import { orderOf, storeOf } from '../scope.ts'
import { paginate, PaginatedSchema } from '../schemas/common.ts'
import { OrderSchema } from '../schemas/named.ts'
import { AssignBody, DeliveriesQuery, DeliveryStatusBody, OfferCreate, OfferCreatedSchema, OwnerDeliverySchema } from '../schemas/delivery.ts'
import { assignableDriver, feeOf, ownerDeliveryView } from './delivery-views.ts'
import { notFound } from '../../errors.ts'
import { OFFER_TTL } from '../../domain/delivery.ts'
import { nowIso } from '../../storage/db.ts'
import { offerView } from '../../storage/drivers.ts'
import { readPodPhoto } from '../../storage/pod-photos.ts'
import type { OrderRow, OrderView } from '../../storage/orders.ts'
import type { Services } from '../../services.ts'

const DELIVERIES_PER_PAGE = 30
const tag = 'Deliveries'
const read: Access = { owner: 'orders:read' }
const write: Access = { owner: 'orders:write' }

export const listDeliveries = defineOp({
  id: 'deliveries.list', tag, summary: 'Delivery orders, newest first (30 per page)', access: read, scope: ['store'],
  description: 'Filters: `delivery_status`, `driver_id`. Each order carries `delivery {fee, note, proof}`.',
  input: DeliveriesQuery, output: PaginatedSchema(OwnerDeliverySchema),
  run: (ctx, query) => {
    const page = query.page ? Number(query.page) : 1
    const filter = { delivery_status: query.delivery_status, driver_id: query.driver_id ? Number(query.driver_id) : undefined }
    const { rows, total } = ctx.svc.drivers.forStore(storeOf(ctx).id, filter, page, DELIVERIES_PER_PAGE)
    return paginate(rows.map((o) => ownerDeliveryView(ctx.svc, o)), page, DELIVERIES_PER_PAGE, total)
  },
})

export const assignDriver = defineOp({
  id: 'deliveries.assign', feature: 'delivery', tag, summary: 'Assign a driver', access: write, scope: ['store', 'order'],
  description: 'The driver must be yours and unbound or bound to this store. Sets `assigned`, emits `order.driver_assigned`, withdraws open offers. Reassigning moves the order to the new driver.',
  input: AssignBody, output: OrderSchema,
  run: (ctx, input) => {
    const store = storeOf(ctx)
    const driver = assignableDriver(ctx.svc, store, input.driver_id)
    return ctx.svc.actors.orders.ask<OrderView>(orderOf(ctx).id, (replyTo) => ({ type: 'assign_driver', driverId: driver.id, fee: feeOf(store), replyTo }))
  },
})

export const setDeliveryStatus = defineOp({
  id: 'deliveries.status.set', tag, summary: 'Set the delivery status (override)', access: write, scope: ['store', 'order'],
  description: 'Any delivery status may be set. `out_for_delivery`, `delivered`, `failed` emit `order.out_for_delivery`, `order.delivered`, `order.delivery_failed`. `pending` un-assigns the driver. The kitchen status follows (docs/orders.md "How the two statuses move together"): `picked_up`/`out_for_delivery` make a `new` or `preparing` order `ready`, `delivered` makes `new`, `preparing` or `ready` `delivered`, each with `order.status_changed` (`source: "delivery"`).',
  input: DeliveryStatusBody, output: OrderSchema,
  run: (ctx, input) =>
    ctx.svc.actors.orders.ask<OrderView>(orderOf(ctx).id, (replyTo) => ({ type: 'set_delivery_status', status: input.delivery_status, note: input.note ?? null, replyTo })),
})

export const createOffers = defineOp({
  id: 'deliveries.offers.create', feature: 'delivery', tag, summary: 'Offer an unassigned delivery to drivers', access: write, scope: ['store', 'order'],
  description: `Without \`driver_ids\`, every on-shift driver who may serve the store is offered the delivery. Drivers off shift are skipped. Offers expire after \`expires_in\` seconds (${OFFER_TTL.min}–${OFFER_TTL.max}, default ${OFFER_TTL.default}); the first driver to accept gets the order and the other offers are withdrawn.`,
  input: OfferCreate, output: OfferCreatedSchema,
  run: async (ctx, input) => {
    const { svc } = ctx
    const store = storeOf(ctx)
    const order = orderOf(ctx)
    const skipped: Array<{ driver_id: number; reason: string }> = []
    let drivers: number[]
    if (input?.driver_ids) {
      drivers = []
      input.driver_ids.forEach((id, i) => {
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
    const expiresAt = nowIso(Date.now() + (input?.expires_in ?? OFFER_TTL.default) * 1000)
    const uniq = [...new Set(drivers)]
    if (uniq.length > 0) {
      await svc.actors.orders.ask<OrderView>(order.id, (replyTo) => ({ type: 'make_offers', offers: uniq.map((driverId) => ({ driverId, fee })), expiresAt, replyTo }))
    }
    const now = nowIso()
    const data = svc.drivers.openOffers(order.id, now).map((r) => offerView(r, order, { id: store.id, title: store.title }, now))
    return { data, skipped }
  },
})

export const deliveryOps = [listDeliveries, assignDriver, setDeliveryStatus, createOffers]

/**
 * The proof-of-delivery photo of an order the caller's scope already resolved: its bytes and
 * content type, or 404 `not_found` when there is none (or an older upload's file is gone). Not an operation of
 * `ALL_OPS`: its answer is an image, not JSON, so the HTTP route serves it itself (deliveries.ts).
 */
export async function proofPhoto(svc: Services, order: OrderRow): Promise<{ bytes: Buffer; type: string }> {
  const d = svc.drivers.delivery(order.id)
  if (!d?.photo_path || !d.photo_type) throw notFound('photo')
  const bytes = await readPodPhoto(svc.db, svc.config.dbPath, d.photo_path)
  if (!bytes) throw notFound('photo')
  return { bytes, type: d.photo_type }
}
