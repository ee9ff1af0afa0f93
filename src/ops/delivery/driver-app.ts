/**
 * The driver app's work on deliveries (api-v1 §4.6): own profile and deliveries, forward status
 * moves, live location, self-dispatch (available + claim), offers, proof of delivery. Identity
 * comes only from the token (`driverOf`); an order that is not the driver's is a 404, resolved by
 * the policy (`scope: ['order']` for a driver principal) before the input is validated. Account
 * operations (login, push, shift, earnings) are in driver-account.ts. Payloads: docs/drivers.md.
 */
import * as v from 'valibot'
import { defineOp, type Access, type OpCtx } from '../op.ts'
import { driverOf, orderOf } from '../scope.ts'
import { Id, paginate } from '../schemas/common.ts'
import {
  ActiveQuery, DriverDeliveriesSchema, DriverDeliverySchema, DriverSchema, DriverStatusBody, ListOf, LocationAckSchema, LocationBody, OfferSchema, PodCodeBody, PodPhotoBody,
} from '../schemas/delivery.ts'
import { deliveryOut, feeOf } from './delivery-views.ts'
import { driverStops } from '../../actors/dispatch-batch.ts'
import { ApiError, notFound } from '../../errors.ts'
import { mayServe, POD_PHOTO_MAX_BYTES } from '../../domain/delivery.ts'
import { decodePhoto } from '../schemas/image-upload.ts'
import { fromCents } from '../../domain/money.ts'
import { deliveryCode } from '../../auth/delivery-code.ts'
import { nowIso } from '../../storage/db.ts'
import { offerView } from '../../storage/drivers.ts'
import { dropUnnamedPodPhoto, newPodPhotoPath, putPodPhoto, removePodPhotoFile } from '../../storage/pod-photos.ts'
import type { OrderView } from '../../storage/orders.ts'
import type { DriverPrincipal } from '../../auth/principals.ts'
import type { DriverLive, LocationAck } from '../../actors/driver.ts'
import type { DeliveryMsg, PodPhoto } from '../../actors/order-delivery.ts'
import type { Services } from '../../services.ts'

const tag = 'Driver app'
const DELIVERIES_PER_PAGE = 30
const driver: Access = { driver: true }

function requireShift(svc: Services, p: DriverPrincipal): void {
  if (svc.drivers.byId(p.driverId)?.on_shift !== 1) throw new ApiError('off_shift')
}

/** The driver's own offer, else 404: another driver's offer is indistinguishable from none. */
function myOffer(svc: Services, p: DriverPrincipal, offerId: number) {
  const offer = svc.drivers.offer(offerId)
  if (!offer || offer.driver_id !== p.driverId) throw notFound('offer')
  return offer
}

const orderId = { order_id: Id }
const offerId = v.object({ offer_id: Id })

export const getMe = defineOp({
  id: 'driver.me.get', tag, summary: 'Own profile, shift, live location and active deliveries', access: driver, scope: [],
  output: DriverSchema,
  run: (ctx) => ctx.svc.actors.drivers.ask<DriverLive>(driverOf(ctx).driverId, (replyTo) => ({ type: 'get', replyTo })),
})

export const listMyDeliveries = defineOp({
  id: 'driver.deliveries.list', tag, summary: 'Own deliveries, newest first (30 per page)', access: driver, scope: [],
  description: '`active=1` hides delivered and failed deliveries. `stops` lists the pickups and drop-offs of every active delivery in visiting order (docs/dispatch.md "Batching").',
  input: ActiveQuery, output: DriverDeliveriesSchema,
  run: async (ctx, query) => {
    const page = query.page ? Number(query.page) : 1
    const active = query.active === '1' || query.active === 'true'
    const { driverId } = driverOf(ctx)
    const { rows, total } = ctx.svc.drivers.forDriver(driverId, active, page, DELIVERIES_PER_PAGE)
    return { ...paginate(rows.map((o) => deliveryOut(ctx.svc, o.id)), page, DELIVERIES_PER_PAGE, total), stops: await driverStops(ctx.svc, driverId) }
  },
})

export const getMyDelivery = defineOp({
  id: 'driver.deliveries.get', tag, summary: 'One own delivery', access: driver, scope: ['order'],
  output: DriverDeliverySchema,
  run: (ctx) => deliveryOut(ctx.svc, orderOf(ctx).id),
})

/** The calling driver's move of a delivery, applied by its order's actor; answered with the delivery as the driver app shows it. */
async function moveDelivery(ctx: OpCtx, orderId: number, message: (driverId: number, replyTo: DeliveryMsg['replyTo']) => DeliveryMsg) {
  const { driverId } = driverOf(ctx)
  await ctx.svc.actors.orders.ask<OrderView>(orderId, (replyTo) => message(driverId, replyTo))
  return deliveryOut(ctx.svc, orderId)
}

export const setMyDeliveryStatus = defineOp({
  id: 'driver.deliveries.status.set', tag, summary: 'Move an own delivery forward', access: driver, scope: ['order'],
  description: 'Only forward: assigned → picked_up → out_for_delivery → delivered | failed (422 `invalid_transition` otherwise; repeating the current status is a no-op). Emits the same events as the owner route, and moves the kitchen status the same way (docs/orders.md "How the two statuses move together").',
  input: DriverStatusBody, output: DriverDeliverySchema,
  run: (ctx, input) => moveDelivery(ctx, orderOf(ctx).id, (driverId, replyTo) => ({ type: 'driver_status', driverId, status: input.delivery_status, note: input.note ?? null, replyTo })),
})

export const reportLocation = defineOp({
  id: 'driver.location.set', tag, summary: 'Report the current position', access: driver, scope: [],
  description: 'Answers once the position is durable. Customers see it on the tracking view only while the order is picked up or out for delivery. The driver socket does the same with `location` frames.',
  input: LocationBody, output: LocationAckSchema,
  run: (ctx, input) =>
    ctx.svc.actors.drivers.ask<LocationAck>(driverOf(ctx).driverId, (replyTo) => ({ type: 'location', lat: input.lat, lng: input.lng, at: Date.now(), replyTo })),
})

export const listAvailable = defineOp({
  id: 'driver.available.list', tag, summary: 'Unassigned deliveries this driver may claim', access: driver, scope: [],
  description: 'Delivery orders still `pending` without a driver, from the driver\'s store (or every store of the owner for unbound drivers), oldest first. The customer\'s phone is shown only once claimed; `fee` is what the delivery pays.',
  output: ListOf(DriverDeliverySchema),
  run: (ctx) => {
    const p = driverOf(ctx)
    const data = ctx.svc.drivers.available(p.ownerId, p.restaurantId).map((o) => {
      const store = ctx.svc.stores.byId(o.store_id)!
      return { ...deliveryOut(ctx.svc, o.id), phone: null, fee: fromCents(feeOf(store)) }
    })
    return { data }
  },
})

export const claimDelivery = defineOp({
  id: 'driver.deliveries.claim', tag, summary: 'Claim an unassigned delivery (first driver wins)', access: driver, scope: [],
  description: 'Requires an open shift (422 `off_shift`). When several drivers claim at once exactly one gets it; the others get 409 `already_claimed`. Emits `order.driver_assigned`.',
  input: v.object(orderId), output: DriverDeliverySchema,
  run: async (ctx, { order_id }) => {
    const p = driverOf(ctx)
    requireShift(ctx.svc, p)
    // Not the driver's order yet: any delivery of a store the driver may serve (api-v1 §4.6).
    const o = ctx.svc.orders.row(order_id)
    const store = o && ctx.svc.stores.byId(o.store_id)
    if (!o || !store || o.delivery_status === null || !mayServe({ ownerId: p.ownerId, restaurantId: p.restaurantId }, { id: store.id, ownerId: store.owner_id })) {
      throw notFound('delivery')
    }
    return moveDelivery(ctx, o.id, (driverId, replyTo) => ({ type: 'claim', driverId, fee: feeOf(store), replyTo }))
  },
})

export const listMyOffers = defineOp({
  id: 'driver.offers.list', tag, summary: 'Open delivery offers for this driver', access: driver, scope: [],
  description: 'Pending, unexpired offers, soonest to expire first.',
  output: ListOf(OfferSchema),
  run: (ctx) => {
    const now = nowIso()
    const { svc } = ctx
    return { data: svc.drivers.pendingOffers(driverOf(ctx).driverId, now).map((r) => offerView(r, svc.orders.row(r.order_id), svc.drivers.storeTitle(r.store_id), now)) }
  },
})

export const acceptOffer = defineOp({
  id: 'driver.offers.accept', tag, summary: 'Accept an offer: the delivery is assigned to you', access: driver, scope: [],
  description: 'Requires an open shift. 409 `offer_expired` after `expires_at`, 409 `offer_closed` once answered or withdrawn, 409 `already_claimed` when another driver was faster.',
  input: offerId, output: DriverDeliverySchema,
  run: async (ctx, { offer_id }) => {
    const p = driverOf(ctx)
    const offer = myOffer(ctx.svc, p, offer_id)
    requireShift(ctx.svc, p)
    return moveDelivery(ctx, offer.order_id, (driverId, replyTo) => ({ type: 'claim', driverId, fee: offer.fee, offerId: offer.id, replyTo }))
  },
})

export const rejectOffer = defineOp({
  id: 'driver.offers.reject', tag, summary: 'Decline an offer', access: driver, scope: [],
  input: offerId, output: OfferSchema,
  run: async (ctx, { offer_id }) => {
    const { svc } = ctx
    const p = driverOf(ctx)
    const offer = myOffer(svc, p, offer_id)
    await svc.actors.orders.ask<OrderView>(offer.order_id, (replyTo) => ({ type: 'reject_offer', driverId: p.driverId, offerId: offer.id, replyTo }))
    // Automatic dispatch (docs/dispatch.md): the next candidate is offered the order now.
    svc.dispatch.answered(offer.order_id)
    return offerView(svc.drivers.offer(offer.id)!, svc.orders.row(offer.order_id), svc.drivers.storeTitle(offer.store_id), nowIso())
  },
})

export const completeWithCode = defineOp({
  id: 'driver.deliveries.pod_code', tag, summary: 'Complete a delivery with the customer\'s code', access: driver, scope: ['order'],
  description: 'The customer sees a 4-digit `delivery_code` on the tracking view. The right code marks the order `delivered` (emits `order.delivered`); a wrong one is 422 `pod_code_invalid` with the attempts left; after 5 wrong codes 422 `pod_code_locked`.',
  input: PodCodeBody, output: DriverDeliverySchema,
  run: (ctx, { code }) => {
    const o = orderOf(ctx)
    return moveDelivery(ctx, o.id, (driverId, replyTo) => ({ type: 'pod_code', driverId, code, expected: deliveryCode(o.track_token), replyTo }))
  },
})

export const attachPhoto = defineOp({
  id: 'driver.deliveries.pod_photo', tag, summary: 'Attach a proof-of-delivery photo', access: driver, scope: ['order'],
  description: `\`image\`: base64 or a data URL of a JPEG, PNG or WebP image of at most ${POD_PHOTO_MAX_BYTES / 1024} KiB (413 above, 415 for other types; the type is read from the bytes). Allowed once picked up; a new photo replaces the old one. The owner reads it at \`GET /restaurants/{id}/orders/{orderId}/pod-photo\`.`,
  input: PodPhotoBody, output: DriverDeliverySchema,
  run: async (ctx, input) => {
    const { svc } = ctx
    const { driverId } = driverOf(ctx)
    const o = orderOf(ctx)
    const { bytes, type } = decodePhoto(input, POD_PHOTO_MAX_BYTES)
    const previous = svc.drivers.delivery(o.id)?.photo_path ?? null
    const photo: PodPhoto = { path: newPodPhotoPath(o.id, type), type, bytes: bytes.length, at: nowIso() }
    // The bytes are durable (in cluster mode: in the stream) before the order names them, so a
    // crash or a failover never leaves the order naming a photo that is not there.
    await svc.committer.write((db) => putPodPhoto(db, { path: photo.path, orderId: o.id, type, bytes, at: photo.at }))
    try {
      // The order's write that names the new photo also removes the row of the one it replaces.
      await svc.actors.orders.ask<OrderView>(o.id, (replyTo) => ({ type: 'pod_photo', driverId, photo, replyTo }))
    } catch (err) {
      // Refused (or failed): the bytes go again. Should that write fail too, the row is only unreferenced.
      await svc.committer.write((db) => dropUnnamedPodPhoto(db, o.id, photo.path)).catch(() => {})
      throw err
    }
    // A photo uploaded before migration 049 is a file: it goes once the order no longer names it.
    if (previous && previous !== photo.path) await removePodPhotoFile(svc.config.dbPath, previous)
    return deliveryOut(svc, o.id)
  },
})

export const driverAppOps = [
  getMe, listMyDeliveries, getMyDelivery, setMyDeliveryStatus, reportLocation, listAvailable, claimDelivery,
  listMyOffers, acceptOffer, rejectOffer, completeWithCode, attachPhoto,
]
