/**
 * The real-time publisher (docs/realtime.md): turns durable order changes, driver positions and
 * driver presence into frames on uWS pub/sub topics.
 *
 *   track/<orderId>      a customer's tracking view (api-v1 §2.5)
 *   driver/<driverId>    the driver app: assignments, delivery changes, offers
 *   dispatch/<storeId>   a store's dispatch feed: its deliveries and its bound drivers
 *   fleet/<ownerId>      the owner's unbound drivers (they may serve every store of the owner)
 *   orders/<storeId>     the owner's orders board: every change of every order of the store (src/ws/orders.ts)
 *
 * Frames are built only for topics someone listens on. Order changes are coalesced per order per
 * event-loop turn, so a burst of changes to one order is one frame built from the committed row.
 */
import type { WebSocket } from 'uWebSockets.js'
import type { Services } from '../services.ts'
import type { OutboxEvent } from '../storage/outbox.ts'
import type { CredentialScope, DriverPosition, DriverPresence, RealtimeSink } from '../actors/realtime.ts'
import type { OrderState } from '../actors/order.ts'
import type { LocationAck } from '../actors/driver.ts'
import type { Result } from '../actors/system.ts'
import type { OrderRow } from '../storage/orders.ts'
import type { TrackViewFrame } from '../storage/tracking.ts'
import { trackingView } from '../ops/web/public.ts'
import { deliveryView, destinationOf } from '../ops/delivery/delivery-views.ts'
import { DeliveryTrails } from './track-trail.ts'
import type { OrdersOrderFrame } from './order-frames.ts'
import { feedLocationFrame, feedLocationJson, trackLocationJson, type TrackCatchUpFrame, type TrackLocationFrame } from './location-frames.ts'
import { fromCents } from '../domain/money.ts'
import { driverVisible, type DeliveryStatus } from '../domain/order-state.ts'
import type { Hub } from './hub.ts'
import type { LiveSocket } from './socket.ts'
import { SocketSessions, subject } from './sessions.ts'
import type { RemoteTrackFrames } from '../cluster/frames.ts'
import type { RemoteLocationStore } from './driver.ts'

export type { LiveSocket } from './socket.ts'

/**
 * The type of the frame a primary sends on a driver's topic to replicas only, when the driver's
 * sockets must close (token rotated, driver deleted): `{type, code, reason}`, never written to a client.
 */
export const DRIVER_CLOSE = '_close'

/** The latest location frame of a watched order, re-sent to a socket that fell behind. */
interface TrackRoom { sockets: number; location: TrackLocationFrame | null }

export const topics = {
  track: (orderId: number) => `track/${orderId}`,
  driver: (driverId: number) => `driver/${driverId}`,
  dispatch: (storeId: number) => `dispatch/${storeId}`,
  fleet: (ownerId: number) => `fleet/${ownerId}`,
  orders: (storeId: number) => `orders/${storeId}`,
  /** Where a driver's position and presence go: its store's feed, or the owner's fleet when unbound. */
  driverFeed: (d: { restaurantId: number | null; ownerId: number }) => (d.restaurantId === null ? `fleet/${d.ownerId}` : `dispatch/${d.restaurantId}`),
}

/** A delivery as a dispatcher sees it in the feed. */
export function dispatchDeliveryView(o: OrderRow) {
  return {
    id: o.id,
    status: o.status,
    delivery_status: o.delivery_status,
    driver_id: o.driver_id,
    customer_name: o.customer_name,
    address: o.address,
    total: fromCents(o.total),
    timeline: JSON.parse(o.timeline) as Record<string, string>,
    updated_at: o.updated_at,
  }
}

export class Realtime implements RealtimeSink {
  private svc: Services | null = null
  private readonly rooms = new Map<number, TrackRoom>()
  /** Route so far and ETA of the deliveries on the way (docs/tracking-page.md). */
  private readonly trails = new DeliveryTrails((orderId) => {
    const row = this.svc?.orders.row(orderId)
    return row ? destinationOf(this.svc!, row) : null
  })
  private readonly driverSockets = new Map<number, Set<WebSocket<LiveSocket>>>()
  private dirty = new Set<number>()
  private flushQueued = false
  /** Where durable positions are acknowledged: the driver socket's inbox (src/ws/driver.ts). */
  private locationAcks: ((driverId: number, ticket: number, result: Result<LocationAck>) => void) | null = null

  /** The credentials of open authenticated sockets, re-checked when they may have changed. */
  readonly sessions = new SocketSessions()

  /**
   * Cluster mode, on the primary: tracking frames for the orders replicas watch also go to NATS
   * (src/cluster/frames.ts), built once whether or not a socket of this node watches too.
   */
  remote: RemoteTrackFrames | null = null

  constructor(readonly hub: Hub) {}

  /**
   * Called once `svc` is complete: the database is watched for credential changes made by other
   * processes. Returns the stop function.
   */
  attach(svc: Services): () => void {
    this.svc = svc
    return this.sessions.start({ auth: svc.auth, db: svc.db, log: svc.log })
  }

  /**
   * The reaction to committed events (wired in src/app.ts): a new order appears on the live views
   * (dispatch feed). Every later change of an order reaches them by one road only, the order
   * actor's `orderChanged` after the change is durable — it also covers changes with no event of
   * their own (a pickup). A feature revoked by this process (a plan change, a pause, a billing run)
   * re-checks the account's owner sockets at once: an app token's needs `apps` (src/auth/account-gate.ts).
   * Another process's revocation reaches them through the database watcher (src/ws/sessions.ts).
   */
  readonly react = (e: OutboxEvent): void => {
    const id = e.data.order_id
    if (e.event === 'order.created' && typeof id === 'number') this.touch(id)
    else if (e.event === 'entitlement.changed' && e.data.action === 'revoked') this.credentialsChanged({ ownerId: e.owner_id })
  }

  // ---- tracking rooms (src/ws/track.ts) ----

  joinTrack(orderId: number): void {
    const r = this.rooms.get(orderId)
    if (r) r.sockets++
    else this.rooms.set(orderId, { sockets: 1, location: null })
  }

  leaveTrack(orderId: number): void {
    const r = this.rooms.get(orderId)
    if (r && --r.sockets <= 0) this.rooms.delete(orderId)
  }

  /** The latest location frame with the route so far (`trail`), for a socket that joins or caught up. */
  lastTrackLocation(orderId: number): TrackCatchUpFrame | null {
    const trail = this.trails.points(orderId)
    // A room opened mid-delivery has no frame of its own yet: the route so far still goes out.
    const frame = this.rooms.get(orderId)?.location ?? this.remote?.lastLocation(orderId) ?? (trail.length > 0 ? { type: 'location', order_id: orderId, eta: this.trails.eta(orderId) } : null)
    return frame ? { ...frame, trail } : null
  }

  // ---- driver sockets (src/ws/driver.ts) ----

  addDriverSocket(driverId: number, ws: WebSocket<LiveSocket>): void {
    let set = this.driverSockets.get(driverId)
    if (!set) this.driverSockets.set(driverId, (set = new Set()))
    set.add(ws)
  }

  removeDriverSocket(driverId: number, ws: WebSocket<LiveSocket>): void {
    const set = this.driverSockets.get(driverId)
    if (!set) return
    set.delete(ws)
    if (set.size === 0) this.driverSockets.delete(driverId)
  }

  /** A driver's open app sockets: this node's, and on a cluster's primary those replicas serve (`remote`). */
  connections(driverId: number): number {
    return (this.driverSockets.get(driverId)?.size ?? 0) + (this.remote?.driverSockets(driverId) ?? 0)
  }

  /** The drivers with an app connected to this node or, on a primary, to a replica (a replica's dispatch snapshot asks, src/cluster/frames.ts `DriverPresence`). */
  connectedDrivers(): number[] {
    const remote = this.remote?.connectedDrivers() ?? []
    return remote.length === 0 ? [...this.driverSockets.keys()] : [...new Set([...this.driverSockets.keys(), ...remote])]
  }

  disconnectDriver(driverId: number, reason: string): void {
    const close = { code: 4001, reason }
    for (const ws of [...(this.driverSockets.get(driverId) ?? [])]) {
      if (ws.getUserData().closed) continue
      // 4001: the credentials of this socket are no longer valid (docs/realtime.md close codes).
      ws.end(close.code, close.reason)
    }
    // A replica's sockets of this driver close alike (src/ws/replica-driver.ts `DRIVER_CLOSE`).
    this.hub.publishRemote(topics.driver(driverId), { type: DRIVER_CLOSE, ...close })
  }

  /**
   * Cluster mode, on the primary: stores a position a replica's driver socket sent on, through this
   * node's driver socket inbox (src/ws/driver.ts registers it; null until it did).
   */
  remoteLocations: RemoteLocationStore | null = null

  /** The driver socket registers where the replies to its `location` messages go. */
  onLocationStored(fn: (driverId: number, ticket: number, result: Result<LocationAck>) => void): void {
    this.locationAcks = fn
  }

  // ---- RealtimeSink ----

  locationStored(driverId: number, ticket: number, result: Result<LocationAck>): void {
    this.locationAcks?.(driverId, ticket, result)
  }

  credentialsChanged(scope?: CredentialScope): void {
    if (!scope) this.sessions.revalidate()
    else if ('staffId' in scope) this.sessions.revalidate(subject.staff(scope.staffId))
    else if ('driverId' in scope) this.sessions.revalidate(subject.driver(scope.driverId))
    else if ('ownerId' in scope) this.sessions.revalidate(subject.owner(scope.ownerId))
    else this.sessions.revalidate(subject.store(scope.storeId))
  }

  trackingChanged(orderId: number): void {
    this.touch(orderId)
  }

  orderChanged(prev: OrderState, next: OrderState): void {
    this.touch(next.id)
    if (!driverVisible(next.deliveryStatus)) this.trails.forget(next.id)
    if (prev.driverId !== next.driverId) {
      if (prev.driverId != null) this.toDriver(prev.driverId, { type: 'unassigned', order_id: next.id })
      if (next.driverId != null) this.driverDelivery(next.driverId, next.id, 'assignment')
    } else if (next.driverId != null && (prev.deliveryStatus !== next.deliveryStatus || prev.status !== next.status)) {
      this.driverDelivery(next.driverId, next.id, 'delivery')
    }
  }

  driverLocation(pos: DriverPosition, visibleOrders: readonly number[]): void {
    if (visibleOrders.length > 0) {
      const driver = { name: pos.name, lat: pos.lat, lng: pos.lng, location_updated_at: pos.at }
      const at = pos.atMs
      for (const orderId of visibleOrders) {
        this.trails.add(orderId, pos.lat, pos.lng, at) // also unwatched: a page opened later shows the route so far
        const room = this.rooms.get(orderId)
        const remote = this.remote !== null && this.remote.watching(orderId)
        if (!room && !remote) continue // nobody watches this order
        const frame: TrackLocationFrame = { type: 'location', order_id: orderId, driver, eta: this.trails.eta(orderId) }
        if (room) {
          room.location = frame
          this.hub.publishWith(topics.track(orderId), frame, trackLocationJson)
        }
        if (remote) this.remote!.location(orderId, frame)
      }
    }
    // Hot path: frames written as JSON text directly, built only for formats someone listens to (src/ws/location-frames.ts).
    // Only dispatch feeds listen on these topics: with none open, not even the topic name is built.
    if (this.dispatchSockets > 0 || this.hub.remoteTopics) this.hub.publishWith(topics.driverFeed(pos), pos, feedLocationJson, feedLocationFrame)
  }

  driverPresence(p: DriverPresence): void {
    const frame = { type: 'driver', driver_id: p.driverId, name: p.name, restaurant_id: p.restaurantId, on_shift: p.onShift, connected: p.connected }
    const feed = topics.driverFeed(p)
    if (this.hub.hasSubscribers(feed)) this.hub.publish(feed, frame)
  }

  toDriver(driverId: number, frame: Record<string, unknown>): void {
    const t = topics.driver(driverId)
    if (this.hub.hasSubscribers(t)) this.hub.publish(t, frame)
  }

  // ---- internals ----

  private driverDelivery(driverId: number, orderId: number, type: 'assignment' | 'delivery'): void {
    const svc = this.svc
    if (!svc || !this.hub.hasSubscribers(topics.driver(driverId))) return
    const row = svc.orders.row(orderId)
    if (!row) return
    this.hub.publish(topics.driver(driverId), { type, delivery: deliveryView(svc, row) })
  }

  private touch(orderId: number): void {
    this.dirty.add(orderId)
    if (this.flushQueued) return
    this.flushQueued = true
    setImmediate(() => this.flush())
  }

  private flush(): void {
    this.flushQueued = false
    const svc = this.svc
    const ids = this.dirty
    this.dirty = new Set()
    if (!svc) return
    for (const id of ids) {
      try {
        const room = this.rooms.get(id)
        const remote = this.remote !== null && this.remote.watching(id)
        if (!room && !remote && this.dispatchSockets === 0 && this.orderSockets === 0 && !this.hub.remoteTopics) continue // nobody could see it: skip the read
        const row = svc.orders.row(id)
        if (!row) continue
        if (room || remote) {
          // Once the driver is no longer visible (delivered, failed, un-assigned) its last position goes too.
          const gone = !driverVisible(row.delivery_status as DeliveryStatus | null)
          const frame = { type: 'status', ...trackingView(svc, row) } satisfies TrackViewFrame
          if (room) {
            if (gone) room.location = null
            this.hub.publish(topics.track(id), frame)
          }
          if (remote) {
            if (gone) this.remote!.clearLocation(id)
            this.remote!.status(id, frame)
          }
        }
        const feed = topics.dispatch(row.store_id)
        if (row.delivery_status !== null && this.hub.hasSubscribers(feed)) this.hub.publish(feed, { type: 'delivery', delivery: dispatchDeliveryView(row) })
        const board = topics.orders(row.store_id)
        if (this.hub.hasSubscribers(board)) this.hub.publish(board, { type: 'order', order: svc.orders.full(row) } satisfies OrdersOrderFrame)
      } catch (err) {
        svc.log.error({ err, orderId: id }, 'real-time refresh failed')
      }
    }
  }

  /** Open dispatch sockets (src/ws/dispatch.ts keeps this count). */
  dispatchSockets = 0
  /** Open orders-board sockets (src/ws/orders.ts keeps this count). */
  orderSockets = 0
}
