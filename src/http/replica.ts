/**
 * What a cluster replica serves on PORT while it is not the primary (docs/cluster.md "Replicas"):
 * `/healthz`, `/readyz` (its role, the primary, how far behind it is) and, for every other request,
 * 503 `unavailable` naming the primary with `Retry-After`, so a load balancer that reads /readyz
 * sends writers to the primary. (Serving reads from the replica's copy and forwarding writes to the
 * primary is the next step of cluster mode: docs/cluster.md "Not yet".)
 */
import uWS from 'uWebSockets.js'
import { ApiError } from '../errors.ts'
import type { Logger } from '../log.ts'
import type { Db } from '../storage/db.ts'
import { databaseReadiness } from '../storage/health.ts'
import type { ClusterStatus } from '../cluster/node.ts'
import { newRequestCounter, requestState, send } from '../net/respond.ts'
import { readiness } from './routes/readyz.ts'

export interface ReplicaServer {
  listen(host: string, port: number): Promise<number>
  /** Stop listening and drop the connections (the primary's server takes the port). */
  close(): void
}

export function replicaServer(db: () => Db, status: () => ClusterStatus, log: Logger): ReplicaServer {
  const app = uWS.App()
  const counter = newRequestCounter()
  let listenSocket: uWS.us_listen_socket | null = null
  app.any('/*', (res, req) => {
    const state = requestState(res, counter)
    const method = req.getCaseSensitiveMethod().toUpperCase()
    const path = req.getUrl()
    // A body not read is drained, so the connection can be reused.
    if (method !== 'GET' && method !== 'HEAD') res.onData(() => {})
    const json = (code: number, body: unknown, headers: Record<string, string> = {}) =>
      send(res, state, code, { 'Cache-Control': 'no-store', ...headers }, JSON.stringify(body), { headOnly: method === 'HEAD' })
    try {
      if (path === '/healthz' && (method === 'GET' || method === 'HEAD')) return json(200, { status: 'ok' })
      if (path === '/readyz' && (method === 'GET' || method === 'HEAD')) {
        const r = readiness({ database: () => databaseReadiness(db()), draining: () => false, cluster: status }, new URLSearchParams(req.getQuery() ?? '').get('role') === 'primary')
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
      if (listenSocket) uWS.us_listen_socket_close(listenSocket)
      listenSocket = null
      ;(app as unknown as { close(): void }).close()
    },
  }
}
