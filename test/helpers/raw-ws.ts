/**
 * A raw HTTP/WebSocket client over a TCP socket, for what a real client library hides: the exact
 * answer to an upgrade request with any path (malformed escapes included), frames with any opcode,
 * size or payload, and whether the server sent a close frame (and which code) before the TCP close.
 */
import net from 'node:net'
import { randomBytes } from 'node:crypto'

export interface HttpAnswer { status: number; headers: Record<string, string>; body: string }

export interface Frame { opcode: number; payload: Buffer }

/** What ended the connection: the server's close frame, or `null` when TCP closed without one. */
export type Ending = { code: number | null; reason: string } | null

export const OP = { text: 1, binary: 2, close: 8, ping: 9, pong: 10 } as const

function upgradeRequest(path: string, headers: Record<string, string>): string {
  const all = {
    Host: '127.0.0.1', Upgrade: 'websocket', Connection: 'Upgrade',
    'Sec-WebSocket-Key': randomBytes(16).toString('base64'), 'Sec-WebSocket-Version': '13', ...headers,
  }
  return `GET ${path} HTTP/1.1\r\n${Object.entries(all).map(([k, v]) => `${k}: ${v}\r\n`).join('')}\r\n`
}

function parseHead(head: string): { status: number; headers: Record<string, string> } {
  const [statusLine = '', ...lines] = head.split('\r\n')
  const headers: Record<string, string> = {}
  for (const l of lines) {
    const i = l.indexOf(':')
    if (i > 0) headers[l.slice(0, i).trim().toLowerCase()] = l.slice(i + 1).trim()
  }
  return { status: Number(statusLine.split(' ')[1]), headers }
}

/** One masked client frame (RFC 6455 §5.2). */
export function encodeFrame(opcode: number, payload: Buffer, fin = true): Buffer {
  const mask = randomBytes(4)
  const len = payload.length
  let head: Buffer
  if (len < 126) { head = Buffer.alloc(2); head[1] = 0x80 | len }
  else if (len < 65536) { head = Buffer.alloc(4); head[1] = 0x80 | 126; head.writeUInt16BE(len, 2) }
  else { head = Buffer.alloc(10); head[1] = 0x80 | 127; head.writeBigUInt64BE(BigInt(len), 2) }
  head[0] = (fin ? 0x80 : 0) | opcode
  const body = Buffer.alloc(len)
  for (let i = 0; i < len; i++) body[i] = payload[i]! ^ mask[i % 4]!
  return Buffer.concat([head, mask, body])
}

/** Split unmasked server frames off the front of `buf`; returns the frames and what is left. */
function decodeFrames(buf: Buffer): { frames: Frame[]; rest: Buffer } {
  const frames: Frame[] = []
  for (;;) {
    if (buf.length < 2) break
    let len = buf[1]! & 0x7f
    let off = 2
    if (len === 126) { if (buf.length < 4) break; len = buf.readUInt16BE(2); off = 4 }
    else if (len === 127) { if (buf.length < 10) break; len = Number(buf.readBigUInt64BE(2)); off = 10 }
    if (buf.length < off + len) break
    frames.push({ opcode: buf[0]! & 0x0f, payload: buf.subarray(off, off + len) })
    buf = buf.subarray(off + len)
  }
  return { frames, rest: buf }
}

/**
 * Send an upgrade request for `path` exactly as given (no client-side URL normalisation) and read the
 * answer. A 101 is closed at once (use RawWs to keep it); anything else is read with its body.
 */
export async function rawUpgrade(port: number, path: string, headers: Record<string, string> = {}, timeoutMs = 5000): Promise<HttpAnswer> {
  const sock = net.connect(port, '127.0.0.1')
  try {
    return await new Promise<HttpAnswer>((resolve, reject) => {
      let buf = Buffer.alloc(0)
      const timer = setTimeout(() => reject(new Error(`no answer to ${path} within ${timeoutMs} ms`)), timeoutMs)
      const done = (a: HttpAnswer) => { clearTimeout(timer); resolve(a) }
      sock.on('error', (e) => { clearTimeout(timer); reject(e) })
      sock.on('close', () => { clearTimeout(timer); reject(new Error(`connection closed without an answer to ${path}`)) })
      sock.on('data', (d: Buffer) => {
        buf = Buffer.concat([buf, d])
        const end = buf.indexOf('\r\n\r\n')
        if (end < 0) return
        const { status, headers: h } = parseHead(buf.subarray(0, end).toString('latin1'))
        if (status === 101) return done({ status, headers: h, body: '' })
        const want = Number(h['content-length'] ?? 0)
        const body = buf.subarray(end + 4)
        if (body.length >= want) done({ status, headers: h, body: body.subarray(0, want).toString('utf8') })
      })
      sock.write(upgradeRequest(path, headers))
    })
  } finally {
    sock.destroy()
  }
}

/** An open WebSocket on a raw TCP socket. */
export class RawWs {
  private buf: Buffer = Buffer.alloc(0)
  readonly frames: Frame[] = []
  private waiters: Array<() => void> = []
  private closeFrame: Frame | null = null
  /** Resolves once the TCP connection is closed. */
  readonly ended: Promise<void>

  private constructor(private readonly sock: net.Socket, initial: Buffer) {
    this.ended = new Promise((resolve) => sock.once('close', () => { resolve(); this.wake() }))
    sock.on('data', (d: Buffer) => this.feed(d))
    sock.on('error', () => { /* ended covers it */ })
    if (initial.length) this.feed(initial)
  }

  static open(port: number, path: string, headers: Record<string, string> = {}, timeoutMs = 5000): Promise<RawWs> {
    const sock = net.connect(port, '127.0.0.1')
    return new Promise((resolve, reject) => {
      let buf = Buffer.alloc(0)
      const timer = setTimeout(() => { sock.destroy(); reject(new Error(`no upgrade within ${timeoutMs} ms`)) }, timeoutMs)
      const onData = (d: Buffer) => {
        buf = Buffer.concat([buf, d])
        const end = buf.indexOf('\r\n\r\n')
        if (end < 0) return
        clearTimeout(timer)
        sock.off('data', onData)
        const { status } = parseHead(buf.subarray(0, end).toString('latin1'))
        if (status !== 101) { sock.destroy(); return reject(new Error(`upgrade refused: ${status} ${buf.subarray(end + 4).toString()}`)) }
        resolve(new RawWs(sock, buf.subarray(end + 4)))
      }
      sock.on('data', onData)
      sock.once('error', (e) => { clearTimeout(timer); reject(e) })
      sock.write(upgradeRequest(path, headers))
    })
  }

  private feed(d: Buffer): void {
    const { frames, rest } = decodeFrames(Buffer.concat([this.buf, d]))
    this.buf = rest
    for (const f of frames) {
      if (f.opcode === OP.close) this.closeFrame ??= f
      else this.frames.push(f)
    }
    if (frames.length) this.wake()
  }

  private wake(): void {
    for (const w of this.waiters.splice(0)) w()
  }

  private wait(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const t = setTimeout(resolve, ms)
      this.waiters.push(() => { clearTimeout(t); resolve() })
    })
  }

  send(opcode: number, payload: Buffer | string, fin = true): void {
    this.sock.write(encodeFrame(opcode, Buffer.isBuffer(payload) ? payload : Buffer.from(payload), fin))
  }

  /** The first text frame parsed as JSON that matches `pred`. */
  async json(pred: (f: any) => boolean = () => true, ms = 5000): Promise<any> {
    const deadline = Date.now() + ms
    for (;;) {
      const i = this.frames.findIndex((f) => f.opcode === OP.text && pred(JSON.parse(f.payload.toString('utf8'))))
      if (i >= 0) return JSON.parse(this.frames.splice(i, 1)[0]!.payload.toString('utf8'))
      if (this.sock.destroyed || Date.now() > deadline) throw new Error('no matching frame')
      await this.wait(deadline - Date.now())
    }
  }

  /**
   * Wait until the connection ends; the server's close frame (code, reason) if it sent one before
   * closing TCP, else null. Rejects if the connection is still open after `ms`.
   */
  async ending(ms = 5000): Promise<Ending> {
    let timer: NodeJS.Timeout | undefined
    const timeout = new Promise<never>((_, reject) => { timer = setTimeout(() => reject(new Error(`connection still open after ${ms} ms`)), ms) })
    try {
      await Promise.race([this.ended, timeout])
    } finally {
      clearTimeout(timer)
    }
    const f = this.closeFrame
    if (!f) return null
    return { code: f.payload.length >= 2 ? f.payload.readUInt16BE(0) : null, reason: f.payload.subarray(2).toString('utf8') }
  }

  destroy(): void { this.sock.destroy() }
}
