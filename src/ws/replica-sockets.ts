/**
 * Tracking sockets served by a cluster replica itself (docs/cluster.md "Sockets on any node"):
 * instead of tunnelling each socket frame by frame to the primary, the replica authorizes the
 * upgrade from its own copy of the database through the same code as the primary's socket
 * (`trackedOrder`, src/ws/upgrade.ts, src/ws/guard.ts), sends the same snapshot read from its copy,
 * and writes the frames the primary publishes on NATS for that order (src/cluster/frames.ts) to
 * its own sockets. One NATS subscription per watched order, while this node has sockets for it.
 *
 * A replica not ready to serve (its copy further behind than CLUSTER_MAX_LAG_MS, not joined yet, no
 * primary known) tunnels the socket to the primary as before (src/http/forward.ts). When the
 * primary changes, NATS goes away, or the primary does not answer a watch, the replica's own
 * sockets are closed with 1012 (service restart): the client reconnects and gets its catch-up
 * from the database, from whichever node it reaches.
 */
import type { TemplatedApp, WebSocket, WebSocketBehavior } from 'uWebSockets.js'
import type { Config } from '../config.ts'
import type { Logger } from '../log.ts'
import type { Db } from '../storage/db.ts'
import type { ClusterStatus } from '../cluster/node.ts'
import type { TrackViewFrame } from '../storage/tracking.ts'
import { trackReads, type TrackReads } from '../cluster/track-reads.ts'
import { readApplied } from '../cluster/state.ts'
import { trackedOrder, trackingView } from '../ops/web/public.ts'
import { decodeFrame, TrackRoomFrames, type RoomOut, type WireFrame } from '../cluster/frames.ts'
import type { FrameLink, OwnSockets } from '../cluster/frame-link.ts'
import { ApiError } from '../errors.ts'
import { encode } from './codec.ts'
import { feedMessages } from './feed.ts'
import { guarded, requestIdOf } from './guard.ts'
import { Hub, SLOW_CONSUMER_BYTES } from './hub.ts'
import { topics } from './realtime.ts'
import type { LiveSocket } from './socket.ts'
import { authedUpgrade, refuse } from './upgrade.ts'
import { ReplicaRooms, type RoomBase } from './replica-rooms.ts'

/** The tracking socket's path, as the primary mounts it (src/ws/track.ts). */
export const TRACK_SOCKET_PATH = '/api/v1/ws/track/:token'
export interface ReplicaSocketOptions {
  config: Config
  log: Logger
  db: () => Db
  status: () => ClusterStatus
  /**
   * The primary's term (src/cluster/lease.ts Holder): a primary restarted under the same name starts
   * its frames over, so this node's sockets of the old term reconnect as on any change of primary.
   */
  term?: () => string | null
  /** This node's NATS connection and names, once it has joined (null before). */
  link: () => FrameLink | null
  /**
   * What the tracking socket reads, on this node's copy: by default the primary's own queries on
   * `db()`; a read-only view of the server on the replica's file can stand in (it has them all).
   */
  reads?: () => TrackReads
}

interface ReplicaTrackSocket extends LiveSocket {
  orderId: number
  /** The stream sequence this socket's last snapshot was read at: status frames at or below it are in it. */
  applied: number
}

/**
 * Whether a replica serves a new tracking socket itself: joined (`linked`), a primary known that is
 * not this node, and its copy within CLUSTER_MAX_LAG_MS (ready). Else the socket is tunnelled.
 */
export function servesTracking(s: Pick<ClusterStatus, 'role' | 'ready' | 'primary' | 'node'>, linked: boolean): boolean {
  return linked && s.role === 'replica' && s.ready && s.primary !== null && s.primary !== s.node
}

/** A tunnelled socket's user data (src/http/forward.ts `Tunnel`), as opposed to one this node serves. */
const isTunnel = (d: unknown): boolean => typeof d === 'object' && d !== null && 'upstream' in d

/**
 * Mount a socket kind this node serves itself while `here()` (its own behavior `b`), else tunnelled
 * to the primary (src/http/forward.ts), else 503 while the node is still joining. Each socket stays
 * with whoever opened it: its user data tells a tunnel from an own socket.
 */
export function mountOwnOrTunnel<T>(app: TemplatedApp, path: string, b: WebSocketBehavior<T>, here: () => boolean, tunnel: () => WebSocketBehavior<unknown> | null): void {
  const own = b as WebSocketBehavior<unknown>
  const either = <K extends 'open' | 'message' | 'close' | 'drain'>(k: K) => ((ws: WebSocket<unknown>, ...rest: unknown[]) => {
    const handler = isTunnel(ws.getUserData()) ? tunnel()?.[k] : own[k]
    return (handler as ((...a: unknown[]) => void) | undefined)?.(ws, ...rest)
  }) as NonNullable<WebSocketBehavior<unknown>[K]>
  app.ws<unknown>(path, {
    ...own,
    upgrade: (res, req, context) => {
      if (here()) return own.upgrade!(res, req, context)
      const t = tunnel()
      if (t) return t.upgrade!(res, req as never, context)
      refuse(res, new ApiError('unavailable', 'This node is still joining the cluster. Retry shortly.', undefined, { 'Retry-After': '1' }), requestIdOf(req.getHeader('x-request-id')))
    },
    open: either('open'),
    message: either('message'),
    close: either('close'),
    drain: either('drain'),
  })
}

/** One watched order on this node (its key: the order's id). */
interface Room extends RoomBase<number> {
  frames: TrackRoomFrames
  /** Caught up: subscribed to the hub's topic, sent live status frames. */
  sockets: Set<WebSocket<ReplicaTrackSocket>>
  /** Opened, waiting for the primary's answer and for this node's copy to reach it. */
  waiting: Set<WebSocket<ReplicaTrackSocket>>
  out: RoomOut
}

// Plain functions (no closure per frame) for the hub's publishWith: the text as the primary built it,
// parsed only when a MessagePack socket listens.
const wireJson = (f: WireFrame): string => f.json
const wireObj = (f: WireFrame): unknown => JSON.parse(f.json)

export function replicaSockets(o: ReplicaSocketOptions): OwnSockets {
  const rooms = new ReplicaRooms<number, Room>({
    log: o.log, status: o.status, term: o.term, link: o.link, what: 'tracking',
    subject: (w, orderId) => w.subjects.track(orderId),
    ask: (orderIds) => ({ track: orderIds, topics: [] }),
    members: (room) => [...room.sockets, ...room.waiting],
  })
  let hub: Hub | null = null
  let open = 0

  const readsOf = new WeakMap<Db, TrackReads>()
  const reads = o.reads ?? (() => {
    const db = o.db()
    let r = readsOf.get(db)
    if (!r) readsOf.set(db, (r = trackReads(db, o.config.siteUrl)))
    return r
  })

  const serveHere = (): boolean => servesTracking(o.status(), o.link() !== null)

  const drop = (room: Room, why: string | null) => rooms.drop(room, why)

  /** Read the tracking view and the sequence this node's copy holds, in one read transaction. */
  const readView = (orderId: number): { view: TrackViewFrame | null; applied: number } => {
    const r = reads()
    return r.db.transaction(() => {
      const row = r.orders.row(orderId)
      return { view: row ? { ...trackingView(r, row), type: 'snapshot' as const } : null, applied: readApplied(r.db).seq }
    })()
  }

  /** Send a socket its view from this node's copy, then the status frames newer than the copy and the latest location. */
  const catchUp = (room: Room, ws: WebSocket<ReplicaTrackSocket>, type: 'snapshot' | 'status', location: boolean) => {
    const d = ws.getUserData()
    const { view, applied } = readView(d.orderId)
    d.applied = applied
    if (view) hub!.send(ws, { ...view, type } satisfies TrackViewFrame)
    for (const s of room.frames.after(applied)) sendStatus(ws, s.f, s.frame, { msgpack: null })
    if (location && room.frames.location) hub!.send(ws, room.frames.location, true)
  }

  const sendStatus = (ws: WebSocket<ReplicaTrackSocket>, f: WireFrame, frame: TrackViewFrame, packed: { msgpack: string | Uint8Array | null }) => {
    const d = ws.getUserData()
    if (d.closed || f.seq <= d.applied) return // already in this socket's snapshot
    if (d.format === 'json') ws.send(f.json, false)
    else ws.send(packed.msgpack ??= encode('msgpack', frame), true)
  }

  /** Catch the waiting sockets up once the primary answered and this node's copy holds what it had then. */
  const settle = (room: Room, deadline: number) => {
    if (rooms.rooms.get(room.key) !== room || room.waiting.size === 0 || !room.frames.answered) return
    if (o.status().applied_seq < room.frames.since) {
      if (Date.now() > deadline) return drop(room, 'this node\'s copy did not reach the primary\'s within its bound')
      setTimeout(() => settle(room, deadline), 20).unref()
      return
    }
    for (const ws of [...room.waiting]) {
      room.waiting.delete(ws)
      if (ws.getUserData().closed) continue
      catchUp(room, ws, 'snapshot', true)
      hub!.subscribe(ws, topics.track(room.key))
      room.sockets.add(ws)
    }
  }

  const openRoom = (orderId: number): Room => rooms.open(orderId, (base) => {
    const room: Room = {
      ...base, frames: new TrackRoomFrames(), sockets: new Set(), waiting: new Set(),
      out: {
        status: (f, frame) => {
          const packed = { msgpack: null }
          for (const ws of room.sockets) sendStatus(ws, f, frame, packed)
        },
        location: (f: WireFrame) => hub!.publishWith(topics.track(orderId), f, wireJson, wireObj),
      },
    }
    return room
  }, (room, text) => {
    try {
      room.frames.take(decodeFrame(text), room.out)
    } catch (err) {
      o.log.warn({ err, orderId }, 'live frames: a frame could not be read')
    }
  }, (room, reply) => {
    room.frames.answer({ n: reply.n, seq: reply.seq, location: reply.locations[orderId] ?? null }, room.out)
    settle(room, Date.now() + o.config.cluster!.maxLagMs)
  })

  const leave = (ws: WebSocket<ReplicaTrackSocket>) => {
    const room = rooms.rooms.get(ws.getUserData().orderId)
    if (!room) return
    room.sockets.delete(ws)
    room.waiting.delete(ws)
    if (room.sockets.size === 0 && room.waiting.size === 0) drop(room, null)
  }

  const own = (h: Hub) => guarded<ReplicaTrackSocket>('track', { log: o.log, config: o.config }, {
    // As the primary's tracking socket (src/ws/track.ts): customers only listen.
    maxMessageBytes: 1024,
    maxBackpressure: SLOW_CONSUMER_BYTES,
    closeOnBackpressureLimit: 0,
    idleTimeout: 120,
    sendPingsAutomatically: true,
    upgrade: authedUpgrade<ReplicaTrackSocket>(1, ({ params }) => ({ orderId: trackedOrder(reads(), params[0] ?? undefined).id, applied: 0 })),
    open: (ws) => {
      open++
      const { orderId } = ws.getUserData()
      const room = rooms.rooms.get(orderId) ?? openRoom(orderId)
      room.waiting.add(ws)
      settle(room, Date.now() + o.config.cluster!.maxLagMs)
    },
    message: feedMessages<ReplicaTrackSocket>(h, 'Tracking', (ws) => {
      const room = rooms.rooms.get(ws.getUserData().orderId)
      if (room?.sockets.has(ws)) catchUp(room, ws, 'snapshot', false)
    }),
    drain: (ws) => {
      const room = rooms.rooms.get(ws.getUserData().orderId)
      if (!room?.sockets.has(ws) || ws.getBufferedAmount() > SLOW_CONSUMER_BYTES / 4) return
      catchUp(room, ws, 'status', true)
    },
    close: (ws) => {
      open--
      leave(ws)
    },
  })

  return {
    get open() { return open },
    mount(app, tunnel) {
      rooms.start()
      hub = new Hub(app)
      mountOwnOrTunnel(app, TRACK_SOCKET_PATH, own(hub), serveHere, tunnel)
    },
    close() {
      rooms.stop('this node stops serving as a replica')
    },
  }
}
