/**
 * Open WebSockets by kind (docs/metrics.md `dispatch_ws_open_sockets`). Like the drain's counter
 * (src/net/drain.ts), `countSockets(app)` wraps `app.ws` once, before any socket kind is mounted,
 * so no socket file needs to know: the kind is the path segment after `/ws/` of the pattern it is
 * mounted at (`/api/v1/ws/driver` → `driver`), so the label set is the fixed list of socket kinds.
 * The cost is one increment at open and one decrement at close, none per frame.
 */
import type { TemplatedApp, WebSocketBehavior } from 'uWebSockets.js'

export type SocketCounts = Map<string, { open: number }>

/** `/api/v1/ws/track/:token` → `track`; a pattern without `/ws/` is counted under itself. */
export const socketKind = (pattern: string): string => /\/ws\/([\w-]+)/.exec(pattern)?.[1] ?? pattern

export function countSockets(app: TemplatedApp): SocketCounts {
  const counts: SocketCounts = new Map()
  const ws = app.ws.bind(app)
  app.ws = <T>(pattern: string, b: WebSocketBehavior<T>) => {
    const kind = socketKind(pattern)
    let c = counts.get(kind)
    if (!c) counts.set(kind, (c = { open: 0 }))
    const n = c
    return ws<T>(pattern, {
      ...b,
      open: (s) => { n.open++; return b.open?.(s) },
      close: (s, code, msg) => { n.open--; return b.close?.(s, code, msg) },
    })
  }
  return counts
}
