/**
 * Kitchen screens for bench/kds.ts, in their own process so that frame arrival is timed on an
 * event loop that does nothing else. Driven by the parent over IPC:
 *
 *   connect → open every screen on /ws/kds, wait for each one's snapshot
 *   collect → hand over (and forget) every arrival seen so far
 *   close   → close everything and exit
 *
 * An arrival is keyed `i<lineId>:<kds_state>` for an `item` frame (a bump or recall) and
 * `t<orderId>` for a `ticket` frame (a new order), with the time it was read off the socket. Times
 * are CLOCK_MONOTONIC (`process.hrtime`), which every process on the machine shares, so the parent
 * can subtract the moment it sent the request.
 */
import WebSocket from 'ws'

export interface ScreenSpec { token: string; station: string | null }
export type ParentMsg =
  | { cmd: 'connect'; wsUrl: string; screens: ScreenSpec[] }
  | { cmd: 'collect' }
  | { cmd: 'close' }
export type WorkerMsg =
  | { ev: 'connected'; screens: number; ms: number }
  | { ev: 'collected'; arrivals: Array<[string, number[]]>; frames: number; bytes: number; closed: number }
  | { ev: 'error'; message: string }

/** Milliseconds on the machine-wide monotonic clock (comparable across processes). */
export const monoMs = (): number => Number(process.hrtime.bigint()) / 1e6

const send = (m: WorkerMsg) => process.send!(m)
const sockets: WebSocket[] = []
let arrivals = new Map<string, number[]>()
let frames = 0
let bytes = 0
let closed = 0

function note(key: string, at: number) {
  const seen = arrivals.get(key)
  if (seen) seen.push(at)
  else arrivals.set(key, [at])
}

function open(url: string): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { perMessageDeflate: false })
    let first = true
    ws.on('message', (data: Buffer) => {
      const at = monoMs()
      frames++
      bytes += data.length
      const f = JSON.parse(data.toString()) as { type: string; items?: Array<{ id: number; kds_state: string }>; ticket?: { order_id: number } }
      if (first) {
        first = false
        if (f.type !== 'snapshot') return reject(new Error(`first frame was ${f.type}, not snapshot`))
        return resolve(ws)
      }
      if (f.type === 'item') for (const i of f.items!) note(`i${i.id}:${i.kds_state}`, at)
      else if (f.type === 'ticket') note(`t${f.ticket!.order_id}`, at)
    })
    ws.on('close', () => { closed++ })
    ws.once('error', reject)
    ws.once('unexpected-response', (_q, res) => reject(new Error(`upgrade refused: ${res.statusCode}`)))
  })
}

process.on('message', (m: ParentMsg) => {
  void (async () => {
    try {
      if (m.cmd === 'connect') {
        const t0 = monoMs()
        for (const s of m.screens) {
          const q = new URLSearchParams({ token: s.token })
          if (s.station !== null) q.set('station_id', s.station)
          sockets.push(await open(`${m.wsUrl}?${q}`))
        }
        send({ ev: 'connected', screens: sockets.length, ms: monoMs() - t0 })
      } else if (m.cmd === 'collect') {
        send({ ev: 'collected', arrivals: [...arrivals], frames, bytes, closed })
        arrivals = new Map()
        frames = 0
        bytes = 0
      } else {
        for (const ws of sockets) ws.terminate()
        process.exit(0)
      }
    } catch (err) {
      send({ ev: 'error', message: (err as Error).message })
    }
  })()
})
process.on('disconnect', () => process.exit(0))
