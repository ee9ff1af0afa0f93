/**
 * Any node accepts any request (docs/cluster.md "Any node accepts any request"): a replica passes
 * what it does not serve itself to the primary, over HTTP to the primary's NODE_URL, and passes the
 * answer back as it came — status, headers, body — so every route answers the same from every node.
 * The request keeps its id (`X-Request-Id`, made here when the client sent none) and its client: the
 * replica names the client it served (src/net/client-address.ts `FORWARDED_CLIENT`) and proves it is
 * a node of the cluster with the cluster's secret, so the primary's rate limits, logs and sessions key
 * on the client, not on the replica. Sockets are tunnelled the same way, frame by frame: a driver's
 * position sent to a replica reaches its driver actor on the primary and is acknowledged after its
 * commit, as on the primary.
 *
 * A request a node forwarded is never forwarded again (two nodes that each think the other is the
 * primary answer 503 instead of passing it round).
 */
import { randomUUID } from 'node:crypto'
import { Agent, request } from 'undici'
import WebSocket from 'ws'
import type uWS from 'uWebSockets.js'
import { ApiError } from '../errors.ts'
import type { Logger } from '../log.ts'
import { addHeaderLine, clientAddress, FORWARDED_BY, FORWARDED_CLIENT, forwardedByNode, peerAddress, type TrustProxy } from '../net/client-address.ts'
import { CORS_HEADERS, errorHeaders, newResState, relay, requestState, send, type RequestCounter, type ResState } from '../net/respond.ts'

/** Lines that describe one connection, not the message (RFC 9110 §7.6.1), and the ones the forwarder writes itself. */
const HOP_BY_HOP = new Set([
  'connection', 'keep-alive', 'proxy-connection', 'te', 'trailer', 'transfer-encoding', 'upgrade', 'expect',
  'content-length', FORWARDED_BY, FORWARDED_CLIENT,
])
/** Answer lines uWS writes on its own (a second `Date` or `Content-Length` would be wrong). */
const WRITTEN_BY_UWS = new Set(['connection', 'keep-alive', 'transfer-encoding', 'content-length', 'date', 'uwebsockets'])
/** The socket handshake's own lines: the tunnel's two ends each make theirs. */
const HANDSHAKE = /^sec-websocket-(key|version|extensions|accept)$/

/** How long the primary may take to answer a forwarded request before the client gets 503. */
const ANSWER_TIMEOUT_MS = 30_000

export interface ForwardOptions {
  /** The cluster's forwarding secret (src/cluster/nats.ts). */
  secret: string
  /** Whom this node believes about client addresses (TRUST_PROXY, with the cluster's secret). */
  trust: TrustProxy
  bodyLimitBytes: number
  /** Routes with a larger body limit of their own (a photo upload): the path's pattern and its limit; every other request keeps `bodyLimitBytes`. */
  largeBodies?: ReadonlyArray<{ path: RegExp; limitBytes: number }>
  log: Logger
}

/** What a request's head says, read while the uWS request object is valid (only in the handler). */
interface Head { method: string; url: string; headers: Record<string, string>; client: string; requestId: string; byNode: boolean }

function readHead(res: uWS.HttpResponse, req: uWS.HttpRequest, trust: TrustProxy): Head {
  const headers: Record<string, string> = {}
  req.forEach((k, v) => addHeaderLine(headers, k, v))
  const query = req.getQuery()
  const incoming = headers['x-request-id']
  return {
    method: req.getCaseSensitiveMethod().toUpperCase(),
    url: req.getUrl() + (query ? `?${query}` : ''),
    headers,
    client: clientAddress(peerAddress(res), headers, trust),
    requestId: incoming && /^[\w.-]{1,64}$/.test(incoming) ? incoming : randomUUID(),
    byNode: forwardedByNode(headers, trust),
  }
}

/** The lines sent on to the primary: the client's, without hop-by-hop ones, plus who forwarded it for whom. */
function upstreamHeaders(head: Head, secret: string, drop: (name: string) => boolean = () => false): Record<string, string> {
  const out: Record<string, string> = {}
  for (const [k, v] of Object.entries(head.headers)) if (!HOP_BY_HOP.has(k) && !drop(k)) out[k] = v
  out['x-request-id'] = head.requestId
  out[FORWARDED_BY] = secret
  out[FORWARDED_CLIENT] = head.client
  return out
}

export interface Forwarder {
  /** Pass this request to the primary at `target` and its answer back (call first thing in the handler). */
  http(res: uWS.HttpResponse, req: uWS.HttpRequest, counter: RequestCounter, target: string): void
  /** Socket behaviour for `app.ws('/*', …)` that tunnels every socket to the primary `target()` gives. */
  sockets(target: () => string | null): uWS.WebSocketBehavior<Tunnel>
  close(): Promise<void>
}

export interface Tunnel { upstream: WebSocket; early: Array<{ data: Buffer; binary: boolean }>; open: boolean }

export function forwarder(o: ForwardOptions): Forwarder {
  const agent = new Agent({ keepAliveTimeout: 10_000, connections: 256, headersTimeout: ANSWER_TIMEOUT_MS, bodyTimeout: ANSWER_TIMEOUT_MS })
  const unavailable = (why: string) => new ApiError('unavailable', `${why} Retry shortly.`, undefined, { 'Retry-After': '1' })
  // A body refused part-way closes the connection (the rest of it may still be on its way), as the primary's 413 does.
  const fail = (res: uWS.HttpResponse, state: ResState, head: { method: string; requestId: string }, e: ApiError) =>
    send(res, state, e.status, { 'X-Request-Id': head.requestId, 'Cache-Control': 'no-store', ...errorHeaders(e, false) }, JSON.stringify(e.toJSON()), { headOnly: head.method === 'HEAD', close: e.status === 413 })

  return {
    http(res, req, counter, target) {
      const abort = new AbortController()
      const state = requestState(res, counter, () => abort.abort())
      const head = readHead(res, req, o.trust)
      const hasBody = head.method !== 'GET' && head.method !== 'HEAD'
      if (head.byNode) {
        if (hasBody) res.onData(() => {})
        return fail(res, state, head, unavailable('This node is not the primary either (the cluster is changing primary).'))
      }
      const go = (body: Buffer | undefined) => {
        request(target + head.url, {
          method: head.method as 'GET', headers: upstreamHeaders(head, o.secret), body, dispatcher: agent, signal: abort.signal,
        }).then(async (answer) => {
          const buf = Buffer.from(await answer.body.arrayBuffer())
          const length = answer.headers['content-length']
          relay(res, state, answer.statusCode, answerLines(answer.headers), buf, head.method === 'HEAD', typeof length === 'string' ? length : null)
        }).catch((err: Error) => {
          if (state.aborted) return
          o.log.warn({ err: err.message, target, reqId: head.requestId }, 'forwarding to the primary failed')
          fail(res, state, head, unavailable('The primary did not answer.'))
        })
      }
      if (!hasBody) return go(undefined)
      const chunks: Buffer[] = []
      let size = 0
      const path = head.url.split('?')[0]!
      const limit = o.largeBodies?.find((b) => b.path.test(path))?.limitBytes ?? o.bodyLimitBytes
      res.onData((chunk, last) => {
        if (state.done) return
        size += chunk.byteLength
        if (size > limit) return fail(res, state, head, new ApiError('payload_too_large', `The request body must be at most ${limit} bytes.`))
        // uWS reuses the chunk's memory once this returns: copied.
        chunks.push(Buffer.from(new Uint8Array(chunk)))
        if (last) go(Buffer.concat(chunks, size))
      })
    },

    sockets(target) {
      return {
        // The primary enforces every socket's own limits; this end only carries frames.
        maxPayloadLength: 16 * 1024 * 1024,
        idleTimeout: 120,
        upgrade: (res, req, context) => {
          const head = readHead(res, req, o.trust)
          const key = head.headers['sec-websocket-key'] ?? ''
          const protocols = head.headers['sec-websocket-protocol']
          const extensions = head.headers['sec-websocket-extensions'] ?? ''
          let aborted = false
          res.onAborted(() => { aborted = true })
          const refuse = (e: ApiError) => {
            if (!aborted) send(res, newResState(), e.status, { ...CORS_HEADERS, 'X-Request-Id': head.requestId, ...errorHeaders(e, false) }, JSON.stringify(e.toJSON()))
          }
          const to = target()
          if (head.byNode || !to) return refuse(unavailable(to ? 'This node is not the primary either.' : 'A primary is being chosen.'))
          const upstream = new WebSocket(to.replace(/^http/, 'ws') + head.url, protocols ? protocols.split(',').map((p) => p.trim()) : [], {
            headers: upstreamHeaders(head, o.secret, (k) => HANDSHAKE.test(k) || k === 'sec-websocket-protocol'),
            perMessageDeflate: false,
            handshakeTimeout: ANSWER_TIMEOUT_MS,
            maxPayload: 16 * 1024 * 1024,
          })
          const tunnel: Tunnel = { upstream, early: [], open: false }
          // Frames the primary sends before this end's socket is open (a greeting) wait for it.
          upstream.on('message', (data: Buffer, binary: boolean) => { tunnel.early.push({ data, binary }) })
          upstream.once('open', () => {
            if (aborted) return upstream.terminate()
            res.cork(() => res.upgrade<Tunnel>(tunnel, key, upstream.protocol, extensions, context))
          })
          // The primary refused the upgrade: the client gets its answer, status and body as they came.
          upstream.once('unexpected-response', (_req, answer) => {
            const chunks: Buffer[] = []
            answer.on('data', (c: Buffer) => chunks.push(c))
            answer.on('end', () => {
              if (aborted) return
              relay(res, newResState(), answer.statusCode ?? 503, answerLines(answer.headers), Buffer.concat(chunks), false, null)
            })
          })
          upstream.once('error', (err) => {
            if (tunnel.open || aborted) return
            o.log.warn({ err: err.message, reqId: head.requestId }, 'tunnelling a socket to the primary failed')
            refuse(unavailable('The primary did not answer.'))
          })
        },
        open: (ws) => {
          const t = ws.getUserData()
          t.open = true
          for (const f of t.early) ws.send(f.data, f.binary)
          t.early = []
          t.upstream.removeAllListeners('message')
          t.upstream.on('message', (data: Buffer, binary: boolean) => { if (t.open) ws.send(data, binary) })
          t.upstream.on('close', (code: number, reason: Buffer) => {
            if (!t.open) return
            t.open = false
            // 1005/1006 say no code came (the primary went away): 1012, "service restart", asks the client to reconnect.
            ws.end(sendable(code) ? code : 1012, sendable(code) ? reason.toString() : 'the primary went away; reconnect')
          })
          t.upstream.on('error', () => { /* followed by 'close' */ })
        },
        message: (ws, message, binary) => {
          const t = ws.getUserData()
          if (t.upstream.readyState === WebSocket.OPEN) t.upstream.send(Buffer.from(new Uint8Array(message)), { binary })
        },
        close: (ws, code, message) => {
          const t = ws.getUserData()
          if (!t.open) return
          t.open = false
          if (sendable(code)) t.upstream.close(code, Buffer.from(new Uint8Array(message)).toString())
          else t.upstream.terminate()
        },
      }
    },

    close: () => agent.close(),
  }
}

/** The primary's answer lines to pass on, one per value (several `Set-Cookie`), without those uWS writes itself. */
function answerLines(headers: Record<string, string | string[] | undefined>): Array<[string, string]> {
  const lines: Array<[string, string]> = []
  for (const [k, v] of Object.entries(headers)) {
    if (WRITTEN_BY_UWS.has(k) || v === undefined) continue
    for (const one of Array.isArray(v) ? v : [v]) lines.push([k, one])
  }
  return lines
}

/** A close code that may travel in a close frame (RFC 6455 §7.4: not 1005, 1006, 1015). */
const sendable = (code: number): boolean => (code >= 1000 && code < 5000) && code !== 1005 && code !== 1006 && code !== 1015 && code !== 1004
