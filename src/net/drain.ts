/**
 * Graceful shutdown of the one uWS app (docs/running.md "Stopping"): waits for the HTTP requests in
 * flight (counted from their first byte to their last by src/net/respond.ts, where every answer is
 * written), tracks open WebSockets, and tells readiness that the server is draining. `track(app)`
 * is called once, before any socket is mounted, so every socket kind mounted afterwards is counted.
 */
import type { TemplatedApp, WebSocket, WebSocketBehavior } from 'uWebSockets.js'
import { newRequestCounter, type RequestCounter } from './respond.ts'

/** RFC 6455 §7.4.1: "going away", a server going down (docs/realtime.md "Close codes"). */
export const GOING_AWAY = { code: 1001, reason: 'server_shutting_down' } as const

export interface Drain {
  /** True from the moment shutdown starts: `/readyz` answers 503 and answers close their connection. */
  readonly draining: boolean
  /** HTTP requests received and not yet answered (nor aborted by their client). */
  readonly inFlight: number
  /** Where the HTTP door counts its requests (src/net/respond.ts `requestState`). */
  readonly requests: RequestCounter
  /** Open WebSockets of every kind. */
  readonly sockets: number
  startDraining(): void
  /** Resolves once no request is in flight, or after `timeoutMs`; true when drained. */
  idle(timeoutMs: number): Promise<boolean>
  /** Close every open WebSocket with 1001 and resolve once they are closed, or after `timeoutMs`. */
  closeSockets(timeoutMs: number): Promise<boolean>
}

export function track(app: TemplatedApp): Drain {
  let draining = false
  const open = new Set<WebSocket<unknown>>()
  let wake: Array<() => void> = []
  const notify = () => { const w = wake; wake = []; for (const f of w) f() }
  // HTTP requests are counted where they are answered (src/net/respond.ts `requestState`).
  const requests = newRequestCounter()
  requests.settled = () => { if (wake.length > 0) notify() }
  const ws = app.ws.bind(app)
  app.ws = <T>(pattern: string, b: WebSocketBehavior<T>) => ws<T>(pattern, {
    ...b,
    open: (s) => { open.add(s as WebSocket<unknown>); return b.open?.(s) },
    close: (s, code, msg) => { open.delete(s as WebSocket<unknown>); notify(); return b.close?.(s, code, msg) },
  })

  const until = (ready: () => boolean, timeoutMs: number) => new Promise<boolean>((resolve) => {
    let settled = false
    const settle = (ok: boolean) => { settled = true; clearTimeout(timer); resolve(ok) }
    const timer = setTimeout(() => settle(ready()), timeoutMs)
    const check = () => { if (settled) return; if (ready()) settle(true); else wake.push(check) }
    check()
  })

  return {
    get draining() { return draining },
    get inFlight() { return requests.inFlight },
    requests,
    get sockets() { return open.size },
    startDraining() { draining = true; requests.closing = true },
    idle: (timeoutMs) => until(() => requests.inFlight === 0, timeoutMs),
    closeSockets(timeoutMs) {
      for (const s of [...open]) {
        try { s.end(GOING_AWAY.code, GOING_AWAY.reason) } catch { open.delete(s) /* closed meanwhile */ }
      }
      return until(() => open.size === 0, timeoutMs)
    },
  }
}
