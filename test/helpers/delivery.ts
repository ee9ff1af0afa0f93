/**
 * Delivery test helpers: a fleet (owner, token, store with one item, drivers) built from the
 * ./fixtures.ts builders, and delivery orders, assignments and driver status changes through the
 * real API.
 */
import type { Db } from '../../src/storage/db.ts'
import { createCategory, createDriver, createItem, createOwner, createStore, tokenFor, type TestDriver } from './fixtures.ts'
import type { TestServer } from './server.ts'

export { randomPhone, type TestDriver } from './fixtures.ts'

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

/** An owner with a `*` token, a restaurant selling one Pizza (10.00) and two off-shift drivers bound to it. */
export function createFleet(db: Db, opts: { driverFee?: number } = {}): Fleet {
  const ownerId = createOwner(db)
  const ownerToken = tokenFor(db, ownerId, ['*'])
  const addStore = () => {
    const storeId = createStore(db, ownerId, { settings: opts.driverFee === undefined ? {} : { driver_fee: opts.driverFee } }).id
    const itemId = createItem(db, storeId, createCategory(db, storeId, 'Mains'), 'Pizza', 1000)
    return { storeId, itemId }
  }
  const main = addStore()
  const addDriver: Fleet['addDriver'] = (o = {}) =>
    createDriver(db, ownerId, o.restaurantId === undefined ? main.storeId : o.restaurantId, { onShift: o.onShift, phone: o.phone })
  return { ownerId, ownerToken, ...main, drivers: [addDriver(), addDriver()], addDriver, addStore }
}

export async function deliveryOrder(s: TestServer, f: Pick<Fleet, 'ownerToken' | 'storeId' | 'itemId'>, extra: Record<string, unknown> = {}) {
  const r = await s.req('POST', `/restaurants/${f.storeId}/orders`, {
    token: f.ownerToken,
    body: { type: 'delivery', address: '1 Main St', customer_name: 'Ada', phone: '+15550100', items: [{ item_id: f.itemId, quantity: 1 }], ...extra },
  })
  if (r.status !== 200) throw new Error(`order create failed: ${r.status} ${r.text}`)
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
