/**
 * What the listen-only feed sockets share (tracking, dispatch, orders board): the frames they accept,
 * and, for the owner's feeds of one store, how they are authorized.
 */
import type { WebSocket } from 'uWebSockets.js'
import type { Services } from '../services.ts'
import type { Principal } from '../auth/principals.ts'
import type { Access } from '../ops/op.ts'
import { ApiError } from '../errors.ts'
import { authorize, resolveScope } from '../auth/policy.ts'
import type { Hub, SocketData } from './hub.ts'
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

/**
 * The upgrade of an owner's feed of the store its path names (`…/:restaurantId`). The policy decides,
 * as for the HTTP operation with the same `access`: 401, 403 without the capability, 404 for a store
 * that is not the owner's (src/auth/policy.ts). Re-checked whenever credentials change
 * (src/ws/sessions.ts): the same refusals, as close codes; a revoked or expired token closes it.
 */
export function ownerStoreUpgrade(svc: Services, access: Access) {
  return authedUpgrade<OwnerStoreSocket>(1, (input) => {
    const p = svc.auth.owner(input)
    if (!p) throw new ApiError('unauthenticated')
    authorize(p, access)
    const { store } = resolveScope(svc, p, ['store'], { store: input.params[0] ?? undefined })
    const storeId = store!.id
    const check = (q: Principal) => policyVerdict(() => { authorize(q, access); resolveScope(svc, q, ['store'], { store: storeId }) })
    return {
      storeId, ownerId: store!.owner_id,
      session: session('owner', input.bearer!, [subject.owner(p.ownerId), subject.store(storeId)], check, p.expiresAt ?? null),
    }
  })
}
