/**
 * What the listen-only feed sockets share (tracking, dispatch, orders board): the frames they accept,
 * and, for the owner's feeds of one store, how they are authorized.
 */
import type { TemplatedApp, WebSocket } from 'uWebSockets.js'
import type { Services } from '../services.ts'
import type { Principal } from '../auth/principals.ts'
import type { Scope, ScopeIds } from '../ops/op.ts'
import { ApiError } from '../errors.ts'
import { SLOW_CONSUMER_BYTES, type Hub, type SocketData } from './hub.ts'
import { guarded } from './guard.ts'
import type { Realtime } from './realtime.ts'
import { decode } from './codec.ts'
import { errorFrame, policyVerdict } from './frames.ts'
import { session, subject } from './sessions.ts'
import { authedUpgrade } from './upgrade.ts'
import type { LiveSocket } from './socket.ts'

/** `ping` answers `pong`, `refresh` sends a fresh snapshot, anything else an error frame; the socket stays open. */
export function feedMessages<T extends SocketData>(hub: Hub, kind: string, refresh: (ws: WebSocket<T>) => void) {
  return (ws: WebSocket<T>, message: ArrayBuffer, isBinary: boolean): void => {
    let frame: unknown
    try { frame = decode(message, isBinary) } catch { return void hub.send(ws, errorFrame('bad_frame', 'The frame is not valid JSON or MessagePack.'), true) }
    const type = (frame as { type?: unknown } | null)?.type
    if (type === 'ping') return void hub.send(ws, { type: 'pong' }, true)
    if (type === 'refresh') return refresh(ws)
    hub.send(ws, errorFrame('unknown_type', `${kind} sockets accept only \`ping\` and \`refresh\` frames.`), true)
  }
}

/** An owner's feed of one of their stores (dispatch, orders board). */
export interface OwnerStoreSocket extends LiveSocket { storeId: number; ownerId: number }

/** Who may watch a feed: admits the principal to the store `ids` name (401/403/404 as over HTTP) and returns its scope. */
export type FeedAdmission = (principal: Principal, ids: ScopeIds) => Scope

/**
 * The upgrade of an owner's feed of the store its path names (`…/:restaurantId`): the owner token, then
 * `admission` decides as for the HTTP operation that reads the same (src/auth/policy.ts): 401, 403
 * without the capability, 404 for a store that is not the owner's. Re-checked whenever credentials
 * change (src/ws/sessions.ts): the same refusals, as close codes; a revoked or expired token closes it.
 */
export function ownerStoreUpgrade(svc: Services, admission: FeedAdmission) {
  return authedUpgrade<OwnerStoreSocket>(1, (input) => {
    const p = svc.auth.owner(input)
    if (!p) throw new ApiError('unauthenticated')
    const { store } = admission(p, { store: input.params[0] ?? undefined })
    const storeId = store!.id
    const check = (q: Principal) => policyVerdict(() => { admission(q, { store: storeId }) })
    return {
      storeId, ownerId: store!.owner_id,
      session: session('owner', input.bearer!, [subject.owner(p.ownerId), subject.store(storeId)], check, p.expiresAt ?? null),
    }
  })
}

/** What tells one owner's store feed from another: the primary mounts it (below), a replica serves it alike (src/ws/replica-feeds.ts). */
export interface OwnerStoreFeed {
  /** The socket kind, also its address: `{base_url}/ws/{kind}/{restaurantId}`. */
  kind: 'dispatch' | 'orders'
  /** Its name in the error frame of a frame it does not accept. */
  label: string
  /** Who may watch it, decided on the services of the node that serves it. */
  admission: (svc: Services) => FeedAdmission
  /** The counter of open sockets of this kind (the realtime layer skips work nobody could see). */
  counter: 'dispatchSockets' | 'orderSockets'
  /** The hub topics whose frames it hears. */
  topics: (d: Pick<OwnerStoreSocket, 'storeId' | 'ownerId'>) => string[]
  /**
   * The whole picture: on connect, on `refresh`, and after falling behind. `connected`: whether a
   * driver's app is connected (the primary's driver sockets; a replica learns them from the primary).
   */
  snapshot: (svc: Services, d: Pick<OwnerStoreSocket, 'storeId' | 'ownerId'>, connected: (driverId: number) => boolean) => unknown
}

/**
 * Mount an owner's feed of one store: a snapshot, then the frames of its topics. It watches a whole
 * store: a deeper queue than one order's tracking before frames are skipped; once drained, a fresh
 * snapshot puts the screen right again.
 */
export function mountOwnerStoreFeed(app: TemplatedApp, svc: Services, rt: Realtime, feed: OwnerStoreFeed): void {
  const hub = rt.hub
  const connected = (driverId: number) => rt.connections(driverId) > 0
  const snapshot = (ws: WebSocket<OwnerStoreSocket>) => { hub.send(ws, feed.snapshot(svc, ws.getUserData(), connected)) }
  app.ws<OwnerStoreSocket>(`/api/v1/ws/${feed.kind}/:restaurantId`, guarded(feed.kind, svc, rt.sessions.track({
    ...OWNER_FEED_LIMITS,
    upgrade: ownerStoreUpgrade(svc, feed.admission(svc)),
    open: (ws) => {
      rt[feed.counter]++ // first: `close` always runs, even when the rest of `open` fails
      for (const topic of feed.topics(ws.getUserData())) hub.subscribe(ws, topic)
      snapshot(ws)
    },
    message: feedMessages(hub, feed.label, snapshot),
    drain: (ws) => {
      if (ws.getBufferedAmount() <= SLOW_CONSUMER_BYTES) snapshot(ws)
    },
    close: () => {
      rt[feed.counter]--
    },
  })))
}

/** An owner feed's socket limits, on every node. */
export const OWNER_FEED_LIMITS = {
  maxMessageBytes: 1024,
  maxBackpressure: 4 * SLOW_CONSUMER_BYTES,
  closeOnBackpressureLimit: 0,
} as const
