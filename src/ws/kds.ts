/**
 * The kitchen socket `{base_url}/ws/kds` (api-v1 §3, §4.7; docs/kds.md "Kitchen socket").
 *
 * Auth: a staff token with the `kds` permission, as `Authorization: Bearer` or `?token=` (browsers
 * cannot set headers on a WebSocket). `?station_id=` picks a station; without it the member's own
 * station, and without that every station.
 *
 * Out: first `snapshot` (the live tickets, as `GET /staff/kds`), then `ticket` (a new order, or one
 * re-opened), `item` (a bump or recall), `status` (the order's kitchen status changed; a
 * cancelled, completed or delivered order leaves the screen), `ack`/`error` for this socket's own
 * frames. Every frame is sent only after the change is durable (events arrive after the commit).
 * In: `{"type":"bump"|"recall","item_id":n,"seq"?:n}` (frame bindings of the HTTP routes' operations, so the
 * same rules: permission, plan feature, tenancy, transitions, the station rule), `{"type":"refresh"}`, `{"type":"ping"}`.
 *
 * Topics per store and station (`kds/<store>/*` for all-station screens, `kds/<store>/st/<name>`),
 * so a bump reaches only the screens that show it. A screen that falls more than 1 MB behind is
 * closed rather than silently skipped: it reconnects and gets a fresh snapshot.
 */
import type { TemplatedApp, WebSocket } from 'uWebSockets.js'
import type { Services } from '../services.ts'
import type { OutboxEvent } from '../storage/outbox.ts'
import { ApiError } from '../errors.ts'
import { authedUpgrade } from './upgrade.ts'
import { guarded } from './guard.ts'
import { session, subject } from './sessions.ts'
import type { Realtime } from './realtime.ts'
import type { LiveSocket } from './socket.ts'
import type { Principal } from '../auth/principals.ts'
import { decode } from './codec.ts'
import { CLOSE, errorFrame, policyVerdict, refusalFrame } from './frames.ts'
import { admit } from '../ops/invoke.ts'
import type { TicketRow } from '../storage/kds.ts'
import { KDS_OPEN_ORDER, LIVE_KDS, type KdsSink } from '../domain/kds.ts'
import { bumpItem, kdsReads, kdsItemOfView, kdsScreenAdmission, recallItem, ticketsOf, type KdsStepReply } from '../ops/orders/kds.ts'
import { frame, runFrame, type BoundFrame } from './frame.ts'
import type { KdsAckFrame, KdsItemFrame, KdsSnapshotFrame, KdsStatusFrame, KdsTicketFrame } from './kds-frames.ts'

export interface KdsSocket extends LiveSocket {
  staffId: number
  storeId: number
  tokenId: number
  /** The station this screen shows (`?station_id=`, else the member's). */
  station: string | null
  /** Who bumps from this screen: the member's principal (role, bound station), refreshed at every credential re-check. */
  who: { principal: Principal }
}
type Ws = WebSocket<KdsSocket>

/** A kitchen screen's socket limits, on every node: a screen more than 1 MB behind is closed (it reconnects for a fresh snapshot). */
export const KDS_SOCKET_LIMITS = { maxMessageBytes: 4096, maxBackpressure: 1024 * 1024, closeOnBackpressureLimit: 1 } as const

const STATION_RE = /^[^\u0000-\u001f]{1,40}$/
/** The frames a kitchen screen sends: the kitchen operations, bound (src/ws/frame.ts). */
const BUMP = frame(bumpItem, { type: 'bump', input: (f) => ({ item_id: f.item_id }) })
const RECALL = frame(recallItem, { type: 'recall', input: (f) => ({ item_id: f.item_id }) })
/** The frames this socket binds (for tests and docs). */
export const kdsFrames = { bump: BUMP, recall: RECALL }

export const kdsTopic = (storeId: number, station: string | null): string =>
  station === null ? `kds/${storeId}/*` : `kds/${storeId}/st/${encodeURIComponent(station)}`

export function mountKdsSocket(app: TemplatedApp, svc: Services, rt: Realtime): { sink: KdsSink; react: (e: OutboxEvent) => void } {
  const hub = svc.hub
  // The same queries (and the same line → order cache) as the HTTP kitchen operations.
  const kdsq = kdsReads(svc)
  /** Open screens per store: events of stores without screens cost nothing. */
  const screens = new Map<number, number>()

  /**
   * Stations of recent orders (a line's station never changes), so a status change reaches the
   * right screens without reading the order again. Bounded: oldest orders are forgotten first.
   */
  const stationsOf = new Map<number, readonly string[]>()
  const rememberStations = (orderId: number, lines: ReadonlyArray<{ station: string | null }>) => {
    const stations = [...new Set(lines.map((l) => l.station).filter((x): x is string => x !== null))]
    stationsOf.delete(orderId)
    stationsOf.set(orderId, stations)
    if (stationsOf.size > 10_000) stationsOf.delete(stationsOf.keys().next().value!)
    return stations
  }

  /** Publish one frame per topic of an order's store: all-station screens and each station's. */
  function publishTo<L extends { station: string | null }>(storeId: number, lines: readonly L[], stations: readonly string[], build: (lines: readonly L[], station: string | null) => unknown) {
    for (const station of [null, ...stations]) {
      const topic = kdsTopic(storeId, station)
      if (!hub.hasSubscribers(topic)) continue
      const frame = build(station === null ? lines : lines.filter((r) => r.station === station), station)
      if (frame) hub.publish(topic, frame)
    }
  }

  /** Fan out from the order's stored lines (new orders, re-opened orders). */
  /** Screens of a store here, or possibly on a replica (the hub then knows which of its topics are watched). */
  const watched = (storeId: number) => (screens.get(storeId) ?? 0) > 0 || hub.remoteWatchingFamily(`kds/${storeId}`)

  function fanOut(storeId: number, orderId: number, build: (rows: readonly TicketRow[], station: string | null) => unknown) {
    if (!watched(storeId)) return
    const rows = kdsq.orderLines(orderId, storeId)
    if (rows.length === 0) return
    publishTo(storeId, rows, rememberStations(orderId, rows), build)
  }

  /** A status frame needs only the order's stations: remembered, or read once. */
  function fanOutStatus(storeId: number, orderId: number, frame: unknown) {
    if (!watched(storeId)) return
    const stations = stationsOf.get(orderId) ?? rememberStations(orderId, kdsq.orderLines(orderId))
    publishTo(storeId, stations.map((station) => ({ station })), stations, () => frame)
  }

  const ticketFrame = (rows: readonly TicketRow[]): KdsTicketFrame | null => {
    const live = rows.filter((r) => LIVE_KDS.has(r.kds_state))
    if (live.length === 0 || !KDS_OPEN_ORDER.has(live[0]!.order_status)) return null
    return { type: 'ticket', ticket: ticketsOf(live)[0]! }
  }

  /**
   * The reaction to committed events (wired in src/app.ts): a new order's ticket. Everything that
   * happens to the order afterwards comes from its actor through the sink below (one road each).
   */
  const react = (e: OutboxEvent): void => {
    const storeId = e.store_id
    const orderId = Number(e.data.order_id)
    if (storeId === null || !Number.isInteger(orderId)) return
    if (e.event === 'order.created') fanOut(storeId, orderId, ticketFrame)
  }

  const sink: KdsSink = {
    statusChanged(storeId, orderId, status, previous) {
      const frame: KdsStatusFrame = { type: 'status', order_id: orderId, status, previous_status: previous }
      fanOutStatus(storeId, orderId, frame)
      // A closed order brought back (a recall after serving, an override) needs its card again.
      if (KDS_OPEN_ORDER.has(status) && !KDS_OPEN_ORDER.has(previous)) fanOut(storeId, orderId, ticketFrame)
    },
    itemsChanged(order, lineIds) {
      // Built from the actor's own view of the order: no read between the commit and the frame.
      if (!watched(order.restaurant_id)) return
      const ids = new Set(lineIds)
      const changed = order.items.filter((l) => ids.has(l.id))
      const head: KdsItemFrame['order'] = { order_id: order.id, type: order.type, status: order.status, table_number: order.table_number, customer_name: order.customer_name, note: order.note, created_at: order.created_at }
      publishTo(order.restaurant_id, changed, rememberStations(order.id, order.items), (lines): KdsItemFrame | null => lines.length === 0 ? null : {
        type: 'item', order_id: order.id, order_status: order.status, order: head, items: lines.map((l) => kdsItemOfView(order.id, l)),
      })
    },
    tokenRevoked(tokenId) {
      // Re-resolving the token finds it revoked: its sockets close with 4001 (src/ws/sessions.ts).
      rt.sessions.revalidate(subject.staffToken(tokenId))
    },
  }

  const send = (ws: Ws, msg: unknown) => { if (!ws.getUserData().closed) hub.send(ws, msg) }
  const snapshot = (d: KdsSocket): KdsSnapshotFrame => kdsSnapshot(kdsq, d)

  app.ws<KdsSocket>('/api/v1/ws/kds', guarded('kds', svc, rt.sessions.track({
    ...KDS_SOCKET_LIMITS,
    upgrade: kdsScreenUpgrade(svc),
    open: (ws) => {
      const d = ws.getUserData()
      screens.set(d.storeId, (screens.get(d.storeId) ?? 0) + 1)
      // Subscribe before reading: a change committed in between arrives as a frame, never lost.
      hub.subscribe(ws, kdsTopic(d.storeId, d.station))
      hub.send(ws, snapshot(d))
    },
    message: kdsMessages(send, (ws) => send(ws, snapshot(ws.getUserData())), (ws, f, bound) => kdsStep(svc, ws.getUserData().who.principal, ws.getUserData().storeId, f, bound).then((out) => send(ws, out))),
    close: (ws) => {
      const d = ws.getUserData()
      const n = (screens.get(d.storeId) ?? 1) - 1
      if (n <= 0) screens.delete(d.storeId)
      else screens.set(d.storeId, n)
    },
  })))

  return { sink, react }
}

/** The live tickets a screen shows (its station's, or every station's). */
export const kdsSnapshot = (kdsq: ReturnType<typeof kdsReads>, d: Pick<KdsSocket, 'storeId' | 'station'>): KdsSnapshotFrame =>
  ({ type: 'snapshot', station: d.station, tickets: kdsq.tickets(d.storeId, d.station) })

/**
 * The kitchen socket's upgrade, decided on `svc` (the primary's services, or a replica's read-only
 * view of them): a staff token with the `kds` permission and the plan's `kds` feature, as an
 * operation decides them; `?station_id=` checked. Re-checked whenever credentials change.
 */
export function kdsScreenUpgrade(svc: Services) {
  return authedUpgrade<KdsSocket>(0, (input) => {
    const p = svc.auth.staff(input)
    if (!p) throw new ApiError('unauthenticated')
    // The policy and the plan's `kds` feature (403 feature_not_in_plan), as an operation decides them.
    admit(kdsScreenAdmission, svc, p, { store: p.storeId })
    const asked = input.query.station_id
    if (asked !== undefined && !STATION_RE.test(asked)) throw new ApiError('validation_failed', undefined, { station_id: ['Use 1 to 40 printable characters.'] })
    const storeId = p.storeId
    // Re-checked whenever credentials change: signed out or removed → 4001, `kds` taken away → 4003.
    // A new role or station (the owner's staff update) applies to this screen's next bump.
    const who: { principal: Principal } = { principal: p }
    const check = (q: Principal) => policyVerdict(() => {
      admit(kdsScreenAdmission, svc, q, { store: storeId })
      who.principal = q
    })
    const subjects = [subject.staff(p.staffId), subject.staffToken(p.tokenId), subject.store(storeId)]
    return { staffId: p.staffId, storeId, tokenId: p.tokenId, station: asked ?? p.station, who, session: session('staff', input.bearer!, subjects, check) }
  })
}

/**
 * What a kitchen screen's frames do, on every node: `ping`, `refresh`, and the bound kitchen
 * operations (`bump`, `recall`) handed to `step` (run here on the primary, sent to it from a replica).
 * The promise `step` returns is returned, not dropped: the guard turns a rejection into a log line and a 1011 close.
 */
export function kdsMessages<W extends WebSocket<LiveSocket>>(send: (ws: W, msg: unknown) => void, refresh: (ws: W) => void, step: (ws: W, f: Readonly<Record<string, unknown>>, bound: BoundFrame<KdsStepReply>) => Promise<void>) {
  return (ws: W, message: ArrayBuffer, isBinary: boolean) => {
    let frame: unknown
    try { frame = decode(message, isBinary) } catch { return void send(ws, errorFrame('bad_frame', 'The frame is not valid JSON or MessagePack.')) }
    const f = (frame && typeof frame === 'object' ? frame : {}) as { type?: unknown; item_id?: unknown; seq?: unknown }
    if (f.type === 'ping') return void send(ws, { type: 'pong' })
    const bound = kdsFrameOf(f.type)
    if (bound) return step(ws, f as Record<string, unknown>, bound)
    if (f.type === 'refresh') return void refresh(ws)
    send(ws, errorFrame('unknown_type', 'Kitchen sockets accept `bump`, `recall`, `refresh` and `ping` frames.'))
  }
}

/** The bound operation of a frame type, or null. */
export const kdsFrameOf = (type: unknown): BoundFrame<KdsStepReply> | null => type === 'bump' ? BUMP : type === 'recall' ? RECALL : null

/** The seq a frame names, if a safe integer. */
const seqOf = (f: Readonly<Record<string, unknown>>): number | null => typeof f.seq === 'number' && Number.isSafeInteger(f.seq) ? f.seq : null

/**
 * A `bump`/`recall` frame: a binding of the kitchen operations (`frame`, src/ws/frame.ts), run with
 * the screen's principal through the one pipeline, so a frame is refused as the HTTP route would
 * refuse it (permission, store, plan feature, input, tenancy, transitions, the station rule).
 * Answers the `ack` once the change is committed, or the refusal.
 */
export async function kdsStep(svc: Services, principal: Principal, storeId: number, f: Readonly<Record<string, unknown>>, bound: BoundFrame<KdsStepReply>): Promise<KdsAckFrame | ReturnType<typeof refusalFrame>> {
  const seq = seqOf(f)
  try {
    const out = await runFrame(bound, { svc, principal, ids: { store: storeId }, frame: f, ip: '' })
    return { type: 'ack', seq, item_id: out.item.id, kds_state: out.item.kds_state, order_id: out.order_id, order_status: out.order_status }
  } catch (err) {
    return refusalFrame(err instanceof ApiError ? err : new ApiError('internal_error'), seq)
  }
}

/**
 * A kitchen frame a replica's screen sent (docs/cluster.md "Sockets on any node"), on the primary:
 * the screen's credential is resolved again here and the screen admitted as at its upgrade (a
 * credential revoked meanwhile is refused, never acted on), then the frame runs as a frame of the
 * primary's own screens would. Answers the frame the screen gets.
 */
export async function kdsRemoteStep(svc: Services, req: { bearer?: unknown; frame?: unknown }): Promise<unknown> {
  const f = (req.frame && typeof req.frame === 'object' ? req.frame : {}) as Readonly<Record<string, unknown>>
  const bound = kdsFrameOf(f.type)
  if (!bound) return errorFrame('unknown_type', 'Kitchen sockets accept `bump`, `recall`, `refresh` and `ping` frames.')
  try {
    const p = typeof req.bearer === 'string' ? svc.auth.staff({ headers: {}, query: {}, bearer: req.bearer }) : null
    if (!p) throw new ApiError('unauthenticated')
    admit(kdsScreenAdmission, svc, p, { store: p.storeId })
    return await kdsStep(svc, p, p.storeId, f, bound)
  } catch (err) {
    return refusalFrame(err instanceof ApiError ? err : new ApiError('internal_error'), seqOf(f))
  }
}
