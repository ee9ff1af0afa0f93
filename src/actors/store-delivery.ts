/**
 * The store actor's part of delivery zones and estimates (issue 37 items 1-2; docs/dispatch.md): a
 * delivery order is priced by the zone its destination falls in (the fee is added to the total) and
 * carries the estimate it was promised. Pure: the actor's transition calls it with what it holds.
 */
import { ApiError } from '../errors.ts'
import type { OrderDraft } from '../domain/orders.ts'
import { decideZone, zonesOf, type ZoneDecision } from '../domain/zones.ts'
import { deliveryEta, straightSeconds, type DeliveryEta, type LatLng } from '../domain/eta.ts'
import { validLatLng } from '../domain/delivery.ts'
import { centsToDecimalString } from '../domain/money.ts'
import { prepMinutesIn } from '../domain/integration.ts'

/** The store's own position (settings `location`), if set. */
export function storePosition(settings: Record<string, unknown>): LatLng | null {
  const l = settings.location as { lat?: unknown; lng?: unknown } | null | undefined
  return l && validLatLng(l.lat, l.lng) ? { lat: l.lat as number, lng: l.lng as number } : null
}

/** The zone of a delivery to `dest` with goods worth `goodsCents`, with the store's currency in messages. */
export function zoneFor(settings: Record<string, unknown>, currency: string, dest: LatLng | null, goodsCents: number): ZoneDecision {
  return decideZone(zonesOf(settings), dest, goodsCents, (c) => `${centsToDecimalString(c)} ${currency}`)
}

/**
 * The estimate of a delivery to `dest` placed at `nowMs`: `rideS` is the router's ride from the store
 * (src/providers/router.ts); without one the straight line, and 0 while a position is unknown.
 */
export function etaFor(settings: Record<string, unknown>, dest: LatLng | null, nowMs: number, rideS: number | null = null, toStoreS = 0): DeliveryEta {
  const from = storePosition(settings)
  return deliveryEta(nowMs, prepMinutesIn(settings), rideS ?? (from && dest ? straightSeconds(from, dest) : 0), toStoreS)
}

/** A delivery draft priced by its zone and given its estimate, or the refusal (422). Other types pass. */
export function withDelivery(draft: OrderDraft, settings: Record<string, unknown>, currency: string, now: string, rideS: number | null = null): OrderDraft | ApiError {
  if (draft.type !== 'delivery') return draft
  const dest = draft.dest_lat !== null && draft.dest_lng !== null ? { lat: draft.dest_lat, lng: draft.dest_lng } : null
  const d = zoneFor(settings, currency, dest, draft.subtotal - draft.discount)
  if (!d.ok) return new ApiError(d.refusal.reason, d.refusal.message, { [d.refusal.field]: [d.refusal.message] })
  const fee = d.zone?.fee ?? 0
  // Object.assign: V8 is very slow to build `{ ...draft, new fields }` (see storage/orders.ts lineView).
  return Object.assign({}, draft, { delivery_fee: fee, delivery_zone: d.zone?.name ?? null, total: draft.total + fee, eta: etaFor(settings, dest, Date.parse(now), rideS) })
}
