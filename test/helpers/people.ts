/**
 * Fixtures for the staff app, storefront and customer app tests (issue 5): staff members with real
 * (slow) password and PIN hashes, tokens issued straight into SQLite when a test is not about
 * signing in, storefront tokens, customers; and a small WebSocket client that queues frames.
 */
import WebSocket from 'ws'
import { randomBytes } from 'node:crypto'
import type { Db } from '../../src/storage/db.ts'
import { nowIso } from '../../src/storage/db.ts'
import { hashSecretSync } from '../../src/auth/passwords.ts'
import { hashPinSync, issueStaffToken, storePinSalt } from '../../src/auth/staff.ts'
import { issueCustomerToken } from '../../src/auth/customer.ts'
import { newToken, sha256Hex } from '../../src/auth/tokens.ts'

const uniq = () => randomBytes(4).toString('hex')

export interface StaffFixture { id: number; email: string; password: string; pin: string; token: string }

let pinSeq = 100000 + Math.floor(Math.random() * 800000)

/** A staff member with hashed password and PIN, plus a ready token for device `fixture`. */
export function createStaff(db: Db, storeId: number, opts: { role?: string; station?: string | null; permissions?: { grant?: string[]; revoke?: string[] }; pin?: string; password?: string } = {}): StaffFixture {
  const role = opts.role ?? 'manager'
  const email = `${role}-${uniq()}@staff.test`
  const password = opts.password ?? `pw-${uniq()}`
  const pin = opts.pin ?? String(pinSeq++)
  const id = Number(db.prepare('INSERT INTO staff (store_id, name, email, role, password_hash, pin_hash, permissions, station, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)')
    .run(storeId, `Staff ${role}`, email, role, hashSecretSync(password), hashPinSync(pin, storePinSalt(db, storeId)), opts.permissions ? JSON.stringify(opts.permissions) : null, opts.station ?? null, nowIso()).lastInsertRowid)
  const token = issueStaffToken(db, id, 'fixture', 'password')
  return { id, email, password, pin, token }
}

/** A storefront token for a store (default scopes: menu:read and order:write). */
export function createStorefrontToken(db: Db, storeId: number, scopes: string[] = ['menu:read', 'order:write']): string {
  const token = newToken('storefront')
  db.prepare('INSERT INTO storefront_tokens (store_id, token_hash, scopes, created_at) VALUES (?, ?, ?, ?)').run(storeId, sha256Hex(token), JSON.stringify(scopes), nowIso())
  return token
}

export interface CustomerFixture { id: number; email: string; password: string; phone: string; token: string }

/** A customer with a password and a token for device `fixture`. */
export function createCustomer(db: Db, storeId: number, opts: { email?: string; password?: string; phone?: string } = {}): CustomerFixture {
  const email = opts.email ?? `c-${uniq()}@customer.test`
  const password = opts.password ?? `pw-${uniq()}`
  const phone = opts.phone ?? `+1555${String(Math.floor(Math.random() * 1e7)).padStart(7, '0')}`
  const now = nowIso()
  const id = Number(db.prepare("INSERT INTO customers (store_id, name, email, phone, password_hash, consents, created_at, updated_at) VALUES (?, 'Cust', ?, ?, ?, '{}', ?, ?)")
    .run(storeId, email, phone, hashSecretSync(password), now, now).lastInsertRowid)
  return { id, email, password, phone, token: issueCustomerToken(db, id, 'fixture') }
}

/** A WebSocket client that keeps every frame, so tests can wait for the one they expect. */
export class Client {
  readonly frames: any[] = []
  private waiters: Array<{ pred: (f: any) => boolean; resolve: (f: any) => void }> = []
  closed: { code: number; reason: string } | null = null
  private constructor(readonly ws: WebSocket) {
    ws.on('message', (data) => {
      const f = JSON.parse(String(data))
      this.frames.push(f)
      this.waiters = this.waiters.filter((w) => (w.pred(f) ? (w.resolve(f), false) : true))
    })
    ws.on('close', (code, reason) => { this.closed = { code, reason: String(reason) } })
  }

  /** Connect; rejects with the HTTP status when the upgrade is refused. */
  static open(url: string, headers: Record<string, string> = {}): Promise<Client> {
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(url, { headers })
      const c = new Client(ws)
      ws.once('open', () => resolve(c))
      ws.once('unexpected-response', (_req, res) => reject(Object.assign(new Error(`upgrade refused: ${res.statusCode}`), { status: res.statusCode })))
      ws.once('error', reject)
    })
  }

  /** The first frame (already received or future) matching `pred`. */
  next(pred: (f: any) => boolean, timeoutMs = 3000): Promise<any> {
    const seen = this.frames.find(pred)
    if (seen) return Promise.resolve(seen)
    return new Promise((resolve, reject) => {
      const t = setTimeout(() => reject(new Error(`no matching frame within ${timeoutMs} ms; got ${JSON.stringify(this.frames.map((f) => f.type))}`)), timeoutMs)
      this.waiters.push({ pred, resolve: (f) => { clearTimeout(t); resolve(f) } })
    })
  }

  send(msg: unknown): void { this.ws.send(JSON.stringify(msg)) }

  close(): Promise<void> {
    if (this.ws.readyState === WebSocket.CLOSED) return Promise.resolve()
    return new Promise((r) => { this.ws.once('close', () => r()); this.ws.close() })
  }
}

/** Wait until `cond()` holds (polling), for effects that follow a reply (events, pushes). */
export async function until(cond: () => boolean, timeoutMs = 2000): Promise<void> {
  const end = Date.now() + timeoutMs
  while (!cond()) {
    if (Date.now() > end) throw new Error('condition not met in time')
    await new Promise((r) => setTimeout(r, 10))
  }
}
