/**
 * Load-generating worker for bench/tracking.ts, one process per share of the clients (forked by the
 * parent; driven over IPC). It speaks either this server's sockets (`uws`: /ws/driver and
 * /ws/track/{token}) or the Socket.IO baseline (bench/baseline/socketio-server.ts, Engine.IO v4 over
 * WebSocket), through one minimal RFC 6455 client on raw `net` sockets, so both stacks are driven by
 * exactly the same client code and the client costs as little CPU as possible (the server and the
 * load share this machine's two cores). The `ws` package costs several times more per frame.
 *
 *   connect → open the given drivers (and each one's watcher), wait for every first frame
 *   run     → each driver sends a position at `rateHz`; watchers time driver → watcher latency
 *   idle    → open idle tracking sockets (the parent measures server memory per socket)
 *   drop    → close the idle sockets
 *   feeds   → open each given store's dispatch feed and operations screen (bench/tracking-fanout.ts):
 *             every position then reaches three sockets of three kinds; each kind is counted and timed
 *   close   → close everything and exit
 *
 * A driver and the watcher of its order live in the same worker, so latency is measured on one
 * clock: from just before the driver's frame is written to the moment the watcher has read that
 * same position. The position's latitude carries the driver's sequence number.
 */
import { connect as tcpConnect, type Socket } from 'node:net'
import { unpack } from 'msgpackr'

/** `storeId`: the store the driver works for (the fan-out scenario opens that store's feeds; drivers without one send none there). */
export interface ClientPair { driverId: number; token: string; orderId: number; trackToken: string; storeId?: number }
/** Who received a position: the customer's tracking view, the store's dispatch feed, an operations screen. */
export const KINDS = ['track', 'dispatch', 'ops'] as const
export type Kind = typeof KINDS[number]
export type Mode = 'uws' | 'socketio'
export type ParentMsg =
  /** `acks`: number the positions (`seq`) so this server acknowledges each once stored. */
  /** `watchPort`: watchers connect there instead (bench/cluster.ts: a replica, drivers on the primary). */
  | { cmd: 'init'; mode: Mode; acks: boolean; host: string; port: number; localAddresses: string[]; watchPort?: number }
  | { cmd: 'connect'; pairs: ClientPair[]; watch: boolean }
  | { cmd: 'run'; rateHz: number; durationSec: number; warmupSec: number }
  | { cmd: 'idle'; targets: ClientPair[] }
  | { cmd: 'drop' }
  /** Per store: a dispatch feed socket (JSON) and an operations screen (this server: the same feed as MessagePack frames). */
  | { cmd: 'feeds'; storeIds: number[]; ownerToken: string }
  | { cmd: 'close' }
export type WorkerMsg =
  | { ev: 'ready' }
  | { ev: 'connected'; drivers: number; watchers: number; failed: number; firstError: string | null; ms: number }
  | {
      ev: 'ran'; sent: number; skipped: number; acked: number; delivered: number; latencies: number[]; errors: number
      closed: number; seconds: number; cpuSec: number; byKind: Record<Kind, number>
    }
  | { ev: 'feeds'; open: number; failed: number; firstError: string | null }
  | { ev: 'idle'; open: number; failed: number; firstError: string | null }
  | { ev: 'dropped' }
  | { ev: 'error'; message: string }

const send = (m: WorkerMsg) => process.send!(m)
const CONNECT_CONCURRENCY = 64
/** A driver skips a position while its socket still has this much unsent (client-side backpressure). */
const MAX_UNSENT = 16 * 1024
/** Send times kept per driver, by sequence number modulo this. */
const RING = 256
/** Latitudes encode the sequence number: lat = LAT0 + seq / LAT_SCALE. */
const LAT0 = 1
const LAT_SCALE = 1e6

// ---- a minimal WebSocket client (RFC 6455) ------------------------------------------------------

/**
 * Client frames must be masked; an all-zero masking key is a valid key (RFC 6455 §5.3) and makes
 * the XOR a no-op, so a frame is just a header and the UTF-8 text. Server frames are never masked.
 */
function textFrame(s: string): Buffer {
  const n = Buffer.byteLength(s)
  const hdr = n < 126 ? 6 : 8
  const f = Buffer.allocUnsafe(hdr + n)
  f[0] = 0x81
  if (n < 126) { f[1] = 0x80 | n; f.writeUInt32BE(0, 2) } else { f[1] = 0x80 | 126; f.writeUInt16BE(n, 2); f.writeUInt32BE(0, 4) }
  f.write(s, hdr, 'utf8')
  return f
}

function controlFrame(opcode: number, payload: Buffer): Buffer {
  const f = Buffer.alloc(6 + payload.length)
  f[0] = 0x80 | opcode
  f[1] = 0x80 | payload.length
  payload.copy(f, 6)
  return f
}

class RawWs {
  private buf: Buffer | null = null
  private upgraded = false
  closed = false
  readonly sock: Socket

  constructor(
    host: string, port: number, path: string, headers: string, localAddress: string | undefined,
    private readonly onOpen: () => void,
    private readonly onText: (s: string) => void,
    private readonly onEnd: (err: Error | null) => void,
    private readonly onBinary: ((b: Buffer) => void) | null = null,
  ) {
    this.sock = tcpConnect({ host, port, ...(localAddress ? { localAddress } : {}) })
    this.sock.setNoDelay(true)
    this.sock.on('connect', () => {
      this.sock.write(`GET ${path} HTTP/1.1\r\nHost: ${host}:${port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
        `Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n${headers}\r\n`)
    })
    this.sock.on('data', (c: Buffer) => this.data(c))
    this.sock.on('error', (err) => this.end(err))
    this.sock.on('close', () => this.end(null))
  }

  private end(err: Error | null) {
    if (this.closed) return
    this.closed = true
    this.onEnd(err ?? (this.upgraded ? null : new Error('closed before the upgrade')))
  }

  get unsent(): number { return this.sock.writableLength }

  sendText(s: string): void { this.sock.write(textFrame(s)) }

  close(): void { this.closed = true; this.sock.destroy() }

  private data(chunk: Buffer) {
    let b = this.buf ? Buffer.concat([this.buf, chunk]) : chunk
    this.buf = null
    if (!this.upgraded) {
      const end = b.indexOf('\r\n\r\n')
      if (end < 0) { this.buf = b; return }
      const status = b.toString('latin1', 0, b.indexOf('\r\n'))
      if (!/^HTTP\/1\.1 101 /.test(status)) {
        this.end(new Error(`refused: ${status} ${b.toString('utf8', end + 4, Math.min(b.length, end + 200))}`))
        this.sock.destroy()
        return
      }
      this.upgraded = true
      this.onOpen()
      b = b.subarray(end + 4)
    }
    let off = 0
    while (b.length - off >= 2) {
      const b1 = b[off + 1]!
      let len = b1 & 0x7f
      let hdr = 2
      if (len === 126) { if (b.length - off < 4) break; len = b.readUInt16BE(off + 2); hdr = 4 }
      else if (len === 127) { if (b.length - off < 10) break; len = Number(b.readBigUInt64BE(off + 2)); hdr = 10 }
      if (b1 & 0x80) hdr += 4
      if (b.length - off < hdr + len) break
      const op = b[off]! & 0x0f
      const start = off + hdr
      off = start + len
      if (op === 1) this.onText(b.toString('utf8', start, off))
      else if (op === 2) this.onBinary?.(b.subarray(start, off))
      else if (op === 9) this.sock.write(controlFrame(0xa, b.subarray(start, off)))
      else if (op === 8) { this.sock.end(); this.end(null) }
    }
    if (off < b.length) this.buf = b.subarray(off)
  }
}

// ---- the two protocols ------------------------------------------------------------------------

interface Conn { send(json: string): void; readonly unsent: number; close(): void; readonly closed: boolean }

let mode: Mode = 'uws'
let acks = false
let host = '127.0.0.1'
let port = 0
let watchPort = 0
let localAddresses: string[] = []
let nextLocal = 0

/** `got`: per ring slot, which kinds of socket (bit 1 << KINDS index) have received that position. */
interface Driver { conn: Conn; seq: number; sentAt: Float64Array; sentSeq: Int32Array; got: Uint8Array; lng: number; orderId: number }
const drivers: Driver[] = []
const byDriverId = new Map<number, Driver>()
const watchers: Conn[] = []
const feeds: Conn[] = []
const idle: Conn[] = []
const stats = { acked: 0, delivered: 0, errors: 0, closed: 0, measuring: false, latencies: [] as number[], byKind: { track: 0, dispatch: 0, ops: 0 } as Record<Kind, number> }

/** A socket of kind `k` read position `lat` of driver `drv`: count it once per kind and time it. */
function received(drv: Driver | undefined, lat: number, k: number, now: number): void {
  if (!drv) return
  const seq = Math.round((lat - LAT0) * LAT_SCALE)
  const slot = seq % RING
  if (drv.sentSeq[slot] !== seq || drv.got[slot]! & (1 << k)) return
  drv.got[slot]! |= 1 << k
  stats.delivered++
  stats.byKind[KINDS[k]!]++
  if (stats.measuring) stats.latencies.push(now - drv.sentAt[slot]!)
}

/**
 * Open one socket and resolve once its first application frame arrived (the tracking snapshot or
 * the driver's `hello`; for Socket.IO the server's `ready` event).
 */
function open(path: string, headers: string, onText: (s: string) => void, onBinary: ((b: Buffer) => void) | null = null, toPort = port): Promise<Conn> {
  return new Promise((resolve, reject) => {
    let ready = false
    const local = localAddresses.length ? localAddresses[nextLocal++ % localAddresses.length] : undefined
    const sio = mode === 'socketio'
    const ws: RawWs = new RawWs(host, toPort, path, headers, local,
      () => {},
      (s) => {
        if (sio) {
          // Engine.IO v4: "0{…}" open → we connect the default namespace ("40"); "2" ping → "3" pong.
          if (s === '2') return ws.sendText('3')
          if (s.charCodeAt(0) === 48 /* 0 */) return ws.sendText('40')
          if (!ready) { if (s.startsWith('42["ready"')) { ready = true; resolve(conn) } return }
          return onText(s)
        }
        if (!ready) { ready = true; resolve(conn) }
        onText(s)
      },
      (err) => {
        if (!ready) reject(err ?? new Error('closed'))
        else stats.closed++
      },
      onBinary && ((b) => {
        if (!ready) { ready = true; resolve(conn) }
        onBinary(b)
      }))
    const conn: Conn = {
      send: sio ? (json) => ws.sendText(`42["location",${json}]`) : (json) => ws.sendText(json),
      get unsent() { return ws.unsent },
      close: () => ws.close(),
      get closed() { return ws.closed },
    }
  })
}

function openDriver(p: ClientPair): Promise<Conn> {
  if (mode === 'socketio') return open(`/socket.io/?EIO=4&transport=websocket&role=driver&driver=${p.driverId}&order=${p.orderId}${p.storeId ? `&store=${p.storeId}` : ''}`, '', () => {})
  // Acks are cumulative (positions coalesced in one server turn share one): count the positions covered.
  let lastAcked = 0
  return open('/api/v1/ws/driver', `Authorization: Bearer ${p.token}\r\n`, (s) => {
    if (s.startsWith('{"type":"ack"')) {
      const k = s.indexOf('"seq":')
      const seq = k < 0 ? NaN : parseInt(s.slice(k + 6), 10)
      if (seq > lastAcked) { stats.acked += seq - lastAcked; lastAcked = seq }
    } else if (s.startsWith('{"type":"error"')) stats.errors++
  })
}

/** A watcher of driver `d` (an index into `drivers`), or an idle one (`d` = -1). */
function openWatcher(p: ClientPair, d: number): Promise<Conn> {
  const onText = d < 0 ? () => {} : (s: string) => {
    if (!s.startsWith(mode === 'uws' ? '{"type":"location"' : '42["location"')) return
    const k = s.indexOf('"lat":')
    if (k < 0) return
    received(drivers[d], parseFloat(s.slice(k + 6)), 0, performance.now())
  }
  if (mode === 'socketio') return open(`/socket.io/?EIO=4&transport=websocket&role=watcher&order=${p.orderId}`, '', onText)
  return open(`/api/v1/ws/track/${p.trackToken}`, '', onText, null, watchPort || port)
}

/**
 * A store's feed (kind 1, dispatch, JSON) or operations screen (kind 2; on this server the same feed
 * in MessagePack, so the publish encodes two formats): driver positions by `driver_id`.
 */
function openFeed(storeId: number, kind: 1 | 2, ownerToken: string): Promise<Conn> {
  const onText = (s: string) => {
    if (!s.startsWith(mode === 'uws' ? '{"type":"location"' : '42["location"')) return
    const i = s.indexOf('"driver_id":')
    const k = s.indexOf('"lat":')
    if (i < 0 || k < 0) return
    received(byDriverId.get(parseInt(s.slice(i + 12), 10)), parseFloat(s.slice(k + 6)), kind, performance.now())
  }
  if (mode === 'socketio') return open(`/socket.io/?EIO=4&transport=websocket&role=feed&store=${storeId}&order=0`, '', onText)
  if (kind === 1) return open(`/api/v1/ws/dispatch/${storeId}`, `Authorization: Bearer ${ownerToken}\r\n`, onText)
  return open(`/api/v1/ws/dispatch/${storeId}?format=msgpack`, `Authorization: Bearer ${ownerToken}\r\n`, () => {}, (b) => {
    const now = performance.now()
    const f = unpack(b) as { type?: string; driver_id?: number; lat?: number }
    if (f.type === 'location' && typeof f.driver_id === 'number' && typeof f.lat === 'number') received(byDriverId.get(f.driver_id), f.lat, 2, now)
  })
}

async function openFeeds(msg: Extract<ParentMsg, { cmd: 'feeds' }>) {
  let failed = 0
  let firstError: string | null = null
  const todo = msg.storeIds.flatMap((id) => [[id, 1], [id, 2]] as Array<[number, 1 | 2]>)
  await pool(todo, CONNECT_CONCURRENCY, async ([id, kind]) => {
    try { feeds.push(await openFeed(id, kind, msg.ownerToken)) } catch (err) { failed++; firstError ??= String((err as Error).message ?? err) }
  })
  send({ ev: 'feeds', open: feeds.length, failed, firstError })
}

/** Run `fn` over `items` with at most `n` in flight. */
async function pool<T>(items: T[], n: number, fn: (x: T, i: number) => Promise<void>): Promise<void> {
  let i = 0
  await Promise.all(Array.from({ length: Math.min(n, items.length) }, async () => {
    while (i < items.length) { const k = i++; await fn(items[k]!, k) }
  }))
}

async function connectPairs(msg: Extract<ParentMsg, { cmd: 'connect' }>) {
  const t0 = Date.now()
  let failed = 0
  let firstError: string | null = null
  await pool(msg.pairs, CONNECT_CONCURRENCY, async (p) => {
    try {
      const idx = drivers.length
      const drv: Driver = { conn: null as unknown as Conn, seq: 0, sentAt: new Float64Array(RING), sentSeq: new Int32Array(RING).fill(-1), got: new Uint8Array(RING), lng: 20 + (p.driverId % 100_000) / 1e6, orderId: p.orderId }
      drivers.push(drv)
      byDriverId.set(p.driverId, drv)
      try {
        if (msg.watch) watchers.push(await openWatcher(p, idx))
        drv.conn = await openDriver(p)
      } catch (err) {
        drivers.splice(drivers.indexOf(drv), 1)
        byDriverId.delete(p.driverId)
        throw err
      }
    } catch (err) {
      failed++
      firstError ??= String((err as Error).message ?? err)
    }
  })
  send({ ev: 'connected', drivers: drivers.length, watchers: watchers.length, failed, firstError, ms: Date.now() - t0 })
}

async function run(msg: Extract<ParentMsg, { cmd: 'run' }>) {
  const period = 1000 / msg.rateHz
  const n = drivers.length
  const start = performance.now()
  const measureFrom = start + msg.warmupSec * 1000
  const end = measureFrom + msg.durationSec * 1000
  // Driver i sends at start + (i/n + k) periods: 1 Hz is an even stream, not one burst a second.
  // `done` counts the sends due so far; a 1 ms timer sends whatever fell due since the last tick.
  let done = 0
  let sent = 0
  let skipped = 0
  let late = 0
  let acked0 = 0
  let delivered0 = 0
  let kinds0 = { ...stats.byKind }
  let errors0 = stats.errors
  let closed0 = stats.closed
  let cpu0 = process.cpuUsage()
  stats.latencies = []
  await new Promise<void>((resolve) => {
    const tick = () => {
      const now = performance.now()
      if (!stats.measuring && now >= measureFrom) {
        stats.measuring = true
        acked0 = stats.acked
        delivered0 = stats.delivered
        kinds0 = { ...stats.byKind }
        errors0 = stats.errors
        closed0 = stats.closed
        cpu0 = process.cpuUsage()
      }
      if (now >= end) return resolve()
      const due = Math.floor(((now - start) / period) * n)
      // A client too busy to keep up drops what it missed rather than bursting a backlog (counted).
      if (due - done > n) { if (stats.measuring) late += due - done - n; done = due - n }
      for (; done < due; done++) {
        const d = drivers[done % n]!
        if (d.conn.closed) continue
        if (d.conn.unsent > MAX_UNSENT) { if (stats.measuring) skipped++; continue }
        const seq = ++d.seq
        const slot = seq % RING
        d.sentSeq[slot] = seq
        d.got[slot] = 0
        d.sentAt[slot] = performance.now()
        d.conn.send(acks
          ? `{"type":"location","lat":${LAT0 + seq / LAT_SCALE},"lng":${d.lng},"seq":${seq}}`
          : `{"type":"location","lat":${LAT0 + seq / LAT_SCALE},"lng":${d.lng}}`)
        if (stats.measuring) sent++
      }
      setTimeout(tick, 1)
    }
    tick()
  })
  stats.measuring = false
  const cpu = process.cpuUsage(cpu0)
  const acked = stats.acked - acked0
  const delivered = stats.delivered - delivered0
  const byKind = { track: stats.byKind.track - kinds0.track, dispatch: stats.byKind.dispatch - kinds0.dispatch, ops: stats.byKind.ops - kinds0.ops }
  // Keep the IPC message bounded: an even sample of at most 200k latencies.
  const all = stats.latencies
  const stride = Math.max(1, Math.ceil(all.length / 200_000))
  const latencies = stride === 1 ? all : all.filter((_, i) => i % stride === 0)
  stats.latencies = []
  // Let in-flight positions land before the next stage starts (they are not counted).
  await new Promise((r) => setTimeout(r, 500))
  send({ ev: 'ran', sent, skipped: skipped + late, acked, delivered, latencies, errors: stats.errors - errors0, closed: stats.closed - closed0, seconds: msg.durationSec, cpuSec: (cpu.user + cpu.system) / 1e6, byKind })
}

async function openIdle(msg: Extract<ParentMsg, { cmd: 'idle' }>) {
  let failed = 0
  let firstError: string | null = null
  await pool(msg.targets, CONNECT_CONCURRENCY, async (p) => {
    try { idle.push(await openWatcher(p, -1)) } catch (err) { failed++; firstError ??= String((err as Error).message ?? err) }
  })
  send({ ev: 'idle', open: idle.length, failed, firstError })
}

process.on('message', (m: ParentMsg) => {
  const fail = (err: unknown) => send({ ev: 'error', message: String((err as Error)?.stack ?? err) })
  switch (m.cmd) {
    case 'init':
      mode = m.mode; acks = m.acks; host = m.host; port = m.port; watchPort = m.watchPort ?? 0; localAddresses = m.localAddresses
      send({ ev: 'ready' })
      break
    case 'connect': connectPairs(m).catch(fail); break
    case 'run': run(m).catch(fail); break
    case 'idle': openIdle(m).catch(fail); break
    case 'feeds': openFeeds(m).catch(fail); break
    case 'drop':
      for (const c of idle.splice(0)) c.close()
      send({ ev: 'dropped' })
      break
    case 'close':
      for (const c of [...drivers.map((d) => d.conn), ...watchers, ...feeds, ...idle]) { try { c?.close() } catch { /* already gone */ } }
      setTimeout(() => process.exit(0), 100)
      break
  }
})
process.on('disconnect', () => process.exit(0))
