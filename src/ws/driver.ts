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
import { SLOW_CONSUMER_BYTES } from './hub.ts'
import { topics, type LiveSocket, type Realtime } from './realtime.ts'
import { CLOSE, errorFrame, refusalFrame } from './frames.ts'
import { admitFrame, frame } from './frame.ts'
import { reportLocation } from '../ops/delivery/driver-app.ts'

interface DriverSocket extends LiveSocket {
  driverId: number
  /** The driver's principal, as the last credential check found it: the frames' operations run as it. */
  who: { principal: Principal }
}

/** `location` frames: the operation of PUT /driver/location, admitted per frame and sent per turn (LocationInbox). */
const LOCATION = frame(reportLocation, { type: 'location', input: (f) => ({ lat: f.lat, lng: f.lng }) })
/** The frames this socket binds (for tests and docs). */
export const driverFrames = { location: LOCATION }
type Ws = WebSocket<DriverSocket>

/** The latest position of one driver this turn, and whom to acknowledge (almost always one socket). */
interface Pending { lat: number; lng: number; at: number; ws: Ws; seq: number | null; others: Map<Ws, number | null> | null; sentAt: number }

/**
 * How long a position handed to an actor may wait for its reply before its sockets are told it
 * failed (the same bound as an ask's timeout); only an actor crash or a shutdown leaves one unanswered.
 */
const ACK_TIMEOUT_MS = 10_000

/** Latest position per driver, drained once per turn into driver-actor messages. */
class LocationInbox {
  private pending = new Map<number, Pending>()
  /** The other half of a double buffer: `flush` swaps the maps instead of allocating one per turn. */
  private draining = new Map<number, Pending>()
  private queued = false
  /** Positions sent to actors and not yet answered, by acknowledgement ticket (in sending order). */
  private readonly waiting = new Map<number, Pending>()
  private nextTicket = 1
  private lastSweep = 0
  /** Frames received and positions handed to actors (bench and docs read these). */
  readonly stats = { frames: 0, messages: 0 }

  constructor(private readonly svc: Services, private readonly rt: Realtime) {
    rt.onLocationStored((_driverId, ticket, r) => this.stored(ticket, r))
  }

  push(ws: Ws, driverId: number, lat: number, lng: number, seq: number | null): void {
    this.stats.frames++
    const p = this.pending.get(driverId)
    // Acks are cumulative: a coalesced frame without `seq` keeps the acknowledgement owed to an earlier one.
    if (!p) this.pending.set(driverId, { lat, lng, at: Date.now(), ws, seq, others: null, sentAt: 0 })
    else {
      p.lat = lat; p.lng = lng; p.at = Date.now()
      if (p.ws === ws) p.seq = seq ?? p.seq
      else (p.others ??= new Map()).set(ws, seq ?? p.others?.get(ws) ?? null)
    }
    if (!this.queued) {
      this.queued = true
      setImmediate(() => this.flush())
    }
  }

  /** Only frames that carry a `seq` asked for an acknowledgement; a failure is reported either way. */
  private ack(ws: Ws, seq: number | null, r: Result<LocationAck>): void {
    if (ws.getUserData().closed) return
    if (r.ok) { if (seq !== null) this.rt.hub.send(ws, { type: 'ack', seq, ...r.value }, true) }
    else this.rt.hub.send(ws, errorFrame('internal_error', r.error.message, undefined, seq))
  }

  private ackAll(p: Pending, r: Result<LocationAck>): void {
    this.ack(p.ws, p.seq, r)
    if (p.others) for (const [ws, seq] of p.others) this.ack(ws, seq, r)
  }

  /** The driver actor's reply to the `location` message sent with `ticket`. */
  private stored(ticket: number, r: Result<LocationAck>): void {
    const p = this.waiting.get(ticket)
    if (!p) return
    this.waiting.delete(ticket)
    this.ackAll(p, r)
  }

  private flush(): void {
    this.queued = false
    const batch = this.pending
    this.pending = this.draining
    this.draining = batch
    const now = Date.now()
    const drivers = this.svc.actors.drivers
    try {
      for (const [driverId, p] of batch) {
        this.stats.messages++
        // The message is data: the reply comes back by ticket through the real-time sink (ARCHITECTURE 4).
        const ticket = this.nextTicket++
        p.sentAt = now
        this.waiting.set(ticket, p)
        // Handled at once when the driver's actor is idle (Registry.tellNow: same order as a tell).
        drivers.tellNow(driverId, { type: 'location', lat: p.lat, lng: p.lng, at: p.at, ticket })
      }
    } finally {
      batch.clear()
    }
    if (now - this.lastSweep >= ACK_TIMEOUT_MS) this.sweep(now)
  }

  /** Answer positions whose reply never came (an actor crashed, the server is stopping). */
  private sweep(now: number): void {
    this.lastSweep = now
    for (const [ticket, p] of this.waiting) {
      // Tickets are in sending order: the first one young enough ends the sweep.
      if (now - p.sentAt < ACK_TIMEOUT_MS) break
      this.waiting.delete(ticket)
      this.ackAll(p, { ok: false, error: new ApiError('internal_error', 'The position could not be stored.') })
    }
  }
}

export function mountDriverSocket(app: TemplatedApp, svc: Services, rt: Realtime): { stats: LocationInbox['stats'] } {
  const hub = rt.hub
  const inbox = new LocationInbox(svc, rt)

  /** Everything the app needs to (re)build its screen: sent on connect and after falling behind. */
  const hello = (ws: Ws) => {
    const { driverId } = ws.getUserData()
    const view = driverHello(svc, driverId)
    if (!view) return void ws.end(4001, 'driver_deleted')
    hub.send(ws, { type: 'hello', ...view })
  }

  app.ws<DriverSocket>('/api/v1/ws/driver', guarded('driver', svc, rt.sessions.track({
    maxMessageBytes: 4 * 1024,
    maxBackpressure: SLOW_CONSUMER_BYTES,
    closeOnBackpressureLimit: 0,
    upgrade: authedUpgrade<DriverSocket>(0, (input) => {
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
    }),
    open: (ws) => {
      const { driverId } = ws.getUserData()
      hub.subscribe(ws, topics.driver(driverId))
      rt.addDriverSocket(driverId, ws as unknown as WebSocket<LiveSocket>)
      svc.actors.drivers.tell(driverId, { type: 'connection', count: rt.connections(driverId) })
      hello(ws)
    },
    message: (ws, message, isBinary) => {
      let frame: unknown
      try { frame = decode(message, isBinary) } catch {
        return void hub.send(ws, errorFrame('bad_frame', 'The frame is not valid JSON or MessagePack.'), true)
      }
      if (typeof frame !== 'object' || frame === null || Array.isArray(frame)) {
        return void hub.send(ws, errorFrame('bad_frame', 'A frame is an object with a `type`.'), true)
      }
      const f = frame as { type?: unknown; lat?: unknown; lng?: unknown; seq?: unknown }
      switch (f.type) {
        case 'location': {
          const seq = f.seq === undefined || f.seq === null ? null : f.seq
          if (seq !== null && !(typeof seq === 'number' && Number.isSafeInteger(seq) && seq >= 0)) {
            return void hub.send(ws, errorFrame('validation_failed', 'The given data was invalid.', { seq: ['seq must be a non-negative integer.'] }), true)
          }
          // A binding of PUT /driver/location's operation (src/ws/frame.ts): its policy and input (api-v1
          // §2.7 ranges) frame by frame, a bad position never stored; the inbox sends its message per turn.
          let at: { lat: number; lng: number }
          try {
            at = admitFrame<{ lat: number; lng: number }>(LOCATION, ws.getUserData().who.principal, f as Record<string, unknown>)
          } catch (err) {
            return void hub.send(ws, refusalFrame(err instanceof ApiError ? err : new ApiError('internal_error'), seq), true)
          }
          inbox.push(ws, ws.getUserData().driverId, at.lat, at.lng, seq)
          return
        }
        case 'ping':
          return void hub.send(ws, { type: 'pong' }, true)
        default:
          return void hub.send(ws, errorFrame('unknown_type', 'Driver sockets accept `location` and `ping` frames.'), true)
      }
    },
    drain: (ws) => {
      if (ws.getBufferedAmount() <= SLOW_CONSUMER_BYTES / 4) hello(ws)
    },
    close: (ws) => {
      const d = ws.getUserData()
      rt.removeDriverSocket(d.driverId, ws as unknown as WebSocket<LiveSocket>)
      svc.actors.drivers.tell(d.driverId, { type: 'connection', count: rt.connections(d.driverId) })
    },
  })))
  return { stats: inbox.stats }
}
