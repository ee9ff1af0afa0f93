/**
 * The real-time hub over uWS pub/sub. Every socket subscribes under its own frame format, so a
 * message is encoded once per format per publish, not once per subscriber. Actors never import
 * this: app.ts hands them (or the event router) a `publish` function.
 */
import type { TemplatedApp, WebSocket } from 'uWebSockets.js'
import { encode, type Format } from './codec.ts'
import type { RemoteTopics } from '../cluster/frames.ts'

export interface SocketData { format: Format }

/** Bytes a socket may have queued before non-essential frames (locations) are skipped for it. */
export const SLOW_CONSUMER_BYTES = 64 * 1024

/** The default `obj` of publishWith, one function for every call (a default written inline is a new closure per call). */
const itself = <A>(a: A): unknown => a

export class Hub {
  /**
   * Cluster mode, on the primary: the topics replicas watch (src/cluster/frames.ts). A frame
   * published to one of them also goes to its NATS subject, as JSON text, once; such a topic has
   * subscribers as far as the publishers are concerned, so its frames are built.
   */
  remote: RemoteTopics | null = null

  constructor(private readonly app: TemplatedApp) {}

  /** Publish `msg` to everyone on `topic`, in each subscriber's format. */
  publish(topic: string, msg: unknown): void {
    let json: string | null = null
    for (const f of ['json', 'msgpack'] as const) {
      const key = `${f}:${topic}`
      if (this.app.numSubscribers(key) > 0) {
        const out = encode(f, msg)
        if (f === 'json') json = out as string
        this.app.publish(key, out, f === 'msgpack')
      }
    }
    if (this.remoteWatches(topic)) this.remote!.topicFrame(topic, json ?? JSON.stringify(msg))
  }

  /** Send `msg` to the replicas watching `topic` only, not to this node's sockets (a control frame for the replica). */
  publishRemote(topic: string, msg: unknown): void {
    if (this.remoteWatches(topic)) this.remote!.topicFrame(topic, JSON.stringify(msg))
  }

  /** Whether a replica watches a topic of `family` (`kds/5`), for publishers that read before they know the topic. */
  remoteWatchingFamily(family: string): boolean {
    return this.remoteTopics && this.remote!.watchingFamily(family)
  }

  /** Whether replicas watch any topic (the publishers of hot frames check this before anything else). */
  get remoteTopics(): boolean {
    return this.remote !== null && this.remote.topics > 0
  }

  /** Whether a replica watches `topic`. */
  private remoteWatches(topic: string): boolean {
    return this.remoteTopics && this.remote!.watchingTopic(topic)
  }

  /**
   * Publish a hot frame (driver positions): `json` writes its JSON text directly, `obj` gives the
   * value for MessagePack subscribers; neither runs for a format nobody on `topic` uses, so a
   * topic without subscribers costs two lookups and no frame. Plain functions, not closures: no
   * allocation per call.
   */
  publishWith<A>(topic: string, arg: A, json: (a: A) => string, obj: (a: A) => unknown = itself): void {
    const jk = `json:${topic}`
    let text: string | null = null
    if (this.app.numSubscribers(jk) > 0) this.app.publish(jk, (text = json(arg)), false)
    const mk = `msgpack:${topic}`
    if (this.app.numSubscribers(mk) > 0) this.app.publish(mk, encode('msgpack', obj(arg)), true)
    if (this.remoteWatches(topic)) this.remote!.topicFrame(topic, text ?? json(arg))
  }

  /** Does anyone listen on `topic`, here or on a replica? Lets publishers skip building frames nobody would get. */
  hasSubscribers(topic: string): boolean {
    return this.app.numSubscribers(`json:${topic}`) + this.app.numSubscribers(`msgpack:${topic}`) > 0 ||
      this.remoteWatches(topic)
  }

  subscribe<T extends SocketData>(ws: WebSocket<T>, topic: string): void {
    ws.subscribe(`${ws.getUserData().format}:${topic}`)
  }

  unsubscribe<T extends SocketData>(ws: WebSocket<T>, topic: string): void {
    ws.unsubscribe(`${ws.getUserData().format}:${topic}`)
  }

  /**
   * Send to one socket. `droppable` frames (e.g. a location superseded by the next one) are skipped
   * while the socket is slow, so a slow consumer never builds an unbounded queue.
   */
  send<T extends SocketData>(ws: WebSocket<T>, msg: unknown, droppable = false): boolean {
    if (droppable && ws.getBufferedAmount() > SLOW_CONSUMER_BYTES) return false
    const f = ws.getUserData().format
    return ws.send(encode(f, msg), f === 'msgpack') !== 2
  }
}
