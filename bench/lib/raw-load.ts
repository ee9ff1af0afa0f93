/**
 * A lean HTTP/1.1 load generator on plain `node:net` (issue 19): the orders bench's generator shares
 * the 2-core machine with the server, so every microsecond it spends per request is taken from the
 * server under test. autocannon costs several times more per request (request objects, header parsing
 * into objects, a histogram per response, events); this one does only what the bench reads.
 *
 * - N keep-alive connections, closed loop, no pipelining: a connection sends its next request when the
 *   previous response has fully arrived (autocannon's default).
 * - Request bytes are built once per distinct request (the bench cycles a pool of bodies); a send is one
 *   `socket.write` of a prebuilt Buffer.
 * - Responses are parsed only as far as needed: the status code, Content-Length, and — when a request
 *   asks for it — the leading `{"id":N` of the body. Chunked transfer encoding is refused (the servers
 *   benched send Content-Length); the connection is dropped, the answer counted as an error.
 * - A server closing a connection (or a reset) counts an error for the request in flight and the
 *   connection reconnects; a request unanswered after `TIMEOUT_MS` counts a timeout and reconnects too.
 * - Fixed rate (`rate`): open loop, request k is due at start + k/rate (evenly spaced, not autocannon's
 *   per-second bursts); a due request waits for an idle connection, and its latency counts from when it
 *   was due, so a server (or generator) falling behind shows in the percentiles instead of being omitted.
 */
import { connect, type Socket } from 'node:net'
import { performance } from 'node:perf_hooks'
import { currentPhase, timedProgress } from './progress.ts'
import type { Request } from 'autocannon'
import { latencyStats, polled, runLoad, type LoadResult, type LoadSpec } from './load.ts'

export interface RawRequest {
  method?: string
  path?: string
  headers?: Record<string, string>
  body?: string | Buffer
  /** Called with the status and the order id the body starts with (`{"id":N`), -1 when it has none. */
  onId?: (status: number, id: number) => void
}

export interface RawLoadSpec {
  url: string
  requests: RawRequest[]
  connections: number
  durationSec: number
  rate?: number
  amount?: number
  label?: string
}

/** Per-request timeout, as autocannon's `timeout: 10` in bench/lib/load.ts. */
export const TIMEOUT_MS = 10_000

const CR = 13
const LF = 10
const ID_PREFIX = Buffer.from('{"id":')
const CONTENT_LENGTH = Buffer.from('content-length:')
const TRANSFER_ENCODING = Buffer.from('transfer-encoding:')

/**
 * Incremental HTTP/1.1 response parser for one connection: feed it whatever the socket reads (a
 * response split over reads, or several in one read), it calls `onResponse` once per complete response.
 * It keeps no per-response objects; only an unfinished header block is copied aside.
 */
export class ResponseParser {
  /** Whether to scan the body for a leading `{"id":N` (set per request by the caller). */
  wantId = false
  private head: Buffer | null = null // an incomplete header block carried over from the previous read
  private inBody = false
  private remaining = 0
  private status = 0
  private idState = 0 // 0..ID_PREFIX.length-1: matching the prefix; ID_PREFIX.length: digits; -1: done
  private id = -1
  private generation = 0 // bumped by reset(): a callback that dropped the connection ends the current feed

  constructor(
    private readonly onResponse: (status: number, id: number) => void,
    private readonly onError: (reason: string) => void,
  ) {}

  /** Forget any partial response (after a reconnect). */
  reset(): void {
    this.generation++
    this.head = null
    this.inBody = false
    this.remaining = 0
  }

  /**
   * Parse `chunk[0, length)`. The chunk may be a reused read buffer: nothing of it is kept past this
   * call (an unfinished header block is copied). Returns false when the stream cannot be parsed (the
   * caller drops the connection).
   */
  feed(chunk: Buffer, length = chunk.length): boolean {
    let buf = chunk
    let len = length
    let pos = 0
    const gen = this.generation
    if (this.head !== null) {
      buf = Buffer.concat([this.head, chunk.subarray(0, length)])
      len = buf.length
      this.head = null
    }
    while (pos < len) {
      if (!this.inBody) {
        const end = headerEnd(buf, pos, len)
        if (end < 0) {
          this.head = Buffer.from(buf.subarray(pos, len))
          return true
        }
        if (!this.parseHead(buf, pos, end)) return false
        pos = end + 4
        this.inBody = true
        this.idState = this.wantId ? 0 : -1
        this.id = -1
      }
      const take = Math.min(this.remaining, len - pos)
      if (this.idState >= 0 && take > 0) this.scanId(buf, pos, pos + take)
      pos += take
      this.remaining -= take
      if (this.remaining === 0) {
        this.inBody = false
        this.onResponse(this.status, this.idState === ID_PREFIX.length || this.idState === -2 ? this.id : -1)
        if (this.generation !== gen) return true
      }
    }
    return true
  }

  private parseHead(buf: Buffer, start: number, end: number): boolean {
    // "HTTP/1.1 200 OK": three digits after the first space.
    if (buf[start] !== 0x48 /* H */ || buf[start + 8] !== 0x20) return this.fail('malformed status line')
    const s = (buf[start + 9]! - 48) * 100 + (buf[start + 10]! - 48) * 10 + (buf[start + 11]! - 48)
    if (!(s >= 100 && s <= 599)) return this.fail('malformed status code')
    this.status = s
    let length = -1
    // Header lines: only Content-Length and Transfer-Encoding matter.
    let line = indexOfCrlf(buf, start, end) + 2
    while (line < end) {
      const eol = indexOfCrlf(buf, line, end + 2)
      const c = buf[line]! | 0x20
      if (c === 0x63 /* c */ && startsWithLower(buf, line, CONTENT_LENGTH)) {
        length = 0
        for (let i = line + CONTENT_LENGTH.length; i < eol; i++) {
          const d = buf[i]!
          if (d >= 48 && d <= 57) length = length * 10 + d - 48
          else if (d !== 0x20 && d !== 0x09) return this.fail('malformed content-length')
        }
      } else if (c === 0x74 /* t */ && startsWithLower(buf, line, TRANSFER_ENCODING)) {
        return this.fail('transfer-encoding (chunked) is not supported: the benched servers send Content-Length')
      }
      line = eol + 2
    }
    // 1xx, 204 and 304 have no body; any other response without a length would end at close: refused.
    if (length < 0) {
      if (s < 200 || s === 204 || s === 304) length = 0
      else return this.fail('response without content-length')
    }
    this.remaining = length
    return true
  }

  /** Match `{"id":` then digits over [from, to), across reads; -2 marks digits ended (id complete). */
  private scanId(buf: Buffer, from: number, to: number): void {
    const plen = ID_PREFIX.length
    for (let i = from; i < to; i++) {
      const b = buf[i]!
      if (this.idState < plen) {
        if (b !== ID_PREFIX[this.idState]) { this.idState = -1; return }
        this.idState++
        if (this.idState === plen) this.id = -1
      } else {
        if (b >= 48 && b <= 57) this.id = (this.id < 0 ? 0 : this.id) * 10 + b - 48
        else { this.idState = this.id < 0 ? -1 : -2; return }
      }
    }
  }

  private fail(reason: string): false {
    this.reset()
    this.onError(reason)
    return false
  }
}

function headerEnd(buf: Buffer, from: number, len: number): number {
  for (let i = buf.indexOf(CR, from); i >= 0 && i + 3 < len; i = buf.indexOf(CR, i + 1)) {
    if (buf[i + 1] === LF && buf[i + 2] === CR && buf[i + 3] === LF) return i
  }
  return -1
}

function indexOfCrlf(buf: Buffer, from: number, limit: number): number {
  for (let i = from; i < limit; i++) if (buf[i] === CR && buf[i + 1] === LF) return i
  return limit
}

function startsWithLower(buf: Buffer, at: number, lower: Buffer): boolean {
  for (let i = 0; i < lower.length; i++) if ((buf[at + i]! | 0x20) !== lower[i]) return false
  return true
}

/** The bytes of one request, as autocannon would send it (Host, the given headers, Content-Length). */
export function requestBytes(req: RawRequest, host: string): Buffer {
  const body = req.body === undefined ? Buffer.alloc(0) : Buffer.isBuffer(req.body) ? req.body : Buffer.from(req.body)
  let head = `${req.method ?? 'GET'} ${req.path ?? '/'} HTTP/1.1\r\nhost: ${host}\r\n`
  for (const [k, v] of Object.entries(req.headers ?? {})) head += `${k}: ${v}\r\n`
  if (body.length > 0 || (req.method && req.method !== 'GET')) head += `content-length: ${body.length}\r\n`
  return Buffer.concat([Buffer.from(head + '\r\n'), body])
}

interface Conn {
  socket: Socket | null
  parser: ResponseParser
  /** Index of the next request of the pool this connection sends. */
  next: number
  inflight: RawRequest | null
  /** performance.now() the request in flight counts from (sent, or due in rate mode); 0 when idle. */
  since: number
  connected: boolean
}

export function runRawLoad(spec: RawLoadSpec): Promise<LoadResult> {
  const { hostname, port } = new URL(spec.url)
  const host = `${hostname}:${port}`
  const pool = spec.requests.map((r) => ({ req: r, bytes: requestBytes(r, host) }))
  if (pool.length === 0) return Promise.reject(new Error('no requests'))
  const statuses: Record<string, number> = {}
  let lat = new Float64Array(1 << 16)
  let n = 0
  let ok2xx = 0
  let non2xx = 0
  let errors = 0
  let timeouts = 0
  let answered = 0
  let sent = 0
  let failed = 0 // requests sent that ended in an error or a timeout
  let stopped = false
  const t0 = performance.now()
  let lastAt = t0
  const cpu0 = process.cpuUsage()

  // Rate mode: request k is due at t0 + k * interval; `issued` counts those handed to a connection.
  const interval = spec.rate ? 1000 / spec.rate : 0
  let issued = 0
  const idle: Conn[] = []

  let resolveDone!: (r: LoadResult) => void
  const done = new Promise<LoadResult>((r) => { resolveDone = r })

  const label = spec.label ?? (currentPhase() || `load: ${spec.rate ? `${spec.rate}/s offered` : 'closed loop'}, ${spec.connections} conns`)
  const stopProgress = spec.amount ? polled(label, spec.amount, () => answered) : timedProgress(label, spec.durationSec, () => answered)

  // One read buffer for every connection: a read is parsed to the end before the next one starts.
  const readBuffer = Buffer.allocUnsafe(64 * 1024)
  const conns: Conn[] = []
  for (let i = 0; i < spec.connections; i++) {
    const c: Conn = { socket: null, parser: null as unknown as ResponseParser, next: i % pool.length, inflight: null, since: 0, connected: false }
    c.parser = new ResponseParser((status, id) => onResponse(c, status, id), () => drop(c, true))
    conns.push(c)
    open(c)
  }

  function open(c: Conn): void {
    // `onread`: reads land in the shared reused buffer and go straight to the parser (no Buffer
    // allocated per read, no stream 'data' machinery).
    const s = connect({
      host: hostname, port: Number(port), noDelay: true,
      onread: { buffer: readBuffer, callback: (nread: number, buf: Uint8Array) => { if (c.socket === s) c.parser.feed(buf as Buffer, nread); return true } },
    })
    c.socket = s
    c.connected = false
    c.parser.reset()
    s.on('connect', () => {
      c.connected = true
      ready(c)
    })
    s.on('error', () => { /* counted on close */ })
    s.on('close', () => {
      if (c.socket !== s) return
      if (c.connected) return drop(c, c.inflight !== null)
      // Could not connect: an error, and a pause before the next attempt rather than a busy loop.
      errors++
      c.socket = null
      if (!stopped) setTimeout(() => { if (!stopped) open(c) }, 100)
    })
  }

  /** The connection is unusable: count the request in flight as an error, reconnect unless stopped. */
  function drop(c: Conn, countError: boolean): void {
    if (countError) errors++
    const lost = c.inflight !== null
    c.inflight = null
    c.since = 0
    const s = c.socket
    c.socket = null
    if (s) s.destroy()
    if (lost) ended()
    if (!stopped) open(c)
  }

  /** A sent request is over without an answer (error or timeout): `amount` runs count it as done. */
  function ended(): void {
    failed++
    if (spec.amount !== undefined && answered + failed >= spec.amount) finish()
  }

  /** A connection is free: send now (closed loop), or when the next request is due (rate). */
  function ready(c: Conn): void {
    if (stopped) return
    if (spec.amount !== undefined && sent >= spec.amount) return
    if (!spec.rate) return send(c, performance.now())
    const due = t0 + issued * interval
    if (due <= performance.now()) {
      issued++
      send(c, due)
    } else {
      idle.push(c)
    }
  }

  function send(c: Conn, since: number): void {
    const p = pool[c.next]!
    c.next = c.next + 1 === pool.length ? 0 : c.next + 1
    c.inflight = p.req
    c.since = since
    c.parser.wantId = p.req.onId !== undefined
    sent++
    c.socket!.write(p.bytes)
  }

  function onResponse(c: Conn, status: number, id: number): void {
    const req = c.inflight
    if (req === null) { drop(c, true); return } // an answer nobody asked for
    const now = performance.now()
    answered++
    lastAt = now
    statuses[status] = (statuses[status] ?? 0) + 1
    if (status >= 200 && status <= 299) {
      ok2xx++
      if (n === lat.length) {
        const bigger = new Float64Array(lat.length * 2)
        bigger.set(lat)
        lat = bigger
      }
      lat[n++] = now - c.since
    } else {
      non2xx++
    }
    c.inflight = null
    c.since = 0
    req.onId?.(status, id)
    if (spec.amount !== undefined && answered + failed >= spec.amount) return finish()
    ready(c)
  }

  // Rate mode: a 1 ms tick hands every due request to an idle connection (due requests with no idle
  // connection wait and count their latency from when they were due).
  const tick = spec.rate
    ? setInterval(() => {
      const now = performance.now()
      while (idle.length > 0 && t0 + issued * interval <= now) {
        const c = idle.pop()!
        if (c.socket === null || !c.connected || c.inflight !== null) continue
        send(c, t0 + issued * interval)
        issued++
      }
    }, 1)
    : null

  // Timeouts: one coarse timer for all connections, not one per request.
  const watchdog = setInterval(() => {
    const now = performance.now()
    for (const c of conns) {
      if (c.since > 0 && c.inflight !== null && now - c.since > TIMEOUT_MS) {
        timeouts++
        drop(c, false)
      }
    }
  }, 250)

  const timer = spec.amount === undefined ? setTimeout(finish, spec.durationSec * 1000) : null

  function finish(): void {
    if (stopped) return
    stopped = true
    if (tick) clearInterval(tick)
    clearInterval(watchdog)
    if (timer) clearTimeout(timer)
    stopProgress()
    const end = spec.amount !== undefined ? lastAt : performance.now()
    for (const c of conns) {
      const s = c.socket
      c.socket = null
      s?.destroy()
    }
    resolveDone({
      durationSec: (end - t0) / 1000,
      ok2xx,
      non2xx,
      statuses,
      errors,
      timeouts,
      ...latencyStats(lat, n, process.cpuUsage(cpu0)),
    })
  }

  return done
}

/**
 * The generator the orders bench runs: this one, or autocannon (bench/lib/load.ts) with
 * BENCH_LOADGEN=autocannon, for a cross-check. Requests carry both hooks; each generator calls its own.
 */
export function loadGenerator(): 'raw' | 'autocannon' {
  const g = process.env.BENCH_LOADGEN ?? 'raw'
  if (g !== 'raw' && g !== 'autocannon') throw new Error(`BENCH_LOADGEN must be raw or autocannon, not ${g}`)
  return g
}

export function runBenchLoad(spec: LoadSpec & { requests: (Request & RawRequest)[] }): Promise<LoadResult> {
  return loadGenerator() === 'autocannon' ? runLoad(spec) : runRawLoad(spec)
}
