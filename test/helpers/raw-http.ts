/**
 * Raw HTTP/1.1 over a TCP socket, for what fetch hides or refuses to send: duplicated or
 * conflicting framing headers, odd transfer codings, other protocol versions, pipelined bytes —
 * and whether the server closed the connection or left it hanging.
 */
import net from 'node:net'

export interface RawResponse { status: number; headers: Record<string, string[]>; body: string }
export interface RawExchange {
  /** Every byte the server sent (latin1). */
  text: string
  /** The responses parsed from `text`, in order (a trailing partial one is left out). */
  responses: RawResponse[]
  /** The server closed the connection before the bound. */
  closed: boolean
}

/**
 * A failure bound, not a timing assertion: below uWS's 10 s idle timeout, so a connection the
 * server leaves hanging shows up as not closed instead of being closed by that timeout.
 */
export const HANG_BOUND_MS = 8000

/**
 * Send `parts` (one write each, in order) on a new connection; resolve when the server closes it,
 * when `until(sofar)` holds, or after `bound` ms, whichever comes first.
 */
export function exchange(port: number, parts: Array<string | Buffer>, opts: { until?: (r: RawExchange) => boolean; bound?: number } = {}): Promise<RawExchange> {
  return new Promise((resolve) => {
    const sock = net.connect(port, '127.0.0.1')
    let text = ''
    let settled = false
    const result = (closed: boolean): RawExchange => ({ text, responses: parseResponses(text), closed })
    const settle = (closed: boolean) => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      sock.destroy()
      resolve(result(closed))
    }
    const timer = setTimeout(() => settle(false), opts.bound ?? HANG_BOUND_MS)
    sock.on('data', (d: Buffer) => {
      text += d.toString('latin1')
      if (opts.until?.(result(false))) settle(false)
    })
    sock.on('close', () => settle(true))
    sock.on('error', () => settle(true))
    sock.once('connect', () => {
      for (const p of parts) sock.write(p)
    })
  })
}

/** Responses framed by Content-Length (what this server always sends). */
export function parseResponses(text: string): RawResponse[] {
  const out: RawResponse[] = []
  let rest = text
  while (rest.length > 0) {
    const end = rest.indexOf('\r\n\r\n')
    if (end === -1) break
    const [statusLine = '', ...lines] = rest.slice(0, end).split('\r\n')
    const m = /^HTTP\/1\.[01] (\d{3})/.exec(statusLine)
    if (!m) break
    const headers: Record<string, string[]> = {}
    for (const l of lines) {
      const i = l.indexOf(':')
      if (i > 0) (headers[l.slice(0, i).trim().toLowerCase()] ??= []).push(l.slice(i + 1).trim())
    }
    const length = Number(headers['content-length']?.[0] ?? 0)
    const bodyStart = end + 4
    if (rest.length < bodyStart + length) break
    out.push({ status: Number(m[1]), headers, body: rest.slice(bodyStart, bodyStart + length) })
    rest = rest.slice(bodyStart + length)
  }
  return out
}

/** A request head from lines, ending with the blank line. */
export const head = (requestLine: string, lines: string[]): string => `${requestLine}\r\n${lines.map((l) => `${l}\r\n`).join('')}\r\n`
