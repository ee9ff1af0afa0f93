/**
 * The separate metrics listener (METRICS_HOST / METRICS_PORT, docs/metrics.md "Protection"): a
 * small node:http server that serves only `GET /metrics`, without a token, on an address meant to
 * be private (127.0.0.1 by default, or an internal interface Prometheus reaches). It never shares
 * the public port, so a token cannot leak through it and the public API's limits do not apply to
 * scrapes. Everything else on it answers 404.
 */
import { createServer, type Server } from 'node:http'
import type { Logger } from '../log.ts'
import type { Metrics } from './registry.ts'

export interface MetricsListener {
  /** Resolves with the bound port; rejects when the address is taken or not this machine's. */
  listen(): Promise<number>
  close(): Promise<void>
}

export function metricsListener(metrics: Metrics, host: string, port: number, log: Logger): MetricsListener {
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0]
    if (path !== '/metrics' || (req.method !== 'GET' && req.method !== 'HEAD')) {
      res.writeHead(404, { 'Content-Type': 'text/plain; charset=utf-8' }).end('Only GET /metrics is served here.\n')
      return
    }
    metrics.text().then(
      (text) => { res.writeHead(200, { 'Content-Type': metrics.contentType, 'Cache-Control': 'no-store' }).end(req.method === 'HEAD' ? undefined : text) },
      (err: unknown) => {
        log.error({ err }, 'metrics collection failed')
        res.writeHead(500, { 'Content-Type': 'text/plain; charset=utf-8' }).end('metrics collection failed\n')
      },
    )
  })
  // A scrape is one short request; idle keep-alive connections must not hold shutdown up.
  server.keepAliveTimeout = 5000
  return {
    listen: () => new Promise((resolve, reject) => {
      const onError = (err: Error) => reject(new Error(`cannot listen for metrics on ${host}:${port}: ${err.message}`))
      server.once('error', onError)
      // Exclusive, like the main port (issue 20 item 1): a second server must not share it silently.
      server.listen({ host, port, exclusive: true }, () => {
        server.off('error', onError)
        resolve((server.address() as { port: number }).port)
      })
    }),
    close: () => new Promise((resolve) => {
      if (!server.listening) return resolve()
      server.closeAllConnections()
      server.close(() => resolve())
    }),
  }
}
