/**
 * The mixed load of one server life in the chaos run (issue 21 item 3): owner orders with and
 * without Idempotency-Key, owner status changes, KDS bumps by a signed-in cook, driver positions
 * over /ws/driver. Each client loops until a request fails (the server was killed); only what it
 * read in full is recorded as acknowledged in the ledger, the rest as in flight.
 */
import { Pool } from 'undici'
import WebSocket from 'ws'
import { latOf, nextKdsState, STATUS_WALK, type DriverTrack, type Ledger, type SentOrder, type Stepped } from './chaos-ledger.ts'

export interface Target {
  url: string
  storeId: number
  ownerToken: string
  kitchenToken: string
  /** Menu items without variants, not sold out. */
  items: number[]
}

export interface LifeStats { requests: number; orders: number; statusChanges: number; bumps: number; positionsAcked: number }

interface Answer { status: number; headers: Record<string, string | string[] | undefined>; json: any }

export class Life {
  private readonly pool: Pool
  private stopped = false
  /** Set just before the kill: from then on a failed request is expected, not a finding. */
  private dying = false
  private readonly sockets: WebSocket[] = []
  /** Orders acknowledged in this life that nobody walks yet (status and KDS clients take them). */
  private readonly claimable: number[] = []
  private readonly lineIds = new Map<number, Array<{ id: number; kds_state: string }>>()
  readonly stats: LifeStats = { requests: 0, orders: 0, statusChanges: 0, bumps: 0, positionsAcked: 0 }
  /** Answers no client should get from a healthy server (non-2xx); the run fails on any. */
  readonly unexpected: string[] = []

  constructor(private readonly t: Target, private readonly ledger: Ledger, private readonly cycle: number, private readonly rand: () => number) {
    this.pool = new Pool(t.url, { connections: 16, pipelining: 1 })
  }

  async call(method: string, path: string, token: string, body?: string, extra: Record<string, string> = {}): Promise<Answer> {
    this.stats.requests++
    const r = await this.pool.request({
      method: method as 'GET', path: `/api/v1${path}`,
      headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...extra },
      body,
    })
    const text = await r.body.text()
    return { status: r.statusCode, headers: r.headers, json: text ? JSON.parse(text) : null }
  }

  private bad(what: string, a: Answer): void {
    this.unexpected.push(`${what}: ${a.status} ${JSON.stringify(a.json).slice(0, 200)}`)
  }

  /** An order body with 1–3 lines; unique by its note. */
  orderBody(note: string): string {
    const n = 1 + Math.floor(this.rand() * 3)
    const items = Array.from({ length: n }, (_, i) => ({ item_id: this.t.items[(i + Math.floor(this.rand() * this.t.items.length)) % this.t.items.length], quantity: 1 + Math.floor(this.rand() * 2) }))
    const table = this.rand() < 0.5
    return JSON.stringify({ type: table ? 'on-table' : 'takeaway', ...(table ? { table_number: String(1 + Math.floor(this.rand() * 20)) } : {}), note, items })
  }

  /** POST one order (with `key`: as an idempotent create); true while the server answers. */
  private async createOrder(key: string | null): Promise<boolean> {
    const note = this.ledger.nextNote()
    const sent: SentOrder = { note, key, body: this.orderBody(note), id: null, cycle: this.cycle }
    this.ledger.orders.push(sent)
    const a = await this.call('POST', `/restaurants/${this.t.storeId}/orders`, this.t.ownerToken, sent.body, key ? { 'idempotency-key': key } : {})
    if (a.status !== 200) { this.bad(`order ${note}`, a); return false }
    sent.id = a.json.id as number
    this.stats.orders++
    this.lineIds.set(sent.id, (a.json.items as Array<{ id: number; kds_state: string }>).map((l) => ({ id: l.id, kds_state: l.kds_state })))
    this.claimable.push(sent.id)
    return true
  }

  /** Walk one order through the owner status changes, one at a time. */
  private async walkStatus(orderId: number): Promise<boolean> {
    const s: Stepped = { id: orderId, orderId, acked: 'new', inFlight: null }
    this.ledger.statuses.push(s)
    for (const status of STATUS_WALK) {
      if (this.stopped) return false
      s.inFlight = status
      const a = await this.call('PUT', `/restaurants/${this.t.storeId}/orders/${orderId}/status`, this.t.ownerToken, JSON.stringify({ status }))
      if (a.status !== 200) { this.bad(`status ${orderId} → ${status}`, a); return false }
      s.acked = status
      s.inFlight = null
      this.ledger.statusEvents.add(`${orderId}:${status}`)
      this.stats.statusChanges++
    }
    return true
  }

  /** Bump every line of one order to `served`, one step at a time. */
  private async bumpAll(orderId: number): Promise<boolean> {
    for (const line of this.lineIds.get(orderId) ?? []) {
      const s: Stepped = { id: line.id, orderId, acked: line.kds_state, inFlight: null }
      this.ledger.lines.push(s)
      for (let next = nextKdsState(s.acked); next; next = nextKdsState(s.acked)) {
        if (this.stopped) return false
        s.inFlight = next
        const a = await this.call('PUT', `/staff/kds/items/${line.id}/bump`, this.t.kitchenToken)
        if (a.status !== 200) { this.bad(`bump line ${line.id}`, a); return false }
        if (a.json.item.kds_state !== next) this.unexpected.push(`bump line ${line.id}: state ${a.json.item.kds_state}, expected ${next}`)
        s.acked = a.json.item.kds_state as string
        s.inFlight = null
        this.stats.bumps++
      }
    }
    return true
  }

  private async take(): Promise<number | null> {
    while (!this.stopped) {
      const id = this.claimable.shift()
      if (id !== undefined) return id
      await new Promise((r) => setTimeout(r, 5))
    }
    return null
  }

  /** One client loop; a thrown error (connection refused or reset) ends it quietly once stopped. */
  private async loop(step: () => Promise<boolean>): Promise<void> {
    try {
      while (!this.stopped && (await step())) { /* next */ }
    } catch (err) {
      if (!this.dying) this.unexpected.push(`client error while the server was up: ${String(err)}`)
    }
  }

  /** Stream numbered positions over the driver socket until it closes. */
  private driver(d: DriverTrack): Promise<void> {
    return new Promise((resolve) => {
      const ws = new WebSocket(`${this.t.url.replace('http', 'ws')}/api/v1/ws/driver`, { headers: { authorization: `Bearer ${d.token}` } })
      this.sockets.push(ws)
      let timer: NodeJS.Timeout | null = null
      ws.on('error', () => { /* the close event follows */ })
      ws.on('close', () => { if (timer) clearInterval(timer); resolve() })
      ws.on('message', (data) => {
        const f = JSON.parse(String(data)) as { type: string; seq?: number; code?: string }
        if (f.type === 'hello' && !timer) {
          timer = setInterval(() => {
            if (this.stopped || ws.readyState !== WebSocket.OPEN) return
            const seq = d.nextSeq++
            ws.send(JSON.stringify({ type: 'location', lat: latOf(seq), lng: 7, seq }))
          }, 10)
        } else if (f.type === 'ack' && typeof f.seq === 'number') {
          if (f.seq > d.ackedSeq) { d.ackedSeq = f.seq; this.stats.positionsAcked++ }
        } else if (f.type === 'error') {
          this.unexpected.push(`driver ${d.id} socket error frame: ${JSON.stringify(f)}`)
        }
      })
    })
  }

  /** Run every client until `stop()`; resolves when all have ended. */
  run(mix: { plain: number; idempotent: number; status: number; kds: number }): Promise<void> {
    let k = 0
    const key = () => `chaos-${this.ledger.prefix}-${this.cycle}-${++k}`
    const clients: Array<Promise<void>> = [
      ...Array.from({ length: mix.plain }, () => this.loop(() => this.createOrder(null))),
      ...Array.from({ length: mix.idempotent }, () => this.loop(() => this.createOrder(key()))),
      ...Array.from({ length: mix.status }, () => this.loop(async () => { const id = await this.take(); return id !== null && this.walkStatus(id) })),
      ...Array.from({ length: mix.kds }, () => this.loop(async () => { const id = await this.take(); return id !== null && this.bumpAll(id) })),
      ...this.ledger.drivers.map((d) => this.driver(d)),
    ]
    return Promise.all(clients).then(() => undefined)
  }

  /** The server is about to be killed: failures from now on are the kill's. */
  expectDeath(): void { this.dying = true }

  /** The server is gone: no client starts anything new (sockets close by themselves). */
  stop(): void { this.dying = true; this.stopped = true }

  close(): Promise<void> {
    for (const ws of this.sockets) ws.terminate()
    return this.pool.destroy()
  }
}
