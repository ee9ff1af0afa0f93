/**
 * What a cluster replica serves on PORT while it is not the primary (docs/cluster.md "Any node
 * accepts any request"): `/healthz` and `/readyz` (its role, the primary, how far behind it is) of
 * its own; the public reads from its own database while it is within CLUSTER_READ_LAG_MS
 * (src/http/replica-reads.ts); every other request and socket is passed to the primary and its
 * answer back (src/http/forward.ts). While no primary is known, 503 `unavailable` with `Retry-After`.
 */
import uWS from 'uWebSockets.js'
import { ApiError } from '../errors.ts'
import type { Logger } from '../log.ts'
import type { DbReadiness } from '../storage/health.ts'
import type { ClusterStatus } from '../cluster/node.ts'
import { newRequestCounter, requestState, send } from '../net/respond.ts'
import { readiness } from './routes/readyz.ts'
import type { Forwarder } from './forward.ts'
import type { ReplicaReads } from './replica-reads.ts'
import type { OwnSockets } from '../cluster/frame-link.ts'

export interface ReplicaServer {
  listen(host: string, port: number): Promise<number>
  /** Stop listening and drop the connections (the primary's server takes the port). */
  close(): void
}

/**
 * `target`: the primary's NODE_URL, null while unknown (or before the node has joined); `forward`
 * is made once the node knows the cluster's secret. `own`: the sockets this node serves itself from
 * its copy and the live frames on NATS (src/ws/replica-sockets.ts); the rest are tunnelled.
 */
export function replicaServer(database: () => DbReadiness, status: () => ClusterStatus, target: () => string | null, forward: () => Forwarder | null, log: Logger, own?: OwnSockets, reads: () => ReplicaReads | null = () => null): ReplicaServer {
  const app = uWS.App()
  const counter = newRequestCounter()
  let listenSocket: uWS.us_listen_socket | null = null
  // Sockets of every kind: tunnelled to the primary (the primary decides, as if the client were its
  // own), except those this node serves itself while it can (the tracking socket).
  let tunnels: uWS.WebSocketBehavior<unknown> | null = null
  const tunnel = () => {
    const f = forward()
    if (f) tunnels ??= f.sockets(target) as uWS.WebSocketBehavior<unknown>
    return tunnels
  }
  own?.mount(app, tunnel)
  app.ws('/*', {
    maxPayloadLength: 16 * 1024 * 1024,
    idleTimeout: 120,
    upgrade: (res, req, context) => {
      const t = tunnel()
      if (t) return t.upgrade!(res, req, context)
      const e = new ApiError('unavailable', 'This node is still joining the cluster. Retry shortly.', undefined, { 'Retry-After': '1' })
      send(res, requestState(res, counter), e.status, e.headers ?? {}, JSON.stringify(e.toJSON()))
    },
    open: (ws) => tunnels?.open?.(ws),
    message: (ws, m, binary) => tunnels?.message?.(ws, m, binary),
    close: (ws, code, m) => tunnels?.close?.(ws, code, m),
  })
  app.any('/*', (res, req) => {
    // A public read this node answers from its own data (when fresh enough); else as below.
    if (reads()?.serve(res, req)) return
    const method = req.getCaseSensitiveMethod().toUpperCase()
    const path = req.getUrl()
    const isProbe = (path === '/healthz' || path === '/readyz') && (method === 'GET' || method === 'HEAD')
    const to = target()
    const f = forward()
    if (!isProbe && to && f) return f.http(res, req, counter, to)
    const state = requestState(res, counter)
    // A body not read is drained, so the connection can be reused.
    if (method !== 'GET' && method !== 'HEAD') res.onData(() => {})
    const json = (code: number, body: unknown, headers: Record<string, string> = {}) =>
      send(res, state, code, { 'Cache-Control': 'no-store', ...headers }, JSON.stringify(body), { headOnly: method === 'HEAD' })
    try {
      if (path === '/healthz' && (method === 'GET' || method === 'HEAD')) return json(200, { status: 'ok' })
      if (path === '/readyz' && (method === 'GET' || method === 'HEAD')) {
        const r = readiness({ database, draining: () => false, cluster: status }, new URLSearchParams(req.getQuery() ?? '').get('role') === 'primary')
        return json(r.status, r.body)
      }
      const s = status()
      const e = new ApiError('unavailable', `This node (${s.node}) is a replica; ${s.primary ? `the primary is ${s.primary}` : 'a primary is being chosen'}. Retry shortly, or send requests where /readyz answers 200.`,
        undefined, { 'Retry-After': '1' }, { role: s.role, node: s.node, primary: s.primary })
      return json(e.status, e.toJSON(), e.headers)
    } catch (err) {
      log.error({ err, path }, 'replica listener failed to answer')
      return json(500, new ApiError('internal_error').toJSON())
    }
  })
  return {
    listen: (host, port) => new Promise<number>((resolve, reject) => {
      const exclusive = (uWS as unknown as { LIBUS_LISTEN_EXCLUSIVE_PORT: number }).LIBUS_LISTEN_EXCLUSIVE_PORT
      ;(app as unknown as { listen(h: string, p: number, o: number, cb: (s: uWS.us_listen_socket | false) => void): void }).listen(host, port, exclusive, (sock) => {
        if (!sock) return reject(new Error(`cannot listen on ${host}:${port}: the port is taken by another process, or the address is not this machine's`))
        listenSocket = sock
        resolve(uWS.us_socket_local_port(sock))
      })
    }),
    close() {
      own?.close()
      if (listenSocket) uWS.us_listen_socket_close(listenSocket)
      listenSocket = null
      ;(app as unknown as { close(): void }).close()
    },
  }
}
