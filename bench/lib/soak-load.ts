/**
 * The soak's load (issue 21 item 6): owner orders and status changes at a paced rate, drivers
 * streaming positions over /ws/driver, customers watching over /ws/track (a few closed and reopened
 * every round, so leaked sockets would show as growing fds), webhook deliveries to a local
 * receiver for every order event. Counts requests and errors; never throws while the server runs.
 */
import { Pool } from 'undici'
import WebSocket from 'ws'
import { rng } from './rng.ts'

export interface SoakTarget { url: string; storeId: number; ownerToken: string; items: number[] }
export interface SoakCounters { requests: number; errors: number; skipped: number; firstErrors: string[]; positions: number; trackFrames: number; trackOpened: number; trackClosed: number }

const STATUS_WALK = ['preparing', 'ready', 'completed']
/** Most requests in flight at once; beyond it a due request is skipped and counted (the server fell behind). */
const MAX_IN_FLIGHT = 256

export class SoakLoad {
  readonly pool: Pool
  readonly c: SoakCounters = { requests: 0, errors: 0, skipped: 0, firstErrors: [], positions: 0, trackFrames: 0, trackOpened: 0, trackClosed: 0 }
  private readonly rand: () => number
  /** Orders waiting for their next status change: [id, steps done]. */
  private readonly walking: Array<[number, number]> = []
  private readonly drivers: WebSocket[] = []
  private readonly trackers = new Set<WebSocket>()
  private timers: NodeJS.Timeout[] = []
  private inFlight = 0
  private stopped = false

  constructor(private readonly t: SoakTarget, seed: number) {
    this.pool = new Pool(t.url, { connections: 32, pipelining: 1 })
    this.rand = rng(seed)
  }

  private fail(what: string): void {
    this.c.errors++
    if (this.c.firstErrors.length < 10) this.c.firstErrors.push(what)
  }

  async call(method: 'POST' | 'PUT' | 'GET', path: string, body?: unknown): Promise<{ status: number; json: any }> {
    const r = await this.pool.request({
      method, path: `/api/v1${path}`,
      headers: { authorization: `Bearer ${this.t.ownerToken}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    })
    const text = await r.body.text()
    return { status: r.statusCode, json: text ? JSON.parse(text) : null }
  }

  /** One unit of mixed load: a status change when an order waits for one (half the time), else an order. */
  async op(): Promise<void> {
    this.c.requests++
    try {
      const next = this.walking.length && this.rand() < 0.5 ? this.walking.shift()! : null
      if (next) {
        const [id, done] = next
        const r = await this.call('PUT', `/restaurants/${this.t.storeId}/orders/${id}/status`, { status: STATUS_WALK[done] })
        if (r.status !== 200) return this.fail(`status: ${r.status} ${JSON.stringify(r.json).slice(0, 160)}`)
        if (done + 1 < STATUS_WALK.length) this.walking.push([id, done + 1])
        return
      }
      const items = [{ item_id: this.t.items[Math.floor(this.rand() * this.t.items.length)]!, quantity: 1 + Math.floor(this.rand() * 3) }]
      const r = await this.call('POST', `/restaurants/${this.t.storeId}/orders`, { type: 'takeaway', note: 'soak', items })
      if (r.status !== 200) return this.fail(`order: ${r.status} ${JSON.stringify(r.json).slice(0, 160)}`)
      if (this.walking.length < 10_000) this.walking.push([r.json.id as number, 0])
    } catch (err) {
      this.fail(`request: ${String(err)}`)
    }
  }

  /** Closed loop with `clients` at once for `seconds`: mixed requests per second the server sustains. */
  async capacity(clients: number, seconds: number): Promise<number> {
    const before = this.c.requests
    const end = performance.now() + seconds * 1000
    await Promise.all(Array.from({ length: clients }, async () => { while (performance.now() < end) await this.op() }))
    return (this.c.requests - before) / seconds
  }

  /** Paced mixed load at `rate`/s until `stop()` (whatever is due every 10 ms). */
  pace(rate: number): void {
    const start = performance.now()
    let issued = 0
    this.timers.push(setInterval(() => {
      if (this.stopped) return
      const due = Math.floor(((performance.now() - start) / 1000) * rate)
      for (; issued < due; issued++) {
        if (this.inFlight >= MAX_IN_FLIGHT) { this.c.skipped++; continue }
        this.inFlight++
        void this.op().finally(() => { this.inFlight-- })
      }
    }, 10))
  }

  /** Drivers stream positions at `hz` (fire-and-forget frames, as a tracking app does). */
  startDrivers(tokens: string[], hz: number): void {
    const ws = this.t.url.replace('http', 'ws')
    tokens.forEach((token, i) => {
      const s = new WebSocket(`${ws}/api/v1/ws/driver`, { headers: { authorization: `Bearer ${token}` } })
      s.on('error', (err) => this.fail(`driver socket: ${String(err)}`))
      let n = 0
      s.on('open', () => {
        this.timers.push(setInterval(() => {
          if (s.readyState !== WebSocket.OPEN) return
          n++
          s.send(JSON.stringify({ type: 'location', lat: 52.5 + ((n % 1000) / 1e5), lng: 13.4 + i / 1000 }))
          this.c.positions++
        }, 1000 / hz))
      })
      this.drivers.push(s)
    })
  }

  private openTracker(trackToken: string): void {
    const s = new WebSocket(`${this.t.url.replace('http', 'ws')}/api/v1/ws/track/${trackToken}`)
    this.c.trackOpened++
    s.on('message', () => { this.c.trackFrames++ })
    s.on('error', (err) => { if (!this.stopped) this.fail(`track socket: ${String(err)}`) })
    s.on('close', () => { this.trackers.delete(s); this.c.trackClosed++ })
    this.trackers.add(s)
  }

  /** `perOrder` watchers on each tracked order; every `churnMs` a quarter of them close and reopen. */
  startTrackers(trackTokens: string[], perOrder: number, churnMs: number): void {
    for (const tok of trackTokens) for (let i = 0; i < perOrder; i++) this.openTracker(tok)
    let k = 0
    this.timers.push(setInterval(() => {
      const all = [...this.trackers]
      for (let i = 0; i < Math.ceil(all.length / 4); i++) {
        all[i]!.close()
        this.openTracker(trackTokens[k++ % trackTokens.length]!)
      }
    }, churnMs))
  }

  async stop(): Promise<void> {
    this.stopped = true
    for (const t of this.timers) clearInterval(t)
    const deadline = Date.now() + 30_000
    while (this.inFlight > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20))
    for (const s of [...this.drivers, ...this.trackers]) s.terminate()
    await this.pool.close()
  }
}
