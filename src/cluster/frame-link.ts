/**
 * The NATS side of live frames (src/cluster/frames.ts, docs/cluster.md "Sockets on any node"): on
 * the primary, the tracking frames its hub builds for orders a replica watches go to the order's
 * subject, and the watch requests of replicas are answered; on a replica, one subscription per
 * watched order and the watch requests.
 */
import type { NatsConnection, Subscription } from '@nats-io/transport-node'
import type { TemplatedApp, WebSocketBehavior } from 'uWebSockets.js'
import type { Logger } from '../log.ts'
import type { TrackCatchUpFrame } from '../ws/location-frames.ts'
import { frameSubjects, TrackPublisher, WATCH_REFRESH_MS, type FrameSubjects, type PresenceMessage, type WatchReply, type WatchRequest } from './frames.ts'

/** What a node of the cluster needs to carry live frames: its NATS connection and names. */
export interface FrameLink { nc: NatsConnection; cluster: string; node: string }

/** The sockets a replica serves itself (src/ws/replica-sockets.ts), as its listener mounts them (src/http/replica.ts). */
export interface OwnSockets {
  /** Mount them on the replica's listener; `tunnel` is the fallback to the primary (src/http/forward.ts). */
  mount(app: TemplatedApp, tunnel: () => WebSocketBehavior<unknown> | null): void
  /** Close every own socket with 1012 and drop the subscriptions (the node stops, or becomes primary). */
  close(): void
  /** Own sockets open now. */
  readonly open: number
}

/** Several kinds of own sockets as one (the tracking sockets, the owner feeds). */
export function allOwn(...kinds: OwnSockets[]): OwnSockets {
  return {
    mount: (app, tunnel) => { for (const k of kinds) k.mount(app, tunnel) },
    close: () => { for (const k of kinds) k.close() },
    get open() { return kinds.reduce((n, k) => n + k.open, 0) },
  }
}

const json = (v: unknown) => new TextEncoder().encode(JSON.stringify(v))

/**
 * The primary: publishes for the orders replicas watch and answers their watch requests. `seq`: the
 * stream sequence the primary's data holds (its last captured message); `catchUp`: an order's
 * latest location frame with the route so far (src/ws/realtime.ts `lastTrackLocation`);
 * `presenceChanged`: the number of a driver's apps connected to replicas changed (a replica said so,
 * or stopped naming it).
 */
export function publishTrackFrames(link: FrameLink, seq: () => number, catchUp: (orderId: number) => TrackCatchUpFrame | null, log: Logger, connected: () => number[] = () => [], presenceChanged: (driverId: number) => void = () => {}): { publisher: TrackPublisher; stop(): void } {
  const subjects = frameSubjects(link.cluster)
  const publisher = new TrackPublisher((orderId, wire) => link.nc.publish(subjects.track(orderId), wire), seq, Date.now, (topic, wire) => {
    const subject = subjects.topic(topic)
    if (subject) link.nc.publish(subject, wire)
  })
  const sub = link.nc.subscribe(subjects.watch, {
    callback: (err, m) => {
      if (err) return log.warn({ err }, 'live frames: watch subscription failed')
      try {
        const req = m.json<WatchRequest>()
        const ids = Array.isArray(req.track) ? req.track.filter((id) => Number.isSafeInteger(id) && id > 0) : []
        const topics = Array.isArray(req.topics) ? req.topics.filter((t): t is string => typeof t === 'string' && subjects.topic(t) !== null) : []
        publisher.watch(ids, topics)
        // A new watch asks for the catch-up; the periodic repeat is a plain publish. A dispatch feed's
        // snapshot also needs which drivers are connected to this node.
        const presence = topics.some((t) => t.startsWith('dispatch/') || t.startsWith('fleet/')) ? connected : undefined
        if (m.reply) m.respond(json(publisher.reply(link.node, ids, catchUp, presence)))
      } catch (e) {
        log.warn({ err: e }, 'live frames: a watch request could not be read')
      }
    },
  })
  const changed = (ids: number[]) => { for (const id of ids) presenceChanged(id) }
  const present = link.nc.subscribe(subjects.presence, {
    callback: (err, m) => {
      if (err) return log.warn({ err }, 'live frames: presence subscription failed')
      try { changed(publisher.presence.take(m.json<Partial<PresenceMessage>>())) } catch (e) {
        log.warn({ err: e }, 'live frames: a presence message could not be read')
      }
    },
  })
  const sweep = setInterval(() => { publisher.sweep(); changed(publisher.presence.sweep()) }, WATCH_REFRESH_MS)
  sweep.unref()
  return { publisher, stop() { clearInterval(sweep); sub.unsubscribe(); present.unsubscribe() } }
}

/** A replica: tell the primary how many apps of these drivers this node serves now (`[driverId, sockets]`). */
export function tellPresence(link: FrameLink, drivers: Array<[number, number]>): void {
  const subject = frameSubjects(link.cluster).presence
  for (let i = 0; i < drivers.length; i += 5000) link.nc.publish(subject, json({ node: link.node, drivers: drivers.slice(i, i + 5000) } satisfies PresenceMessage))
}

/**
 * What a socket's frame that writes is, as a replica sends it to the primary: a kitchen screen's
 * credential (the primary resolves it again; never logged) and the frame as the client sent it; or
 * (`socket: "driver"`) the drivers' latest positions of one turn, each with its socket's credential
 * and when the replica received it, answered with one answer per position in the same order.
 */
export type FrameOpRequest =
  | { socket?: undefined; bearer: string; frame: unknown }
  | { socket: 'driver'; positions: Array<{ bearer: string; lat: number; lng: number; at: number }> }

/**
 * The primary: answers the frames replicas' sockets send that write (src/ws/kds.ts `kdsRemoteStep`,
 * src/ws/driver.ts `driverRemoteLocation`),
 * each once the primary's own binding of the frame answered (after its commit).
 */
export function answerFrameOps(link: FrameLink, run: (req: Record<string, unknown>) => Promise<unknown>, log: Logger): { stop(): void } {
  const sub = link.nc.subscribe(frameSubjects(link.cluster).frameOp, {
    callback: (err, m) => {
      if (err) return log.warn({ err }, 'live frames: frame requests subscription failed')
      let req: Record<string, unknown>
      try { req = m.json<Record<string, unknown>>() ?? {} } catch { return void m.respond(json({ type: 'error', code: 'bad_frame', reason: 'bad_frame', message: 'The frame is not valid JSON.' })) }
      run(req).then((answer) => m.respond(json(answer)), (e: unknown) => {
        log.error({ err: e }, 'live frames: a replica\'s frame failed')
        m.respond(json({ type: 'error', code: 'internal_error', reason: 'internal_error', message: 'The server failed handling this frame.' }))
      })
    },
  })
  return { stop: () => sub.unsubscribe() }
}

/** A replica: send a socket's frame that writes to the primary; resolves with its answer, rejects when none came within `timeoutMs`. */
export async function requestFrameOp(link: FrameLink, req: FrameOpRequest, timeoutMs: number): Promise<unknown> {
  const m = await link.nc.request(frameSubjects(link.cluster).frameOp, json(req), { timeout: timeoutMs })
  return m.json<unknown>()
}

/** A replica's subscriptions and watch requests. */
export class FrameWatcher {
  readonly subjects: FrameSubjects
  private readonly subs = new Map<string, Subscription>()

  /** `lost`: NATS went away for this node; frames published meanwhile are lost to it, so its sockets must reconnect. */
  constructor(private readonly link: FrameLink, lost: (why: string) => void = () => {}) {
    this.subjects = frameSubjects(link.cluster)
    void (async () => {
      for await (const s of link.nc.status()) if (s.type === 'disconnect') lost('this node lost NATS')
    })().catch(() => {})
  }

  /** Subscribe to a subject's frames (an order's, a hub topic's: `take` gets each one's text). */
  subscribe(subject: string, take: (text: string) => void, failed: (err: Error) => void): void {
    this.subs.set(subject, this.link.nc.subscribe(subject, {
      callback: (err, m) => { if (err) failed(err); else take(m.string()) },
    }))
  }

  unsubscribe(subject: string): void {
    this.subs.get(subject)?.unsubscribe()
    this.subs.delete(subject)
  }

  /**
   * Ask the primary to publish for these orders (or hub topics) and for its catch-up. The
   * subscriptions are flushed first, so every frame published after the primary's answer reaches this node.
   */
  async watch(orderIds: number[], timeoutMs: number, topics: string[] = []): Promise<WatchReply> {
    await this.link.nc.flush()
    const m = await this.link.nc.request(this.subjects.watch, json({ node: this.link.node, track: orderIds, topics } satisfies WatchRequest), { timeout: timeoutMs })
    return m.json<WatchReply>()
  }

  /** Name every watched order and topic again (the primary forgets one not named for WATCH_TTL_MS). */
  repeat(orderIds: number[], topics: string[] = []): void {
    for (let i = 0; i < orderIds.length; i += 5000) this.link.nc.publish(this.subjects.watch, json({ node: this.link.node, track: orderIds.slice(i, i + 5000) } satisfies WatchRequest))
    for (let i = 0; i < topics.length; i += 5000) this.link.nc.publish(this.subjects.watch, json({ node: this.link.node, track: [], topics: topics.slice(i, i + 5000) } satisfies WatchRequest))
  }

  close(): void {
    for (const s of this.subs.values()) s.unsubscribe()
    this.subs.clear()
  }
}
