/**
 * The WebSocket test client: every frame the server sends is decoded (JSON text or MessagePack
 * binary, docs/realtime.md "Frame formats") and queued; a test takes the frame it expects with
 * `next`, which removes it, so waiting twice for equal frames waits for two of them. For what a
 * client library hides (exact upgrade paths, odd opcodes, the close frame on the wire) use
 * ./raw-ws.ts instead.
 */
import WebSocket from 'ws'
import { unpack } from 'msgpackr'
import type { TestServer } from './server.ts'

export interface Closed { code: number; reason: string }

export interface OpenOptions {
  /** Sent as `Authorization: Bearer <token>`. */
  token?: string
  headers?: Record<string, string>
  protocols?: string[]
}

/** What `WsClient.open` rejects with when the server refuses the upgrade. */
export interface Refusal extends Error { status: number; body: any }

type Pred = (frame: any) => boolean

export class WsClient {
  /** Frames received and not yet taken by `next`, oldest first. */
  readonly frames: any[] = []
  /** Resolves with the close code and reason once the socket is closed (by either side). */
  readonly closed: Promise<Closed>
  private waiters: Array<() => void> = []

  private constructor(readonly ws: WebSocket) {
    ws.on('message', (data, isBinary) => {
      const buf = Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data as ArrayBuffer)
      this.frames.push(isBinary ? unpack(buf) : JSON.parse(buf.toString('utf8')))
      this.wake()
    })
    // A reset connection (a killed server) must not become an unhandled 'error' event.
    ws.on('error', () => { /* `closed` reports the end */ })
    this.closed = new Promise((resolve) => ws.once('close', (code, reason) => { resolve({ code, reason: reason.toString() }); this.wake() }))
  }

  /** Open a socket; rejects with a `Refusal` (HTTP status and parsed body) if the upgrade is refused. */
  static open(url: string, opts: OpenOptions = {}): Promise<WsClient> {
    const headers = { ...(opts.headers ?? {}), ...(opts.token ? { authorization: `Bearer ${opts.token}` } : {}) }
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(url, opts.protocols ?? [], { headers })
      const c = new WsClient(ws)
      ws.once('open', () => resolve(c))
      ws.once('unexpected-response', (_req, res) => {
        let text = ''
        res.on('data', (d: Buffer) => { text += d.toString() })
        res.on('end', () => {
          let body: unknown = null
          try { body = text ? JSON.parse(text) : null } catch { body = text }
          reject(Object.assign(new Error(`upgrade refused: ${res.statusCode}`), { status: res.statusCode, body }))
        })
      })
      ws.once('error', reject)
    })
  }

  /**
   * The first queued frame matching `pred`, removed from the queue, waiting up to `ms` for it to
   * arrive. Rejects when the time is up or the socket closed without one.
   */
  async next(pred: Pred = () => true, ms = 3000): Promise<any> {
    const deadline = Date.now() + ms
    for (;;) {
      const i = this.frames.findIndex(pred)
      if (i >= 0) return this.frames.splice(i, 1)[0]
      const left = deadline - Date.now()
      if (left <= 0 || this.ws.readyState === WebSocket.CLOSED) {
        throw new Error(`no matching frame within ${ms} ms; queued: ${JSON.stringify(this.frames).slice(0, 500)}`)
      }
      await new Promise<void>((r) => {
        const t = setTimeout(r, left)
        this.waiters.push(() => { clearTimeout(t); r() })
      })
    }
  }

  /** True when no frame matching `pred` is queued or arrives within `ms` (a match is taken). */
  async none(pred: Pred, ms = 300): Promise<boolean> {
    try { await this.next(pred, ms); return false } catch { return true }
  }

  /** Send `frame` as a JSON text frame (use `ws.send` for raw or binary payloads). */
  send(frame: unknown): void { this.ws.send(JSON.stringify(frame)) }

  /** Close (code 1000 unless given) and resolve once the socket is closed. */
  close(code?: number): Promise<Closed> {
    if (this.ws.readyState !== WebSocket.CLOSED && this.ws.readyState !== WebSocket.CLOSING) this.ws.close(code)
    return this.closed
  }

  /** `closed`, or a rejection when the socket is still open after `ms`. */
  closedWithin(ms = 5000): Promise<Closed> {
    let timer: NodeJS.Timeout | undefined
    const late = new Promise<never>((_, reject) => { timer = setTimeout(() => reject(new Error(`socket still open after ${ms} ms`)), ms) })
    return Promise.race([this.closed, late]).finally(() => clearTimeout(timer))
  }

  private wake(): void {
    for (const w of this.waiters.splice(0)) w()
  }
}

/** The WebSocket base of a test server's API (`ws://127.0.0.1:<port>/api/v1`). */
export const wsBase = (s: Pick<TestServer, 'base'>): string => s.base.replace(/^http/, 'ws')
