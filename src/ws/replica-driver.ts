/**
 * The driver app's socket (`/ws/driver`, src/ws/driver.ts) served by a cluster replica itself
 * (docs/cluster.md "Sockets on any node"), as a socket kind of src/ws/replica-feeds.ts:
 *
 * - the upgrade is the primary's (`driverSocketUpgrade`) on the replica's read-only view: the same
 *   401 and re-checks; `hello` is the primary's `driverHelloFrame` read from the replica's copy;
 * - `ping` and bad or out-of-range positions are answered here, by the primary's own frame handling
 *   (`driverMessages`: the same LOCATION binding), without a round trip;
 * - positions are coalesced per driver per turn as on the primary (`LocationInbox`), then each
 *   driver's latest goes to the primary as a NATS request on `{CLUSTER_NAME}.ops.0.frame` with the
 *   socket's credential (resolved again there, never logged), where the driver actor stores it
 *   (`driverRemoteLocation`); the primary's answer, after its commit, is the `ack` (or the error) of
 *   every frame it stands for. No answer within FRAME_OP_TIMEOUT_MS: `unavailable`, never an ack;
 * - the frames to the driver (`assignment`, `delivery`, `unassigned`, `offer`, `offer_withdrawn`)
 *   are those of the hub topic `driver/{id}`, which the primary sends on NATS while a replica watches
 *   it; the close of a rotation or deletion arrives on it too (`DRIVER_CLOSE`, 4001 with the cause);
 * - presence: the replica tells the primary which drivers it serves (`tellPresence`) on every open and
 *   close and with every watch repeat; the primary counts them as connected while they are named.
 */
import type { WebSocket } from 'uWebSockets.js'
import { requestFrameOp, tellPresence, type FrameLink } from '../cluster/frame-link.ts'
import type { WireFrame } from '../cluster/frames.ts'
import { DRIVER_CLOSE, topics } from './realtime.ts'
import { answerSocket, DRIVER_GONE, DRIVER_SOCKET_LIMITS, driverHelloFrame, driverMessages, driverSocketUpgrade, LocationInbox, REMOTE_POSITIONS_PER_REQUEST, type DriverSocket, type LocationAnswer } from './driver.ts'
import { erased, FRAME_OP_TIMEOUT_MS, primaryUnavailable, type AnyReplicaFeed } from './replica-feeds.ts'
import type { GuardedUpgrade } from './guard.ts'

/** The answer of a position the primary did not answer in time (or no NATS connection): as a primary that cannot write answers. */
const UNAVAILABLE = primaryUnavailable(null) as LocationAnswer

const CLOSE_PREFIX = `{"type":"${DRIVER_CLOSE}"`

/** The primary's close of a driver's sockets, from its frame on the driver's topic. */
export function driverClose(f: WireFrame): { code: number; reason: string } | null {
  if (!f.json.startsWith(CLOSE_PREFIX)) return null
  const c = JSON.parse(f.json) as { code?: unknown; reason?: unknown }
  return { code: typeof c.code === 'number' ? c.code : 4001, reason: typeof c.reason === 'string' ? c.reason : 'token_revoked' }
}

export function driverOnReplica(): AnyReplicaFeed {
  /** This node's open sockets per driver (what the primary is told). */
  const sockets = new Map<number, number>()
  const count = (driverId: number, by: number, link: FrameLink | null) => {
    const n = (sockets.get(driverId) ?? 0) + by
    if (n > 0) sockets.set(driverId, n)
    else sockets.delete(driverId)
    if (link) tellPresence(link, [[driverId, Math.max(n, 0)]])
  }
  type Ws = WebSocket<DriverSocket>
  return erased<DriverSocket>({
    kind: 'driver', path: '/api/v1/ws/driver', limits: DRIVER_SOCKET_LIMITS,
    upgrade: (svc) => driverSocketUpgrade(svc) as GuardedUpgrade,
    topics: (d) => [topics.driver(d.driverId)],
    snapshot: (svc, d) => driverHelloFrame(svc, d.driverId),
    gone: DRIVER_GONE,
    closes: driverClose,
    messages: (hub, link) => {
      const send = (ws: Ws, msg: unknown) => { if (!ws.getUserData().closed) hub.send(ws, msg, true) }
      // The drivers' latest positions of this turn, sent to the primary in one request once the inbox has drained them.
      let turn: Array<{ ticket: number; position: { bearer: string; lat: number; lng: number; at: number } }> = []
      const flush = () => {
        const batch = turn
        turn = []
        const l = link()
        for (let i = 0; i < batch.length; i += REMOTE_POSITIONS_PER_REQUEST) {
          const part = batch.slice(i, i + REMOTE_POSITIONS_PER_REQUEST)
          const asked = l
            ? requestFrameOp(l, { socket: 'driver', positions: part.map((p) => p.position) }, FRAME_OP_TIMEOUT_MS)
            : Promise.reject(new Error('this node has no NATS connection'))
          asked.then((answers) => {
            const list = Array.isArray(answers) ? answers as LocationAnswer[] : []
            part.forEach((p, k) => inbox.stored(p.ticket, list[k] ?? UNAVAILABLE))
          }, () => { for (const p of part) inbox.stored(p.ticket, UNAVAILABLE) })
        }
      }
      const inbox: LocationInbox<Ws> = new LocationInbox<Ws>(answerSocket<Ws>(hub), (_driverId, p, ticket) => {
        if (turn.length === 0) queueMicrotask(flush)
        turn.push({ ticket, position: { bearer: p.ws.getUserData().session!.bearer, lat: p.lat, lng: p.lng, at: p.at } })
      }, { ms: FRAME_OP_TIMEOUT_MS + 1000, answer: UNAVAILABLE })
      return driverMessages<Ws>(send, (ws, lat, lng, seq) => inbox.push(ws, ws.getUserData().driverId, lat, lng, seq))
    },
    opened: (ws, link) => count(ws.getUserData().driverId, 1, link),
    closed: (ws, link) => count(ws.getUserData().driverId, -1, link),
    tick: (link) => { if (sockets.size > 0) tellPresence(link, [...sockets]) },
  })
}
