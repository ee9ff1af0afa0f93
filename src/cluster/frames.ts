/**
 * Live frames over NATS (docs/cluster.md "Sockets on any node"): the primary publishes each
 * tracking frame it fans out once to a core NATS subject per order (not JetStream: frames are live,
 * not durable; a socket that reconnects gets its catch-up from the database), and a replica serves
 * tracking sockets itself from its own copy plus those frames (src/ws/replica-sockets.ts).
 *
 *   {CLUSTER_NAME}.frames.0.track.<orderId>   the frames of one order's tracking view
 *   {CLUSTER_NAME}.frames.0.orders.<storeId>  the owner's orders board of a store (hub topic `orders/<storeId>`)
 *   {CLUSTER_NAME}.frames.0.dispatch.<storeId> a store's dispatch feed (hub topic `dispatch/<storeId>`)
 *   {CLUSTER_NAME}.frames.0.fleet.<ownerId>   the owner's unbound drivers (hub topic `fleet/<ownerId>`)
 *   {CLUSTER_NAME}.frames.0.driver.<driverId> a driver's app: assignments, offers, … (hub topic `driver/<driverId>`)
 *   {CLUSTER_NAME}.frames.0.kds.<storeId>.all  a store's all-station kitchen screens (hub topic `kds/<storeId>/*`)
 *   {CLUSTER_NAME}.frames.0.kds.<storeId>.st.<hex> one station's screens (hub topic `kds/<storeId>/st/<station>`)
 *   {CLUSTER_NAME}.frames.0.watch             replicas tell the primary which orders and topics they watch
 *   {CLUSTER_NAME}.frames.0.presence          replicas tell the primary which drivers' apps are connected to them
 *   {CLUSTER_NAME}.ops.0.frame                a replica's kitchen screen's bump or recall, or a driver's
 *                                             position, run by the primary (request/reply)
 *
 * The owner feeds' frames are those of the primary's hub topics (src/ws/realtime.ts `topics`), as
 * the hub publishes them (src/ws/hub.ts `remote`): one subject per topic, the frame's JSON text as
 * built, headed by the topic.
 *
 * The primary builds frames only for orders someone watches: its own sockets, or a replica's. A
 * replica asks (request/reply) when it opens a room for an order, and repeats the whole list every
 * WATCH_REFRESH_MS; the primary forgets an order no replica named for WATCH_TTL_MS.
 *
 * Ordering: each frame carries the primary's frame number `n` (one counter per primary process) and
 * the stream sequence `seq` its content reflects (the primary's last captured message when it was
 * built). The watch reply carries the number of the last frame published and the latest location
 * with the route so far: location frames numbered at or below it are in that catch-up. A socket's
 * snapshot is read from the replica's copy together with the sequence the copy holds (`applied`):
 * status frames at or below it are in the snapshot, later ones are sent after it, in order.
 */
import type { TrackViewFrame } from '../storage/tracking.ts'
import { trackLocationJson, type TrackCatchUpFrame, type TrackLocationFrame } from '../ws/location-frames.ts'
import { DeliveryTrails } from '../ws/track-trail.ts'
import { driverVisible, type DeliveryStatus } from '../domain/order-state.ts'
import { SHARD } from './nats.ts'

/** How often a replica repeats the list of orders it watches. */
export const WATCH_REFRESH_MS = 2000
/** How long the primary keeps publishing for an order no replica named again. */
export const WATCH_TTL_MS = 5 * WATCH_REFRESH_MS

export interface FrameSubjects {
  track(orderId: number): string
  /** A hub topic's subject (`orders/5` → `….orders.5`); null for a topic that does not travel. */
  topic(topic: string): string | null
  watch: string
  /** Which drivers' apps a replica serves (publish; repeated with the watches). */
  presence: string
  /** A socket's frame that writes (a kitchen screen's bump), sent by a replica to the primary: request/reply. */
  frameOp: string
}

/**
 * The hub topics whose frames travel to replicas: `{kind}/{id}`, and the kitchen screens' per store
 * and station (src/ws/kds.ts `kdsTopic`: `kds/{storeId}/*`, `kds/{storeId}/st/{station, URI-encoded}`).
 */
const REMOTE_TOPIC = /^(?:(orders|dispatch|fleet|driver)\/([1-9][0-9]{0,15})|kds\/([1-9][0-9]{0,15})\/(\*|st\/[A-Za-z0-9\-_.!~*'()%]{1,480}))$/

export const frameSubjects = (cluster: string, shard = SHARD): FrameSubjects => ({
  track: (orderId) => `${cluster}.frames.${shard}.track.${orderId}`,
  topic: (topic) => {
    const m = REMOTE_TOPIC.exec(topic)
    if (!m) return null
    if (m[1]) return `${cluster}.frames.${shard}.${m[1]}.${m[2]}`
    // A station's name may hold what a subject may not (`.`, `*`): its tokens are hex.
    return `${cluster}.frames.${shard}.kds.${m[3]}.${m[4] === '*' ? 'all' : `st.${Buffer.from(m[4]!.slice(3)).toString('hex')}`}`
  },
  watch: `${cluster}.frames.${shard}.watch`,
  presence: `${cluster}.frames.${shard}.presence`,
  frameOp: `${cluster}.ops.${shard}.frame`,
})

/** Whether a hub topic's frames can travel to replicas (a watch naming any other is ignored). */
export const remoteTopic = (topic: string): boolean => REMOTE_TOPIC.test(topic)

export type FrameKind = 'status' | 'location' | 'topic'

/**
 * A frame as it travels: its number, the stream sequence its content reflects, its kind and its JSON
 * text; a location frame also names its position (`at`), so a replica keeps the route without parsing the JSON.
 */
export interface WireFrame { n: number; seq: number; kind: FrameKind; json: string; at?: [number, number]; topic?: string }

/**
 * `n seq kind[ lat lng| topic]\n{json}`: the JSON text travels as built, so a replica's JSON sockets get it
 * without decoding or re-encoding it (MessagePack sockets, if any, get it parsed once).
 */
export function encodeFrame(f: WireFrame): string {
  const tail = f.at ? ` ${f.at[0]} ${f.at[1]}` : f.topic !== undefined ? ` ${f.topic}` : ''
  return `${f.n} ${f.seq} ${f.kind}${tail}\n${f.json}`
}

export function decodeFrame(text: string): WireFrame {
  const nl = text.indexOf('\n')
  const [n, seq, kind, lat, lng] = text.slice(0, nl).split(' ')
  const num = (x: string | undefined) => x !== undefined && x !== '' && Number.isFinite(Number(x))
  if (nl < 0 || (kind !== 'status' && kind !== 'location' && kind !== 'topic') || !Number.isSafeInteger(Number(n)) || !Number.isSafeInteger(Number(seq))) throw new Error('not a live frame')
  if (kind === 'location' && !(num(lat) && num(lng))) throw new Error('not a live frame: a location without its position')
  if (kind === 'topic') {
    if (lat === undefined || !remoteTopic(lat)) throw new Error('not a live frame: a topic frame without its topic')
    return { n: Number(n), seq: Number(seq), kind, json: text.slice(nl + 1), topic: lat }
  }
  return { n: Number(n), seq: Number(seq), kind, json: text.slice(nl + 1), ...(kind === 'location' ? { at: [Number(lat), Number(lng)] as [number, number] } : {}) }
}

/** What a replica asks, and repeats: the orders and the hub topics it watches. */
export interface WatchRequest { node: string; track: number[]; topics?: string[] }
/**
 * What the primary answers to a new watch: the last frame number, its sequence, each order's latest
 * location with the route so far, and (when a dispatch or fleet topic is named) the drivers whose
 * app is connected to it, which no database holds (a dispatch snapshot's `connected`).
 */
export interface WatchReply { node: string; n: number; seq: number; locations: Record<string, TrackCatchUpFrame | null>; connected?: number[] }

/** What the primary's hub asks before building a frame of a topic, and sends (src/ws/hub.ts `remote`). */
export interface RemoteTopics {
  /** Topics some replica watches now (0: the hub builds nothing for replicas). */
  readonly topics: number
  watchingTopic(topic: string): boolean
  /** Whether some replica watches a topic of this family (`kds/5`: every kitchen topic of store 5), before anything is read for one. */
  watchingFamily(family: string): boolean
  /** A frame of a watched topic, as its JSON text. */
  topicFrame(topic: string, json: string): void
}

/** A topic's family: its kind and id (`kds/5/st/grill` → `kds/5`). */
export const topicFamily = (topic: string): string => topic.split('/', 2).join('/')

/**
 * What the primary's real-time hub (src/ws/realtime.ts) tells the cluster, for orders a replica
 * watches: `watching` is asked first, so nothing is built for orders nobody elsewhere watches.
 */
export interface RemoteTrackFrames {
  watching(orderId: number): boolean
  status(orderId: number, frame: TrackViewFrame): void
  location(orderId: number, frame: TrackLocationFrame): void
  /** The latest location frame published for an order (its catch-up), or null. */
  lastLocation(orderId: number): TrackLocationFrame | null
  /** The driver is no longer visible on this order: its last location goes. */
  clearLocation(orderId: number): void
  /** A driver's app sockets replicas serve (DriverSocketsElsewhere). */
  driverSockets(driverId: number): number
  /** The drivers with an app connected to a replica. */
  connectedDrivers(): number[]
}

/**
 * What a replica tells the primary of the driver sockets it serves: `[driverId, sockets]` pairs,
 * on every open and close (0: none left) and again with every watch repeat.
 */
export interface PresenceMessage { node: string; drivers: Array<[number, number]> }

/**
 * The primary's side: the driver apps connected to replicas, per node, each pair forgotten when its
 * replica did not name it for WATCH_TTL_MS (the replica died, or NATS lost its last close). `take`
 * and `sweep` answer the drivers whose total changed (their actor is told, src/ws/driver.ts `tellConnection`).
 */
export class DriverSocketsElsewhere {
  private readonly byNode = new Map<string, Map<number, { sockets: number; until: number }>>()
  private readonly totals = new Map<number, number>()

  constructor(private readonly now: () => number = Date.now) {}

  private set(node: string, driverId: number, sockets: number, until: number, changed: Set<number>): void {
    let mine = this.byNode.get(node)
    const before = mine?.get(driverId)?.sockets ?? 0
    if (sockets > 0) {
      if (!mine) this.byNode.set(node, (mine = new Map()))
      mine.set(driverId, { sockets, until })
    } else if (mine) {
      mine.delete(driverId)
      if (mine.size === 0) this.byNode.delete(node)
    }
    if (sockets === before) return
    const total = (this.totals.get(driverId) ?? 0) - before + sockets
    if (total > 0) this.totals.set(driverId, total)
    else this.totals.delete(driverId)
    changed.add(driverId)
  }

  take(m: Partial<PresenceMessage>): number[] {
    const changed = new Set<number>()
    if (typeof m.node !== 'string' || !Array.isArray(m.drivers)) return []
    const until = this.now() + WATCH_TTL_MS
    for (const e of m.drivers) {
      if (!Array.isArray(e) || !Number.isSafeInteger(e[0]) || e[0] <= 0 || !Number.isSafeInteger(e[1]) || e[1] < 0) continue
      this.set(m.node, e[0], Math.min(e[1], 1_000_000), until, changed)
    }
    return [...changed]
  }

  sweep(): number[] {
    const changed = new Set<number>()
    const now = this.now()
    for (const [node, mine] of [...this.byNode]) {
      for (const [id, e] of [...mine]) if (e.until < now) this.set(node, id, 0, 0, changed)
    }
    return [...changed]
  }

  sockets(driverId: number): number {
    return this.totals.get(driverId) ?? 0
  }

  drivers(): number[] {
    return [...this.totals.keys()]
  }
}

/**
 * The primary's side, without NATS: who watches what (orders' tracking, hub topics), and numbering
 * what goes out, one counter for both (src/cluster/frame-link.ts sends it).
 */
export class TrackPublisher implements RemoteTrackFrames, RemoteTopics {
  private n = 0
  private readonly watched = new Map<number, { until: number; location: TrackLocationFrame | null }>()
  private readonly watchedTopics = new Map<string, number>()
  /** Watched topics per family (src/ws/kds.ts reads an order's lines only when a replica watches its store's screens). */
  private readonly families = new Map<string, number>()
  /** The driver apps replicas serve. */
  readonly presence: DriverSocketsElsewhere

  constructor(
    private readonly send: (orderId: number, wire: string) => void,
    private readonly seq: () => number,
    private readonly now: () => number = Date.now,
    private readonly sendTopic: (topic: string, wire: string) => void = () => {},
  ) {
    this.presence = new DriverSocketsElsewhere(now)
  }

  driverSockets(driverId: number): number {
    return this.presence.sockets(driverId)
  }

  connectedDrivers(): number[] {
    return this.presence.drivers()
  }

  get topics(): number { return this.watchedTopics.size }

  watchingTopic(topic: string): boolean {
    return this.watchedTopics.has(topic)
  }

  watchingFamily(family: string): boolean {
    return this.families.has(family)
  }

  topicFrame(topic: string, json: string): void {
    this.sendTopic(topic, encodeFrame({ n: ++this.n, seq: this.seq(), kind: 'topic', json, topic }))
  }

  watching(orderId: number): boolean {
    return this.watched.has(orderId)
  }

  status(orderId: number, frame: TrackViewFrame): void {
    this.send(orderId, encodeFrame({ n: ++this.n, seq: this.seq(), kind: 'status', json: JSON.stringify(frame) }))
  }

  location(orderId: number, frame: TrackLocationFrame): void {
    const w = this.watched.get(orderId)
    if (w) w.location = frame
    this.send(orderId, encodeFrame({ n: ++this.n, seq: this.seq(), kind: 'location', json: trackLocationJson(frame), at: [frame.driver.lat, frame.driver.lng] }))
  }

  lastLocation(orderId: number): TrackLocationFrame | null {
    return this.watched.get(orderId)?.location ?? null
  }

  clearLocation(orderId: number): void {
    const w = this.watched.get(orderId)
    if (w) w.location = null
  }

  /** A replica named these orders and topics: published for until WATCH_TTL_MS from now. */
  watch(orderIds: readonly number[], topics: readonly string[] = []): void {
    const until = this.now() + WATCH_TTL_MS
    for (const t of topics) {
      if (!remoteTopic(t)) continue
      if (!this.watchedTopics.has(t)) this.families.set(topicFamily(t), (this.families.get(topicFamily(t)) ?? 0) + 1)
      this.watchedTopics.set(t, until)
    }
    for (const id of orderIds) {
      const w = this.watched.get(id)
      if (w) w.until = until
      else this.watched.set(id, { until, location: null })
    }
  }

  /** The answer to a new watch (after `watch`): frames numbered up to `n` are in these catch-ups. */
  reply(node: string, orderIds: readonly number[], catchUp: (orderId: number) => TrackCatchUpFrame | null, connected?: () => number[]): WatchReply {
    const locations: Record<string, TrackCatchUpFrame | null> = {}
    for (const id of orderIds) locations[id] = catchUp(id)
    return { node, n: this.n, seq: this.seq(), locations, ...(connected ? { connected: connected() } : {}) }
  }

  /** Forget orders no replica named for WATCH_TTL_MS. */
  sweep(): void {
    const now = this.now()
    for (const [id, w] of this.watched) if (w.until < now) this.watched.delete(id)
    for (const [t, until] of this.watchedTopics) {
      if (until >= now) continue
      this.watchedTopics.delete(t)
      const f = topicFamily(t)
      const n = (this.families.get(f) ?? 1) - 1
      if (n <= 0) this.families.delete(f)
      else this.families.set(f, n)
    }
  }

  get size(): number { return this.watched.size }
}

/** Where a replica's room sends what it takes: to its caught-up sockets. */
export interface RoomOut {
  status(f: WireFrame, frame: TrackViewFrame): void
  /** A location frame: its JSON text as built (`f.json`), parsed only for whoever needs the object. */
  location(f: WireFrame): void
}

/**
 * One watched order on a replica, without NATS or sockets: frames arrive from the subscription
 * (possibly before the primary's answer to the watch), are put in order against the catch-up the
 * primary gave, and keep the latest location with the route so far for sockets that join.
 */
export class TrackRoomFrames {
  /** Frames received before the primary answered the watch. */
  private early: WireFrame[] | null = []
  /** The last frame number taken (or in the primary's catch-up). */
  private lastN = 0
  /** The primary's stream sequence when it answered: a snapshot must hold at least this much. */
  since = 0
  /**
   * The latest location frame (its text, parsed when a socket joins; or the primary's catch-up), and
   * the route so far (a ring, not copied per frame).
   */
  private latest: WireFrame | TrackCatchUpFrame | null = null
  private readonly trail = new DeliveryTrails(() => null)
  /** Status frames newer than what this node's copy held when they arrived, oldest first. */
  private statuses: Array<{ f: WireFrame; frame: TrackViewFrame }> = []

  get answered(): boolean { return this.early === null }

  /** The primary's answer to the watch: its catch-up, then the frames that came meanwhile and are newer. */
  answer(reply: { n: number; seq: number; location: TrackCatchUpFrame | null }, out: RoomOut): void {
    const early = this.early ?? []
    this.early = null
    this.lastN = reply.n
    this.since = reply.seq
    this.latest = reply.location
    for (const [lat, lng] of reply.location?.trail ?? []) this.trail.add(0, lat, lng, 0)
    for (const f of early) this.take(f, out)
  }

  /** The latest location frame with the route so far, for a socket that joins (null: none yet). */
  get location(): TrackCatchUpFrame | null {
    const l = this.latest
    if (!l) return null
    return { ...('json' in l ? JSON.parse(l.json) as TrackLocationFrame : l), trail: this.trail.points(0) }
  }

  take(f: WireFrame, out: RoomOut): void {
    if (this.early) { this.early.push(f); return }
    if (f.n <= this.lastN) return // in the catch-up the primary gave
    this.lastN = f.n
    if (f.kind === 'location') {
      this.latest = f
      if (f.at) this.trail.add(0, f.at[0], f.at[1], 0)
      out.location(f)
      return
    }
    const frame = JSON.parse(f.json) as TrackViewFrame
    // As on the primary: once the driver is no longer visible its last position goes too.
    if (!driverVisible(frame.delivery_status as DeliveryStatus | null)) { this.latest = null; this.trail.forget(0) }
    this.statuses.push({ f, frame })
    if (this.statuses.length > MAX_KEPT_STATUSES) this.statuses.shift()
    out.status(f, frame)
  }

  /**
   * The status frames a socket whose snapshot holds the copy up to `applied` still needs, oldest
   * first. Older ones are forgotten: the copy only grows, so later snapshots hold them too.
   */
  after(applied: number): Array<{ f: WireFrame; frame: TrackViewFrame }> {
    this.statuses = this.statuses.filter((s) => s.f.seq > applied)
    return this.statuses
  }
}

/** Status frames a room keeps for sockets whose snapshot is older (a copy lags by a few messages, not hundreds). */
const MAX_KEPT_STATUSES = 64

/** Frames of a hub topic a replica keeps for sockets whose snapshot is older (a copy lags by a few messages). */
const MAX_KEPT_TOPIC_FRAMES = 256

/**
 * One watched hub topic on a replica (an orders board, a dispatch feed, an owner's fleet), without
 * NATS or sockets: as TrackRoomFrames, frames that arrive before the primary's answer to the watch
 * wait for it, those in its catch-up (numbered at or below it) are dropped, and the later ones are
 * kept (the last MAX_KEPT_TOPIC_FRAMES) for sockets that join: a socket's snapshot read at stream
 * sequence `applied` is followed by the kept frames newer than it, then by every later frame newer than it.
 */
export class TopicRoomFrames {
  private early: WireFrame[] | null = []
  private lastN = 0
  /** The primary's stream sequence when it answered: a snapshot must hold at least this much. */
  since = 0
  private kept: WireFrame[] = []
  /** The newest sequence of a kept frame that was forgotten: a snapshot older than it would miss it. */
  forgotten = 0

  get answered(): boolean { return this.early === null }

  answer(reply: { n: number; seq: number }, out: (f: WireFrame) => void): void {
    const early = this.early ?? []
    this.early = null
    this.lastN = reply.n
    this.since = reply.seq
    for (const f of early) this.take(f, out)
  }

  take(f: WireFrame, out: (f: WireFrame) => void): void {
    if (this.early) { this.early.push(f); return }
    if (f.n <= this.lastN) return
    this.lastN = f.n
    this.kept.push(f)
    if (this.kept.length > MAX_KEPT_TOPIC_FRAMES) this.forgotten = Math.max(this.forgotten, this.kept.shift()!.seq)
    out(f)
  }

  /** The kept frames a socket whose snapshot holds the copy up to `applied` still needs, oldest first. */
  after(applied: number): WireFrame[] {
    return this.kept.filter((f) => newerThan(f, applied))
  }
}

/**
 * Whether a socket whose snapshot was read at `applied` needs a topic frame: one built from data
 * the snapshot holds (its `seq` at or below `applied`) is older than it. A driver's presence
 * (`driver` frames: connected, on shift) is the primary's live state, not the copy's: always newer.
 */
export const newerThan = (f: WireFrame, applied: number): boolean => f.seq > applied || f.json.startsWith('{"type":"driver"')

/**
 * Which drivers' apps are connected to the primary, as a replica learns it: the primary's answer to
 * a watch names them all as of its frame number, `driver` frames numbered later change one each.
 */
export class DriverPresence {
  private readonly drivers = new Map<number, { connected: boolean; n: number }>()

  answer(n: number, connected: readonly number[]): void {
    const now = new Set(connected)
    for (const id of now) {
      const d = this.drivers.get(id)
      if (!d || d.n < n) this.drivers.set(id, { connected: true, n })
    }
    for (const [id, d] of this.drivers) if (!now.has(id) && d.n < n) this.drivers.set(id, { connected: false, n })
  }

  /** A `driver` frame (src/ws/realtime.ts `driverPresence`). */
  take(f: WireFrame): void {
    if (!f.json.startsWith('{"type":"driver"')) return
    const p = JSON.parse(f.json) as { driver_id?: unknown; connected?: unknown }
    if (typeof p.driver_id !== 'number' || typeof p.connected !== 'boolean') return
    const d = this.drivers.get(p.driver_id)
    if (!d || d.n < f.n) this.drivers.set(p.driver_id, { connected: p.connected, n: f.n })
  }

  connected(driverId: number): boolean {
    return this.drivers.get(driverId)?.connected ?? false
  }
}
