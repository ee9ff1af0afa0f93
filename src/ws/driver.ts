/**
 * The driver app socket `{base_url}/ws/driver` (docs/realtime.md), authenticated by the driver
 * token (`Authorization: Bearer …`, or `?token=` for clients that cannot set headers).
 *
 * In:  `{"type":"location","lat":…,"lng":…,"seq"?:n}`, `{"type":"ping"}`.
 * Out: `hello` (profile, active deliveries, open offers), `ack` (a location that carried a `seq`
 *      is durable; frames without `seq` are fire-and-forget),
 *      `assignment`, `delivery`, `unassigned`, `offer`, `offer_withdrawn`, `error`.
 *
 * Location frames are coalesced per driver per event-loop turn before they become driver-actor
 * messages (ARCHITECTURE "Numbers"): a flood costs one actor message and one row write per driver
 * per turn, and every superseded frame is acknowledged together with the position that replaced it.
 * The message is the same `location` message as `PUT /driver/location`, with an acknowledgement
 * `ticket` instead of an ask's `replyTo`: the actor's reply, sent once the position is durable,
 * comes back by ticket through the real-time sink (`locationStored`), and the acknowledgements leave
 * from here — messages carry data, never a callback (ARCHITECTURE 4), and no temporary reply actor
 * is made per position.
 *
 * A cluster replica serves this socket too (src/ws/replica-driver.ts) from the same pieces: the
 * upgrade (`driverSocketUpgrade`), `hello` (`driverHelloFrame`), the frames (`driverMessages`) and
 * the inbox, whose per-turn positions it sends to the primary instead (`driverRemoteLocation` runs them there).
 */
import type { TemplatedApp, WebSocket } from 'uWebSockets.js'
import type { Services } from '../services.ts'
import type { Principal } from '../auth/principals.ts'
import type { LocationAck } from '../actors/driver.ts'
import type { Result } from '../actors/system.ts'
import { ApiError } from '../errors.ts'
import { driverHello } from '../ops/delivery/delivery-views.ts'
import { authedUpgrade } from './upgrade.ts'
import { guarded } from './guard.ts'
import { session, subject } from './sessions.ts'
import { decode } from './codec.ts'
import { SLOW_CONSUMER_BYTES, type Hub, type SocketData } from './hub.ts'
import { topics, type LiveSocket, type Realtime } from './realtime.ts'
import { CLOSE, errorFrame, refusalFrame } from './frames.ts'
import { admitFrame, frame } from './frame.ts'
import { reportLocation } from '../ops/delivery/driver-app.ts'

export interface DriverSocket extends LiveSocket {
  driverId: number
  /** The driver's principal, as the last credential check found it: the frames' operations run as it. */
  who: { principal: Principal }
}

/** `location` frames: the operation of PUT /driver/location, admitted per frame and sent per turn (LocationInbox). */
const LOCATION = frame(reportLocation, { type: 'location', input: (f) => ({ lat: f.lat, lng: f.lng }) })
/** The frames this socket binds (for tests and docs). */
export const driverFrames = { location: LOCATION }
type Ws = WebSocket<DriverSocket>

/** The driver socket's limits, on every node. */
export const DRIVER_SOCKET_LIMITS = { maxMessageBytes: 4 * 1024, maxBackpressure: SLOW_CONSUMER_BYTES, closeOnBackpressureLimit: 0 } as const

/** Why a driver socket closes when the driver is gone (its `hello` finds no driver). */
export const DRIVER_GONE = { code: 4001, reason: 'driver_deleted' } as const

/**
 * What a stored position answers, before the socket adds each frame's `seq`: the acknowledgement's
 * fields, or the error (the same on every node: a replica gets it from the primary).
 */
export type LocationAnswer = ({ type: 'ack' } & LocationAck) | ({ type: 'error' } & Record<string, unknown>)

/** The driver actor's reply, as the socket answers it. */
export const locationAnswer = (r: Result<LocationAck>): LocationAnswer =>
  r.ok ? { type: 'ack', ...r.value } : errorFrame('internal_error', r.error.message)

/** The frame a socket gets for a position it sent with `seq` (null: fire-and-forget, only a failure is told). */
export function answerFrame(a: LocationAnswer, seq: number | null): unknown {
  if (a.type === 'ack') {
    if (seq === null) return null
    const { type, ...ack } = a
    return { type, seq, ...ack }
  }
  const { seq: _, ...error } = a
  return seq === null ? error : { ...error, seq }
}

/** The latest position of one driver this turn, and whom to acknowledge (almost always one socket). */
interface Pending<W> { lat: number; lng: number; at: number; ws: W; seq: number | null; others: Map<W, number | null> | null; sentAt: number }

/**
 * How long a position handed to an actor may wait for its reply before its sockets are told it
 * failed (the same bound as an ask's timeout); only an actor crash or a shutdown leaves one unanswered.
 */
const ACK_TIMEOUT_MS = 10_000

/** Where an inbox sends a driver's latest position of a turn: its actor (the primary), or the primary (a replica). */
export type LocationSend<W> = (driverId: number, p: { lat: number; lng: number; at: number; ws: W }, ticket: number) => void

/** A socket's answer to a position: its frame (with the `seq` it named), unless the socket closed meanwhile. */
export const answerSocket = <W extends WebSocket<SocketData & { closed: boolean }>>(hub: Pick<Hub, 'send'>) => (ws: W, seq: number | null, a: LocationAnswer): void => {
  if (ws.getUserData().closed) return
  const out = answerFrame(a, seq)
  if (out !== null) hub.send(ws, out, a.type === 'ack')
}

/** A replica's position waiting on the primary (it always wants the answer: it numbers every position). */
class RemoteWaiter {
  constructor(readonly answer: (a: LocationAnswer) => void) {}
}

/**
 * Latest position per driver, drained once per turn by `send`; `stored` answers a ticket through
 * `answer` (whom, the `seq` they named, what). `timeout`: a position unanswered this long is answered
 * for (an actor crash, a shutdown, a primary gone).
 */
export class LocationInbox<W> {
  private pending = new Map<number, Pending<W>>()
  /** The other half of a double buffer: `flush` swaps the maps instead of allocating one per turn. */
  private draining = new Map<number, Pending<W>>()
  private queued = false
  /** Positions sent and not yet answered, by acknowledgement ticket (in sending order). */
  private readonly waiting = new Map<number, Pending<W>>()
  private nextTicket = 1
  private lastSweep = 0
  /** Frames received and positions sent on (bench and docs read these). */
  readonly stats = { frames: 0, messages: 0 }

  constructor(
    private readonly answer: (w: W, seq: number | null, a: LocationAnswer) => void,
    private readonly send: LocationSend<W>,
    private readonly timeout: { ms: number; answer: LocationAnswer } = { ms: ACK_TIMEOUT_MS, answer: locationAnswer({ ok: false, error: new ApiError('internal_error', 'The position could not be stored.') }) },
  ) {}

  /** `at`: when the position was received (by this node, or by the replica that sent it on). */
  push(ws: W, driverId: number, lat: number, lng: number, seq: number | null, at = Date.now()): void {
    this.stats.frames++
    const p = this.pending.get(driverId)
    // Acks are cumulative: a coalesced frame without `seq` keeps the acknowledgement owed to an earlier one.
    if (!p) this.pending.set(driverId, { lat, lng, at, ws, seq, others: null, sentAt: 0 })
    else {
      p.lat = lat; p.lng = lng; p.at = at
      if (p.ws === ws) p.seq = seq ?? p.seq
      else (p.others ??= new Map()).set(ws, seq ?? p.others?.get(ws) ?? null)
    }
    if (!this.queued) {
      this.queued = true
      setImmediate(() => this.flush())
    }
  }

  private ackAll(p: Pending<W>, a: LocationAnswer): void {
    this.answer(p.ws, p.seq, a)
    if (p.others) for (const [ws, seq] of p.others) this.answer(ws, seq, a)
  }

  /** The answer to the position sent with `ticket`. */
  stored(ticket: number, a: LocationAnswer): void {
    const p = this.waiting.get(ticket)
    if (!p) return
    this.waiting.delete(ticket)
    this.ackAll(p, a)
  }

  private flush(): void {
    this.queued = false
    const batch = this.pending
    this.pending = this.draining
    this.draining = batch
    const now = Date.now()
    try {
      for (const [driverId, p] of batch) {
        this.stats.messages++
        const ticket = this.nextTicket++
        p.sentAt = now
        this.waiting.set(ticket, p)
        this.send(driverId, p, ticket)
      }
    } finally {
      batch.clear()
    }
    if (now - this.lastSweep >= this.timeout.ms) this.sweep(now)
  }

  /** Answer positions whose reply never came. */
  private sweep(now: number): void {
    this.lastSweep = now
    for (const [ticket, p] of this.waiting) {
      // Tickets are in sending order: the first one young enough ends the sweep.
      if (now - p.sentAt < this.timeout.ms) break
      this.waiting.delete(ticket)
      this.ackAll(p, this.timeout.answer)
    }
  }
}

/**
 * The driver socket's upgrade, decided on `svc` (the primary's services, or a replica's read-only
 * view of them): the driver token; re-checked whenever credentials change.
 */
export function driverSocketUpgrade(svc: Services) {
  return authedUpgrade<DriverSocket>(0, (input) => {
    const p = svc.auth.driver(input)
    if (!p) throw new ApiError('unauthenticated')
    const driverId = p.driverId
    // Rotation and deletion close these sockets from the driver actor (4001 with the cause);
    // the re-check also catches a device token revoked by another process.
    const who: { principal: Principal } = { principal: p }
    const check = (q: Principal) => {
      if (q.kind !== 'driver' || q.driverId !== driverId) return CLOSE.revoked
      who.principal = q
      return null
    }
    return { driverId, who, session: session('driver', input.bearer!, [subject.driver(driverId), subject.owner(p.ownerId)], check) }
  })
}

/** Everything the app needs to (re)build its screen (sent on connect and after falling behind); null: the driver is gone. */
export function driverHelloFrame(svc: Services, driverId: number) {
  const view = driverHello(svc, driverId)
  return view ? { type: 'hello' as const, ...view } : null
}

/**
 * What a driver socket does with the frames its app sends, on every node: `ping`, and `location`
 * admitted frame by frame (its operation's policy and input, api-v1 §2.7 ranges: a bad position is
 * refused here and never sent on), then handed to `push` (the inbox).
 */
export function driverMessages<W extends WebSocket<DriverSocket>>(send: (ws: W, msg: unknown) => void, push: (ws: W, lat: number, lng: number, seq: number | null) => void) {
  return (ws: W, message: ArrayBuffer, isBinary: boolean): void => {
    let frame: unknown
    try { frame = decode(message, isBinary) } catch {
      return void send(ws, errorFrame('bad_frame', 'The frame is not valid JSON or MessagePack.'))
    }
    if (typeof frame !== 'object' || frame === null || Array.isArray(frame)) {
      return void send(ws, errorFrame('bad_frame', 'A frame is an object with a `type`.'))
    }
    const f = frame as { type?: unknown; lat?: unknown; lng?: unknown; seq?: unknown }
    switch (f.type) {
      case 'location': {
        const seq = f.seq === undefined || f.seq === null ? null : f.seq
        if (seq !== null && !(typeof seq === 'number' && Number.isSafeInteger(seq) && seq >= 0)) {
          return void send(ws, errorFrame('validation_failed', 'The given data was invalid.', { seq: ['seq must be a non-negative integer.'] }))
        }
        // A binding of PUT /driver/location's operation (src/ws/frame.ts): its policy and input (api-v1
        // §2.7 ranges) frame by frame, a bad position never stored; the inbox sends its message per turn.
        let at: { lat: number; lng: number }
        try {
          at = admitFrame<{ lat: number; lng: number }>(LOCATION, ws.getUserData().who.principal, f as Record<string, unknown>)
        } catch (err) {
          return void send(ws, refusalFrame(err instanceof ApiError ? err : new ApiError('internal_error'), seq))
        }
        return push(ws, at.lat, at.lng, seq)
      }
      case 'ping':
        return void send(ws, { type: 'pong' })
      default:
        return void send(ws, errorFrame('unknown_type', 'Driver sockets accept `location` and `ping` frames.'))
    }
  }
}

/** What a replica sends the primary for a driver's position (src/cluster/frame-link.ts `FrameOpRequest`). */
export interface RemoteLocation { bearer?: unknown; frame?: unknown; at?: unknown }

/** How far back a replica's receipt time is taken as the position's time (else: now, on the primary). */
const REMOTE_AT_WINDOW_MS = 60_000

/**
 * A position a replica's driver socket sent (docs/cluster.md "Sockets on any node"), on the primary:
 * the driver's credential is resolved again here (the replica's word for the driver is not taken; a
 * token rotated meanwhile is refused, nothing stored), the frame admitted as the primary's own socket
 * admits it, then `store` (this node's driver socket inbox: the driver actor's `location` message
 * with a ticket, as for its own sockets), answered once the position is durable: the
 * acknowledgement's fields, or the error.
 */
export async function driverRemoteLocation(svc: Services, store: RemoteLocationStore, req: RemoteLocation): Promise<LocationAnswer> {
  const f = (req.frame && typeof req.frame === 'object' ? req.frame : {}) as Readonly<Record<string, unknown>>
  let driverId: number
  let pos: { lat: number; lng: number }
  try {
    const p = typeof req.bearer === 'string' ? svc.auth.driver({ headers: {}, query: {}, bearer: req.bearer }) : null
    if (!p || p.kind !== 'driver') throw new ApiError('unauthenticated')
    if (f.type !== 'location') return errorFrame('unknown_type', 'Driver sockets accept `location` and `ping` frames.')
    pos = admitFrame<{ lat: number; lng: number }>(LOCATION, p, f)
    driverId = p.driverId
  } catch (err) {
    const { seq: _, ...refusal } = refusalFrame(err instanceof ApiError ? err : new ApiError('internal_error'), null)
    return refusal
  }
  const now = Date.now()
  const at = typeof req.at === 'number' && req.at <= now && req.at > now - REMOTE_AT_WINDOW_MS ? req.at : now
  return store(driverId, pos.lat, pos.lng, at)
}

/** Stores a position through this node's driver socket inbox (with its own sockets' positions, the same road). */
export type RemoteLocationStore = (driverId: number, lat: number, lng: number, at: number) => Promise<LocationAnswer>

/** A replica's positions of one turn (one request), each answered in order. */
export interface RemoteLocations { positions?: unknown }

/** The most positions a replica sends in one request (a NATS message stays far below its 1 MB limit). */
export const REMOTE_POSITIONS_PER_REQUEST = 2000

/** `driverRemoteLocation` for each position of a replica's request; answers them in its order. */
export function driverRemoteLocations(svc: Services, store: RemoteLocationStore, req: RemoteLocations): Promise<LocationAnswer[]> {
  const list = Array.isArray(req.positions) ? req.positions.slice(0, REMOTE_POSITIONS_PER_REQUEST) : []
  return Promise.all(list.map((p) => {
    const q = (p && typeof p === 'object' ? p : {}) as { bearer?: unknown; lat?: unknown; lng?: unknown; at?: unknown }
    return driverRemoteLocation(svc, store, { bearer: q.bearer, at: q.at, frame: { type: 'location', lat: q.lat, lng: q.lng } })
  }))
}

/** Tell a driver's actor how many of its apps are connected now (to this node and, on a primary, to replicas). */
export const tellConnection = (svc: Services, rt: Realtime, driverId: number): void =>
  svc.actors.drivers.tell(driverId, { type: 'connection', count: rt.connections(driverId) })

export function mountDriverSocket(app: TemplatedApp, svc: Services, rt: Realtime): { stats: LocationInbox<unknown>['stats'] } {
  const hub = rt.hub
  const drivers = svc.actors.drivers
  // The message is data: the reply comes back by ticket through the real-time sink (ARCHITECTURE 4).
  // Handled at once when the driver's actor is idle (Registry.tellNow: same order as a tell).
  // Positions of this node's sockets and those replicas send on (RemoteWaiter): the same road.
  const toSocket = answerSocket<Ws>(hub)
  const inbox = new LocationInbox<Ws | RemoteWaiter>((w, seq, a) => w instanceof RemoteWaiter ? w.answer(a) : toSocket(w, seq, a),
    (driverId, p, ticket) => drivers.tellNow(driverId, { type: 'location', lat: p.lat, lng: p.lng, at: p.at, ticket }))
  rt.onLocationStored((_driverId, ticket, r) => inbox.stored(ticket, locationAnswer(r)))
  rt.remoteLocations = (driverId, lat, lng, at) => new Promise((resolve) => inbox.push(new RemoteWaiter(resolve), driverId, lat, lng, 0, at))

  /** Everything the app needs to (re)build its screen: sent on connect and after falling behind. */
  const hello = (ws: Ws) => {
    const frame = driverHelloFrame(svc, ws.getUserData().driverId)
    if (!frame) return void ws.end(DRIVER_GONE.code, DRIVER_GONE.reason)
    hub.send(ws, frame)
  }

  app.ws<DriverSocket>('/api/v1/ws/driver', guarded('driver', svc, rt.sessions.track({
    ...DRIVER_SOCKET_LIMITS,
    upgrade: driverSocketUpgrade(svc),
    open: (ws) => {
      const { driverId } = ws.getUserData()
      hub.subscribe(ws, topics.driver(driverId))
      rt.addDriverSocket(driverId, ws as unknown as WebSocket<LiveSocket>)
      tellConnection(svc, rt, driverId)
      hello(ws)
    },
    message: driverMessages<Ws>((ws, msg) => hub.send(ws, msg, true), (ws, lat, lng, seq) => inbox.push(ws, ws.getUserData().driverId, lat, lng, seq)),
    drain: (ws) => {
      if (ws.getBufferedAmount() <= SLOW_CONSUMER_BYTES / 4) hello(ws)
    },
    close: (ws) => {
      const d = ws.getUserData()
      rt.removeDriverSocket(d.driverId, ws as unknown as WebSocket<LiveSocket>)
      tellConnection(svc, rt, d.driverId)
    },
  })))
  return { stats: inbox.stats }
}
