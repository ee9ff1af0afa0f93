/** The only module that writes to a uWS response: guards aborts, corks, status, headers, JSON. */
import type { HttpResponse } from 'uWebSockets.js'

export interface ResState { aborted: boolean; done: boolean }

const STATUS_TEXT: Record<number, string> = {
  200: '200 OK', 201: '201 Created', 204: '204 No Content', 400: '400 Bad Request', 401: '401 Unauthorized',
  403: '403 Forbidden', 404: '404 Not Found', 405: '405 Method Not Allowed', 409: '409 Conflict', 413: '413 Payload Too Large',
  415: '415 Unsupported Media Type', 422: '422 Unprocessable Entity', 429: '429 Too Many Requests', 500: '500 Internal Server Error',
  503: '503 Service Unavailable',
}
const statusLine = (s: number): string => STATUS_TEXT[s] ?? String(s)

export function send(
  res: HttpResponse,
  state: ResState,
  status: number,
  headers: Record<string, string>,
  body: string | Buffer | null,
  contentType = 'application/json',
  /** HEAD: the headers GET would send, no body (a body would desync a kept-alive connection). */
  headOnly = false,
): void {
  if (state.aborted || state.done) return
  state.done = true
  res.cork(() => {
    res.writeStatus(statusLine(status))
    for (const k in headers) res.writeHeader(k, headers[k]!)
    if (body === null || status === 204) {
      res.endWithoutBody()
      return
    }
    res.writeHeader('Content-Type', contentType)
    if (headOnly) {
      // Not endWithoutBody(length): this uWS build then drops the kept-alive connection.
      res.writeHeader('Content-Length', String(Buffer.byteLength(body)))
      res.endWithoutBody()
    } else res.end(body)
  })
}
