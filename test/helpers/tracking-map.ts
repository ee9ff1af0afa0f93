/**
 * Tracking-page map fixtures (docs/tracking-page.md): a store with a position (its settings), a
 * customer's saved address with a position, a delivery ordered to it, a driver assigned; and a
 * fake tile server that counts the tiles a page asks for.
 */
import { createServer, type IncomingHttpHeaders } from 'node:http'
import type { AddressInfo } from 'node:net'
import { createCustomer } from './fixtures.ts'
import { assign, createFleet, type Fleet, type TestDriver } from './delivery.ts'
import type { TestServer } from './server.ts'

export const STORE_AT = { lat: 52.52, lng: 13.405 }
export const DEST_AT = { lat: 52.53, lng: 13.43 }

/** The fleet's store with STORE_AT as its location (through the settings API). */
export async function mapFleet(s: TestServer): Promise<Fleet> {
  const f = createFleet(s.app.svc.db)
  const r = await s.req('PUT', `/restaurants/${f.storeId}/settings`, { token: f.ownerToken, body: { location: STORE_AT } })
  if (r.status !== 200) throw new Error(`settings failed: ${r.status} ${r.text}`)
  return f
}

/** A customer's delivery to a saved address at DEST_AT, assigned to `d`. */
export async function mappedDelivery(s: TestServer, f: Fleet, d: TestDriver): Promise<{ id: number; track_token: string }> {
  const c = createCustomer(s.app.svc.db, f.storeId)
  const addr = await s.req('POST', '/customer/addresses', { token: c.token, body: { address: '5 Elm Road', ...DEST_AT } })
  if (addr.status !== 200 && addr.status !== 201) throw new Error(`address failed: ${addr.status} ${addr.text}`)
  const o = await s.req('POST', '/customer/orders', { token: c.token, body: { type: 'delivery', address_id: addr.body.id, items: [{ item_id: f.itemId, quantity: 1 }] } })
  if (o.status !== 200 && o.status !== 201) throw new Error(`order failed: ${o.status} ${o.text}`)
  await assign(s, f, o.body.id, d.id)
  return o.body as { id: number; track_token: string }
}

/** A 1×1 transparent PNG. */
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==', 'base64')

export interface FakeTiles {
  /** `http://127.0.0.1:<port>/{z}/{x}/{y}.png` */
  template: string
  origin: string
  /** Tile requests answered so far, with their headers. */
  requests: Array<{ path: string; headers: IncomingHttpHeaders }>
  /** `ok`: a PNG for any /{z}/{x}/{y}.png; `fail`: 500 for everything. */
  mode: 'ok' | 'fail'
  close(): Promise<void>
}

export async function fakeTileServer(): Promise<FakeTiles> {
  const state = { mode: 'ok' as 'ok' | 'fail', requests: [] as FakeTiles['requests'] }
  const server = createServer((req, res) => {
    state.requests.push({ path: req.url ?? '', headers: req.headers })
    if (state.mode === 'ok' && /^\/\d+\/\d+\/\d+\.png$/.test(req.url ?? '')) {
      res.writeHead(200, { 'content-type': 'image/png', 'content-length': PNG.length }).end(PNG)
    } else {
      res.writeHead(state.mode === 'ok' ? 404 : 500).end()
    }
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  return {
    template: `${origin}/{z}/{x}/{y}.png`, origin,
    get requests() { return state.requests },
    get mode() { return state.mode },
    set mode(m) { state.mode = m },
    close: () => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()) }),
  }
}

/** A loopback port nothing listens on (bound, then released). */
export async function closedPort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const port = (server.address() as AddressInfo).port
  await new Promise<void>((resolve) => server.close(() => resolve()))
  return port
}
