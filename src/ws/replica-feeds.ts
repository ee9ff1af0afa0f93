/**
 * The owner's feeds of a store — the orders board (`/ws/orders/{id}`) and the dispatch feed
 * (`/ws/dispatch/{id}`) — and the kitchen screens (`/ws/kds`) served by a cluster replica itself
 * (docs/cluster.md "Sockets on any node"), as its tracking sockets are (src/ws/replica-sockets.ts).
 * Each kind is described by the pieces the primary's socket of that kind is made of (`ReplicaFeed`):
 *
 * - the upgrade is admitted by the same code as the primary's (src/ws/feed.ts `ownerStoreUpgrade`
 *   with the feed's own admission: `ordersBoardAdmission` through `admit`, the dispatch access and
 *   `resolveScope`), run on the replica's read-only view of the server (src/cluster/read-view.ts:
 *   the same authenticators, queries and caches on its own file; an owner token's lookup writes nothing);
 * - the snapshot is the same function as the primary's (`ordersFeed.snapshot`, `dispatchFeed.snapshot`)
 *   on that view, read in one transaction with the stream sequence the copy holds;
 * - the frames are those the primary's hub publishes on the feed's topics, which it also sends to
 *   NATS while a replica watches them (src/cluster/frames.ts, src/ws/hub.ts `remote`); a frame
 *   built from data the socket's snapshot already holds is not sent to it;
 * - credentials are re-checked as on the primary (src/ws/sessions.ts): the registry watches the
 *   replica's file, which the applier writes from another connection, so a token revoked on the
 *   primary closes the replica's sockets once the revocation is applied here (4001).
 *
 * A kitchen screen's bumps and recalls are run by the primary (`kdsOnReplica`: NATS request/reply),
 * answered after its commit; so are a driver app's positions (src/ws/replica-driver.ts, a kind of
 * its own built from these pieces, with the hooks it needs: `gone`, `closes`, presence). A replica that is not ready tunnels these sockets to the primary
 * (src/http/forward.ts); a change of primary or of its term, NATS lost, or no answer to a watch
 * closes them with 1012 (src/ws/replica-rooms.ts).
 */
import type { TemplatedApp, WebSocket, WebSocketBehavior } from 'uWebSockets.js'
import type { Config } from '../config.ts'
import type { Logger } from '../log.ts'
import type { ClusterStatus } from '../cluster/node.ts'
import type { ReadView } from '../cluster/read-view.ts'
import { readApplied } from '../cluster/state.ts'
import { decodeFrame, DriverPresence, newerThan, TopicRoomFrames, type WireFrame } from '../cluster/frames.ts'
import { requestFrameOp, type FrameLink, type OwnSockets } from '../cluster/frame-link.ts'
import { encode } from './codec.ts'
import { feedMessages, OWNER_FEED_LIMITS, ownerStoreUpgrade, type OwnerStoreFeed } from './feed.ts'
import type { Services } from '../services.ts'
import type { LiveSocket } from './socket.ts'
import { ApiError } from '../errors.ts'
import { kdsMessages, kdsScreenUpgrade, kdsSnapshot, KDS_SOCKET_LIMITS, kdsTopic, type KdsSocket } from './kds.ts'
import { kdsReads } from '../ops/orders/kds.ts'
import { refusalFrame } from './frames.ts'
import { guarded, type GuardedUpgrade } from './guard.ts'
import { Hub, SLOW_CONSUMER_BYTES } from './hub.ts'
import { SocketSessions } from './sessions.ts'
import { mountOwnOrTunnel, servesTracking } from './replica-sockets.ts'
import { RECONNECT, ReplicaRooms, type RoomBase } from './replica-rooms.ts'

export interface ReplicaFeedOptions {
  config: Config
  log: Logger
  status: () => ClusterStatus
  /** The primary's term (src/cluster/lease.ts): a primary restarted under the same name starts its frames over. */
  term?: () => string | null
  link: () => FrameLink | null
  /** The replica's read-only view of the server, once it has joined (null before). */
  view: () => ReadView | null
  /** The socket kinds it serves (`ownerFeedOnReplica`, `kdsOnReplica`, src/ws/replica-driver.ts `driverOnReplica`). */
  feeds: readonly AnyReplicaFeed[]
}

/** A socket kind a replica serves itself, from the pieces the primary's own socket of that kind is made of. */
export interface ReplicaFeed<D> {
  /** Its kind (the guard's, the metrics' label). */
  kind: string
  /** Its address, as uWS routes it. */
  path: string
  limits: { maxMessageBytes: number; maxBackpressure: number; closeOnBackpressureLimit: number }
  /** The primary's upgrade, on this node's view of the server. */
  upgrade: (svc: Services) => GuardedUpgrade
  /** The hub topics whose frames it hears. */
  topics: (d: D) => string[]
  /** Its snapshot, read on the view. */
  snapshot: (svc: Services, d: D, connected: (driverId: number) => boolean) => unknown
  /** What it does with the frames the client sends; `refresh` sends it a new snapshot. */
  messages: (hub: Hub, link: () => FrameLink | null, refresh: (ws: WebSocket<D & FeedState>) => void) => (ws: WebSocket<D & FeedState>, message: ArrayBuffer, isBinary: boolean) => void | Promise<void>
  /** A snapshot of null means what the socket is about is gone: it closes with this (else it gets nothing). */
  gone?: { code: number; reason: string }
  /**
   * A frame the primary sends to close this kind's sockets that hear it (the driver's on a token
   * rotation): never written to a client; closes the sockets open when it arrives, never replayed to a later one.
   */
  closes?: (f: WireFrame) => { code: number; reason: string } | null
  /** A socket of this kind opened or closed on this node (the driver's presence, told to the primary). */
  opened?: (ws: WebSocket<D & FeedState>, link: FrameLink | null) => void
  closed?: (ws: WebSocket<D & FeedState>, link: FrameLink | null) => void
  /** Every WATCH_REFRESH_MS, with the watches' repeat. */
  tick?: (link: FrameLink) => void
}

/** The owner's feeds of a store (src/ws/orders.ts `ordersFeed`, src/ws/dispatch.ts `dispatchFeed`) on a replica. */
export function ownerFeedOnReplica(feed: OwnerStoreFeed): AnyReplicaFeed {
  return erased<Parameters<OwnerStoreFeed['topics']>[0]>({
    kind: feed.kind, path: `/api/v1/ws/${feed.kind}/:restaurantId`, limits: OWNER_FEED_LIMITS,
    upgrade: (svc) => ownerStoreUpgrade(svc, feed.admission(svc)) as GuardedUpgrade,
    topics: feed.topics, snapshot: feed.snapshot,
    messages: (hub, _link, refresh) => feedMessages(hub, feed.label, refresh),
  })
}

/** A feed whose user data is its own kind's, as the module keeps them side by side (each socket is handled by its own kind's feed only). */
export type AnyReplicaFeed = ReplicaFeed<Record<string, unknown>>
export const erased = <D>(f: ReplicaFeed<D>): AnyReplicaFeed => f as unknown as AnyReplicaFeed

/** How long a replica's kitchen screen waits for the primary to answer a bump (a write may wait up to 10 s for the stream). */
export const FRAME_OP_TIMEOUT_MS = 12_000

/** The answer to a frame that writes when the primary did not answer in time (or this node has no NATS): as a primary that cannot write answers. */
export const primaryUnavailable = (seq: number | null) =>
  refusalFrame(new ApiError('unavailable', 'The primary did not answer in time. Retry shortly.', undefined, { 'Retry-After': '1' }), seq)

/**
 * The kitchen screen (src/ws/kds.ts) on a replica: its upgrade, snapshot and topics as the
 * primary's; its `bump` and `recall` frames go to the primary (NATS request/reply on
 * `{CLUSTER_NAME}.ops.0.frame`, with the screen's credential, which the primary resolves again)
 * and the screen gets the primary's answer, `ack` after its commit or the refusal; no answer in
 * time: the error a primary gives while unavailable, never an ack.
 */
export function kdsOnReplica(): AnyReplicaFeed {
  const reads = new WeakMap<Services, ReturnType<typeof kdsReads>>()
  const readsOf = (svc: Services) => {
    let r = reads.get(svc)
    if (!r) reads.set(svc, (r = kdsReads(svc)))
    return r
  }
  return erased<KdsSocket>({
    kind: 'kds', path: '/api/v1/ws/kds', limits: KDS_SOCKET_LIMITS,
    upgrade: (svc) => kdsScreenUpgrade(svc) as GuardedUpgrade,
    topics: (d) => [kdsTopic(d.storeId, d.station)],
    snapshot: (svc, d) => kdsSnapshot(readsOf(svc), d),
    messages: (hub, link, refresh) => {
      const send = (ws: WebSocket<KdsSocket & FeedState>, msg: unknown) => { if (!ws.getUserData().closed) hub.send(ws, msg) }
      return kdsMessages(send, refresh, async (ws, f) => {
        const seq = typeof f.seq === 'number' && Number.isSafeInteger(f.seq) ? f.seq : null
        const l = link()
        let answer: unknown
        try {
          if (!l) throw new Error('this node has no NATS connection')
          answer = await requestFrameOp(l, { bearer: ws.getUserData().session!.bearer, frame: f }, FRAME_OP_TIMEOUT_MS)
        } catch {
          answer = primaryUnavailable(seq)
        }
        send(ws, answer)
      })
    },
  })
}

/** What a replica keeps per own socket, whatever its kind. */
interface FeedState extends LiveSocket {
  /** The stream sequence of this socket's last snapshot: frames built from data at or below it are in it. */
  applied: number
  /** Sent its snapshot: later frames go to it. */
  live: boolean
  /** Frames were dropped for it while it was slow: a fresh snapshot once it drains. */
  behind: boolean
}
type FeedSocket = FeedState & Record<string, unknown>
type Ws = WebSocket<FeedSocket>
type AnyFeed = ReplicaFeed<FeedSocket>


/** One watched hub topic on this node (its key: the topic). */
interface Room extends RoomBase<string> {
  frames: TopicRoomFrames
  sockets: Set<Ws>
  out: (f: WireFrame) => void
}

export function replicaFeeds(o: ReplicaFeedOptions): OwnSockets {
  const rooms = new ReplicaRooms<string, Room>({
    log: o.log, status: o.status, term: o.term, link: o.link, what: 'feed',
    subject: (w, topic) => w.subjects.topic(topic)!,
    ask: (topics) => ({ track: [], topics }),
    members: (room) => room.sockets,
    tick: () => { const l = o.link(); if (l) for (const f of o.feeds) f.tick?.(l) },
  })
  const presence = new DriverPresence()
  const connected = (driverId: number) => presence.connected(driverId)
  const feedOf = new WeakMap<FeedSocket, AnyFeed>()
  let hub: Hub | null = null
  let open = 0

  // Credentials of this node's own sockets, re-checked on its copy whenever the applier commits.
  const sessions = new SocketSessions()
  let sessionsOf: ReadView | null = null
  let stopSessions: (() => void) | null = null
  const viewNow = (): ReadView | null => {
    const v = o.view()
    if (v && v !== sessionsOf) {
      stopSessions?.()
      sessionsOf = v
      stopSessions = sessions.start({ auth: v.svc.auth, db: v.svc.db, log: o.log })
    }
    return v
  }

  const serveHere = (): boolean => servesTracking(o.status(), o.link() !== null) && viewNow() !== null

  const end = (ws: Ws) => {
    if (!ws.getUserData().closed) ws.end(RECONNECT.code, RECONNECT.reason)
  }

  /** Write a frame to one socket, unless its snapshot holds it; one dropped for a slow socket is made up by a snapshot once it drains. */
  const write = (ws: Ws, f: WireFrame, packed: { msgpack: string | Uint8Array | null }) => {
    const d = ws.getUserData()
    if (d.closed || !d.live || !newerThan(f, d.applied)) return
    const r = d.format === 'json' ? ws.send(f.json, false) : ws.send(packed.msgpack ??= encode('msgpack', JSON.parse(f.json)), true)
    if (r === 2) d.behind = true
  }

  /** Send the socket its snapshot from this node's copy, then the kept frames newer than it, in the primary's order. */
  const catchUp = (ws: Ws) => {
    const v = o.view()
    const d = ws.getUserData()
    if (!v || d.closed) return
    const feed = feedOf.get(d)!
    const { frame, applied } = v.svc.db.transaction(() => ({ applied: readApplied(v.svc.db).seq, frame: feed.snapshot(v.svc, d, connected) }))()
    if (frame === null && feed.gone) return void ws.end(feed.gone.code, feed.gone.reason)
    d.applied = applied
    d.live = true
    d.behind = false
    hub!.send(ws, frame)
    const kept = feed.topics(d).flatMap((t) => rooms.rooms.get(t)?.frames.after(applied) ?? []).sort((a, b) => a.n - b.n)
    // A kept close frame closed the sockets open when it came, never a later one.
    for (const f of kept) if (!feed.closes?.(f)) write(ws, f, { msgpack: null })
  }

  /** Once every room of the socket is answered and this node's copy holds what the primary had then: its snapshot. */
  const settle = (ws: Ws, deadline: number) => {
    const d = ws.getUserData()
    if (d.closed || d.live) return
    const mine = feedOf.get(d)!.topics(d).map((t) => rooms.rooms.get(t))
    if (mine.some((r) => !r || !r.sockets.has(ws))) return end(ws) // a room was dropped meanwhile
    if (mine.some((r) => !r!.frames.answered)) return // its answer settles it
    const needed = Math.max(...mine.map((r) => Math.max(r!.frames.since, r!.frames.forgotten)))
    if (o.status().applied_seq < needed) {
      if (Date.now() > deadline) return end(ws)
      setTimeout(() => settle(ws, deadline), 20).unref()
      return
    }
    catchUp(ws)
  }

  const openRoom = (topic: string): Room => rooms.open(topic, (base) => {
    const room: Room = {
      ...base, frames: new TopicRoomFrames(), sockets: new Set(),
      out: (f) => {
        presence.take(f)
        const packed = { msgpack: null }
        // A room's sockets are of one kind (its topic's): whether the frame closes them is read once.
        let close: { code: number; reason: string } | null | undefined
        for (const ws of room.sockets) {
          const d = ws.getUserData()
          if (d.closed) continue
          if (close === undefined) close = feedOf.get(d)!.closes?.(f) ?? null
          if (close) ws.end(close.code, close.reason)
          else write(ws, f, packed)
        }
      },
    }
    return room
  }, (room, text) => {
    try {
      const f = decodeFrame(text)
      if (f.topic === topic) room.frames.take(f, room.out)
    } catch (err) {
      o.log.warn({ err, topic }, 'live frames: a frame could not be read')
    }
  }, (room, reply) => {
    if (reply.connected) presence.answer(reply.n, reply.connected)
    room.frames.answer(reply, room.out)
    const deadline = Date.now() + o.config.cluster!.maxLagMs
    for (const ws of [...room.sockets]) settle(ws, deadline)
  })

  const own = (h: Hub, feed: AnyFeed): WebSocketBehavior<FeedSocket> => {
    // The primary's upgrade, on this node's view of the server.
    const upgrade: GuardedUpgrade = (res, req, context, reqId, ip, limits) => feed.upgrade(o.view()!.svc)(res, req, context, reqId, ip, limits)
    return guarded<FeedSocket>(feed.kind, { log: o.log, config: o.config }, sessions.track<FeedSocket>({
      ...feed.limits,
      upgrade,
      open: (ws) => {
        open++
        const d = ws.getUserData()
        d.applied = 0
        d.live = false
        d.behind = false
        feedOf.set(d, feed)
        feed.opened?.(ws, o.link())
        for (const topic of feed.topics(d)) (rooms.rooms.get(topic) ?? openRoom(topic)).sockets.add(ws)
        settle(ws, Date.now() + o.config.cluster!.maxLagMs)
      },
      message: feed.messages(h, o.link, (ws) => { if (ws.getUserData().live) catchUp(ws) }),
      drain: (ws) => {
        const d = ws.getUserData()
        if (d.live && d.behind && ws.getBufferedAmount() <= SLOW_CONSUMER_BYTES) catchUp(ws)
      },
      close: (ws) => {
        open--
        const d = ws.getUserData()
        feed.closed?.(ws, o.link())
        for (const topic of feed.topics(d)) {
          const room = rooms.rooms.get(topic)
          if (!room) continue
          room.sockets.delete(ws)
          if (room.sockets.size === 0) rooms.drop(room, null)
        }
      },
    }))
  }

  return {
    get open() { return open },
    mount(app: TemplatedApp, tunnel) {
      rooms.start()
      hub = new Hub(app)
      for (const feed of o.feeds as unknown as readonly AnyFeed[]) mountOwnOrTunnel(app, feed.path, own(hub, feed), serveHere, tunnel)
    },
    close() {
      rooms.stop('this node stops serving as a replica')
      stopSessions?.()
      stopSessions = null
      sessionsOf = null
    },
  }
}
