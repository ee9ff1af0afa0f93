/**
 * Graceful shutdown of the one uWS app (docs/running.md "Stopping"): counts HTTP requests from
 * their first byte to their last, tracks open WebSockets, and tells readiness that the server is
 * draining. `track(app)` is called once, before any route or socket is mounted, so every handler
 * mounted afterwards is wrapped; nothing else needs to know.
 */
import type { HttpResponse, TemplatedApp, WebSocket, WebSocketBehavior } from 'uWebSockets.js'

/** RFC 6455 §7.4.1: "going away", a server going down (docs/realtime.md "Close codes"). */
export const GOING_AWAY = { code: 1001, reason: 'server_shutting_down' } as const

export interface Drain {
  /** True from the moment shutdown starts: `/readyz` answers 503 and answers close their connection. */
  readonly draining: boolean
  /** HTTP requests received and not yet answered (nor aborted by their client). */
  readonly inFlight: number
  /** Open WebSockets of every kind. */
  readonly sockets: number
  startDraining(): void
  /** Resolves once no request is in flight, or after `timeoutMs`; true when drained. */
  idle(timeoutMs: number): Promise<boolean>
  /** Close every open WebSocket with 1001 and resolve once they are closed, or after `timeoutMs`. */
  closeSockets(timeoutMs: number): Promise<boolean>
}

type Ends = 'end' | 'endWithoutBody' | 'close'

export function track(app: TemplatedApp): Drain {
  let draining = false
  let inFlight = 0
  const open = new Set<WebSocket<unknown>>()
  let wake: Array<() => void> = []
  const notify = () => { const w = wake; wake = []; for (const f of w) f() }

  /** Count one response until it ends or its client goes away, whichever comes first. */
  const count = (res: HttpResponse): void => {
    inFlight++
    let live = true
    const done = () => { if (live) { live = false; inFlight--; notify() } }
    const r = res as unknown as Record<Ends | 'onAborted', (...a: unknown[]) => unknown>
    for (const m of ['end', 'endWithoutBody', 'close'] as const) {
      const orig = r[m]!
      r[m] = function (this: unknown, ...a: unknown[]) {
        // While draining, every answer closes its connection (`Connection: close`, RFC 9112 §9.6),
        // so a kept-alive client opens a new one (refused, or another instance) instead of
        // reusing one that is about to close under its next request.
        if (m === 'end' && draining) a[1] = true
        try { return orig.apply(this, a) } finally { done() }
      }
    }
    const onAborted = r.onAborted!
    r.onAborted = function (this: unknown, cb: unknown) {
      return onAborted.call(this, () => { done(); (cb as () => void)() })
    }
  }

  const any = app.any.bind(app)
  app.any = (pattern, handler) => any(pattern, (res, req) => { count(res); void handler(res, req) })
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
    get inFlight() { return inFlight },
    get sockets() { return open.size },
    startDraining() { draining = true },
    idle: (timeoutMs) => until(() => inFlight === 0, timeoutMs),
    closeSockets(timeoutMs) {
      for (const s of [...open]) {
        try { s.end(GOING_AWAY.code, GOING_AWAY.reason) } catch { open.delete(s) /* closed meanwhile */ }
      }
      return until(() => open.size === 0, timeoutMs)
    },
  }
}
