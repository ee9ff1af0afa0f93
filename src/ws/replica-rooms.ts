/**
 * What every kind of socket a cluster replica serves itself shares (docs/cluster.md "Sockets on any
 * node"): one *room* per thing watched (an order's tracking, a hub topic), each with one NATS
 * subscription while this node has sockets in it; the watch request that asks the primary to publish
 * for it (and answers its catch-up); and the rule that its sockets reconnect (1012) when the primary
 * that answered is no longer the primary, restarted (a new term), did not answer, or NATS went away
 * for this node. Every WATCH_REFRESH_MS the rooms still open are named to the primary again.
 * The rooms' own frames and sockets are their kind's (src/ws/replica-sockets.ts, src/ws/replica-feeds.ts).
 */
import type { WebSocket } from 'uWebSockets.js'
import type { Logger } from '../log.ts'
import type { ClusterStatus } from '../cluster/node.ts'
import { WATCH_REFRESH_MS, type WatchReply } from '../cluster/frames.ts'
import { FrameWatcher, type FrameLink } from '../cluster/frame-link.ts'

/** How long a replica waits for the primary's answer to a watch. */
export const WATCH_TIMEOUT_MS = 5000
/** Close code and reason when a replica's own socket must reconnect (RFC 6455 §7.4.1 "service restart"). */
export const RECONNECT = { code: 1012, reason: 'reconnect' }

/** A room as this module needs it: what it watches, and which primary (and term) it was opened under. */
export interface RoomBase<K> { key: K; subject: string; primary: string | null; term: string | null }

export interface ReplicaRoomsOptions<K, R extends RoomBase<K>> {
  log: Logger
  status: () => ClusterStatus
  term?: () => string | null
  link: () => FrameLink | null
  /** What the rooms are, in logs ("tracking", "feed"). */
  what: string
  /** A key's subject. */
  subject: (w: FrameWatcher, key: K) => string
  /** The watch request naming these keys. */
  ask: (keys: K[]) => { track: number[]; topics: string[] }
  /** The room's sockets, closed with 1012 when it is dropped. */
  members: (room: R) => Iterable<WebSocket<{ closed: boolean }>>
  /** Also run every WATCH_REFRESH_MS (what else the primary must hear again: the driver apps served here). */
  tick?: () => void
}

export class ReplicaRooms<K, R extends RoomBase<K>> {
  readonly rooms = new Map<K, R>()
  private watcher: FrameWatcher | null = null
  private watcherLink: FrameLink | null = null
  private timer: NodeJS.Timeout | null = null

  constructor(private readonly o: ReplicaRoomsOptions<K, R>) {}

  /** The watcher of this node's current NATS connection. */
  private watcherFor(): FrameWatcher {
    const link = this.o.link()!
    if (this.watcher && this.watcherLink === link) return this.watcher
    this.watcher?.close()
    this.watcher = new FrameWatcher(link, (why) => this.closeAll(why))
    this.watcherLink = link
    return this.watcher
  }

  /**
   * Open a room: `make` builds it, its subscription passes each frame's text to `take` (subscribed
   * before the watch is asked, so nothing published after the answer is missed), and the primary's
   * answer goes to `answered`. A room the primary did not answer, or another node answered, is dropped.
   */
  open(key: K, make: (base: RoomBase<K>) => R, take: (room: R, text: string) => void, answered: (room: R, reply: WatchReply) => void): R {
    const w = this.watcherFor()
    const room = make({ key, subject: this.o.subject(w, key), primary: this.o.status().primary, term: this.o.term?.() ?? null })
    this.rooms.set(key, room)
    w.subscribe(room.subject, (text) => take(room, text), (err) => {
      this.o.log.warn({ err, key }, 'live frames: subscription failed')
      this.drop(room, 'the subscription failed')
    })
    const { track, topics } = this.o.ask([key])
    w.watch(track, WATCH_TIMEOUT_MS, topics).then((reply) => {
      if (this.rooms.get(key) !== room) return
      if (reply.node !== room.primary) return this.drop(room, `${reply.node} answered, not ${room.primary}`)
      answered(room, reply)
    }, (err: Error) => {
      this.o.log.warn({ err: err.message, key }, 'live frames: the primary did not answer a watch')
      this.drop(room, 'the primary did not answer')
    })
    return room
  }

  /** Forget a room; with `why`, its sockets reconnect (1012). */
  drop(room: R, why: string | null): void {
    if (this.rooms.get(room.key) !== room) return
    this.rooms.delete(room.key)
    this.watcher?.unsubscribe(room.subject)
    const members = [...this.o.members(room)]
    if (why) this.o.log.info({ key: room.key, sockets: members.length, why }, `live frames: closing this node's ${this.o.what} sockets of a room (1012, reconnect)`)
    for (const ws of members) if (!ws.getUserData().closed) ws.end(RECONNECT.code, RECONNECT.reason)
  }

  closeAll(why: string): void {
    for (const room of [...this.rooms.values()]) this.drop(room, why)
  }

  /** Every WATCH_REFRESH_MS: rooms of a primary that is no longer the primary reconnect; the others are named again. */
  private tick(): void {
    const s = this.o.status()
    const term = this.o.term?.() ?? null
    for (const room of [...this.rooms.values()]) {
      if (room.primary !== s.primary) this.drop(room, `the primary changed (${room.primary} → ${s.primary})`)
      else if (room.term !== term) this.drop(room, `the primary ${s.primary} restarted`)
    }
    if (this.rooms.size > 0 && this.watcher) {
      const { track, topics } = this.o.ask([...this.rooms.keys()])
      this.watcher.repeat(track, topics)
    }
    this.o.tick?.()
  }

  start(): void {
    this.timer ??= setInterval(() => this.tick(), WATCH_REFRESH_MS)
    this.timer.unref()
  }

  stop(why: string): void {
    if (this.timer) clearInterval(this.timer)
    this.timer = null
    this.closeAll(why)
    this.watcher?.close()
  }
}
