/**
 * Load-generating worker for bench/tracking.ts, one process per share of the clients. It speaks
 * either this server's sockets (`uws`: /ws/driver and /ws/track/{token}) or the Socket.IO baseline
 * (bench/baseline/socketio-server.ts), driven by the parent over IPC:
 *
 *   connect → open every driver and watcher socket, wait for their first frame
 *   run     → each driver sends positions at `rateHz`; watchers time driver → watcher latency
 *   idle    → open idle tracking sockets (memory per socket is measured on the server side)
 *   close   → close everything and exit
 *
 * A driver and the watcher of its order live in the same worker, so latency is measured with one
 * clock: the time the driver sent a position until the watcher received that same position.
 */
import WebSocket from 'ws'
import { io, type Socket } from 'socket.io-client'

export interface ClientPair { driverId: number; token: string; orderId: number; trackToken: string }
export type Mode = 'uws' | 'socketio'
export type ParentMsg =
  | { cmd: 'connect'; mode: Mode; wsBase: string; pairs: ClientPair[]; watch: boolean }
  | { cmd: 'run'; rateHz: number; durationSec: number; warmupSec: number }
  | { cmd: 'idle'; trackTokens: Array<{ orderId: number; trackToken: string }> }
  | { cmd: 'close' }
export type WorkerMsg =
  | { ev: 'connected'; drivers: number; watchers: number; failed: number; ms: number }
  | { ev: 'ran'; sent: number; acked: number; received: number; latencies: number[]; errors: number; seconds: number }
  | { ev: 'idle'; open: number; failed: number }
  | { ev: 'error'; message: string }

interface Conn { send(frame: { lat: number; lng: number; seq: number }): void; close(): void }

const send = (m: WorkerMsg) => process.send!(m)
const CONNECT_CONCURRENCY = 100

let mode: Mode = 'uws'
let wsBase = ''
const drivers: Array<{ pair: ClientPair; conn: Conn; seq: number; next: number }> = []
const watchers: Conn[] = []
const idle: Conn[] = []
/** `${orderId}:${lat}` → send time (ms, performance clock). */
const inFlight = new Map<string, number>()
const stats = { acked: 0, received: 0, errors: 0, measuring: false, latencies: [] as number[] }

function onLocation(orderId: number, lat: number) {
  const key = `${orderId}:${lat}`
  const t0 = inFlight.get(key)
  if (t0 === undefined) return
  inFlight.delete(key)
  stats.received++
  if (stats.measuring) stats.latencies.push(performance.now() - t0)
}

function openUws(url: string, headers: Record<string, string>, onFrame: (f: any) => void): Promise<Conn> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { headers, perMessageDeflate: false })
    let first = true
    ws.on('message', (data) => {
      const f = JSON.parse(data.toString())
      if (first) { first = false; resolve({ send: (x) => ws.send(JSON.stringify({ type: 'location', ...x })), close: () => ws.terminate() }) }
      onFrame(f)
    })
    ws.once('error', reject)
    ws.once('unexpected-response', (_q, res) => reject(new Error(`refused ${res.statusCode}`)))
  })
}

function openSocketIo(query: Record<string, string>, onLocationFrame: (f: any) => void): Promise<Conn> {
  return new Promise((resolve, reject) => {
    const s: Socket = io(wsBase, { transports: ['websocket'], query, reconnection: false, forceNew: true })
    s.on('location', onLocationFrame)
    s.once('ready', () => resolve({ send: (x) => s.emit('location', x), close: () => s.disconnect() }))
    s.once('connect_error', reject)
  })
}

async function openDriver(p: ClientPair): Promise<Conn> {
  if (mode === 'uws') {
    // Acks are cumulative (coalesced positions share one): count the positions they cover.
    let lastAcked = 0
    return openUws(`${wsBase}/ws/driver`, { authorization: `Bearer ${p.token}` }, (f) => {
      if (f.type === 'ack' && typeof f.seq === 'number' && f.seq > lastAcked) { stats.acked += f.seq - lastAcked; lastAcked = f.seq }
      else if (f.type === 'error') stats.errors++
    })
  }
  return openSocketIo({ role: 'driver', driver: String(p.driverId), order: String(p.orderId) }, () => {})
}

async function openWatcher(orderId: number, trackToken: string, measure: boolean): Promise<Conn> {
  const handler = (f: any) => { if (measure && f.type === 'location') onLocation(f.order_id, f.driver.lat) }
  if (mode === 'uws') return openUws(`${wsBase}/ws/track/${trackToken}`, {}, handler)
  return openSocketIo({ role: 'watcher', order: String(orderId) }, (f) => handler({ type: 'location', ...f }))
}

/** Run `fn` over `items` with at most `n` in flight. */
async function pool<T>(items: T[], n: number, fn: (x: T) => Promise<void>): Promise<void> {
  let i = 0
  await Promise.all(Array.from({ length: Math.min(n, items.length) }, async () => { while (i < items.length) await fn(items[i++]!) }))
}

async function connect(msg: Extract<ParentMsg, { cmd: 'connect' }>) {
  mode = msg.mode
  wsBase = msg.wsBase
  const t0 = Date.now()
  let failed = 0
  await pool(msg.pairs, CONNECT_CONCURRENCY, async (p) => {
    try {
      if (msg.watch) watchers.push(await openWatcher(p.orderId, p.trackToken, true))
      drivers.push({ pair: p, conn: await openDriver(p), seq: 0, next: 0 })
    } catch { failed++ }
  })
  send({ ev: 'connected', drivers: drivers.length, watchers: watchers.length, failed, ms: Date.now() - t0 })
}

async function run(msg: Extract<ParentMsg, { cmd: 'run' }>) {
  const period = 1000 / msg.rateHz
  const start = performance.now()
  const measureFrom = start + msg.warmupSec * 1000
  const end = measureFrom + msg.durationSec * 1000
  // Spread the drivers over one period so 1 Hz does not mean one burst per second.
  drivers.forEach((d, i) => { d.next = start + (i / drivers.length) * period })
  let sent = 0
  let sentMeasured = 0
  const ackedAtStart = { v: 0 }
  const receivedAtStart = { v: 0 }
  await new Promise<void>((resolve) => {
    const tick = () => {
      const now = performance.now()
      if (!stats.measuring && now >= measureFrom) {
        stats.measuring = true
        ackedAtStart.v = stats.acked
        receivedAtStart.v = stats.received
      }
      if (now >= end) return resolve()
      for (const d of drivers) {
        while (d.next <= now) {
          d.seq++
          const lat = 10 + (d.seq % 1_000_000) / 10_000_000
          inFlight.set(`${d.pair.orderId}:${lat}`, performance.now())
          d.conn.send({ lat, lng: 20 + d.pair.driverId / 1e6, seq: d.seq })
          sent++
          if (stats.measuring) sentMeasured++
          d.next += period
        }
      }
      // Positions never delivered (superseded in the same server turn) are forgotten after 5 s.
      if (inFlight.size > drivers.length * 20) for (const [k, t] of inFlight) if (now - t > 5000) inFlight.delete(k)
      setTimeout(tick, 2)
    }
    tick()
  })
  stats.measuring = false
  const received = stats.received - receivedAtStart.v
  const acked = stats.acked - ackedAtStart.v
  await new Promise((r) => setTimeout(r, 300))
  // Keep the IPC message bounded: an even sample of at most 200k latencies.
  const all = stats.latencies
  const stride = Math.max(1, Math.ceil(all.length / 200_000))
  const latencies = stride === 1 ? all : all.filter((_, i) => i % stride === 0)
  stats.latencies = []
  send({ ev: 'ran', sent: sentMeasured, acked, received, latencies, errors: stats.errors, seconds: msg.durationSec })
}

async function openIdle(msg: Extract<ParentMsg, { cmd: 'idle' }>) {
  let failed = 0
  await pool(msg.trackTokens, CONNECT_CONCURRENCY, async (x) => {
    try { idle.push(await openWatcher(x.orderId, x.trackToken, false)) } catch { failed++ }
  })
  send({ ev: 'idle', open: idle.length, failed })
}

process.on('message', (m: ParentMsg) => {
  const fail = (err: unknown) => send({ ev: 'error', message: String((err as Error)?.stack ?? err) })
  switch (m.cmd) {
    case 'connect': connect(m).catch(fail); break
    case 'run': run(m).catch(fail); break
    case 'idle': openIdle(m).catch(fail); break
    case 'close':
      for (const c of [...drivers.map((d) => d.conn), ...watchers, ...idle]) { try { c.close() } catch { /* already gone */ } }
      setTimeout(() => process.exit(0), 200)
      break
  }
})
