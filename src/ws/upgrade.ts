/**
 * Authenticated WebSocket upgrades: copy what uWS gives us synchronously, authenticate, and either
 * upgrade with the socket's user data or refuse with the api-v1 §7 envelope (never a silent drop).
 */
import type { HttpRequest, HttpResponse, us_socket_context_t } from 'uWebSockets.js'
import { ApiError } from '../errors.ts'
import type { AuthInput } from '../auth/principals.ts'
import { chooseFormat, type Format } from './codec.ts'

export interface UpgradeInput extends AuthInput {
  /** Path parameters by index (uWS `:name` segments). */
  params: string[]
  format: Format
}

/** Bearer token from `Authorization`, else `?token=` for clients (browsers) that cannot set headers. */
function bearerOf(headers: Record<string, string>, query: Record<string, string>): string | null {
  const auth = headers['authorization']
  if (auth && /^bearer\s+/i.test(auth)) return auth.replace(/^bearer\s+/i, '').trim() || null
  return query.token || null
}

/**
 * Build a uWS `upgrade` handler. `authorize` returns the socket's user data, or throws ApiError
 * (401 unauthenticated, 403 forbidden, 404 not_found) to refuse.
 */
export function authedUpgrade<T extends { format: Format }>(paramCount: number, authorize: (input: UpgradeInput) => Omit<T, 'format'>) {
  return (res: HttpResponse, req: HttpRequest, context: us_socket_context_t) => {
    const headers: Record<string, string> = {}
    req.forEach((k, v) => { headers[k] = v })
    const query = Object.fromEntries(new URLSearchParams(req.getQuery() ?? ''))
    const params = Array.from({ length: paramCount }, (_, i) => decodeURIComponent(req.getParameter(i) ?? ''))
    const key = headers['sec-websocket-key'] ?? ''
    const protocols = headers['sec-websocket-protocol'] ?? ''
    const extensions = headers['sec-websocket-extensions'] ?? ''
    const format = chooseFormat(query, protocols)
    let data: T
    try {
      data = { ...authorize({ headers, query, bearer: bearerOf(headers, query), params, format }), format } as T
    } catch (err) {
      const e = err instanceof ApiError ? err : new ApiError('internal_error')
      res.cork(() => {
        res.writeStatus(`${e.status} ${e.code}`).writeHeader('Content-Type', 'application/json').end(JSON.stringify(e.toJSON()))
      })
      return
    }
    // Echo the msgpack subprotocol when it was how the client asked, as RFC 6455 requires.
    const chosen = protocols.split(',').map((s) => s.trim()).includes('msgpack') ? 'msgpack' : ''
    res.upgrade(data, key, chosen, extensions, context)
  }
}
