/**
 * Request-head checks uWebSockets.js leaves to the application (docs/deployment.md "HTTP framing"):
 * the framing headers (RFC 9112 §6) and `Host` (RFC 9112 §3.2). The parser of this uWS build frames
 * a body by the first `Content-Length` it sees and decodes any `Transfer-Encoding` as chunked, so a
 * request it framed differently from what its headers say must be refused before its body is read.
 */
import { ApiError } from '../errors.ts'

export interface HeadProblem {
  error: ApiError
  /**
   * The body's end cannot be known, so neither can where the next request starts: answer, then
   * close the connection (RFC 9112 §6.3, §11.2 request smuggling).
   */
  close: boolean
}

/**
 * `Host = uri-host [ ":" port ]` (RFC 9110 §7.2, RFC 3986 §3.2.2): a reg-name or IPv4 address, or
 * an IP literal in brackets (zone ids and IPvFuture included). Empty is allowed (RFC 9110 §7.2).
 */
const HOST = /^(?:\[[\w:.%~-]+\]|[\w\-.~%!$&'()*+,;=]*)(?::\d*)?$/

const framing = (message: string): HeadProblem => ({ error: new ApiError('bad_request', message), close: true })

/** The first problem of a request head (every header line, in order, names lowercased), or null. */
export function checkHead(lines: ReadonlyArray<readonly [string, string]>): HeadProblem | null {
  const lengths: string[] = []
  const codings: string[] = []
  const hosts: string[] = []
  for (const [name, value] of lines) {
    if (name === 'content-length') lengths.push(...value.split(',').map((s) => s.trim()))
    else if (name === 'transfer-encoding') codings.push(...value.split(',').map((s) => s.trim().toLowerCase()))
    else if (name === 'host') hosts.push(value)
  }
  if (codings.length > 0) {
    // RFC 9112 §6.1: Transfer-Encoding overrides Content-Length and a sender must not send both;
    // such a message is the classic smuggling vector, so it is refused rather than resolved.
    if (lengths.length > 0) return framing('A request must not carry both Content-Length and Transfer-Encoding.')
    // RFC 9112 §6.1: an unknown transfer coding is 501. Only `chunked` is implemented here.
    const unknown = codings.find((c) => c !== 'chunked')
    if (unknown !== undefined) {
      return { error: new ApiError('not_implemented', `Transfer coding ${JSON.stringify(unknown)} is not implemented; send the body with Content-Length or chunked.`), close: true }
    }
    // RFC 9112 §7: chunked must not be applied more than once.
    if (codings.length > 1) return framing('The chunked transfer coding was applied more than once.')
  }
  if (lengths.length > 0) {
    // RFC 9112 §6.3 (5), RFC 9110 §8.6: an invalid or conflicting Content-Length is unrecoverable.
    // Repeats of one value may be taken as that value.
    if (!lengths.every((l) => /^\d{1,15}$/.test(l))) return framing('Content-Length must be a decimal number of bytes.')
    if (new Set(lengths.map(Number)).size > 1) return framing('Content-Length is given more than once with different values.')
  }
  // RFC 9112 §3.2: more than one Host, or an invalid one, is 400. (A request without any never
  // reaches the application in this uWS build: see docs/deployment.md.)
  if (hosts.length > 1) return { error: new ApiError('bad_request', 'The Host header is given more than once.'), close: false }
  if (hosts.length === 1 && !HOST.test(hosts[0]!)) return { error: new ApiError('bad_request', 'The Host header is not a valid host.'), close: false }
  return null
}
