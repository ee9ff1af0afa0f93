/**
 * The one core of every create-order operation (owner, storefront, customer; api-v1 §2.4): the
 * order is priced and written by the store actor. Idempotency (the transport's key, else
 * `client_uuid`; a replay is an Outcome marked `replayed`) is src/domain/idempotency.ts's rule, kept
 * by src/actors/store-idempotency.ts: this only hands it the request.
 *
 * Business hours (docs/stores.md): storefront and customer orders outside the store's hours, on a
 * holiday or while it is not accepting orders are refused by the store actor (422 `store_closed`);
 * the owner's own orders pass `ignoreHours` (a phone order taken after hours is the owner's call).
 * CRM (docs/customers.md): an order without a customer but with a phone is linked to the store's
 * customer with that phone, so the customers named on orders and the CRM's are the same records.
 */
import { newTrackToken } from '../../auth/tokens.ts'
import type { OrderInput } from '../../domain/orders.ts'
import type { Services } from '../../services.ts'
import type { CreatedOrder } from '../../actors/store.ts'
import type { OrderView } from '../../storage/orders.ts'
import { Outcome } from '../op.ts'
import { normalizePhone } from '../../domain/delivery.ts'
import { storePosition } from '../../actors/store-delivery.ts'
import { parseSettings } from '../../storage/stores.ts'
import { idempotencyOf } from '../../actors/store-idempotency.ts'

export interface OrderRequest {
  storeId: number
  /** Who asks (`keyCaller`, src/domain/idempotency.ts): keys are scoped per caller and store. */
  caller: string
  input: OrderInput
  customerId?: number | null
  /** A coupon the store actor redeems on this order (storefront orders). */
  couponCode?: string | null
  /** The transport's idempotency key, if any; `client_uuid` is the fallback. */
  idempotencyKey?: string | undefined
  /** The owner's own orders only: accepted outside business hours and while not accepting orders. */
  ignoreHours?: boolean
}

/**
 * A delivery's ride from the store by the configured router (docs/dispatch.md "Router"), asked
 * before the store actor's turn (which does no I/O); null when either position is unknown, and the
 * straight line whenever the router fails.
 */
const timesRide = (svc: Pick<Services, 'router'>, r: OrderRequest): boolean =>
  r.input.type === 'delivery' && r.input.lat != null && r.input.lng != null && svc.router.kind !== 'straight'

async function deliveryRide(svc: Pick<Services, 'stores' | 'router'>, r: OrderRequest): Promise<number | null> {
  if (r.input.lat == null || r.input.lng == null) return null
  const store = svc.stores.byId(r.storeId)
  const from = store ? storePosition(parseSettings(store.settings)) : null
  return from ? (await svc.router.ride(from, { lat: r.input.lat, lng: r.input.lng })).seconds[0]! : null
}

/** Create (or replay) an order through the store actor. */
export async function placeOrder(svc: Pick<Services, 'actors' | 'db' | 'stores' | 'router'>, r: OrderRequest): Promise<Outcome<OrderView>> {
  const idem = idempotencyOf({ caller: r.caller, storeId: r.storeId, transportKey: r.idempotencyKey, input: r.input })
  const customerId = r.customerId ?? null
  // Linked inside the order's own write (the store actor's shell): a read there costs a fraction
  // of one outside a transaction, and it sees the customers as of the commit.
  const linkPhone = customerId === null && r.input.phone ? normalizePhone(r.input.phone) : null
  // Awaited only when there is a ride to time: an extra await for every order would let a message
  // sent after this one (a coupon deleted, a store removed) reach the store actor first.
  const rideSeconds = timesRide(svc, r) ? await deliveryRide(svc, r) : null
  const created = await svc.actors.stores.ask<CreatedOrder>(r.storeId, (replyTo) => ({
    type: 'create_order', input: r.input, customerId, linkPhone, ignoreHours: r.ignoreHours === true, couponCode: r.couponCode ?? null, idem, trackToken: newTrackToken(), rideSeconds, replyTo,
  }))
  return new Outcome(created.order, { replayed: created.replayed })
}

