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
import type { Statement } from 'better-sqlite3'
import { nowIso, type Db } from '../storage/db.ts'
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
 * Writes driver positions: one UPDATE per driver per commit, keeping only each driver's latest
 * position, so a flood of positions costs one row write per driver per commit, not one per frame
 * (ARCHITECTURE "Numbers": coalesce per driver per tick).
 *
 * Positions are ephemeral (each is superseded within seconds), so they get their own commits,
 * outside the group committer, at `synchronous=NORMAL`: in WAL mode such a commit is in the
 * operating system's hands once it returns, so an acknowledged position survives a crash or
 * `kill -9` of the process (test/drivers-crash.test.ts); only a power cut may lose the last
 * positions, never an order or status change (those stay FULL). That keeps fsync off the event
 * loop's hot path: committing a stream of positions at FULL stalled the relay (bench/tracking.ts).
 *
 * Commits are also spaced: after a commit that took `d` ms the next waits LOCATION_COMMIT_DUTY × d
 * (at most LOCATION_COMMIT_MAX_GAP_MS), so position writes hold the loop about 1/DUTY of the time
 * at most: a lone driver is acknowledged within a millisecond or so, a busy fleet in batches.
 * Watchers are never delayed by this (the actor publishes first); acknowledgements wait for it.
 */
type PendingPositions = Map<number, { lat: number; lng: number; at: string; waiters: Array<(err: unknown) => void> }>

export const LOCATION_COMMIT_DUTY = 25
export const LOCATION_COMMIT_MAX_GAP_MS = 100

export class LocationWriter {
  private pending: PendingPositions = new Map()
  private queued = false
  /** When the next location commit may start (performance.now() ms). */
  private notBefore = 0
  private timer: NodeJS.Timeout | null = null
  private readonly write: (batch: PendingPositions) => void
  private readonly relaxed: Statement
  private readonly restore: Statement

  constructor(private readonly db: Db) {
    const update = db.prepare<[number, number, string, number]>('UPDATE drivers SET lat = ?, lng = ?, location_updated_at = ? WHERE id = ?')
    this.write = db.transaction((batch: PendingPositions) => { for (const [id, b] of batch) update.run(b.lat, b.lng, b.at, id) })
    const level = db.pragma('synchronous', { simple: true }) as number
    this.relaxed = db.prepare(`PRAGMA synchronous = ${Math.min(level, 1)}`)
    this.restore = db.prepare(`PRAGMA synchronous = ${level}`)
  }

  /** Resolves once the position (or a newer one of the same driver) is committed. */
  persist(driverId: number, lat: number, lng: number, at: string): Promise<void> {
    return new Promise((resolve, reject) => {
      const waiter = (err: unknown) => (err ? reject(err) : resolve())
      const p = this.pending.get(driverId)
      if (p) { p.lat = lat; p.lng = lng; p.at = at; p.waiters.push(waiter) }
      else this.pending.set(driverId, { lat, lng, at, waiters: [waiter] })
      if (!this.queued) {
        this.queued = true
        // At the end of this turn at the earliest: positions of the same turn share the commit.
        this.timer = setTimeout(() => this.commit(), Math.max(0, this.notBefore - performance.now()))
      }
    })
  }

  /** Commit waiting positions now (shutdown, before the database closes). */
  flush(): void {
    if (this.queued) this.commit()
  }

  private commit(): void {
    if (this.timer) { clearTimeout(this.timer); this.timer = null }
    if (this.db.inTransaction) {
      // Never nest in someone else's transaction (cannot happen from a timer; cheap to guard).
      this.timer = setTimeout(() => this.commit(), 1)
      return
    }
    const batch = this.pending
    this.pending = new Map()
    this.queued = false
    const started = performance.now()
    let error: unknown = null
    try {
      this.relaxed.run()
      try { this.write(batch) } finally { this.restore.run() }
    } catch (err) {
      error = err
    }
    const now = performance.now()
    this.notBefore = now + Math.min(LOCATION_COMMIT_MAX_GAP_MS, LOCATION_COMMIT_DUTY * (now - started))
    for (const b of batch.values()) for (const w of b.waiters) w(error)
  }
}

type AnyReply = Ref<Result<any>>

/** The driver actors' statements, prepared once per database rather than once per actor spawn. */
const statementCache = new WeakMap<Services['db'], ReturnType<typeof prepareStatements>>()

function prepareStatements(db: Services['db']) {
  return {
    update: db.prepare('UPDATE drivers SET name = ?, phone = ?, restaurant_id = ? WHERE id = ?'),
    rotate: db.prepare('UPDATE drivers SET token_hash = ? WHERE id = ?'),
    revokeDevices: db.prepare('UPDATE driver_tokens SET revoked_at = ? WHERE driver_id = ? AND revoked_at IS NULL'),
    remove: db.prepare('DELETE FROM drivers WHERE id = ?'),
    onShift: db.prepare('UPDATE drivers SET on_shift = ? WHERE id = ?'),
    startShift: db.prepare('INSERT INTO driver_shifts (driver_id, started_at) VALUES (?, ?)'),
    endShift: db.prepare('UPDATE driver_shifts SET ended_at = ? WHERE driver_id = ? AND ended_at IS NULL'),
    // Off shift means no offers (docs/drivers.md "Shifts"): open ones are withdrawn with the shift's end.
    withdrawOffers: db.prepare<[string, number], { id: number; order_id: number }>(
      "UPDATE delivery_offers SET status = 'withdrawn', responded_at = ? WHERE driver_id = ? AND status = 'pending' RETURNING id, order_id",
    ),
    lastShift: db.prepare<[number], { id: number; started_at: string; ended_at: string | null }>(
      'SELECT id, started_at, ended_at FROM driver_shifts WHERE driver_id = ? ORDER BY id DESC LIMIT 1',
    ),
  }
}

/** The nact handler for one driver: load on first message, persist before replying. */
export function driverHandler(svc: Services, driverId: number, writer: LocationWriter) {
  let stmts = statementCache.get(svc.db)
  if (!stmts) statementCache.set(svc.db, (stmts = prepareStatements(svc.db)))
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
    // One timestamp per message: a location's is when the socket or HTTP request received it.
    const now = nowIso(msg.type === 'location' ? msg.at : undefined)
    const step = reduceDriver(state, msg, now)
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
            const withdrawn = await svc.committer.write(() => {
              stmts.onShift.run(next.onShift ? 1 : 0, driverId)
              if (next.onShift) { stmts.startShift.run(driverId, now); return [] }
              stmts.endShift.run(now, driverId)
              return stmts.withdrawOffers.all(now, driverId)
            })
            for (const w of withdrawn) svc.realtime.toDriver(driverId, { type: 'offer_withdrawn', offer_id: w.id, order_id: w.order_id })
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
