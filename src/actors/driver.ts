/**
 * The driver actor (ARCHITECTURE 1, 4): owns one driver — profile, shift, live location, active
 * deliveries and connection. HTTP, the driver socket and (next) MCP send it the same messages, and
 * messages are data: replies travel to `replyTo`, never through a callback. `reduceDriver` is the
 * pure transition `(state, msg, now) → {state, reply, effects}`; the shell (`driverHandler`)
 * applies the effects — the durable ones first, in one write — and then sends the reply.
 *
 * Locations are pipelined like order creation in the store actor: the actor updates its state and
 * publishes at once (watchers see the driver move within milliseconds), hands the write to the
 * shared LocationWriter (src/storage/driver-locations.ts) and takes the next message; the reply
 * leaves after the commit, so an acknowledged location survives a crash (docs/realtime.md "Durability").
 */
import * as nact from 'nact'
import type { Handler, Ref, Result } from './system.ts'
import { fail, ok } from './system.ts'
import { ApiError, notFound } from '../errors.ts'
import { driverVisible, type DeliveryStatus } from '../domain/order-state.ts'
import { isActiveDelivery } from '../domain/delivery.ts'
import type { Logger } from '../log.ts'
import type { Committer } from '../storage/commit.ts'
import { nowIso } from '../storage/db.ts'
import { deleteIdleDriver, rotateDriverToken, saveDriverProfile, setDriverShift, type DriverQueries, type DriverRow } from '../storage/drivers.ts'
import type { DriverPosition, DriverPresence, RealtimeSink } from './realtime.ts'

export { LocationWriter, LOCATION_COMMIT_DUTY, LOCATION_COMMIT_MAX_GAP_MS } from '../storage/driver-locations.ts'
import type { TicketSink } from '../storage/driver-locations.ts'
import type { DispatchSink } from './dispatcher.ts'

export interface ActiveDelivery { storeId: number; status: DeliveryStatus }

export interface DriverState {
  id: number
  ownerId: number
  restaurantId: number | null
  name: string
  phone: string
  onShift: boolean
  createdAt: string
  lat: number | null
  lng: number | null
  locationAt: string | null
  /** Orders the driver works on now (assigned, picked up, out for delivery). */
  active: ReadonlyMap<number, ActiveDelivery>
  /** Open driver sockets. */
  connections: number
  /**
   * Set by a committed delete. Messages already queued behind the delete, and any sent before the
   * registry retires the actor, answer 404 from here (issue 10 #5); a fresh actor loads "not found".
   */
  deleted?: true
}

export interface LocationAck { lat: number; lng: number; location_updated_at: string }
export interface DriverPatch { name?: string; phone?: string; restaurantId?: number | null }
export interface ShiftView { on_shift: boolean; shift: { id: number; started_at: string; ended_at: string | null } | null }

/** A driver as the owner API and `GET /driver/me` show it, live parts included. */
export function liveView(s: DriverState) {
  return {
    id: s.id,
    name: s.name,
    phone: s.phone,
    restaurant_id: s.restaurantId,
    on_shift: s.onShift,
    location: s.lat == null || s.lng == null ? null : { lat: s.lat, lng: s.lng, location_updated_at: s.locationAt },
    created_at: s.createdAt,
    connected: s.connections > 0,
    active_deliveries: [...s.active.keys()],
  }
}
export type DriverLive = ReturnType<typeof liveView>

/** The public protocol: what front doors (HTTP, sockets, MCP) ask of a driver. */
export type DriverCommand =
  /**
   * `at`: when the front door received the position (ms since the epoch). Answered once it is
   * durable: to `replyTo` (an ask), or, when the driver socket sent it with a `ticket`, through the
   * real-time sink's `locationStored` — a reply address without a temporary actor per position.
   */
  | { type: 'location'; lat: number; lng: number; at: number; replyTo?: Ref<Result<LocationAck>>; ticket?: number }
  | { type: 'get'; replyTo: Ref<Result<DriverLive>> }
  | { type: 'update'; patch: DriverPatch; replyTo: Ref<Result<DriverLive>> }
  | { type: 'rotate_token'; tokenHash: string; replyTo: Ref<Result<DriverLive>> }
  | { type: 'delete'; replyTo: Ref<Result<null>> }
  | { type: 'shift'; onShift: boolean; replyTo: Ref<Result<ShiftView>> }

/** Notices from inside the server (order actors, the socket layer); never answered. */
export type DriverNotice =
  /** Sent by the order actor after a durable change to one of this driver's orders. */
  | { type: 'order_changed'; orderId: number; storeId: number; deliveryStatus: DeliveryStatus | null; driverId: number | null; replyTo?: never }
  /** The driver's open sockets now (absolute, so a reloaded actor and a late message agree). */
  | { type: 'connection'; count: number; replyTo?: never }

export type DriverMsg = DriverCommand | DriverNotice

/** What the shell does for a transition; durable kinds are written (in one write) before anything else. */
export type DriverEffect =
  /** Tell tracking views and dispatch feeds (not durable: positions are published before they are written). */
  | { kind: 'publish_location'; pos: DriverPosition; visible: number[] }
  /** Hand the position to the location writer; the reply waits for it, the actor does not. */
  | { kind: 'persist_location'; lat: number; lng: number; at: string }
  | { kind: 'save_profile'; name: string; phone: string; restaurantId: number | null }
  | { kind: 'rotate_token'; tokenHash: string; at: string }
  /** Delete the row unless an order still has the driver (decided in the write: refused → `driver_busy`). */
  | { kind: 'delete' }
  /** Start or end the shift; ending withdraws the driver's open offers (each driver socket is told). */
  | { kind: 'shift'; onShift: boolean; at: string }
  | { kind: 'presence'; presence: DriverPresence }
  /** Close the driver's sockets (4001 with the reason). */
  | { kind: 'disconnect'; reason: 'token_rotated' | 'driver_deleted' }

const DURABLE: ReadonlySet<DriverEffect['kind']> = new Set(['save_profile', 'rotate_token', 'delete', 'shift'])

/**
 * The answer to the sender, sent once the durable effects are. `shift` is the shift view, read
 * after the write (the new shift's id comes from the database).
 */
export type DriverReply = Result<unknown> | 'shift'

export interface DriverStep { state: DriverState; reply?: DriverReply; effects: DriverEffect[] }

const presenceOf = (s: DriverState): DriverPresence =>
  ({ driverId: s.id, ownerId: s.ownerId, restaurantId: s.restaurantId, name: s.name, onShift: s.onShift, connected: s.connections > 0 })

/** The orders whose customers may see the driver now (picked up, out for delivery). */
function visibleOrders(s: DriverState): number[] {
  const visible: number[] = []
  // forEach, not for…of over entries: no [key, value] array per active order on the hottest message.
  s.active.forEach((a, orderId) => { if (driverVisible(a.status)) visible.push(orderId) })
  return visible
}

const positionOf = (s: DriverState, lat: number, lng: number, now: string, atMs: number): DriverPosition =>
  ({ driverId: s.id, ownerId: s.ownerId, restaurantId: s.restaurantId, name: s.name, lat, lng, at: now, atMs })

/** Pure transition. */
export function reduceDriver(s: DriverState, msg: DriverMsg, now: string): DriverStep {
  if (s.deleted) return { state: s, reply: fail(notFound('driver')), effects: [] }
  switch (msg.type) {
    case 'location': {
      const visible = visibleOrders(s)
      const next = { ...s, lat: msg.lat, lng: msg.lng, locationAt: now }
      const pos = positionOf(s, msg.lat, msg.lng, now, msg.at)
      return {
        state: next,
        reply: ok<LocationAck>({ lat: msg.lat, lng: msg.lng, location_updated_at: now }),
        effects: [{ kind: 'publish_location', pos, visible }, { kind: 'persist_location', lat: msg.lat, lng: msg.lng, at: now }],
      }
    }
    case 'get':
      return { state: s, reply: ok(liveView(s)), effects: [] }
    case 'update': {
      const p = msg.patch
      const next = { ...s, name: p.name ?? s.name, phone: p.phone ?? s.phone, restaurantId: p.restaurantId === undefined ? s.restaurantId : p.restaurantId }
      return {
        state: next,
        reply: ok(liveView(next)),
        effects: [{ kind: 'save_profile', name: next.name, phone: next.phone, restaurantId: next.restaurantId }, { kind: 'presence', presence: presenceOf(next) }],
      }
    }
    case 'rotate_token':
      // Sockets opened with the old token close now, not at their next reconnect.
      return { state: s, reply: ok(liveView(s)), effects: [{ kind: 'rotate_token', tokenHash: msg.tokenHash, at: now }, { kind: 'disconnect', reason: 'token_rotated' }] }
    case 'delete':
      if (s.active.size > 0) return { state: s, reply: fail(new ApiError('driver_busy', `The driver still has ${s.active.size} active deliveries; reassign or finish them first.`)), effects: [] }
      // The tombstone: messages queued behind the delete answer 404 (issue 10 #5).
      return { state: { ...s, deleted: true }, reply: ok(null), effects: [{ kind: 'delete' }, { kind: 'disconnect', reason: 'driver_deleted' }] }
    case 'shift': {
      if (s.onShift === msg.onShift) return { state: s, reply: 'shift', effects: [] }
      const next = { ...s, onShift: msg.onShift }
      return { state: next, reply: 'shift', effects: [{ kind: 'shift', onShift: msg.onShift, at: now }, { kind: 'presence', presence: presenceOf(next) }] }
    }
    case 'order_changed': {
      const mine = msg.driverId === s.id && isActiveDelivery(msg.deliveryStatus)
      if (!mine && !s.active.has(msg.orderId)) return { state: s, effects: [] }
      const active = new Map(s.active)
      if (mine) active.set(msg.orderId, { storeId: msg.storeId, status: msg.deliveryStatus! })
      else active.delete(msg.orderId)
      return { state: { ...s, active }, effects: [] }
    }
    case 'connection': {
      const next = { ...s, connections: msg.count }
      return { state: next, effects: (s.connections > 0) !== (next.connections > 0) ? [{ kind: 'presence', presence: presenceOf(next) }] : [] }
    }
    default: {
      const never: never = msg
      return never
    }
  }
}

export function driverStateOf(row: DriverRow, active: Array<{ id: number; store_id: number; delivery_status: DeliveryStatus }>, connections: number): DriverState {
  return {
    id: row.id,
    ownerId: row.owner_id,
    restaurantId: row.restaurant_id,
    name: row.name,
    phone: row.phone,
    onShift: row.on_shift === 1,
    createdAt: row.created_at,
    lat: row.lat,
    lng: row.lng,
    locationAt: row.location_updated_at,
    active: new Map(active.map((a) => [a.id, { storeId: a.store_id, status: a.delivery_status }])),
    connections,
  }
}

/** What a driver actor needs besides its own state: narrow, so the shell runs against fakes too. */
export interface DriverDeps {
  drivers: Pick<DriverQueries, 'byId' | 'activeOrders' | 'lastShift'>
  committer: Pick<Committer, 'write'>
  realtime: Pick<RealtimeSink, 'driverLocation' | 'driverPresence' | 'toDriver' | 'connections' | 'disconnectDriver' | 'locationStored'>
  /** The dispatcher's index of on-shift drivers (src/actors/dispatcher.ts); absent in shells run against fakes. */
  dispatch?: Pick<DispatchSink, 'moved' | 'presence'>
  log: Logger
}

/**
 * Where positions go to disk: coalesced, in their own commits (src/storage/driver-locations.ts);
 * `persistTicket` answers a socket's position through the driver's TicketSink, without a promise.
 */
export interface LocationSink {
  persist(driverId: number, lat: number, lng: number, at: string): Promise<void>
  persistTicket(driverId: number, lat: number, lng: number, at: string, ticket: number, sink: TicketSink): void
}

/** What the durable effects' write returns to the shell. */
interface Written { deleted: boolean | null; withdrawn: Array<{ id: number; order_id: number }> }

/** The nact handler for one driver: load on first message, apply the transition's effects, reply. */
export function driverHandler(deps: DriverDeps, driverId: number, locations: LocationSink) {
  /** Reply to the sender: its reply address, or the socket's acknowledgement ticket. */
  const answer = (msg: DriverMsg, r: Result<unknown>) => {
    if (msg.type === 'location' && msg.ticket !== undefined) deps.realtime.locationStored(driverId, msg.ticket, r as Result<LocationAck>)
    else if (msg.replyTo) nact.dispatch(msg.replyTo as Ref<Result<unknown>>, r)
  }

  /** The acknowledgement of this driver's socket positions, once committed (one object per actor, not per position). */
  const stored: TicketSink = {
    stored(ticket, lat, lng, at, err) {
      if (!err) return deps.realtime.locationStored(driverId, ticket, ok<LocationAck>({ lat, lng, location_updated_at: at }))
      deps.log.error({ err, driverId }, 'location write failed')
      deps.realtime.locationStored(driverId, ticket, fail(new ApiError('internal_error')))
    },
  }
  function load(): DriverState | null {
    const row = deps.drivers.byId(driverId)
    return row ? driverStateOf(row, deps.drivers.activeOrders(driverId), deps.realtime.connections(driverId)) : null
  }

  function writeDurable(effects: DriverEffect[]): Promise<Written> | null {
    // A loop, not `filter`: a position (the hot message) has no durable effect and allocates nothing here.
    let durable: DriverEffect[] | null = null
    for (const e of effects) if (DURABLE.has(e.kind)) (durable ??= []).push(e)
    if (durable === null) return null
    const list = durable
    return deps.committer.write((db) => {
      const out: Written = { deleted: null, withdrawn: [] }
      for (const e of list) {
        if (e.kind === 'save_profile') saveDriverProfile(db, driverId, e)
        else if (e.kind === 'rotate_token') rotateDriverToken(db, driverId, e.tokenHash, e.at)
        // The active-delivery check runs again inside the write: an assignment committed after
        // this actor last heard of it must not leave an order assigned to no driver.
        else if (e.kind === 'delete') out.deleted = deleteIdleDriver(db, driverId)
        else if (e.kind === 'shift') out.withdrawn = setDriverShift(db, driverId, e.onShift, e.at)
      }
      return out
    })
  }

  const handler: Handler<DriverState | null, DriverMsg> = async (state: DriverState | null, msg: DriverMsg): Promise<DriverState | null> => {
    state ??= load()
    if (!state) {
      answer(msg, fail(notFound('driver')))
      return null
    }
    // One timestamp per message: a location's is when the socket or HTTP request received it.
    const step = reduceDriver(state, msg, nowIso(msg.type === 'location' ? msg.at : undefined))
    const next = step.state
    let written: Written = { deleted: null, withdrawn: [] }
    try {
      const pending = writeDurable(step.effects)
      if (pending) written = await pending
    } catch (err) {
      deps.log.error({ err, driverId, msg: msg.type }, 'driver write failed')
      answer(msg, fail(new ApiError('internal_error')))
      return state
    }
    if (written.deleted === false) {
      answer(msg, fail(new ApiError('driver_busy')))
      return state
    }
    let deferred: Promise<void> | null = null
    let ticketed = false
    for (const e of step.effects) {
      switch (e.kind) {
        case 'publish_location':
          deps.realtime.driverLocation(e.pos, e.visible)
          deps.dispatch?.moved(next, e.pos.lat, e.pos.lng, e.pos.atMs)
          break
        case 'persist_location':
          // A socket's position is answered by ticket, like the ones handled at once (handler.now),
          // so a driver's acknowledgements leave in the order its positions arrived, whichever path each took.
          if (msg.type === 'location' && msg.ticket !== undefined) { locations.persistTicket(driverId, e.lat, e.lng, e.at, msg.ticket, stored); ticketed = true }
          else deferred = locations.persist(driverId, e.lat, e.lng, e.at)
          break
        case 'presence': deps.realtime.driverPresence(e.presence); deps.dispatch?.presence(next); break
        case 'disconnect':
          deps.realtime.disconnectDriver(driverId, e.reason)
          if (e.reason === 'driver_deleted') deps.dispatch?.presence(next)
          break
        case 'shift':
          for (const w of written.withdrawn) deps.realtime.toDriver(driverId, { type: 'offer_withdrawn', offer_id: w.id, order_id: w.order_id })
          break
        default: break
      }
    }
    const reply = step.reply === 'shift' ? ok<ShiftView>({ on_shift: next.onShift, shift: deps.drivers.lastShift(driverId) ?? null }) : step.reply
    if (reply === undefined || ticketed) return next
    if (!deferred) answer(msg, reply)
    else {
      deferred.then(
        () => answer(msg, reply),
        (err: unknown) => { deps.log.error({ err, driverId }, 'location write failed'); answer(msg, fail(new ApiError('internal_error'))) },
      )
    }
    // A refused transition (busy, deleted) keeps the state it had; `next` is `state` then.
    return next
  }

  /**
   * A socket's position for a loaded, idle actor (Registry.tellNow): the same transition and effects
   * as the `location` message above, without the mailbox hop — the hottest message of the server
   * (bench/tracking.ts). Published at once, stored by the location writer, acknowledged by ticket
   * after the commit. Anything else (asks, a deleted or unloaded driver) goes through the mailbox.
   */
  handler.now = (state, msg) => {
    if (msg.type !== 'location' || msg.ticket === undefined || state === null || state.deleted) return false
    const { lat, lng } = msg
    const at = nowIso(msg.at)
    // In place: the actor is idle, nothing else holds this state (reduceDriver copies it for a message).
    state.lat = lat
    state.lng = lng
    state.locationAt = at
    deps.realtime.driverLocation(positionOf(state, lat, lng, at, msg.at), visibleOrders(state))
    deps.dispatch?.moved(state, lat, lng, msg.at)
    locations.persistTicket(driverId, lat, lng, at, msg.ticket, stored)
    return true
  }
  return handler
}
