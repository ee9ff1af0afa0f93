/**
 * `GET /metrics` on the public port (docs/metrics.md "Protection"), mounted only when METRICS_TOKEN
 * is set; without it the address is not served at all and the HTTP door answers 404 like any
 * unknown path. The token travels as `Authorization: Bearer <METRICS_TOKEN>` (what Prometheus's
 * `authorization` scrape setting sends) and is compared in constant time over SHA-256 digests, so
 * neither its content nor its length leaks through timing.
 *
 * Not a route of the API table: it is an operator's address, not an API operation, so it stays out
 * of discovery and OpenAPI (whose security schemes are the API's own), and answers in the
 * Prometheus text format. Errors still use the api-v1 §7 envelope. `uWS` serves the exact path
 * `/metrics` here before the HTTP door's catch-all; it is mounted after `track(app)`, so a scrape
 * in progress is waited for at shutdown like any request.
 */
import { createHash, randomUUID, timingSafeEqual } from 'node:crypto'
import type { HttpResponse, HttpRequest, TemplatedApp } from 'uWebSockets.js'
import { ApiError } from '../errors.ts'
import type { Logger } from '../log.ts'
import { bearerChallenge, requestState, send, type RequestCounter } from '../net/respond.ts'
import type { Metrics } from './registry.ts'

const digest = (s: string): Buffer => createHash('sha256').update(s).digest()

/** True when `header` is `Bearer <token>` (scheme case-insensitive, RFC 9110 §11.1). */
export function bearerMatches(header: string, expected: Buffer): boolean {
  const m = /^bearer\s+(\S+)\s*$/i.exec(header)
  // Hash whatever came (or nothing) so a missing header costs the same as a wrong one.
  return timingSafeEqual(digest(m?.[1] ?? ''), expected) && m !== null
}

export function mountMetricsEndpoint(app: TemplatedApp, metrics: Metrics, token: string, log: Logger, requests: RequestCounter): void {
  const expected = digest(token)
  const timer = metrics.http.timer('GET /metrics')
  app.any('/metrics', (res: HttpResponse, req: HttpRequest) => {
    const started = process.hrtime.bigint()
    const state = requestState(res, requests)
    const method = req.getCaseSensitiveMethod().toUpperCase()
    const reqId = randomUUID()
    const answer = (status: number, body: string, contentType?: string, extra: Record<string, string> = {}, close = false) => {
      try {
        send(res, state, status, { 'X-Request-Id': reqId, 'Cache-Control': 'no-store', ...extra }, body, { contentType, headOnly: method === 'HEAD' && !close, close })
      } catch (err) {
        log.error({ err, reqId }, 'metrics answer failed')
      }
      timer.observe(status, Number(process.hrtime.bigint() - started) / 1e9)
    }
    const fail = (e: ApiError, close = false) => answer(e.status, JSON.stringify(e.toJSON()), undefined, e.headers, close)
    // A scrape has no body; one announced here is refused and the connection closed, so no byte
    // of it can be read as a next request (the HTTP door's framing rules, src/http/head.ts).
    const length = req.getHeader('content-length')
    if ((length !== '' && length !== '0') || req.getHeader('transfer-encoding')) {
      res.onData(() => {})
      return fail(new ApiError('bad_request', 'A scrape carries no body.'), true)
    }
    if (method !== 'GET' && method !== 'HEAD') return fail(new ApiError('method_not_allowed', 'Use GET on /metrics.', undefined, { Allow: 'GET, HEAD' }))
    const authorization = req.getHeader('authorization')
    if (!bearerMatches(authorization, expected)) {
      const challenge = bearerChallenge('metrics', /^bearer\s+\S/i.test(authorization))
      return fail(new ApiError('unauthenticated', 'Send Authorization: Bearer <METRICS_TOKEN>.', undefined, { 'WWW-Authenticate': challenge }))
    }
    metrics.text().then(
      (text) => answer(200, text, metrics.contentType),
      (err: unknown) => {
        log.error({ err, reqId }, 'metrics collection failed')
        fail(new ApiError('internal_error'))
      },
    )
  })
}
