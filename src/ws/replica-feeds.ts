/**
 * The owner's feeds of a store — the orders board (`/ws/orders/{id}`) and the dispatch feed
 * (`/ws/dispatch/{id}`) — served by a cluster replica itself (docs/cluster.md "Sockets on any node"),
 * as its tracking sockets are (src/ws/replica-sockets.ts):
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
 * A replica that is not ready tunnels them to the primary (src/http/forward.ts); a change of
 * primary or of its term, NATS lost, or no answer to a watch closes them with 1012.
 */
import type { TemplatedApp, WebSocket, WebSocketBehavior } from 'uWebSockets.js'
import type { Config } from '../config.ts'
import type { Logger } from '../log.ts'
import type { ClusterStatus } from '../cluster/node.ts'
import type { ReadView } from '../cluster/read-view.ts'
import { readApplied } from '../cluster/state.ts'
import { decodeFrame, DriverPresence, newerThan, TopicRoomFrames, type WireFrame } from '../cluster/frames.ts'
import type { FrameLink, OwnSockets } from '../cluster/frame-link.ts'
import { encode } from './codec.ts'
import { feedMessages, OWNER_FEED_LIMITS, ownerStoreUpgrade, type OwnerStoreFeed, type OwnerStoreSocket } from './feed.ts'
import { guarded } from './guard.ts'
import { Hub, SLOW_CONSUMER_BYTES } from './hub.ts'
import { SocketSessions } from './sessions.ts'
import { mountOwnOrTunnel, servesTracking } from './replica-sockets.ts'
import type { GuardedUpgrade } from './guard.ts'
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
  /** The feeds it serves (src/ws/orders.ts `ordersFeed`, src/ws/dispatch.ts `dispatchFeed`). */
  feeds: readonly OwnerStoreFeed[]
}

interface FeedSocket extends OwnerStoreSocket {
  /** The stream sequence of this socket's last snapshot: frames built from data at or below it are in it. */
  applied: number
  /** Sent its snapshot: later frames go to it. */
  live: boolean
  /** Frames were dropped for it while it was slow: a fresh snapshot once it drains. */
  behind: boolean
}
type Ws = WebSocket<FeedSocket>

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
  })
  const presence = new DriverPresence()
  const connected = (driverId: number) => presence.connected(driverId)
  const feedOf = new WeakMap<FeedSocket, OwnerStoreFeed>()
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
    d.applied = applied
    d.live = true
    d.behind = false
    hub!.send(ws, frame)
    const kept = feed.topics(d).flatMap((t) => rooms.rooms.get(t)?.frames.after(applied) ?? []).sort((a, b) => a.n - b.n)
    for (const f of kept) write(ws, f, { msgpack: null })
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
        for (const ws of room.sockets) write(ws, f, packed)
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

  const own = (h: Hub, feed: OwnerStoreFeed): WebSocketBehavior<FeedSocket> => {
    // The primary's upgrade (src/ws/feed.ts), on this node's view of the server.
    const upgrade: GuardedUpgrade = (res, req, context, reqId, ip, limits) =>
      ownerStoreUpgrade(o.view()!.svc, feed.admission(o.view()!.svc))(res, req, context, reqId, ip, limits)
    return guarded<FeedSocket>(feed.kind, { log: o.log, config: o.config }, sessions.track<FeedSocket>({
      ...OWNER_FEED_LIMITS,
      upgrade,
      open: (ws) => {
        open++
        const d = ws.getUserData()
        d.applied = 0
        d.live = false
        d.behind = false
        feedOf.set(d, feed)
        for (const topic of feed.topics(d)) (rooms.rooms.get(topic) ?? openRoom(topic)).sockets.add(ws)
        settle(ws, Date.now() + o.config.cluster!.maxLagMs)
      },
      message: feedMessages<FeedSocket>(h, feed.label, (ws) => { if (ws.getUserData().live) catchUp(ws) }),
      drain: (ws) => {
        const d = ws.getUserData()
        if (d.live && d.behind && ws.getBufferedAmount() <= SLOW_CONSUMER_BYTES) catchUp(ws)
      },
      close: (ws) => {
        open--
        const d = ws.getUserData()
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
      for (const feed of o.feeds) mountOwnOrTunnel(app, `/api/v1/ws/${feed.kind}/:restaurantId`, own(hub, feed), serveHere, tunnel)
    },
    close() {
      rooms.stop('this node stops serving as a replica')
      stopSessions?.()
      stopSessions = null
      sessionsOf = null
    },
  }
}
