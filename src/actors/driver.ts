/**
 * The driver actor (ARCHITECTURE 1): owns one driver — profile, shift, live location, active
 * deliveries and connection. HTTP and the driver socket send it the same messages (STYLE 1).
 * `reduceDriver` is the pure transition; the shell persists, publishes and replies.
 *
 * Locations are pipelined like order creation in the store actor: the actor updates its state and
 * publishes at once (watchers see the driver move within milliseconds), hands the write to the
 * shared LocationWriter and takes the next message; the acknowledgement leaves after the commit,
 * so an acknowledged location survives a crash (docs/realtime.md "Durability").
 */
import * as nact from 'nact'
import type { Ref, Result } from './system.ts'
import { fail, ok } from './system.ts'
import { ApiError } from '../errors.ts'
import { driverVisible, type DeliveryStatus } from '../domain/order-state.ts'
import { isActiveDelivery } from '../domain/delivery.ts'
import type { Services } from '../services.ts'
import type { Committer } from '../storage/commit.ts'
import type { Statement } from 'better-sqlite3'
import { nowIso } from '../storage/db.ts'
import type { DriverRow } from '../storage/drivers.ts'

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

export type DriverMsg =
  | {
      type: 'location'; lat: number; lng: number; at: number
      /** HTTP asks through nact; the socket passes a callback (no temporary actor per frame). */
      replyTo?: Ref<Result<LocationAck>>; ack?: (r: Result<LocationAck>) => void
    }
  | { type: 'get'; replyTo: Ref<Result<DriverLive>> }
  | { type: 'update'; patch: DriverPatch; replyTo: Ref<Result<DriverLive>> }
  | { type: 'rotate_token'; tokenHash: string; replyTo: Ref<Result<DriverLive>> }
  | { type: 'delete'; replyTo: Ref<Result<null>> }
  | { type: 'shift'; onShift: boolean; replyTo: Ref<Result<ShiftView>> }
  /** Sent by the order actor after a durable change to one of this driver's orders. */
  | { type: 'order_changed'; orderId: number; storeId: number; deliveryStatus: DeliveryStatus | null; driverId: number | null; replyTo?: never }
  /** The driver's open sockets now (absolute, so a reloaded actor and a late message agree). */
  | { type: 'connection'; count: number; replyTo?: never }

export type DriverStep =
  | { ok: true; state: DriverState; noop?: boolean; visible?: number[] }
  | { ok: false; error: ApiError }

/** Pure transition. */
export function reduceDriver(s: DriverState, msg: DriverMsg, now: string): DriverStep {
  switch (msg.type) {
    case 'location': {
      const visible: number[] = []
      for (const [orderId, a] of s.active) if (driverVisible(a.status)) visible.push(orderId)
      return { ok: true, state: { ...s, lat: msg.lat, lng: msg.lng, locationAt: now }, visible }
    }
    case 'get':
      return { ok: true, state: s, noop: true }
    case 'update': {
      const p = msg.patch
      return {
        ok: true,
        state: { ...s, name: p.name ?? s.name, phone: p.phone ?? s.phone, restaurantId: p.restaurantId === undefined ? s.restaurantId : p.restaurantId },
      }
    }
    case 'rotate_token':
      return { ok: true, state: s }
    case 'delete':
      if (s.active.size > 0) return { ok: false, error: new ApiError('driver_busy', `The driver still has ${s.active.size} active deliveries; reassign or finish them first.`) }
      return { ok: true, state: s }
    case 'shift':
      return s.onShift === msg.onShift ? { ok: true, state: s, noop: true } : { ok: true, state: { ...s, onShift: msg.onShift } }
    case 'order_changed': {
      const mine = msg.driverId === s.id && isActiveDelivery(msg.deliveryStatus)
      if (!mine && !s.active.has(msg.orderId)) return { ok: true, state: s, noop: true }
      const active = new Map(s.active)
      if (mine) active.set(msg.orderId, { storeId: msg.storeId, status: msg.deliveryStatus! })
      else active.delete(msg.orderId)
      return { ok: true, state: { ...s, active } }
    }
    case 'connection':
      return { ok: true, state: { ...s, connections: msg.count } }
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

/**
 * Batches location writes of all drivers into one group-commit job per event-loop turn, keeping
 * only each driver's latest position: a flood of positions costs one UPDATE per driver per commit,
 * not one per frame (ARCHITECTURE "Numbers": coalesce per driver per tick).
 */
type PendingPositions = Map<number, { lat: number; lng: number; at: string; waiters: Array<(err: unknown) => void> }>

export class LocationWriter {
  private pending: PendingPositions = new Map()
  private queued = false
  private stmt: Statement<[number, number, string, number]> | null = null

  constructor(private readonly committer: Committer) {}

  /** Resolves once the position (or a newer one of the same driver) is committed. */
  persist(driverId: number, lat: number, lng: number, at: string): Promise<void> {
    return new Promise((resolve, reject) => {
      const waiter = (err: unknown) => (err ? reject(err) : resolve())
      const p = this.pending.get(driverId)
      if (p) { p.lat = lat; p.lng = lng; p.at = at; p.waiters.push(waiter) }
      else this.pending.set(driverId, { lat, lng, at, waiters: [waiter] })
      if (!this.queued) {
        this.queued = true
        let taken: PendingPositions | null = null
        this.committer
          .write((db) => {
            // Taken when the job runs, so positions that arrived meanwhile join this commit.
            taken = this.pending
            this.pending = new Map()
            this.queued = false
            this.stmt ??= db.prepare<[number, number, string, number]>('UPDATE drivers SET lat = ?, lng = ?, location_updated_at = ? WHERE id = ?')
            for (const [id, b] of taken) this.stmt.run(b.lat, b.lng, b.at, id)
            return taken
          })
          .then(
            (batch) => { for (const b of batch.values()) for (const w of b.waiters) w(null) },
            (err) => {
              // Nothing of this batch is durable. If the job never ran, its positions are still pending.
              const batch = taken ?? this.pending
              if (!taken) { this.pending = new Map(); this.queued = false }
              for (const b of batch.values()) for (const w of b.waiters) w(err)
            },
          )
      }
    })
  }
}

type AnyReply = Ref<Result<any>>

/** The nact handler for one driver: load on first message, persist before replying. */
export function driverHandler(svc: Services, driverId: number, writer: LocationWriter) {
  const db = svc.db
  const stmts = {
    update: db.prepare('UPDATE drivers SET name = ?, phone = ?, restaurant_id = ? WHERE id = ?'),
    rotate: db.prepare('UPDATE drivers SET token_hash = ? WHERE id = ?'),
    revokeDevices: db.prepare('UPDATE driver_tokens SET revoked_at = ? WHERE driver_id = ? AND revoked_at IS NULL'),
    remove: db.prepare('DELETE FROM drivers WHERE id = ?'),
    onShift: db.prepare('UPDATE drivers SET on_shift = ? WHERE id = ?'),
    startShift: db.prepare('INSERT INTO driver_shifts (driver_id, started_at) VALUES (?, ?)'),
    endShift: db.prepare('UPDATE driver_shifts SET ended_at = ? WHERE driver_id = ? AND ended_at IS NULL'),
    lastShift: db.prepare<[number], { id: number; started_at: string; ended_at: string | null }>(
      'SELECT id, started_at, ended_at FROM driver_shifts WHERE driver_id = ? ORDER BY id DESC LIMIT 1',
    ),
  }
  const reply = (to: AnyReply | undefined, r: Result<unknown>) => { if (to) nact.dispatch(to, r) }
  const presence = (s: DriverState) =>
    svc.realtime.driverPresence({ driverId: s.id, ownerId: s.ownerId, restaurantId: s.restaurantId, name: s.name, onShift: s.onShift, connected: s.connections > 0 })

  function load(): DriverState | null {
    const row = svc.drivers.byId(driverId)
    return row ? driverStateOf(row, svc.drivers.activeOrders(driverId), svc.realtime.connections(driverId)) : null
  }

  return async (state: DriverState | null, msg: DriverMsg): Promise<DriverState | null> => {
    state ??= load()
    if (!state) {
      const err = fail(new ApiError('not_found', 'The driver does not exist.'))
      if (msg.type === 'location') msg.ack?.(err)
      if ('replyTo' in msg) reply(msg.replyTo, err)
      return null
    }
    const now = nowIso()
    const step = reduceDriver(state, msg, msg.type === 'location' ? nowIso(msg.at) : now)
    if (!step.ok) {
      if ('replyTo' in msg) reply(msg.replyTo, fail(step.error))
      return state
    }
    const next = step.state
    try {
      switch (msg.type) {
        case 'location': {
          const at = next.locationAt!
          svc.realtime.driverLocation({ driverId, ownerId: next.ownerId, restaurantId: next.restaurantId, name: next.name, lat: msg.lat, lng: msg.lng, at }, step.visible ?? [])
          const ackTo = msg.replyTo
          const cb = msg.ack
          writer.persist(driverId, msg.lat, msg.lng, at).then(
            () => { const r = ok<LocationAck>({ lat: msg.lat, lng: msg.lng, location_updated_at: at }); reply(ackTo, r); cb?.(r) },
            (err) => { svc.log.error({ err, driverId }, 'location write failed'); const r = fail(new ApiError('internal_error')); reply(ackTo, r); cb?.(r) },
          )
          return next
        }
        case 'get':
          reply(msg.replyTo, ok(liveView(next)))
          return next
        case 'update':
          await svc.committer.write(() => stmts.update.run(next.name, next.phone, next.restaurantId, driverId))
          reply(msg.replyTo, ok(liveView(next)))
          presence(next)
          return next
        case 'rotate_token':
          await svc.committer.write(() => {
            stmts.rotate.run(msg.tokenHash, driverId)
            stmts.revokeDevices.run(now, driverId)
          })
          // Sockets opened with the old token close now, not at their next reconnect.
          svc.realtime.disconnectDriver(driverId, 'token_rotated')
          reply(msg.replyTo, ok(liveView(next)))
          return next
        case 'delete':
          await svc.committer.write(() => stmts.remove.run(driverId))
          svc.realtime.disconnectDriver(driverId, 'driver_deleted')
          reply(msg.replyTo, ok(null))
          return null
        case 'shift': {
          if (!step.noop) {
            await svc.committer.write(() => {
              stmts.onShift.run(next.onShift ? 1 : 0, driverId)
              if (next.onShift) stmts.startShift.run(driverId, now)
              else stmts.endShift.run(now, driverId)
            })
            presence(next)
          }
          const last = stmts.lastShift.get(driverId) ?? null
          reply(msg.replyTo, ok<ShiftView>({ on_shift: next.onShift, shift: last }))
          return next
        }
        case 'order_changed':
          return next
        case 'connection':
          if ((state.connections > 0) !== (next.connections > 0)) presence(next)
          return next
        default: {
          const never: never = msg
          return never
        }
      }
    } catch (err) {
      svc.log.error({ err, driverId, msg: msg.type }, 'driver write failed')
      if ('replyTo' in msg) reply(msg.replyTo, fail(new ApiError('internal_error')))
      return state
    }
  }
}
