/**
 * The driver app API (api-v1 §4.6): every response is limited to the token's driver; an order that
 * is not the driver's is a 404. Work on deliveries: own profile and deliveries, forward status
 * moves, live location, self-dispatch (available + claim), offers, proof of delivery. Account
 * routes (login, push, shift, earnings) are in driver-account.ts. Payload design: docs/drivers.md.
 */
import { randomBytes } from 'node:crypto'
import { mkdir, open, rename, unlink } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { route } from '../route.ts'
import { paginate, PaginatedSchema } from '../schemas.ts'
import {
  ActiveQuery, DriverDeliverySchema, DriverSchema, DriverStatusBody, ListOf, LocationAckSchema, LocationBody, OfferSchema, PodCodeBody, PodPhotoBody,
} from '../delivery-schemas.ts'
import { ApiError, notFound } from '../../errors.ts'
import { mayServe, POD_PHOTO_MAX_BYTES, POD_PHOTO_TYPES, sniffImageType } from '../../domain/delivery.ts'
import { fromCents } from '../../domain/money.ts'
import { deliveryCode } from '../../auth/delivery-code.ts'
import { nowIso } from '../../storage/db.ts'
import { driverDeliveryView, offerView } from '../../storage/drivers.ts'
import type { OrderRow, OrderView } from '../../storage/orders.ts'
import type { DriverPrincipal } from '../../auth/principals.ts'
import type { DriverLive, LocationAck } from '../../actors/driver.ts'
import type { Services } from '../../services.ts'
import { feeOf, photoPath } from './delivery-common.ts'

const tag = 'Driver app'
const DELIVERIES_PER_PAGE = 30

/** The driver's own order, else 404: another driver's order is indistinguishable from none (api-v1 §1). */
function myOrder(svc: Services, p: DriverPrincipal, orderId: string | undefined): OrderRow {
  const o = svc.orders.row(Number(orderId))
  if (!o || o.driver_id !== p.driverId) throw notFound('delivery')
  return o
}

export function deliveryOut(svc: Services, orderId: number) {
  const o = svc.orders.row(orderId)
  if (!o) throw notFound('delivery')
  return driverDeliveryView(o, svc.orders.lines(o.id), svc.drivers.delivery(o.id), svc.drivers.storeTitle(o.store_id))
}

function requireShift(svc: Services, p: DriverPrincipal): void {
  if (svc.drivers.byId(p.driverId)?.on_shift !== 1) throw new ApiError('off_shift')
}

/** Decode a base64 (or data-URL) image, check size and real type, and write it durably under the data dir. */
async function storePhoto(svc: Services, orderId: number, body: { image: string; content_type?: string }) {
  const m = /^data:([\w/+.-]+);base64,(.*)$/s.exec(body.image)
  const declared = body.content_type ?? m?.[1]
  const b64 = (m ? m[2]! : body.image).replace(/\s+/g, '')
  if (!/^[A-Za-z0-9+/_-]*={0,2}$/.test(b64)) throw new ApiError('validation_failed', undefined, { image: ['Send the image as base64.'] })
  if (b64.length * 0.75 > POD_PHOTO_MAX_BYTES + 3) throw new ApiError('payload_too_large', `The photo must be at most ${POD_PHOTO_MAX_BYTES} bytes.`)
  const bytes = Buffer.from(b64, 'base64')
  if (bytes.length > POD_PHOTO_MAX_BYTES) throw new ApiError('payload_too_large', `The photo must be at most ${POD_PHOTO_MAX_BYTES} bytes.`)
  const type = sniffImageType(bytes)
  if (!type || (declared && declared.toLowerCase() !== type && !(declared === 'image/jpg' && type === 'image/jpeg'))) {
    throw new ApiError('unsupported_media_type', `Send a ${POD_PHOTO_TYPES.join(', ')} image.`)
  }
  const rel = join('pod', `${orderId}-${randomBytes(12).toString('hex')}.${type.slice('image/'.length)}`)
  const full = photoPath(svc, rel)
  await mkdir(dirname(full), { recursive: true })
  // Written, fsynced and renamed before the order references it, so a crash never leaves a dangling reference.
  const tmp = `${full}.tmp`
  const fh = await open(tmp, 'w', 0o600)
  try { await fh.writeFile(bytes); await fh.sync() } finally { await fh.close() }
  await rename(tmp, full)
  return { path: rel, type, bytes: bytes.length, at: nowIso() }
}

export const driverAppRoutes = [
  route({
    method: 'GET', path: '/driver/me', tag, summary: 'Own profile, shift, live location and active deliveries', auth: 'driver', response: DriverSchema,
    handler: ({ svc, principal }) => svc.actors.drivers.ask<DriverLive>(principal.driverId, (replyTo) => ({ type: 'get', replyTo })),
  }),
  route({
    method: 'GET', path: '/driver/deliveries', tag, summary: 'Own deliveries, newest first (30 per page)', auth: 'driver', query: ActiveQuery,
    response: PaginatedSchema(DriverDeliverySchema), description: '`active=1` hides delivered and failed deliveries.',
    handler: ({ svc, principal, query }) => {
      const page = query.page ? Number(query.page) : 1
      const active = query.active === '1' || query.active === 'true'
      const { rows, total } = svc.drivers.forDriver(principal.driverId, active, page, DELIVERIES_PER_PAGE)
      return paginate(rows.map((o) => deliveryOut(svc, o.id)), page, DELIVERIES_PER_PAGE, total)
    },
  }),
  route({
    method: 'GET', path: '/driver/deliveries/{orderId}', tag, summary: 'One own delivery', auth: 'driver', response: DriverDeliverySchema,
    handler: ({ svc, principal, params }) => deliveryOut(svc, myOrder(svc, principal, params.orderId).id),
  }),
  route({
    method: 'PUT', path: '/driver/deliveries/{orderId}/status', tag, summary: 'Move an own delivery forward', auth: 'driver',
    body: DriverStatusBody, response: DriverDeliverySchema,
    description: 'Only forward: assigned → picked_up → out_for_delivery → delivered | failed (422 `invalid_transition` otherwise; repeating the current status is a no-op). Emits the same events as the owner route.',
    handler: async ({ svc, principal, params, body }) => {
      const o = myOrder(svc, principal, params.orderId)
      await svc.actors.orders.ask<OrderView>(o.id, (replyTo) => ({ type: 'driver_status', driverId: principal.driverId, status: body.delivery_status, note: body.note ?? null, replyTo }))
      return deliveryOut(svc, o.id)
    },
  }),
  route({
    method: 'PUT', path: '/driver/location', tag, summary: 'Report the current position', auth: 'driver', body: LocationBody, response: LocationAckSchema,
    description: 'Answers once the position is durable. Customers see it on the tracking view only while the order is picked up or out for delivery. The driver socket does the same with `location` frames.',
    handler: ({ svc, principal, body }) =>
      svc.actors.drivers.ask<LocationAck>(principal.driverId, (replyTo) => ({ type: 'location', lat: body.lat, lng: body.lng, at: Date.now(), replyTo })),
  }),
  route({
    method: 'GET', path: '/driver/available', tag, summary: 'Unassigned deliveries this driver may claim', auth: 'driver', response: ListOf(DriverDeliverySchema),
    description: 'Delivery orders still `pending` without a driver, from the driver\'s store (or every store of the owner for unbound drivers), oldest first. The customer\'s phone is shown only once claimed; `fee` is what the delivery pays.',
    handler: ({ svc, principal }) => {
      const data = svc.drivers.available(principal.ownerId, principal.restaurantId).map((o) => {
        const store = svc.stores.byId(o.store_id)!
        return { ...deliveryOut(svc, o.id), phone: null, fee: fromCents(feeOf(store)) }
      })
      return { data }
    },
  }),
  route({
    method: 'POST', path: '/driver/deliveries/{orderId}/claim', tag, summary: 'Claim an unassigned delivery (first driver wins)', auth: 'driver',
    response: DriverDeliverySchema,
    description: 'Requires an open shift (422 `off_shift`). When several drivers claim at once exactly one gets it; the others get 409 `already_claimed`. Emits `order.driver_assigned`.',
    handler: async ({ svc, principal, params }) => {
      requireShift(svc, principal)
      const o = svc.orders.row(Number(params.orderId))
      const store = o && svc.stores.byId(o.store_id)
      if (!o || !store || o.delivery_status === null || !mayServe({ ownerId: principal.ownerId, restaurantId: principal.restaurantId }, { id: store.id, ownerId: store.owner_id })) {
        throw notFound('delivery')
      }
      await svc.actors.orders.ask<OrderView>(o.id, (replyTo) => ({ type: 'claim', driverId: principal.driverId, fee: feeOf(store), replyTo }))
      return deliveryOut(svc, o.id)
    },
  }),
  route({
    method: 'GET', path: '/driver/offers', tag, summary: 'Open delivery offers for this driver', auth: 'driver', response: ListOf(OfferSchema),
    description: 'Pending, unexpired offers, soonest to expire first.',
    handler: ({ svc, principal }) => {
      const now = nowIso()
      return { data: svc.drivers.pendingOffers(principal.driverId, now).map((r) => offerView(r, svc.orders.row(r.order_id), svc.drivers.storeTitle(r.store_id), now)) }
    },
  }),
  route({
    method: 'POST', path: '/driver/offers/{offerId}/accept', tag, summary: 'Accept an offer: the delivery is assigned to you', auth: 'driver',
    response: DriverDeliverySchema,
    description: 'Requires an open shift. 409 `offer_expired` after `expires_at`, 409 `offer_closed` once answered or withdrawn, 409 `already_claimed` when another driver was faster.',
    handler: async ({ svc, principal, params }) => {
      const offer = svc.drivers.offer(Number(params.offerId))
      if (!offer || offer.driver_id !== principal.driverId) throw notFound('offer')
      requireShift(svc, principal)
      await svc.actors.orders.ask<OrderView>(offer.order_id, (replyTo) => ({ type: 'claim', driverId: principal.driverId, fee: offer.fee, offerId: offer.id, replyTo }))
      return deliveryOut(svc, offer.order_id)
    },
  }),
  route({
    method: 'POST', path: '/driver/offers/{offerId}/reject', tag, summary: 'Decline an offer', auth: 'driver', response: OfferSchema,
    handler: async ({ svc, principal, params }) => {
      const offer = svc.drivers.offer(Number(params.offerId))
      if (!offer || offer.driver_id !== principal.driverId) throw notFound('offer')
      await svc.actors.orders.ask<OrderView>(offer.order_id, (replyTo) => ({ type: 'reject_offer', driverId: principal.driverId, offerId: offer.id, replyTo }))
      const now = nowIso()
      return offerView(svc.drivers.offer(offer.id)!, svc.orders.row(offer.order_id), svc.drivers.storeTitle(offer.store_id), now)
    },
  }),
  route({
    method: 'POST', path: '/driver/deliveries/{orderId}/pod-otp', tag, summary: 'Complete a delivery with the customer\'s code', auth: 'driver',
    body: PodCodeBody, response: DriverDeliverySchema,
    description: 'The customer sees a 4-digit `delivery_code` on the tracking view. The right code marks the order `delivered` (emits `order.delivered`); a wrong one is 422 `pod_code_invalid` with the attempts left; after 5 wrong codes 422 `pod_code_locked`.',
    handler: async ({ svc, principal, params, body }) => {
      const o = myOrder(svc, principal, params.orderId)
      await svc.actors.orders.ask<OrderView>(o.id, (replyTo) => ({ type: 'pod_code', driverId: principal.driverId, code: body.code, expected: deliveryCode(o.track_token), replyTo }))
      return deliveryOut(svc, o.id)
    },
  }),
  route({
    method: 'POST', path: '/driver/deliveries/{orderId}/pod-photo', tag, summary: 'Attach a proof-of-delivery photo', auth: 'driver',
    body: PodPhotoBody, response: DriverDeliverySchema,
    description: `\`image\`: base64 or a data URL of a JPEG, PNG or WebP image of at most ${POD_PHOTO_MAX_BYTES / 1024} KiB (413 above, 415 for other types; the type is read from the bytes). Allowed once picked up; a new photo replaces the old one. The owner reads it at \`GET /restaurants/{id}/orders/{orderId}/pod-photo\`.`,
    handler: async ({ svc, principal, params, body }) => {
      const o = myOrder(svc, principal, params.orderId)
      const previous = svc.drivers.delivery(o.id)?.photo_path ?? null
      const photo = await storePhoto(svc, o.id, body)
      try {
        await svc.actors.orders.ask<OrderView>(o.id, (replyTo) => ({ type: 'pod_photo', driverId: principal.driverId, photo, replyTo }))
      } catch (err) {
        await unlink(photoPath(svc, photo.path)).catch(() => {})
        throw err
      }
      if (previous && previous !== photo.path) await unlink(photoPath(svc, previous)).catch(() => {})
      return deliveryOut(svc, o.id)
    },
  }),
]
