/**
 * The one guard around every uWS WebSocket callback (docs/realtime.md "Errors"). uWS calls these
 * from native code with nothing above them: an exception thrown out of one ends the process, so a
 * single bad request could stop the server. Every `app.ws(...)` behavior is built by `guarded`:
 *
 * - `upgrade`: a throw (or rejection) is logged with the request id and answered 500 with the
 *   api-v1 §7 envelope; the request id (X-Request-Id, as over HTTP) is chosen here, once;
 * - `open`, `message`, `drain`, `ping`, `pong`, `subscription`: a throw or a rejected promise is
 *   logged with the socket's id and the socket is closed with 1011 (RFC 6455 §7.4.1);
 * - `close`: the socket is marked closed before anything else runs (uWS throws on any later use),
 *   and whatever throws is logged;
 * - a message above the socket's documented limit is closed with 1009 (RFC 6455 §7.4.1). uWS's own
 *   limit (`maxPayloadLength`) is set to `FRAME_HARD_CAP`, above every socket's limit, because
 *   uWS drops the TCP connection without a close frame when a frame exceeds it;
 * - sockets per credential and per client address are counted from the upgrade to `close` (429
 *   beyond them), and a socket flooding messages (4029) or nesting a frame too deep (1008) is
 *   closed before its frame is decoded (src/net/connection-limits.ts, docs/limits.md).
 */
import { randomUUID } from 'node:crypto'
import type { HttpRequest, HttpResponse, WebSocket, WebSocketBehavior, us_socket_context_t } from 'uWebSockets.js'
import type { Logger } from '../log.ts'
import { ApiError } from '../errors.ts'
import { CLOSE } from './frames.ts'
import { refuse } from './upgrade.ts'
import { addHeaderLine, clientAddress, NO_TRUST, peerAddress, type TrustProxy } from '../net/client-address.ts'
import type { LiveSocket } from './socket.ts'
import { connectionLimitsFor, type ConnectionLimits } from '../net/connection-limits.ts'
import { headerLineBytes, headProblem, jsonShapeProblem, msgpackShapeProblem, type HeadLimits } from '../net/request-limits.ts'

/**
 * The largest frame uWS itself accepts on any socket. Messages between a socket's limit and this get
 * a 1009 close frame; beyond it uWS closes the connection without one (docs/realtime.md). It bounds
 * what uWS buffers per connection for a message announced but not yet complete.
 */
export const FRAME_HARD_CAP = 16 * 1024

/** An upgrade handler that is handed the request id the guard chose and the client's address. */
export type GuardedUpgrade = (res: HttpResponse, req: HttpRequest, context: us_socket_context_t, reqId: string, ip: string, limits?: ConnectionLimits) => void | Promise<void>

/** What the guard needs of the services: the logger, and whose forwarding headers to believe (TRUST_PROXY). */
export type GuardEnv = Logger | { log: Logger; config: { trustProxy: TrustProxy } & Partial<HeadLimits> }

/** A socket kind's behavior as the socket files write it. */
export interface SocketBehavior<T> extends Omit<WebSocketBehavior<T>, 'upgrade' | 'maxPayloadLength'> {
  upgrade: GuardedUpgrade
  /** The documented limit of one incoming message in bytes; a larger one is closed with 1009. */
  maxMessageBytes: number
}

/** X-Request-Id when it is a sane token (as the HTTP front door accepts it), else a new UUID. */
export function requestIdOf(header: string | undefined): string {
  return header && /^[\w.-]{1,64}$/.test(header) ? header : randomUUID()
}

const isThenable = (x: unknown): x is PromiseLike<unknown> => typeof (x as { then?: unknown } | null)?.then === 'function'

export function guarded<T extends LiveSocket>(kind: string, env: GuardEnv, b: SocketBehavior<T>): WebSocketBehavior<T> {
  const log = 'config' in env ? env.log : env
  const trust = 'config' in env ? env.config.trustProxy : NO_TRUST
  // The HTTP door's 414/431 limits hold for upgrade requests too (docs/limits.md).
  const head: HeadLimits | null = 'config' in env && env.config.maxUrlBytes && env.config.maxHeaderBytes
    ? { maxUrlBytes: env.config.maxUrlBytes, maxHeaderBytes: env.config.maxHeaderBytes }
    : null
  // Sockets per credential/address and messages per socket, shared by every socket kind (docs/limits.md).
  const limits = connectionLimitsFor(env)
  const { upgrade, maxMessageBytes, open, message, drain, ping, pong, subscription, close, ...settings } = b

  const failed = (ws: WebSocket<T>, where: string) => (err: unknown) => {
    let d: T | undefined
    try { d = ws.getUserData() } catch { /* closed: nothing left to close */ }
    log.error({ err, socket: d?.id, kind, where }, 'websocket handler failed')
    if (d && !d.closed) {
      try { ws.end(CLOSE.internal.code, CLOSE.internal.reason) } catch { /* closed meanwhile */ }
    }
  }
  /** Run one callback; neither a throw nor a rejection may reach uWS or the process. */
  const run = (ws: WebSocket<T>, where: string, f: () => unknown): void => {
    try {
      const r = f()
      if (isThenable(r)) r.then(undefined, failed(ws, where))
    } catch (err) {
      failed(ws, where)(err)
    }
  }

  const behavior: WebSocketBehavior<T> = {
    // Every socket: pings from the server, and closed after 120 s without a message or a pong.
    idleTimeout: 120,
    sendPingsAutomatically: true,
    ...settings,
    maxPayloadLength: Math.max(FRAME_HARD_CAP, maxMessageBytes),
    upgrade: (res, req, context) => {
      let reqId = ''
      let ip = ''
      const fail = (err: unknown) => {
        reqId ||= randomUUID()
        log.error({ err, reqId, kind, ip }, 'websocket upgrade failed')
        try { refuse(res, new ApiError('internal_error'), reqId) } catch { /* already answered or aborted */ }
      }
      try {
        reqId = requestIdOf(req.getHeader('x-request-id'))
        // The same client address as the HTTP door's (src/net/client-address.ts), repeated lines joined alike.
        const headers: Record<string, string> = {}
        let headerBytes = 0
        req.forEach((k, v) => {
          addHeaderLine(headers, k, v)
          headerBytes += headerLineBytes(k, v)
        })
        ip = clientAddress(peerAddress(res), headers, trust)
        if (head) {
          const query = req.getQuery()
          const oversized = headProblem(req.getUrl().length + (query ? query.length + 1 : 0), headerBytes, head)
          if (oversized) return refuse(res, oversized, reqId)
        }
        const r = upgrade(res, req, context, reqId, ip, limits)
        if (isThenable(r)) r.then(undefined, fail)
      } catch (err) {
        fail(err)
      }
    },
    message: (ws, msg, isBinary) => run(ws, 'message', () => {
      if (msg.byteLength > maxMessageBytes) {
        log.info({ socket: ws.getUserData().id, kind, bytes: msg.byteLength, limit: maxMessageBytes }, 'websocket message too big')
        return ws.end(CLOSE.tooBig.code, CLOSE.tooBig.reason)
      }
      // Floods and frames past the shape limits end the socket before any decoding (docs/limits.md).
      if (ws.getUserData().lease?.allowMessage() === false) {
        log.info({ socket: ws.getUserData().id, kind }, 'websocket message flood')
        return ws.end(CLOSE.flood.code, CLOSE.flood.reason)
      }
      const shape = (isBinary ? msgpackShapeProblem : jsonShapeProblem)(new Uint8Array(msg))
      if (shape) {
        log.info({ socket: ws.getUserData().id, kind, limit: shape.limit }, 'websocket message past the shape limits')
        const verdict = shape.limit === 'depth' ? CLOSE.tooDeep : CLOSE.tooComplex
        return ws.end(verdict.code, verdict.reason)
      }
      return message?.(ws, msg, isBinary)
    }),
    close: (ws, code, msg) => {
      try {
        ws.getUserData().closed = true
        ws.getUserData().lease?.release() // every close, abnormal ones too, gives the socket's place back
        close?.(ws, code, msg)
      } catch (err) {
        log.error({ err, kind }, 'websocket close handler failed')
      }
    },
  }
  behavior.open = (ws) => run(ws, 'open', () => {
    const d = ws.getUserData()
    d.lease?.open()
    if (log.isLevelEnabled('info')) log.info({ socket: d.id, kind, ip: d.ip }, 'websocket open')
    return open?.(ws)
  })
  if (drain) behavior.drain = (ws) => run(ws, 'drain', () => drain(ws))
  if (ping) behavior.ping = (ws, m) => run(ws, 'ping', () => ping(ws, m))
  if (pong) behavior.pong = (ws, m) => run(ws, 'pong', () => pong(ws, m))
  if (subscription) behavior.subscription = (ws, topic, n, old) => run(ws, 'subscription', () => subscription(ws, topic, n, old))
  return behavior
}
