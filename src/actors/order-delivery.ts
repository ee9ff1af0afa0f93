/**
 * The delivery side of the order actor (api-v1 §3 delivery rows, §4.6): the driver's forward moves,
 * self-dispatch claims, offers and proof of delivery. Every one of them goes through the order's
 * actor, which handles one message at a time: two drivers claiming the same order at once are
 * simply two messages in a row, and exactly one of them finds the order still free.
 */
import type * as nact from 'nact'
import type { Result } from './system.ts'
import type { OrderView } from '../storage/orders.ts'
import type { Services } from '../services.ts'
import type { Decision, OrderState } from './order.ts'
import { ApiError, ERROR_CATALOG, invalidField } from '../errors.ts'
import { deliveryEventFor, stamp } from '../domain/order-state.ts'
import { claimable, driverMove, isActiveDelivery, offerStatusAt, POD_MAX_ATTEMPTS, type DriverTarget, type Offer } from '../domain/delivery.ts'
import { offerView, type DeliveryRow, type OfferChanges } from '../storage/drivers.ts'
import { nowIso } from '../storage/db.ts'

type Reply = nact.Ref<Result<OrderView>>

export interface PodPhoto { path: string; type: string; bytes: number; at: string }

/** Fee, proof of delivery and the driver's note, kept in the `deliveries` table. */
export interface DeliveryInfo { fee: number; podAttempts: number; podVerifiedAt: string | null; photo: PodPhoto | null; note: string | null }
export const NO_DELIVERY: DeliveryInfo = { fee: 0, podAttempts: 0, podVerifiedAt: null, photo: null, note: null }

export type DeliveryMsg =
  | { type: 'driver_status'; driverId: number; status: DriverTarget; note?: string | null; replyTo: Reply }
  /** Self-dispatch, or accepting offer `offerId` (which then must be the driver's and still open). */
  | { type: 'claim'; driverId: number; fee: number; offerId?: number; replyTo: Reply }
  | { type: 'reject_offer'; driverId: number; offerId: number; replyTo: Reply }
  /** `expected` is the order's delivery code, derived by the caller from the track token. */
  | { type: 'pod_code'; driverId: number; code: string; expected: string; replyTo: Reply }
  | { type: 'pod_photo'; driverId: number; photo: PodPhoto; replyTo: Reply }
  /** Owner dispatch: offer the order to these drivers until `expiresAt`. */
  | { type: 'make_offers'; offers: Array<{ driverId: number; fee: number }>; expiresAt: string; replyTo: Reply }

export const DELIVERY_MSG_TYPES: ReadonlySet<string> = new Set(['driver_status', 'claim', 'reject_offer', 'pod_code', 'pod_photo', 'make_offers'])

/** What the shell reads for the reducer before a message (kept out of OrderState: offers are many). */
export interface OrderCtx { offer?: Offer | null }

// The delivery side's writes live in storage; re-exported for the order actor's shell.
export { deliveryWriter, type OfferChanges, type OfferWrite } from '../storage/drivers.ts'

const notYours = () => new ApiError('not_found', 'The delivery does not exist.')
const invalid = (reason: string, field = 'delivery_status') => new ApiError('invalid_transition', reason, { [field]: [reason] })
/** Keyed `code`, like a wrong code. */
const podLocked = () => invalidField('code', ERROR_CATALOG.pod_code_locked.message, 'pod_code_locked')

/** Pure transitions of the delivery messages; `reduceOrder` delegates here. */
export function reduceDelivery(s: OrderState, msg: DeliveryMsg, now: string, ctx: OrderCtx): Decision {
  const base = { order_id: s.id, restaurant_id: s.storeId }
  const delivery = s.delivery ?? NO_DELIVERY
  switch (msg.type) {
    case 'driver_status': {
      if (s.driverId !== msg.driverId) return { ok: false, error: notYours() }
      const m = driverMove(s.deliveryStatus, msg.status)
      if (!m.ok) return { ok: false, error: invalid(m.reason) }
      if (m.noop) return { ok: true, state: s, events: [] }
      if (s.status === 'cancelled' && msg.status !== 'failed') return { ok: false, error: invalid('The order was cancelled; report the delivery as failed.') }
      const ev = deliveryEventFor(msg.status)
      return {
        ok: true,
        state: { ...s, deliveryStatus: msg.status, timeline: stamp(s.timeline, msg.status, now), delivery: { ...delivery, note: msg.note ?? delivery.note } },
        // Same event and payload as the owner route (api-v1 §6 "driver status updates emit the same delivery events").
        events: ev ? [{ event: ev, data: { ...base, delivery_status: msg.status, driver_id: s.driverId, note: msg.note ?? null } }] : [],
      }
    }
    case 'claim': {
      if (s.deliveryStatus === null) return { ok: false, error: notYours() }
      const offer = msg.offerId === undefined ? null : ctx.offer
      if (msg.offerId !== undefined) {
        if (!offer || offer.driverId !== msg.driverId || offer.orderId !== s.id) return { ok: false, error: new ApiError('not_found', 'The offer does not exist.') }
        const st = offerStatusAt(offer, now)
        if (st === 'expired') return { ok: true, state: s, events: [], offers: [{ id: offer.id, status: 'expired' }], refuse: new ApiError('offer_expired') }
        if (st !== 'pending') return { ok: false, error: new ApiError('offer_closed') }
      }
      // A retry by the driver who already holds it is a success, not a lost race.
      if (s.driverId === msg.driverId && isActiveDelivery(s.deliveryStatus) && !offer) return { ok: true, state: s, events: [] }
      if (!claimable(s)) {
        return offer
          ? { ok: true, state: s, events: [], offers: [{ id: offer.id, status: 'withdrawn' }], refuse: new ApiError('already_claimed') }
          : { ok: false, error: new ApiError('already_claimed') }
      }
      return {
        ok: true,
        state: { ...s, driverId: msg.driverId, deliveryStatus: 'assigned', timeline: stamp(s.timeline, 'assigned', now), delivery: { ...delivery, fee: msg.fee } },
        events: [{ event: 'order.driver_assigned', data: { ...base, driver_id: msg.driverId } }],
        offers: offer ? [{ id: offer.id, status: 'accepted' }, { withdrawPendingExcept: offer.id }] : [{ withdrawPendingExcept: null }],
      }
    }
    case 'reject_offer': {
      const offer = ctx.offer
      if (!offer || offer.driverId !== msg.driverId || offer.orderId !== s.id) return { ok: false, error: new ApiError('not_found', 'The offer does not exist.') }
      const st = offerStatusAt(offer, now)
      if (st === 'expired') return { ok: true, state: s, events: [], offers: [{ id: offer.id, status: 'expired' }], refuse: new ApiError('offer_expired') }
      if (st !== 'pending') return { ok: false, error: new ApiError('offer_closed') }
      return { ok: true, state: s, events: [], offers: [{ id: offer.id, status: 'rejected' }] }
    }
    case 'pod_code': {
      if (s.driverId !== msg.driverId) return { ok: false, error: notYours() }
      if (s.deliveryStatus === 'delivered' && delivery.podVerifiedAt) return { ok: true, state: s, events: [] }
      if (!isActiveDelivery(s.deliveryStatus) || s.deliveryStatus === 'assigned') return { ok: false, error: invalid('Pick the order up before completing it with the code.', 'code') }
      if (delivery.podAttempts >= POD_MAX_ATTEMPTS) return { ok: false, error: podLocked() }
      if (msg.code !== msg.expected) {
        const attempts = delivery.podAttempts + 1
        const left = POD_MAX_ATTEMPTS - attempts
        // The failed attempt is persisted before the refusal leaves, so restarts do not reset the count.
        const refuse = left > 0
          ? new ApiError('pod_code_invalid', `The delivery code is wrong; ${left} attempt(s) left.`, { code: [`Wrong code; ${left} attempt(s) left.`] })
          : podLocked()
        return { ok: true, state: { ...s, delivery: { ...delivery, podAttempts: attempts } }, events: [], refuse }
      }
      return {
        ok: true,
        state: { ...s, deliveryStatus: 'delivered', timeline: stamp(s.timeline, 'delivered', now), delivery: { ...delivery, podVerifiedAt: now } },
        events: [{ event: 'order.delivered', data: { ...base, delivery_status: 'delivered', driver_id: s.driverId, note: null } }],
      }
    }
    case 'pod_photo': {
      if (s.driverId !== msg.driverId) return { ok: false, error: notYours() }
      if (s.deliveryStatus !== 'picked_up' && s.deliveryStatus !== 'out_for_delivery' && s.deliveryStatus !== 'delivered') {
        return { ok: false, error: invalid('Upload the photo once the order is picked up.', 'image') }
      }
      return { ok: true, state: { ...s, delivery: { ...delivery, photo: msg.photo } }, events: [] }
    }
    case 'make_offers': {
      if (s.deliveryStatus === null) return { ok: false, error: invalid('Only delivery orders can be offered to drivers.', 'order') }
      if (!claimable(s)) return { ok: false, error: new ApiError('already_claimed', 'The delivery already has a driver or is closed.') }
      return { ok: true, state: s, events: [], offers: msg.offers.map((o) => ({ create: { driverId: o.driverId, fee: o.fee, expiresAt: msg.expiresAt } })) }
    }
    default: {
      const never: never = msg
      return never
    }
  }
}

export function deliveryInfoOf(r: DeliveryRow | undefined): DeliveryInfo {
  if (!r) return NO_DELIVERY
  return {
    fee: r.driver_fee,
    podAttempts: r.pod_attempts,
    podVerifiedAt: r.pod_verified_at,
    photo: r.photo_path ? { path: r.photo_path, type: r.photo_type ?? '', bytes: r.photo_bytes ?? 0, at: r.photo_at ?? '' } : null,
    note: r.note,
  }
}

/** After a durable change: tell the drivers involved (socket and push) and the real-time layer. */
export function afterOrderChange(svc: Services, prev: OrderState, next: OrderState, offers: OfferChanges): void {
  if (prev.driverId !== next.driverId || prev.deliveryStatus !== next.deliveryStatus) {
    const msg = { type: 'order_changed' as const, orderId: next.id, storeId: next.storeId, deliveryStatus: next.deliveryStatus, driverId: next.driverId }
    if (prev.driverId != null) svc.actors.drivers.tell(prev.driverId, msg)
    if (next.driverId != null && next.driverId !== prev.driverId) svc.actors.drivers.tell(next.driverId, msg)
  }
  svc.dispatch.orderChanged(prev, next, offers)
  for (const w of offers.withdrawn) svc.realtime.toDriver(w.driver_id, { type: 'offer_withdrawn', offer_id: w.id, order_id: next.id })
  if (offers.created.length > 0) notifyOffers(svc, next.id, offers.created)
  svc.realtime.orderChanged(prev, next)
}

/** A new offer reaches the driver's open sockets and its registered push devices. */
function notifyOffers(svc: Services, orderId: number, created: ReadonlyArray<{ id: number; driver_id: number }>): void {
  const now = nowIso()
  const order = svc.orders.row(orderId)
  for (const c of created) {
    const row = svc.drivers.offer(c.id)
    if (!row) continue
    const offer = offerView(row, order, svc.drivers.storeTitle(row.store_id), now)
    svc.realtime.toDriver(c.driver_id, { type: 'offer', offer })
    for (const d of svc.drivers.devices(c.driver_id)) {
      svc.push
        .send({
          device_token: d.device_token, platform: d.platform, title: 'New delivery offer',
          body: `${offer.restaurant.title}: ${offer.fee.toFixed(2)} fee, expires in ${offer.expires_in} s`,
          data: { type: 'offer', offer_id: offer.id, order_id: orderId, expires_at: offer.expires_at },
        })
        .catch((err) => svc.log.warn({ err, driverId: c.driver_id }, 'push send failed'))
    }
  }
}
