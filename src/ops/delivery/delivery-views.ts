/**
 * What the driver, delivery and driver-app operations share: the views of a delivery (owner and
 * driver), the store's driver fee, phone normalisation, and the checks on a driver named in a body.
 */
import { ApiError, notFound } from '../../errors.ts'
import { driverFeeCents, mayServe, normalizePhone } from '../../domain/delivery.ts'
import { fromCents } from '../../domain/money.ts'
import { driverDeliveryView, driverView, offerView, proofView, type DriverRow } from '../../storage/drivers.ts'
import { nowIso } from '../../storage/db.ts'
import { deliveryDestination } from '../../storage/tracking.ts'
import type { LatLng } from '../../domain/eta.ts'
import type { OrderRow } from '../../storage/orders.ts'
import type { StoreRow } from '../../storage/stores.ts'
import type { Services } from '../../services.ts'

/** What a delivery of this store pays the driver (cents): the store's `driver_fee` setting or the default. */
export const feeOf = (store: StoreRow): number => driverFeeCents(JSON.parse(store.settings) as Record<string, unknown>)

/** A phone in an input: one spelling per number (so SMS login finds the driver), else 422. */
export function phoneOf(raw: string, field = 'phone'): string {
  const p = normalizePhone(raw)
  if (!p) throw new ApiError('validation_failed', undefined, { [field]: ['Use a phone number such as +15550100200.'] })
  return p
}

/** Where the owner fetches an order's proof-of-delivery photo. */
const photoUrl = (svc: Services, o: OrderRow) => `${svc.config.baseUrl}/restaurants/${o.store_id}/orders/${o.id}/pod-photo`

/** The full order plus its delivery side: fee, the driver's note and proof of delivery. */
export function ownerDeliveryView(svc: Services, o: OrderRow) {
  const d = svc.drivers.delivery(o.id)
  return { ...svc.orders.full(o), delivery: { fee: fromCents(d?.driver_fee ?? 0), note: d?.note ?? null, proof: proofView(d, photoUrl(svc, o)) } }
}

/** A delivery as the driver app shows it, read fresh (after the order actor answered). */
export function deliveryOut(svc: Services, orderId: number) {
  const o = svc.orders.row(orderId)
  if (!o) throw notFound('delivery')
  return deliveryView(svc, o)
}

/** A delivery as the driver app shows it (the API's answers and the driver socket's frames alike). */
export const deliveryView = (svc: Services, o: OrderRow) =>
  driverDeliveryView(o, svc.orders.lines(o.id), svc.drivers.delivery(o.id), svc.drivers.storeTitle(o.store_id))

/** Where a delivery goes (the order's pin, else the customer's saved address), for the route drawn so far and the ETA. */
export const destinationOf = (svc: Services, o: Pick<OrderRow, 'customer_id' | 'address' | 'dest_lat' | 'dest_lng'>): LatLng | null => deliveryDestination(svc.db, o)

/**
 * Everything the driver app needs to (re)build its screen, as the driver socket's `hello` says it
 * (docs/drivers.md "Driver socket"): the driver, the deliveries under way and the offers waiting.
 * Null when the driver is gone.
 */
export function driverHello(svc: Services, driverId: number) {
  const row = svc.drivers.byId(driverId)
  if (!row) return null
  const now = nowIso()
  const active = svc.drivers.activeOrders(driverId)
  const deliveries = active.map((a) => deliveryView(svc, svc.orders.row(a.id)!))
  const offers = svc.drivers.pendingOffers(driverId, now).map((r) => offerView(r, svc.orders.row(r.order_id), svc.drivers.storeTitle(r.store_id), now))
  return { driver: driverView(row, { connected: true, active_deliveries: active.map((a) => a.id) }), deliveries, offers }
}

/** A driver named in an input: the owner's, unbound or bound to this store — else a field error (not a 404). */
export function assignableDriver(svc: Services, store: StoreRow, driverId: number, field = 'driver_id'): DriverRow {
  const d = svc.drivers.ownedBy(driverId, store.owner_id)
  if (!d) throw new ApiError('validation_failed', undefined, { [field]: ['The driver does not exist.'] })
  if (!mayServe({ ownerId: d.owner_id, restaurantId: d.restaurant_id }, { id: store.id, ownerId: store.owner_id })) {
    throw new ApiError('validation_failed', undefined, { [field]: ['The driver is bound to another restaurant.'] })
  }
  return d
}
