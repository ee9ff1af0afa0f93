/**
 * The HTTP front door on uWebSockets.js. One handler for every path: copy the request, match the
 * route table, authenticate, rate-limit, authorize, validate, run the handler, answer with JSON or
 * the api-v1 §7 error envelope. Nothing else writes responses (see respond.ts).
 */
import { randomUUID } from 'node:crypto'
import type { HttpRequest, HttpResponse, TemplatedApp } from 'uWebSockets.js'
import { ApiError } from '../errors.ts'
import { principalKey, type AuthFamily, type AuthInput, type Authenticator, type Principal } from '../auth/principals.ts'
import type { Services } from '../services.ts'
import { checkShape, closesConnection, parseFormBody, parseJsonBody, readBody } from './body.ts'
import { headerLineBytes, headProblem } from '../net/request-limits.ts'
import { corsHeaders, errorHeaders, requestGuard, requestState, send, type SendOptions } from '../net/respond.ts'
import type { RawCall, RawReply } from '../net/raw-call.ts'
import { checkHead } from './head.ts'
import { addHeaderLine, clientAddress, peerAddress } from '../net/client-address.ts'
import { redactPath } from '../log.ts'
import { routeId } from '../metrics/http.ts'
import { RateLimiter, type RateDecision } from '../ratelimit.ts'
import { Router } from './router.ts'
import { isIdParam, Reply, type Route } from './route.ts'
import { runBound } from './op-pipeline.ts'
import { validate } from '../ops/validate.ts'
import { inputSource, type BoundRoute } from './bind.ts'
import { runForm, type FormRoute } from './form.ts'
import { checkSessionWrite, csrfMatches, csrfRefused, CSRF_FIELD, signInLocation } from './session-gate.ts'

export const API_PREFIX = '/api/v1'

const CORS_ALLOW_HEADERS = 'Authorization, Content-Type, Idempotency-Key, X-Storefront-Token, X-Request-Id, MCP-Protocol-Version, Mcp-Session-Id'

/** A path no route serves (api-v1 §7: 404 `not_found`, as for a resource that does not exist; reason `route_not_found`). */
const noRoute = (method: string, path: string): ApiError => new ApiError('route_not_found', `No route ${method} ${path}.`)

/** Full path a route is served at. */
export const fullPath = (r: Route): string => (r.site ? r.path : API_PREFIX + (r.path === '/' ? '' : r.path))


/**
 * Another front door served on this port at one exact address that takes the raw POST body: the
 * MCP servers (api-v1 §4.11, src/mcp). The HTTP door does for it what it does for every route
 * (request id, header checks, CORS and preflight, `Origin`, authentication, rate limit, body
 * limit, the one response writer) and hands over the bytes: the protocol answers malformed JSON
 * itself (JSON-RPC -32700), not with the API envelope. Declared here structurally so src/http
 * imports no other front door; app.ts wires src/mcp's endpoints in.
 */
export interface RawEndpoint {
  path: string
  /** The credential family the address authenticates; `none` for public servers. */
  auth: 'none' | 'owner' | 'storefront' | 'customer'
  /** Parameters its 401 challenges add (`resource_metadata`, `scope`: RFC 9728 §5.1, issue 36). */
  challenge?: Readonly<Record<string, string>>
  handle(call: RawCall): Promise<RawReply>
}

export interface HttpFrontDoor {
  router: Router
  routes: Route[]
}

export interface MountOptions {
  /** Lines added to every answer, asked per request (a cluster replica's `X-Dispatch-Served-By`: src/http/replica-reads.ts). */
  headers?: () => Record<string, string>
}

export function mountHttp(app: TemplatedApp, svc: Services, routes: Route[], authenticators: Services['auth'], rawEndpoints: readonly RawEndpoint[] = [], opts: MountOptions = {}): HttpFrontDoor {
  const router = new Router()
  for (const r of routes) {
    // The web session authenticates site pages only, never the API (issue 14, docs/dashboard.md).
    if (r.auth === 'session' && !r.site) throw new Error(`${r.method} ${r.path}: the session family is for site routes only`)
    // Unlimited routes take no credential: a token's budget is never skipped.
    if (r.rateLimit === false && r.auth !== 'none') throw new Error(`${r.method} ${r.path}: only routes without a credential can be unlimited`)
    router.add(fullPath(r), r)
  }
  const raws = new Map(rawEndpoints.map((e) => [e.path, e]))
  // RFC 8707 resource identifiers, made once: the API's, and each MCP server's (its address).
  const apiResource = `${svc.config.siteUrl}/api/v1`
  const rawResources = new Map(rawEndpoints.map((e) => [e.path, `${svc.config.siteUrl}${e.path}`]))
  const limiter = new RateLimiter(svc.config.rateLimitPerMinute)
  // Public MCP servers: per client address (docs/mcp.md "Limits"); authenticated ones spend the token's API budget.
  const publicRawLimiter = new RateLimiter(svc.config.mcpPublicRatePerMinute)
  const siteOrigin = raws.size > 0 ? new URL(svc.config.siteUrl).origin : undefined
  const originAllowed = (origin: string | undefined) =>
    origin === undefined || origin === siteOrigin || svc.config.mcpAllowedOrigins.includes('*') || svc.config.mcpAllowedOrigins.includes(origin)
  // Route-level limits (api-v1 §8 login/register 10/min, OTP 6/min), one limiter per rate.
  const routeLimiters = new Map<number, RateLimiter>()
  const routeLimiter = (perMinute: number) => routeLimiters.get(perMinute) ?? routeLimiters.set(perMinute, new RateLimiter(perMinute)).get(perMinute)!
  const log = svc.log
  // Request metrics by route id, never the raw URL (src/metrics/http.ts): each route's timer is found once, here.
  const timings = svc.metrics.http
  const timers = new Map(routes.map((r) => [r, timings.timer(routeId(r.method, fullPath(r)))]))
  // Work queued for after the current poll phase (see `proceed` below); each entry never throws.
  const queued: Array<() => void> = []
  const runQueued = () => {
    for (const fn of queued.splice(0)) fn()
  }
  const afterPoll = (fn: () => void) => {
    if (queued.push(fn) === 1) setImmediate(runQueued)
  }
  const rawTimers = new Map(rawEndpoints.map((e) => [e.path, timings.timer(routeId('POST', e.path))]))

  app.any('/*', (res: HttpResponse, req: HttpRequest) => {
    // First of all: uWS ends the process when a handler returns without answering or watching
    // for the client to go away (requestState does the watching).
    const state = requestState(res, svc.lifecycle.requests)
    // Known as soon as the request is copied; the guard's log line uses what is known so far.
    let requestId = '-'
    let method = ''
    let path = ''
    const baseHeaders = opts.headers ? Object.assign(corsHeaders(), opts.headers()) : corsHeaders()
    // Nothing thrown while answering may reach uWS (it would end the process): log and answer 500.
    const guard = requestGuard(res, state, (err) => {
      log.error({ err, reqId: requestId, method, path: redactPath(path) }, 'uncaught error while answering')
    }, () => baseHeaders)
    guard(() => handle())()

    function handle() {
      const started = process.hrtime.bigint()
      let timer = timings.unmatched
      method = req.getCaseSensitiveMethod().toUpperCase()
      path = req.getUrl()
      const rawQuery = req.getQuery() ?? ''
      const headers: Record<string, string> = {}
      // Only the framing and Host lines are kept as lines (every repeat counts): checkHead needs no more.
      const lines: Array<[string, string]> = []
      let headerBytes = 0
      req.forEach((k, val) => {
        headerBytes += headerLineBytes(k, val) // for MAX_HEADER_BYTES (docs/limits.md)
        addHeaderLine(headers, k, val)
        if (k === 'content-length' || k === 'transfer-encoding' || k === 'host') lines.push([k, val])
      })
      const incomingId = headers['x-request-id']
      requestId = incomingId && /^[\w.-]{1,64}$/.test(incomingId) ? incomingId : randomUUID()
      baseHeaders['X-Request-Id'] = requestId
      // The client, not the proxy in front (TRUST_PROXY, src/net/client-address.ts): rate limits, logs and sessions key on it.
      const ip = clientAddress(peerAddress(res), headers, svc.config.trustProxy)
      // A credential was presented and refused: its 401 says `error="invalid_token"` (RFC 6750 §3.1).
      let tokenRefused = false
      // The address's own challenge parameters (an MCP server's protected resource metadata).
      let challenge: Readonly<Record<string, string>> | undefined
      // The RFC 8707 resource this address is (the API's, or an MCP server's): app tokens bound to another are refused.
      let door = apiResource
      // Only computed when a line is written: the access log is usually off under load.
      let logPath: string | undefined
      const pathForLog = () => (logPath ??= redactPath(path))

      const finish = (status: number, body: string | Buffer | null, extra: Record<string, string> = {}, opts: SendOptions = {}) => {
        // Added to the request's own headers object (nothing is sent after this) rather than
        // spread into a new one: a spread after the first member is a slow runtime path in V8.
        send(res, state, status, Object.assign(baseHeaders, extra), body, { contentType: opts.contentType, close: opts.close, headOnly: method === 'HEAD' })
        const ms = Number(process.hrtime.bigint() - started) / 1e6
        timer.observe(status, ms / 1000)
        if (log.isLevelEnabled('info')) log.info({ reqId: requestId, method, path: pathForLog(), ip, status, ms: Math.round(ms * 100) / 100, ...(opts.close ? { closed: true } : {}) }, 'request')
      }
      const fail = (err: unknown, opts: SendOptions = {}) => {
        let e: ApiError
        if (err instanceof ApiError) e = err
        else {
          log.error({ err, reqId: requestId, method, path: pathForLog() }, 'unhandled error')
          e = new ApiError('internal_error')
        }
        // A body deadline (408) closes: the rest of that body may still be on its way (docs/limits.md).
        finish(e.status, JSON.stringify(e.toJSON()), errorHeaders(e, tokenRefused, challenge), closesConnection(e) ? { ...opts, close: true } : opts)
      }
      const rate = (d: RateDecision) => {
        baseHeaders['X-RateLimit-Limit'] = String(d.limit)
        baseHeaders['X-RateLimit-Remaining'] = String(d.remaining)
        if (!d.allowed) throw new ApiError('rate_limited', `Too many requests; retry in ${d.retryAfterSec} s.`, undefined, { 'Retry-After': String(d.retryAfterSec) })
      }

      const problem = checkHead(lines)
      if (problem?.close) {
        // RFC 9112 §6.3: answer, then close. Not now: when this handler returns, uWS goes on to parse
        // whatever followed this head in the same read as the next request, and an answer given now
        // would not stop it (the smuggled request would be served). On a later turn, a request still
        // parsed behind this pending one makes uWS drop the connection unanswered instead.
        res.onData(() => {})
        setImmediate(guard(() => fail(problem.error, { close: true })))
        return
      }

      /**
       * Authenticate, then rate-limit per principal (`publicLimiter` per address when the address
       * takes no credential; `spend` false: the address's budget is shown, not spent, for routes
       * declaring `rateLimit: false`); failed authentications count against the address.
       */
      function authenticate(family: AuthFamily, query: Record<string, string>, publicLimiter: RateLimiter, spend = true): Principal | null {
        if (family === 'none') {
          rate(spend ? publicLimiter.take(`ip:${ip}`) : publicLimiter.peek(`ip:${ip}`))
          return null
        }
        const auth = headers['authorization']
        const bearer = auth && /^bearer\s+/i.test(auth) ? auth.replace(/^bearer\s+/i, '').trim() : family === 'owner' ? (query['api_token'] ?? null) : null
        const input: AuthInput = { headers, query, bearer: bearer || null, resource: door }
        const principal = (authenticators[family] as Authenticator<AuthFamily>)(input) as Principal | null
        if (!principal) {
          rate(limiter.take(`ip:${ip}`))
          // Signed out of the web session: the caller sends the browser to the sign-in page.
          if (family === 'session') return null
          tokenRefused = input.bearer !== null || headers['x-storefront-token'] !== undefined
          throw new ApiError('unauthenticated')
        }
        rate(limiter.take(principalKey(principal)))
        return principal
      }

      /** An MCP address: POST only, `Origin` checked, then the raw body to its front door. */
      function serveRaw(endpoint: RawEndpoint): void {
        timer = rawTimers.get(endpoint.path) ?? timer
        challenge = endpoint.challenge
        door = rawResources.get(endpoint.path)!
        if (method === 'OPTIONS') {
          baseHeaders['X-RateLimit-Limit'] = String(limiter.limit)
          return finish(204, null, { 'Access-Control-Allow-Methods': 'POST, OPTIONS', 'Access-Control-Allow-Headers': CORS_ALLOW_HEADERS, 'Access-Control-Max-Age': '600' })
        }
        if (method !== 'POST') {
          // Streamable HTTP lets a server refuse the GET event stream with 405 (MCP 2025-06-18
          // "Listening for messages"): this server answers every message in its POST. SDK clients
          // try this GET on every connection: it spends the address's MCP budget, not the API's (issue 36).
          rate(publicRawLimiter.take(`ip:${ip}`))
          if (method !== 'GET' && method !== 'HEAD') res.onData(() => {})
          throw new ApiError('method_not_allowed', 'Send MCP messages with POST.', undefined, { Allow: 'POST, OPTIONS' })
        }
        // MCP transport security: a browser page from another origin must not drive the server
        // (DNS rebinding); agents that are not browsers send no Origin.
        if (!originAllowed(headers['origin'])) {
          res.onData(() => {})
          throw new ApiError('forbidden', 'This Origin may not call the MCP server.')
        }
        const principal = authenticate(endpoint.auth, Object.fromEntries(new URLSearchParams(rawQuery)), publicRawLimiter)
        // The budget the POST was charged to: per token, or per address on a public server.
        const spend = (calls: number) => {
          if (calls > 0) rate(principal ? limiter.take(principalKey(principal), calls) : publicRawLimiter.take(`ip:${ip}`, calls))
        }
        const ctype = headers['content-type'] ?? ''
        const declared = headers['content-length'] ? Number(headers['content-length']) : null
        readBody(res, svc.config.bodyLimitBytes, declared, svc.config.bodyTimeoutMs)
          .then((body) => {
            if (!/^application\/([\w.+-]+\+)?json\b/i.test(ctype)) throw new ApiError('unsupported_media_type', 'Send MCP messages as application/json.')
            checkShape(body)
            return endpoint.handle({ principal, body, headers, requestId, ip, spend })
          })
          .then((r) => finish(r.status, r.body, r.headers))
          .catch(guard(fail))
      }

      try {
        if (problem) throw problem.error
        // 414 / 431 before routing, authentication or any body (docs/limits.md); nothing is read or written.
        const oversized = headProblem(path.length + (rawQuery ? rawQuery.length + 1 : 0), headerBytes, svc.config)
        if (oversized) throw oversized
        const raw = raws.get(path)
        if (raw) return serveRaw(raw)
        if (method === 'OPTIONS') {
          timer = timings.preflight
          // Preflights carry the address's budget (api-v1 §8: headers on every response) but do not
          // spend it: browsers send one per new URL, which would starve clients behind one NAT.
          rate(limiter.peek(`ip:${ip}`))
          const allowed = router.methodsAt(path)
          if (allowed.length === 0) throw noRoute(method, path)
          return finish(204, null, {
            'Access-Control-Allow-Methods': [...allowed, 'OPTIONS'].join(', '),
            'Access-Control-Allow-Headers': CORS_ALLOW_HEADERS,
            'Access-Control-Max-Age': '600',
          })
        }
        const m = router.match(method === 'HEAD' ? 'GET' : method, path)
        if (m.kind !== 'found') {
          rate(limiter.take(`ip:${ip}`))
          if (m.kind === 'method_not_allowed') throw new ApiError('method_not_allowed', `Use ${m.allowed.join(', ')} on this route.`, undefined, { Allow: m.allowed.join(', ') })
          throw noRoute(method, path)
        }
        const route = m.route
        const params = m.params
        timer = timers.get(route) ?? timer
        const query = Object.fromEntries(new URLSearchParams(rawQuery))
        // A bound operation that reads a JSON body (creating an order, …): its checks run after this
        // poll phase, together with those of every other such request the phase brought, so they
        // share one read of the auth epoch (src/storage/auth-epoch.ts) instead of one each. Reading
        // later than a request arrived still sees every revocation committed before it arrived. The
        // body is read from now on (uWS drops body bytes that arrive before `onData` is set); it is
        // only parsed, and its errors only answered, where the input is read, as before.
        const declared = headers['content-length'] ? Number(headers['content-length']) : null
        // A route may have its own limit (a photo upload, src/http/bind.ts `bodyLimit`).
        const bodyLimit = route.binding?.bodyLimit?.(svc.config) ?? svc.config.bodyLimitBytes
        // A route with a larger limit of its own (a photo upload) reads its body only once the caller
        // is authenticated (below, in `proceed`): nobody unauthenticated fills memory up to that limit.
        if (method === 'POST' && route.op && route.binding && !route.binding.bodyLimit && route.auth !== 'session' && inputSource(route.binding) === 'body') {
          const body = readBody(res, bodyLimit, declared, svc.config.bodyTimeoutMs)
          body.catch(() => {}) // answered by the operation's read, or never when the request is refused first
          afterPoll(guard(() => {
            try {
              proceed(body)
            } catch (err) {
              fail(err)
            }
          }))
          return
        }
        return proceed(null)

        /** Everything after routing; `early`: the body when its read started already. */
        function proceed(early: Promise<Buffer> | null): void {
          const principal = authenticate(route.auth, query, limiter, route.rateLimit !== false)
          // The owner's web session (src/http/session-gate.ts): signed out, a page visit (or a form
          // post) goes to /login and back; a state-changing request needs the session's CSRF token.
          let csrfPending = false
          if (route.auth === 'session') {
            const reading = method === 'GET' || method === 'HEAD'
            if (!principal) {
              if (!reading && !route.form) throw new ApiError('unauthenticated', 'Sign in first.')
              if (!reading) res.onData(() => {})
              return finish(303, null, { Location: signInLocation(path, rawQuery), 'Cache-Control': 'no-store' })
            }
            if (!reading && principal.kind === 'session') csrfPending = !checkSessionWrite(svc.config.siteUrl, headers, principal.csrf, route.form === true)
          }
          // Per address and store: `{id}` of the API routes, `{slug}` of the store website's pages.
          if (route.rateLimit) rate(routeLimiter(route.rateLimit.perMinute).take(`${route.method} ${route.path}|${ip}|${params.id ?? params.slug ?? ''}`))
          // Capabilities, permissions and scopes (api-v1 §5) are the policy's (src/auth/policy.ts
          // `authorize`): a bound operation's in `invoke`, a plain route's handler calls it itself.
          for (const [name, value] of Object.entries(params)) {
            // An id that cannot exist is simply not found (api-v1 §7), never a validation error.
            if (isIdParam(name) && !/^[1-9]\d{0,15}$/.test(value)) throw new ApiError('not_found')
          }
          const ctype = headers['content-type'] ?? ''
          /** The JSON body (413, 415 and 400 as the envelope); must be called before this handler returns (unless `early`). */
          const readJson = (): Promise<unknown> =>
            (early ?? readBody(res, bodyLimit, declared, svc.config.bodyTimeoutMs)).then((buf) => {
              // Another body format a binding accepts besides JSON (a theme as application/zip), decoded to the same input.
              const decode = route.binding?.decoders?.[ctype.split(';')[0]!.trim().toLowerCase()]
              if (decode && buf.length > 0) return decode(buf, headers)
              if (buf.length > 0 && ctype && !/^application\/([\w.+-]+\+)?json\b/i.test(ctype)) throw new ApiError('unsupported_media_type')
              if (buf.length === 0) return undefined
              return parseJsonBody(buf) // 400 for a shape past JSON_SHAPE, before JSON.parse
            })
          // Only a form body can still bring the CSRF token, a form bound to an operation's as any
          // other's (read below, before anything runs); any other path runs without reading one.
          const formRead = route.form && method !== 'GET' && method !== 'HEAD' && method !== 'DELETE'
          if (csrfPending && !formRead) throw csrfRefused()
          if (route.op && route.binding) {
            // A bound operation: authorize → resolve scope (404) → read and validate input (422) → run.
            // Drain a body the operation does not read so uWS can reuse the connection.
            if (inputSource(route.binding) === 'query' && method !== 'GET' && method !== 'HEAD') res.onData(() => {})
            runBound(route as Route & BoundRoute, { svc, principal, params, query: stripAuthQuery(query), readJson, headers, requestId, ip })
              .then((r) => finish(r.status, r.status === 204 ? null : JSON.stringify(r.body), r.headers))
              .catch(guard(fail))
            return
          }
          const parsedQuery = route.query ? validate(route.query, stripAuthQuery(query), 'query') : undefined

          const run = (body: unknown) => {
            const ctx = { principal, params, query: parsedQuery, body, headers, requestId, ip, svc }
            Promise.resolve()
              .then(() => route.handler(ctx as never))
              .then((out) => {
                if (out instanceof Reply) {
                  const isRaw = typeof out.body === 'string' || Buffer.isBuffer(out.body)
                  return finish(out.status, out.body == null ? null : isRaw ? (out.body as string) : JSON.stringify(out.body), out.headers, { contentType: out.contentType })
                }
                const status = route.status ?? 200
                if (route.produces) return finish(status, out as string, {}, { contentType: route.produces })
                finish(status, status === 204 ? null : JSON.stringify(out ?? null))
              })
              .catch(guard(fail))
          }

          if (method === 'GET' || method === 'DELETE' || method === 'HEAD' || (!route.body && !route.form)) {
            // Drain any body we do not read so uWS can reuse the connection.
            if (method !== 'GET' && method !== 'HEAD') res.onData(() => {})
            return run(undefined)
          }
          if (route.form) {
            readBody(res, svc.config.bodyLimitBytes, declared, svc.config.bodyTimeoutMs)
              .then((buf) => {
                if (buf.length > 0 && !/^application\/x-www-form-urlencoded\b/i.test(ctype)) throw new ApiError('unsupported_media_type')
                const form = parseFormBody(buf)
                if (csrfPending && !(principal?.kind === 'session' && csrfMatches(principal.csrf, form.get(CSRF_FIELD)))) throw csrfRefused()
                if (!isFormRoute(route)) return run(form)
                // A form bound to an operation (src/http/form.ts): the one pipeline, then its page.
                return runForm(route, { svc, principal, params, form, headers, requestId, ip })
                  .then((out) => finish(out.status, out.body == null ? null : (out.body as string), out.headers, { contentType: out.contentType }))
              })
              .catch(guard(fail))
            return
          }
          readJson()
            .then((json) => run(validate(route.body!, json, 'body')))
            .catch(guard(fail))
        }
      } catch (err) {
        fail(err)
      }
    }
  })

  return { router, routes }
}

const isFormRoute = (r: Route): r is Route & FormRoute => 'formBinding' in r && r.op !== undefined

function stripAuthQuery(q: Record<string, string>): Record<string, string> {
  if (!('api_token' in q)) return q
  const { api_token: _drop, ...rest } = q
  return rest
}

