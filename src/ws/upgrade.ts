/**
 * Authenticated WebSocket upgrades: copy what uWS gives us synchronously, authenticate, and either
 * upgrade with the socket's user data or refuse with the api-v1 §7 envelope (never a silent drop).
 */
import type { HttpRequest, HttpResponse, us_socket_context_t } from 'uWebSockets.js'
import { ApiError } from '../errors.ts'
import { CORS_HEADERS, errorHeaders, newResState, send } from '../net/respond.ts'
import type { AuthInput } from '../auth/principals.ts'
import { chooseFormat, type Format } from './codec.ts'
import type { LiveSocket } from './socket.ts'
import type { ConnectionLimits } from '../net/connection-limits.ts'

export interface UpgradeInput extends AuthInput {
  /**
   * Path parameters by index (uWS `:name` segments), percent-decoded. `null` when a segment holds
   * a malformed escape (`%E2%82`, `%ZZ`, `%C0%AF`): such a segment names nothing, so the socket
   * answers as for any unknown id (404), never with an exception.
   */
  params: Array<string | null>
  format: Format
  /** The client's address (TRUST_PROXY applied, src/net/client-address.ts), as the HTTP door sees it. */
  ip: string
}

/** Bearer token from `Authorization`, else `?token=` for clients (browsers) that cannot set headers. */
function bearerOf(headers: Record<string, string>, query: Record<string, string>): string | null {
  const auth = headers['authorization']
  if (auth && /^bearer\s+/i.test(auth)) return auth.replace(/^bearer\s+/i, '').trim() || null
  return query.token || null
}

/** decodeURIComponent without the URIError (RFC 3986 §2.1: a `%` must start a valid UTF-8 escape). */
export function decodeSegment(raw: string): string | null {
  try {
    return decodeURIComponent(raw)
  } catch {
    return null
  }
}

/**
 * Answer an upgrade request with the §7 envelope instead of upgrading, through the one response
 * writer; `tokenRefused`: a credential was presented (its 401 says `invalid_token`).
 */
export function refuse(res: HttpResponse, e: ApiError, reqId: string, tokenRefused = false): void {
  send(res, newResState(), e.status, { ...CORS_HEADERS, 'X-Request-Id': reqId, ...errorHeaders(e, tokenRefused) }, JSON.stringify(e.toJSON()))
}

/** What a socket kind's `authorize` returns: its own user data (the shared fields are filled in here). */
export type Authorized<T extends LiveSocket> = Omit<T, 'format' | 'closed' | 'id' | 'ip'>

/**
 * Build an upgrade handler (for `guarded`, src/ws/guard.ts). `authorize` returns the socket's user
 * data, or throws ApiError (401 unauthenticated, 403 forbidden, 404 not_found, 422) to refuse.
 * Anything else it throws goes up to the guard: logged and answered 500. Authorized, the socket
 * takes a place in `limits` (per credential and per client address) or is refused 429
 * `too_many_connections` (docs/limits.md).
 */
export function authedUpgrade<T extends LiveSocket>(paramCount: number, authorize: (input: UpgradeInput) => Authorized<T>) {
  return (res: HttpResponse, req: HttpRequest, context: us_socket_context_t, reqId: string, ip = '', limits?: ConnectionLimits): void => {
    const headers: Record<string, string> = {}
    req.forEach((k, v) => { headers[k] = v })
    const query = Object.fromEntries(new URLSearchParams(req.getQuery() ?? ''))
    const params = Array.from({ length: paramCount }, (_, i) => decodeSegment(req.getParameter(i) ?? ''))
    const key = headers['sec-websocket-key'] ?? ''
    const protocols = headers['sec-websocket-protocol'] ?? ''
    const extensions = headers['sec-websocket-extensions'] ?? ''
    const format = chooseFormat(query, protocols)
    const bearer = bearerOf(headers, query)
    let data: T
    try {
      data = { ...authorize({ headers, query, bearer, params, format, ip }), format, closed: false, id: reqId, ip } as T
    } catch (err) {
      if (!(err instanceof ApiError)) throw err
      return refuse(res, err, reqId, bearer !== null)
    }
    // Echo the msgpack subprotocol when it was how the client asked, as RFC 6455 requires.
    const chosen = protocols.split(',').map((s) => s.trim()).includes('msgpack') ? 'msgpack' : ''
    if (limits) {
      // The credential: a session socket's bearer token (header or ?token= alike); a socket without
      // one is opened by the capability in its address (a tracking link's track_token).
      const lease = limits.admit(data.session ? `${data.session.family}:${data.session.bearer}` : `path:${req.getUrl()}`, ip)
      if (lease instanceof ApiError) return refuse(res, lease, reqId)
      data.lease = lease
    }
    res.upgrade(data, key, chosen, extensions, context)
    // uWS runs `open` inside `upgrade`; a client gone meanwhile never opens, and gives its place back.
    data.lease?.settle()
  }
}
