/**
 * Fixtures for the delivery tests: a fleet (owner, token, store with one item, drivers) written
 * straight into SQLite, delivery orders through the real API, and a WebSocket client that queues
 * frames so a test can wait for the one it expects.
 */
import { randomBytes, randomInt } from 'node:crypto'
import WebSocket from 'ws'
import { unpack } from 'msgpackr'
import type { Db } from '../../src/storage/db.ts'
import { nowIso } from '../../src/storage/db.ts'
import { createOwnerToken } from '../../src/seed.ts'
import { newToken, sha256Hex } from '../../src/auth/tokens.ts'
import type { TestServer } from './server.ts'

export interface TestDriver { id: number; token: string; phone: string; name: string }
export interface Fleet {
  ownerId: number
  ownerToken: string
  storeId: number
  itemId: number
  /** Two drivers bound to the store. */
  drivers: TestDriver[]
  addDriver(opts?: { restaurantId?: number | null; onShift?: boolean; phone?: string }): TestDriver
  addStore(): { storeId: number; itemId: number }
}

const uniq = () => randomBytes(4).toString('hex')
export const randomPhone = () => `+1555${String(randomInt(0, 10_000_000)).padStart(7, '0')}`

export function createFleet(db: Db, opts: { driverFee?: number } = {}): Fleet {
  const now = nowIso()
  const ownerId = Number(db.prepare('INSERT INTO owners (name, email, created_at) VALUES (?, ?, ?)').run(`Owner ${uniq()}`, `${uniq()}@test.local`, now).lastInsertRowid)
  const ownerToken = createOwnerToken(db, ownerId, ['*'], null, 'test').token
  const addStore = () => {
    const slug = `store-${uniq()}`
    const settings = JSON.stringify(opts.driverFee === undefined ? {} : { driver_fee: opts.driverFee })
    const storeId = Number(db.prepare(`INSERT INTO stores (owner_id, title, slug, store_type, currency, settings, created_at) VALUES (?, ?, ?, 'restaurant', 'USD', ?, ?)`)
      .run(ownerId, `Store ${slug}`, slug, settings, now).lastInsertRowid)
    const cat = Number(db.prepare('INSERT INTO menu_categories (store_id, name, position, created_at) VALUES (?, ?, 0, ?)').run(storeId, 'Mains', now).lastInsertRowid)
    const itemId = Number(db.prepare(`INSERT INTO menu_items (store_id, category_id, name, price, created_at, updated_at) VALUES (?, ?, 'Pizza', 1000, ?, ?)`)
      .run(storeId, cat, now, now).lastInsertRowid)
    return { storeId, itemId }
  }
  const main = addStore()
  const addDriver: Fleet['addDriver'] = (o = {}) => {
    const token = newToken('driver')
    const phone = o.phone ?? randomPhone()
    const name = `Driver ${uniq()}`
    const restaurantId = o.restaurantId === undefined ? main.storeId : o.restaurantId
    const id = Number(db.prepare('INSERT INTO drivers (owner_id, restaurant_id, name, phone, token_hash, on_shift, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)')
      .run(ownerId, restaurantId, name, phone, sha256Hex(token), o.onShift ? 1 : 0, now).lastInsertRowid)
    return { id, token, phone, name }
  }
  return { ownerId, ownerToken, ...main, drivers: [addDriver(), addDriver()], addDriver, addStore }
}

export async function deliveryOrder(s: TestServer, f: Pick<Fleet, 'ownerToken' | 'storeId' | 'itemId'>, extra: Record<string, unknown> = {}) {
  const r = await s.req('POST', `/restaurants/${f.storeId}/orders`, {
    token: f.ownerToken,
    body: { type: 'delivery', address: '1 Main St', customer_name: 'Ada', phone: '+15550100', items: [{ item_id: f.itemId, quantity: 1 }], ...extra },
  })
  if (r.status !== 201) throw new Error(`order create failed: ${r.status} ${r.text}`)
  return r.body as { id: number; track_token: string; total: number; [k: string]: unknown }
}

export async function assign(s: TestServer, f: Fleet, orderId: number, driverId: number) {
  const r = await s.req('POST', `/restaurants/${f.storeId}/orders/${orderId}/assign`, { token: f.ownerToken, body: { driver_id: driverId } })
  if (r.status !== 200) throw new Error(`assign failed: ${r.status} ${r.text}`)
  return r.body
}

export async function driverStatus(s: TestServer, d: TestDriver, orderId: number, status: string) {
  return s.req('PUT', `/driver/deliveries/${orderId}/status`, { token: d.token, body: { delivery_status: status } })
}

export const wsBase = (s: TestServer) => s.base.replace(/^http/, 'ws')

/** A WebSocket test client: every frame is queued (decoded from JSON or MessagePack). */
export class WsClient {
  readonly frames: any[] = []
  private waiters: Array<() => void> = []
  readonly closed: Promise<{ code: number; reason: string }>

  private constructor(readonly ws: WebSocket) {
    ws.on('message', (data, isBinary) => {
      const buf = Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data as ArrayBuffer)
      this.frames.push(isBinary ? unpack(buf) : JSON.parse(buf.toString('utf8')))
      for (const w of this.waiters.splice(0)) w()
    })
    this.closed = new Promise((resolve) => ws.on('close', (code, reason) => { resolve({ code, reason: reason.toString() }); for (const w of this.waiters.splice(0)) w() }))
  }

  /** Open, or reject with the refusal's HTTP status and body. */
  static open(url: string, opts: { token?: string; protocols?: string[] } = {}): Promise<WsClient> {
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(url, opts.protocols ?? [], { headers: opts.token ? { authorization: `Bearer ${opts.token}` } : {} })
      const c = new WsClient(ws)
      ws.once('open', () => resolve(c))
      ws.once('unexpected-response', (_req, res) => {
        let body = ''
        res.on('data', (d: Buffer) => { body += d.toString() })
        res.on('end', () => reject(Object.assign(new Error(`refused ${res.statusCode}`), { status: res.statusCode, body: body ? JSON.parse(body) : null })))
      })
      ws.once('error', (err) => reject(err))
    })
  }

  /** The first queued frame matching `pred` (removed from the queue), waiting up to `ms`. */
  async next(pred: (f: any) => boolean = () => true, ms = 3000): Promise<any> {
    const deadline = Date.now() + ms
    for (;;) {
      const i = this.frames.findIndex(pred)
      if (i >= 0) return this.frames.splice(i, 1)[0]
      const left = deadline - Date.now()
      if (left <= 0 || this.ws.readyState === WebSocket.CLOSED) throw new Error(`no matching frame within ${ms} ms; have ${JSON.stringify(this.frames).slice(0, 500)}`)
      await new Promise<void>((r) => {
        const t = setTimeout(r, left)
        this.waiters.push(() => { clearTimeout(t); r() })
      })
    }
  }

  /** Resolves when no frame matching `pred` arrives within `ms`. */
  async none(pred: (f: any) => boolean, ms = 300): Promise<boolean> {
    try { await this.next(pred, ms); return false } catch { return true }
  }

  send(frame: unknown): void { this.ws.send(JSON.stringify(frame)) }
  close(): void { this.ws.close() }
}
