/**
 * The only module that writes to a uWS response — HTTP answers and refused WebSocket upgrades alike,
 * so both carry the same headers: guards aborts, corks, status, headers, JSON — and
 * the guard that keeps anything thrown while answering from reaching uWS (a throw inside a uWS
 * callback ends the process).
 */
import type { HttpResponse } from 'uWebSockets.js'
import { ApiError } from '../errors.ts'

/**
 * The HTTP requests of one app received and not yet answered nor aborted, for its graceful
 * shutdown (src/net/drain.ts): counted here, where every answer is written, instead of wrapping
 * each response's methods (four closures per request on the hottest path). `closing`: every answer
 * closes its connection (`Connection: close`, RFC 9112 §9.6), so a kept-alive client opens a new
 * one instead of reusing one that is about to close under its next request. `settled` is called
 * each time a counted request ends or is aborted.
 */
export interface RequestCounter { inFlight: number; closing: boolean; settled: (() => void) | null }

export const newRequestCounter = (): RequestCounter => ({ inFlight: 0, closing: false, settled: null })

/**
 * `aborted`: the client is gone (uWS `onAborted`), `res` must not be touched again. `done`: a
 * response was started. `ended`: it was completely handed to uWS. `counter`: where the request
 * is counted in flight until it ended or was aborted (null once settled, or when not counted).
 */
export interface ResState { aborted: boolean; done: boolean; ended: boolean; counter: RequestCounter | null }

/** The state of a response that answers no counted request (a refused WebSocket upgrade). */
export const newResState = (): ResState => ({ aborted: false, done: false, ended: false, counter: null })

/**
 * The state of one HTTP request, counted in `counter` until answered or aborted; watches for the
 * client going away (uWS ends the process when a handler returns without doing either), so call
 * it first thing in the handler (uWS keeps one abort handler per response: `onAborted` is called
 * from this one).
 */
export function requestState(res: HttpResponse, counter: RequestCounter, onAborted?: () => void): ResState {
  const state: ResState = { aborted: false, done: false, ended: false, counter }
  counter.inFlight++
  res.onAborted(() => { state.aborted = true; settle(state); onAborted?.() })
  return state
}

function settle(state: ResState): void {
  const c = state.counter
  if (c === null) return
  state.counter = null
  c.inFlight--
  c.settled?.()
}

/**
 * Headers on every answer of the API, refused socket upgrades included (browsers read them
 * cross-origin), as a new object the caller may add to. A literal, not `{ ...CORS_HEADERS }`: a
 * copy made by spreading, then added to, was a slow object to build and to walk in `send` (~3 µs
 * per request in a micro-test, against 0.1 µs).
 */
export const corsHeaders = (): Record<string, string> => ({
  'Access-Control-Allow-Origin': '*',
  'Access-Control-Expose-Headers': 'X-Request-Id, X-RateLimit-Limit, X-RateLimit-Remaining, Retry-After, Idempotent-Replayed, WWW-Authenticate',
})
export const CORS_HEADERS: Readonly<Record<string, string>> = Object.freeze(corsHeaders())

/** The protection space of the API's tokens (every family, on `/api/v1`, `/api/app/usage`, the MCP servers and sockets). */
export const API_REALM = 'api'

/**
 * A Bearer challenge (RFC 6750 §3): `error="invalid_token"` when a token was presented and refused;
 * none when no credential (or another scheme) was sent, as §3.1 asks. `params` adds more, e.g. an
 * MCP server's `resource_metadata` (RFC 9728 §5.1) and `scope` (issue 36).
 */
export const bearerChallenge = (realm: string, tokenRefused: boolean, params: Readonly<Record<string, string>> = {}): string =>
  `Bearer realm="${realm}"${tokenRefused ? ', error="invalid_token"' : ''}${Object.entries(params).map(([k, v]) => `, ${k}="${v.replace(/["\\]/g, '')}"`).join('')}`

/**
 * The headers of an error answer (HTTP door and refused socket upgrades): the error's own, and on
 * every 401 a `WWW-Authenticate` challenge (RFC 9110 §11.6.1), unless the error brings its own;
 * `params` are the address's own challenge parameters (an MCP server's protected resource metadata).
 */
export function errorHeaders(e: ApiError, tokenRefused: boolean, params?: Readonly<Record<string, string>>): Record<string, string> {
  if (e.status !== 401 || e.headers?.['WWW-Authenticate'] !== undefined) return e.headers ?? {}
  return { ...e.headers, 'WWW-Authenticate': bearerChallenge(API_REALM, tokenRefused, params) }
}

const STATUS_TEXT: Record<number, string> = {
  200: '200 OK', 201: '201 Created', 204: '204 No Content', 400: '400 Bad Request', 401: '401 Unauthorized',
  403: '403 Forbidden', 404: '404 Not Found', 405: '405 Method Not Allowed', 409: '409 Conflict', 413: '413 Payload Too Large',
  415: '415 Unsupported Media Type', 422: '422 Unprocessable Entity', 429: '429 Too Many Requests',
  431: '431 Request Header Fields Too Large', 500: '500 Internal Server Error', 501: '501 Not Implemented',
  503: '503 Service Unavailable',
}
export const statusLine = (s: number): string => STATUS_TEXT[s] ?? String(s)

export interface SendOptions {
  contentType?: string
  /** HEAD: the headers GET would send, no body (a body would desync a kept-alive connection). */
  headOnly?: boolean
  /**
   * Close the connection after this response (RFC 9112 §9.6): uWS then adds `Connection: close`
   * itself, so callers must not.
   */
  close?: boolean
}

export function send(
  res: HttpResponse,
  state: ResState,
  status: number,
  headers: Record<string, string>,
  body: string | Buffer | null,
  { contentType = 'application/json', headOnly = false, close = false }: SendOptions = {},
): void {
  if (state.aborted || state.done) return
  if (state.counter?.closing) close = true
  // Header values are made strings before the first byte is written: a value uWS refuses would
  // otherwise throw half-way through the head. Names and values alternate in one flat array (a
  // loop, not entries/flatMap: this runs for every response).
  const head: string[] = []
  for (const k in headers) {
    const v = String(headers[k])
    // Several cookies travel as one value joined by "\n" (a header value cannot hold a newline, and
    // Set-Cookie cannot be comma-joined, RFC 6265 §3): one Set-Cookie line each.
    if (k.length === 10 && k.toLowerCase() === 'set-cookie') for (const c of v.split('\n')) head.push(k, c)
    else head.push(k, v)
  }
  corked(res, state, () => {
    res.writeStatus(statusLine(status))
    for (let i = 0; i < head.length; i += 2) res.writeHeader(head[i]!, head[i + 1]!)
    // endWithoutBody(length) of this uWS build drops the connection unanswered for any length
    // but 0 (and 0 writes `Content-Length: 0`), so only its bare form is used.
    if (status === 204) {
      // RFC 9110 §8.6: no Content-Length on a 204. (No caller closes after a 204.)
      res.endWithoutBody()
    } else if (body === null) {
      // `Content-Length: 0`; a bare endWithoutBody() sends none and a kept-alive client would wait.
      res.end('', close)
    } else {
      res.writeHeader('Content-Type', contentType)
      if (headOnly && close) res.end('', true) // the length GET would have cannot be stated while closing
      else if (headOnly) {
        res.writeHeader('Content-Length', String(Buffer.byteLength(body)))
        res.endWithoutBody()
      } else res.end(body, close)
    }
  })
}

/**
 * The last resort after code answering a request threw: answer 500 `internal_error` if nothing was
 * written yet, drop the connection if a response was started and not finished, nothing if the
 * client is gone. Never throws.
 */
export function rescue(res: HttpResponse, state: ResState, headers: Record<string, string>): void {
  if (state.aborted || state.ended) return
  try {
    if (!state.done) return send(res, state, 500, headers, JSON.stringify(new ApiError('internal_error').toJSON()))
  } catch { /* send closed the connection already */ }
  if (state.aborted || state.ended) return
  state.ended = true
  settle(state)
  try { res.close() } catch { /* already gone */ }
}

/**
 * Wrap a uWS callback, or a promise continuation that writes, so nothing it throws reaches uWS:
 * `report` logs (with the request id), then `rescue` answers or closes. The wrapper never throws.
 */
export function requestGuard(res: HttpResponse, state: ResState, report: (err: unknown) => void, headers: () => Record<string, string>) {
  return <A extends unknown[]>(fn: (...args: A) => void) => (...args: A): void => {
    try {
      fn(...args)
    } catch (err) {
      try { report(err) } catch { /* the logger failed: still answer */ }
      let h: Record<string, string> = {}
      try { h = headers() } catch { /* answer without them */ }
      rescue(res, state, h)
    }
  }
}

/**
 * Relay an answer another server wrote (a replica passing on the primary's, src/http/forward.ts):
 * its status, header lines and body as they came. `length`: the body's length a HEAD answer states.
 */
export function relay(res: HttpResponse, state: ResState, status: number, lines: Array<[string, string]>, body: Buffer, headOnly: boolean, length: string | null): void {
  if (state.aborted || state.done) return
  corked(res, state, () => {
    res.writeStatus(statusLine(status))
    for (const [k, v] of lines) res.writeHeader(k, v)
    if (status === 204 || status === 304) res.endWithoutBody()
    else if (headOnly) {
      if (length !== null) res.writeHeader('Content-Length', length)
      res.endWithoutBody()
    } else res.end(body, state.counter?.closing ?? false)
  })
}

/**
 * Write a whole answer in one cork. Anything thrown half-way (a header value uWS refuses) leaves a
 * head that can never be finished: the connection is dropped rather than leave the client waiting
 * for the rest until the idle timeout, and the error goes on to the caller.
 */
function corked(res: HttpResponse, state: ResState, write: () => void): void {
  state.done = true
  try {
    res.cork(() => {
      write()
      state.ended = true
    })
  } catch (err) {
    if (!state.aborted && !state.ended) {
      state.ended = true
      try { res.close() } catch { /* already gone */ }
    }
    throw err
  } finally {
    if (state.ended) settle(state)
  }
}
