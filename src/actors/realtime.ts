/**
 * What actors tell the real-time layer (STYLE "actors never import a front door"): app.ts wires
 * this to the uWS pub/sub implementation in src/ws/realtime.ts; without sockets it is a no-op.
 */
import type { OrderState } from './order.ts'
import type { LocationAck } from './driver.ts'
import type { Result } from './system.ts'

/** One driver position as shown on tracking views and dispatch feeds (api-v1 §2.5 `driver`). */
export interface DriverPosition {
  driverId: number
  ownerId: number
  restaurantId: number | null
  name: string
  lat: number
  lng: number
  /** ISO 8601, when the server received it. */
  at: string
  /** The same instant in ms since the epoch (the trail and ETA need it; parsing `at` back cost a Date.parse per position). */
  atMs: number
}

/** Whose open sockets to re-check after a credential change (no scope: every open socket). */
export type CredentialScope = { staffId: number } | { driverId: number } | { ownerId: number } | { storeId: number }

/** A driver's availability as dispatch feeds show it. */
export interface DriverPresence { driverId: number; ownerId: number; restaurantId: number | null; name: string; onShift: boolean; connected: boolean }

export interface RealtimeSink {
  /** An order changed and the change is durable. */
  orderChanged(prev: OrderState, next: OrderState): void
  /**
   * A driver moved. `visibleOrders` are the driver's orders whose customers may see it (picked up or
   * out for delivery, api-v1 §2.5); nobody else's tracking view ever gets the position.
   */
  driverLocation(pos: DriverPosition, visibleOrders: readonly number[]): void
  /** Shift or connection of a driver changed. */
  driverPresence(p: DriverPresence): void
  /** A frame for one driver's sockets (offers, withdrawals). */
  toDriver(driverId: number, frame: Record<string, unknown>): void
  /** Open sockets of a driver (lets a reloaded driver actor know its connection state). */
  connections(driverId: number): number
  /** Close a driver's sockets: its token was rotated or it was deleted. */
  disconnectDriver(driverId: number, reason: string): void
  /**
   * The reply to a `location` message the driver socket sent with an acknowledgement `ticket`
   * (instead of `replyTo`): the position is durable, or could not be stored (src/ws/driver.ts).
   */
  locationStored(driverId: number, ticket: number, result: Result<LocationAck>): void
  /**
   * A credential, permission or role changed in this process and is durable: re-check the open
   * sockets of `scope` against it and close those it no longer allows (docs/realtime.md "Close
   * codes"). Changes made by other processes (the CLI) are noticed without a call.
   */
  credentialsChanged(scope?: CredentialScope): void
  /** Something an order's tracking view shows changed outside its actor (a shipment, docs/verticals.md) and is durable. */
  trackingChanged(orderId: number): void
}

export const noRealtime: RealtimeSink = {
  orderChanged() {},
  driverLocation() {},
  driverPresence() {},
  toDriver() {},
  connections: () => 0,
  disconnectDriver() {},
  locationStored() {},
  credentialsChanged() {},
  trackingChanged() {},
}
