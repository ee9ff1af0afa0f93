/** Order rows: insert (inside a durable write), the full order view, and paginated lists. */
import type { Statement } from 'better-sqlite3'
import { nowIso, stmt, type Db } from './db.ts'
import { fromCents } from '../domain/money.ts'
import type { PricedLine } from '../domain/pricing.ts'
import type { Timeline } from '../domain/order-state.ts'
import type { Fulfillment } from '../domain/fulfillment.ts'
import type { Idempotency, IdempotencyRecord } from '../domain/idempotency.ts'
import { fulfillmentColumns, fulfillmentView, type FulfillmentColumns } from './fulfillment.ts'

export interface OrderRow extends FulfillmentColumns {
  id: number
  store_id: number
  type: string
  status: string
  delivery_status: string | null
  is_paid: number
  customer_id: number | null
  customer_name: string | null
  phone: string | null
  table_number: string | null
  address: string | null
  note: string | null
  source: string | null
  coupon_code: string | null
  subtotal: number
  discount: number
  tip_amount: number
  total: number
  /** Cents given back by completed refunds (migration 023). */
  refunded: number
  /** Delivery zones (migration 036; docs/dispatch.md): the fee in cents, the zone, the destination, the promised estimate (JSON). */
  delivery_fee: number
  delivery_zone: string | null
  dest_lat: number | null
  dest_lng: number | null
  eta: string | null
  /** Notes for the driver, from the saved address (migration 046). */
  delivery_notes: string | null
  driver_id: number | null
  track_token: string
  timeline: string
  created_at: string
  updated_at: string
}

export interface LineRow {
  id: number
  order_id: number
  item_id: number
  variant_id: number | null
  name: string
  variant_name: string | null
  quantity: number
  unit_price: number
  extras: string
  line_total: number
  note: string | null
  station: string | null
  kds_state: string
  kds_timeline: string
}

export interface NewOrder {
  store_id: number
  type: string
  status: string
  delivery_status: string | null
  is_paid: boolean
  customer_id: number | null
  customer_name: string | null
  phone: string | null
  table_number: string | null
  address: string | null
  note: string | null
  source: string | null
  coupon_code: string | null
  subtotal: number
  discount: number
  tip_amount: number
  delivery_fee: number
  delivery_zone: string | null
  dest_lat: number | null
  dest_lng: number | null
  eta: OrderEta | null
  delivery_notes: string | null
  total: number
  track_token: string
  timeline: Timeline
  created_at: string
  lines: PricedLine[]
  /** Room, shipping, slot or appointment (src/domain/fulfillment.ts); absent for the other modes. */
  fulfillment?: Fulfillment | undefined
}

const prepared = new WeakMap<Db, ReturnType<typeof prepare>>()
function prepare(db: Db) {
  return {
    order: db.prepare(`INSERT INTO orders (store_id, type, status, delivery_status, is_paid, customer_id, customer_name, phone, table_number,
      address, note, source, coupon_code, subtotal, discount, tip_amount, total, track_token, timeline, created_at, updated_at,
      delivery_fee, delivery_zone, dest_lat, dest_lng, eta, delivery_notes)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`),
    /** INSERT of n lines in one statement, by n (made on first use). */
    lines: [] as Statement[],
  }
}

/** Lines per INSERT statement at most; a longer order takes several. */
const LINES_PER_INSERT = 8

/**
 * One statement for all of an order's lines (up to LINES_PER_INSERT) rather than one per line: a
 * statement costs its own run, and AUTOINCREMENT reads and writes `sqlite_sequence` once per
 * statement (~3 µs per 3-line order in a micro-test). The rows of one statement get consecutive
 * ids (AUTOINCREMENT hands out max + 1 row by row; nothing else writes in between), so the ids are
 * the last one counted back.
 */
function linesStatement(db: Db, p: ReturnType<typeof prepare>, n: number): Statement {
  return (p.lines[n] ??= db.prepare(`INSERT INTO order_lines (order_id, item_id, variant_id, name, variant_name, quantity, unit_price, extras, line_total, note, station, kds_state, kds_timeline)
      VALUES ${Array.from({ length: n }, () => "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'queued', ?)").join(', ')}`))
}

/** Insert an order and its lines; returns the new ids. Call inside a durable write. */
export function insertOrder(db: Db, o: NewOrder): { id: number; lineIds: number[] } {
  let p = prepared.get(db)
  if (!p) prepared.set(db, (p = prepare(db)))
  // Positional binding: measurably cheaper than named parameters on the hottest insert.
  const id = Number(p.order.run(o.store_id, o.type, o.status, o.delivery_status, o.is_paid ? 1 : 0, o.customer_id, o.customer_name, o.phone,
    o.table_number, o.address, o.note, o.source, o.coupon_code, o.subtotal, o.discount, o.tip_amount, o.total, o.track_token,
    JSON.stringify(o.timeline), o.created_at, o.created_at,
    o.delivery_fee, o.delivery_zone, o.dest_lat, o.dest_lng, o.eta === null ? null : JSON.stringify(o.eta), o.delivery_notes).lastInsertRowid)
  const lines = o.lines
  const kdsTimeline = JSON.stringify({ queued_at: o.created_at })
  const lineIds: number[] = []
  for (let from = 0; from < lines.length; from += LINES_PER_INSERT) {
    const n = Math.min(LINES_PER_INSERT, lines.length - from)
    const args: unknown[] = []
    for (let i = from; i < from + n; i++) {
      const l = lines[i]!
      args.push(id, l.item_id, l.variant_id, l.name, l.variant_name, l.quantity, l.unit_price, JSON.stringify(l.extras), l.line_total, l.note, l.station, kdsTimeline)
    }
    const last = Number(linesStatement(db, p, n).run(...args).lastInsertRowid)
    for (let k = n - 1; k >= 0; k--) lineIds.push(last - k)
  }
  return { id, lineIds }
}

/** A priced line's fields in money units, as carts, order replies and stored lines all show them. */
export interface PricedLineFields {
  item_id: number; name: string; variant_id: number | null; variant_name: string | null; quantity: number
  unit_price: number; extras: ReadonlyArray<{ id: number; name: string; price: number }>; line_total: number; note: string | null
}
export function pricedLineView(l: PricedLineFields) {
  return {
    item_id: l.item_id,
    name: l.name,
    variation: l.variant_id == null ? null : { id: l.variant_id, name: l.variant_name },
    quantity: l.quantity,
    unit_price: fromCents(l.unit_price),
    extras: l.extras.map((e) => ({ id: e.id, name: e.name, price: fromCents(e.price) })),
    line_total: fromCents(l.line_total),
    note: l.note,
  }
}

// Views are put together with Object.assign, not `{ a, ...b, c }` or `{ ...b, c }`: in V8 (Node 20)
// an object made by a spread and then given more properties is very slow to build and to
// stringify (~20 µs per order reply in a micro-test, under 1 µs this way; same keys, same order).
export function lineView(l: LineRow) {
  return Object.assign(
    { id: l.id },
    pricedLineView({ ...l, extras: JSON.parse(l.extras) as Array<{ id: number; name: string; price: number }> }),
    { station: l.station, kds_state: l.kds_state, kds_timeline: JSON.parse(l.kds_timeline) as Record<string, string> },
  )
}

type HeadFields = Pick<NewOrder, 'store_id' | 'type' | 'status' | 'delivery_status' | 'customer_id' | 'customer_name' | 'phone' | 'table_number'
  | 'address' | 'delivery_notes' | 'note' | 'source' | 'coupon_code' | 'subtotal' | 'discount' | 'tip_amount' | 'delivery_fee' | 'total'>

/** The order's own fields (api-v1 §2.4), from a stored row or an order just built in memory. */
function headView(id: number, o: HeadFields, isPaid: boolean, refundedCents: number) {
  return {
    id,
    restaurant_id: o.store_id,
    type: o.type,
    status: o.status,
    delivery_status: o.delivery_status,
    is_paid: isPaid,
    customer_id: o.customer_id,
    customer_name: o.customer_name,
    phone: o.phone,
    table_number: o.table_number,
    address: o.address,
    delivery_notes: o.delivery_notes,
    note: o.note,
    source: o.source,
    coupon_code: o.coupon_code,
    subtotal: fromCents(o.subtotal),
    discount: fromCents(o.discount),
    tip_amount: fromCents(o.tip_amount),
    delivery_fee: fromCents(o.delivery_fee),
    total: fromCents(o.total),
    refunded: fromCents(refundedCents),
  }
}

/** What a delivery order was promised when placed (docs/dispatch.md "Quotes"): ISO 8601 UTC instants. */
export interface OrderEta { ready_at: string; pickup_at: string; dropoff_at: string }

export interface DriverBrief { id: number; name: string; phone: string }

/** The full order (api-v1 §2.4 output): lines with extras, driver, delivery timeline. */
export function orderView(o: OrderRow, lines: LineRow[], driver: DriverBrief | null, siteUrl: string) {
  const items = lines.map(lineView)
  return Object.assign(headView(o.id, o, o.is_paid === 1, o.refunded), {
    items,
    extras: items.flatMap((l) => l.extras.map((e) => Object.assign({}, e, { line_id: l.id }))),
    driver,
    timeline: JSON.parse(o.timeline) as Timeline,
    eta: o.eta === null ? null : (JSON.parse(o.eta) as OrderEta),
    created_at: o.created_at,
    updated_at: o.updated_at,
    track_token: o.track_token,
    track_url: trackUrl(siteUrl, o.track_token),
  }, fulfillmentView(o))
}

/** The public tracking page of an order (served by the tracking feature at `/t/{token}`). */
export const trackUrl = (siteUrl: string, token: string): string => `${siteUrl}/t/${token}`
export type OrderView = ReturnType<typeof orderView>

/** Filters of the owner's order list (src/ops/orders/orders.ts listOrders). */
export interface OrderFilter {
  status?: string; from?: string; to?: string; search?: string
  /** Created at or after this instant and before `until` (epoch ms): a store's local day. */
  since?: number; until?: number
}

export function createOrderQueries(db: Db, siteUrl: string) {
  const q = {
    byId: db.prepare<[number], OrderRow>('SELECT * FROM orders WHERE id = ?'),
    inStore: db.prepare<[number, number], OrderRow>('SELECT * FROM orders WHERE id = ? AND store_id = ?'),
    byTrackToken: db.prepare<[string], OrderRow>('SELECT * FROM orders WHERE track_token = ?'),
    lines: db.prepare<[number], LineRow>('SELECT * FROM order_lines WHERE order_id = ? ORDER BY id'),
    driver: db.prepare<[number], DriverBrief>('SELECT id, name, phone FROM drivers WHERE id = ?'),
    countStatus: db.prepare<[number, string], number>('SELECT COUNT(*) FROM orders WHERE store_id = ? AND status = ?').pluck(),
    page: db.prepare<[number, number, number], OrderRow>('SELECT * FROM orders WHERE store_id = ? ORDER BY id DESC LIMIT ? OFFSET ?'),
    pageStatus: db.prepare<[number, string, number, number], OrderRow>('SELECT * FROM orders WHERE store_id = ? AND status = ? ORDER BY id DESC LIMIT ? OFFSET ?'),
    countCustomer: db.prepare<[number, number], number>('SELECT COUNT(*) FROM orders WHERE customer_id = ? AND store_id = ?').pluck(),
    pageCustomer: db.prepare<[number, number, number, number], OrderRow>('SELECT * FROM orders WHERE customer_id = ? AND store_id = ? ORDER BY id DESC LIMIT ? OFFSET ?'),
    deletions: db.prepare<[], number>('SELECT n FROM order_deletions WHERE id = 1').pluck(),
    countAfter: db.prepare<[number, number], { n: number; last: number | null }>('SELECT COUNT(*) AS n, MAX(id) AS last FROM orders WHERE store_id = ? AND id > ?'),
  }
  /**
   * Each store's number of orders as of its newest order counted (migration 031): a list request
   * counts only the orders newer than that (ids only grow), unless an order was deleted meanwhile
   * (from any connection), which starts every store's count again. Bounded, oldest first out.
   */
  const totals = new Map<number, { n: number; last: number; deletions: number }>()
  const storeTotal = (storeId: number): number => {
    const deletions = q.deletions.get() ?? 0
    let kept = totals.get(storeId)
    if (kept && kept.deletions !== deletions) kept = undefined
    const more = q.countAfter.get(storeId, kept?.last ?? 0)!
    const n = (kept?.n ?? 0) + more.n
    totals.delete(storeId)
    totals.set(storeId, { n, last: more.last ?? kept?.last ?? 0, deletions })
    if (totals.size > STORE_TOTALS) totals.delete(totals.keys().next().value!)
    return n
  }
  const driverOf = (o: OrderRow) => (o.driver_id == null ? null : (q.driver.get(o.driver_id) ?? null))
  const full = (o: OrderRow) => orderView(o, q.lines.all(o.id), driverOf(o), siteUrl)
  return {
    row: (id: number) => q.byId.get(id),
    rowInStore: (id: number, storeId: number) => q.inStore.get(id, storeId),
    rowByTrackToken: (hash: string) => q.byTrackToken.get(hash),
    lines: (orderId: number) => q.lines.all(orderId),
    full,
    /**
     * Newest first (api-v1 §4.2), with optional filters: kitchen status, creation date range
     * (`from`/`to` inclusive UTC days, `YYYY-MM-DD`) and `search` (customer name or phone
     * containing the text, or the order id).
     */
    page(storeId: number, page: number, perPage: number, filter: OrderFilter = {}) {
      const offset = (page - 1) * perPage
      const { status, from, to, search, since, until } = filter
      if (from === undefined && to === undefined && search === undefined && since === undefined && until === undefined) {
        const total = status ? q.countStatus.get(storeId, status)! : storeTotal(storeId)
        const rows = status ? q.pageStatus.all(storeId, status, perPage, offset) : q.page.all(storeId, perPage, offset)
        return { total, data: rows.map(full) }
      }
      const where = ['store_id = ?']
      const args: Array<string | number> = [storeId]
      if (status) { where.push('status = ?'); args.push(status) }
      if (from) { where.push('created_at >= ?'); args.push(`${from}T00:00:00`) }
      // The day after `to`, so every instant of `to` (ISO strings compare in time order) is in.
      if (to) { where.push('created_at < ?'); args.push(new Date(Date.parse(`${to}T00:00:00Z`) + 86_400_000).toISOString().slice(0, 10) + 'T00:00:00') }
      // Stored times are nowIso strings (UTC, `+00:00`): the bounds in the same form compare in time order.
      if (since !== undefined) { where.push('created_at >= ?'); args.push(nowIso(since)) }
      if (until !== undefined) { where.push('created_at < ?'); args.push(nowIso(until)) }
      if (search) {
        const like = `%${search.replace(/[\\%_]/g, (c) => `\\${c}`)}%`
        where.push("(customer_name LIKE ? ESCAPE '\\' OR phone LIKE ? ESCAPE '\\' OR CAST(id AS TEXT) = ?)")
        args.push(like, like, search.replace(/^#/, ''))
      }
      const sql = where.join(' AND ')
      // One statement per combination of filters (a few dozen at most), prepared once (stmt).
      const total = stmt<unknown[], number>(db, `SELECT COUNT(*) FROM orders WHERE ${sql}`).pluck().get(...args)!
      const rows = stmt<unknown[], OrderRow>(db, `SELECT * FROM orders WHERE ${sql} ORDER BY id DESC LIMIT ? OFFSET ?`).all(...args, perPage, offset)
      return { total, data: rows.map(full) }
    },
    /** One customer's orders at one store, newest first (api-v1 §4.5). */
    customerPage(storeId: number, customerId: number, page: number, perPage: number) {
      const total = q.countCustomer.get(customerId, storeId) as number
      return { total, data: q.pageCustomer.all(customerId, storeId, perPage, (page - 1) * perPage).map(full) }
    },
  }
}
export type OrderQueries = ReturnType<typeof createOrderQueries>

/** Stores whose order totals are kept (src/storage/orders.ts `storeTotal`; a few dozen bytes each). */
const STORE_TOTALS = 50_000

/**
 * The full view of an order just inserted, built from memory (no read-back on the hot path): the
 * same object `orderView` makes of the row and lines as stored, built directly rather than through
 * row-shaped copies whose JSON columns are stringified only to be parsed again (every order's reply).
 */
export function viewOfNew(o: NewOrder, ids: { id: number; lineIds: number[] }, siteUrl: string): OrderView {
  const items = o.lines.map((l, i) => Object.assign({ id: ids.lineIds[i]! }, pricedLineView(l), {
    station: l.station,
    kds_state: 'queued',
    kds_timeline: { queued_at: o.created_at } as Record<string, string>,
  }))
  const extras: OrderView['extras'] = []
  for (const l of items) for (const e of l.extras) extras.push(Object.assign({}, e, { line_id: l.id }))
  return Object.assign(headView(ids.id, o, o.is_paid, 0), {
    items,
    extras,
    driver: null,
    timeline: { ...o.timeline },
    eta: o.eta === null ? null : { ...o.eta },
    created_at: o.created_at,
    updated_at: o.created_at,
    track_token: o.track_token,
    track_url: trackUrl(siteUrl, o.track_token),
  }, fulfillmentView(fulfillmentColumns(o.fulfillment)))
}

/**
 * `is_paid`, written only by the order's actor in the transaction of the payment that covered the
 * total (src/actors/order-payments.ts; storefront orders start unpaid, api-v1 §2.4).
 */
export function setPaid(db: Db, orderId: number, isPaid: boolean): void {
  stmt(db, 'UPDATE orders SET is_paid = ? WHERE id = ?').run(isPaid ? 1 : 0, orderId)
}

/** The `idempotency_keys` statements: called only by src/actors/store-idempotency.ts (the rule: src/domain/idempotency.ts). */
const idemStmts = new WeakMap<Db, { find: Statement<[string, string], IdempotencyRecord>; insert: Statement }>()
function idem(db: Db) {
  let s = idemStmts.get(db)
  if (!s) {
    idemStmts.set(db, (s = {
      find: db.prepare<[string, string], IdempotencyRecord>('SELECT request_hash, order_id FROM idempotency_keys WHERE scope = ? AND key = ?'),
      insert: db.prepare('INSERT INTO idempotency_keys (scope, key, request_hash, order_id, created_at) VALUES (?, ?, ?, ?, ?)'),
    }))
  }
  return s
}

/** The order a key of `scope` already made, if any. */
export const findIdempotency = (db: Db, scope: string, key: string): IdempotencyRecord | undefined => idem(db).find.get(scope, key)

/** Remember a key with the order it made; inside the order's own durable write. */
export function insertIdempotency(db: Db, k: Idempotency, orderId: number, now: string): void {
  idem(db).insert.run(k.scope, k.key, k.hash, orderId, now)
}
