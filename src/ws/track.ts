/**
 * The customer tracking socket `{base_url}/ws/track/{track_token}` (docs/realtime.md). The token
 * is the capability: no other credential. The first frame is the tracking view of api-v1 §2.5
 * (`type: "snapshot"`); then a `status` frame (the whole view again) on every status or delivery
 * change and a `location` frame for every driver position while the order is picked up or out for
 * delivery — never before (the driver actor only publishes to orders in those states).
 *
 * A slow socket is skipped by uWS once it has `maxBackpressure` bytes queued; when it drains it is
 * sent the current view and the latest location, so it converges on the present instead of
 * replaying a backlog.
 */
import { trackedOrder, trackingView } from '../ops/web/public.ts'
import type { TemplatedApp, WebSocket } from 'uWebSockets.js'
import type { Services } from '../services.ts'
import type { TrackViewFrame } from '../storage/tracking.ts'
import { authedUpgrade } from './upgrade.ts'
import { guarded } from './guard.ts'
import { feedMessages } from './feed.ts'
import { SLOW_CONSUMER_BYTES } from './hub.ts'
import { topics, type LiveSocket, type Realtime } from './realtime.ts'

interface TrackSocket extends LiveSocket { orderId: number }

export function mountTrackSocket(app: TemplatedApp, svc: Services, rt: Realtime): void {
  const hub = rt.hub
  const snapshot = (ws: WebSocket<TrackSocket>, type: 'snapshot' | 'status') => {
    const row = svc.orders.row(ws.getUserData().orderId)
    if (row) hub.send(ws, { ...trackingView(svc, row), type } satisfies TrackViewFrame) // the frame kind wins over any view key
  }

  app.ws<TrackSocket>('/api/v1/ws/track/:token', guarded('track', svc, {
    // Customers only listen; small frames (ping) are all they may send.
    maxMessageBytes: 1024,
    maxBackpressure: SLOW_CONSUMER_BYTES,
    closeOnBackpressureLimit: 0,
    idleTimeout: 120,
    sendPingsAutomatically: true,
    upgrade: authedUpgrade<TrackSocket>(1, ({ params }) => {
      return { orderId: trackedOrder(svc, params[0] ?? undefined).id }
    }),
    open: (ws) => {
      const { orderId } = ws.getUserData()
      rt.joinTrack(orderId) // first: `close` always leaves, even when the rest of `open` fails
      // Subscribe before reading the snapshot: a change committed in between arrives as a frame.
      hub.subscribe(ws, topics.track(orderId))
      snapshot(ws, 'snapshot')
      const loc = rt.lastTrackLocation(orderId)
      if (loc) hub.send(ws, loc, true)
    },
    message: feedMessages(hub, 'Tracking', (ws) => snapshot(ws, 'snapshot')),
    drain: (ws) => {
      if (ws.getBufferedAmount() > SLOW_CONSUMER_BYTES / 4) return
      snapshot(ws, 'status')
      const loc = rt.lastTrackLocation(ws.getUserData().orderId)
      if (loc) hub.send(ws, loc, true)
    },
    close: (ws) => {
      rt.leaveTrack(ws.getUserData().orderId)
    },
  }))
}
