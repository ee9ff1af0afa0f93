/**
 * Kitchen tickets read straight from SQLite (ARCHITECTURE 5: lists bypass actors; the order actor
 * writes every KDS change through before anyone is told). Shared by `GET /staff/kds` and the
 * kitchen socket's first frame (docs/kds.md "Tickets").
 */
import { perDb, type Db } from './db.ts'
import type { LineRow } from './orders.ts'
import type { KdsHead, KdsViewLine } from '../domain/kds.ts'

export type TicketRow = LineRow & { type: string; order_status: string; table_number: string | null; customer_name: string | null; order_note: string | null; order_created_at: string }

export interface KdsItem {
  id: number
  order_id: number
  item_id: number
  name: string
  variation: string | null
  quantity: number
  extras: string[]
  note: string | null
  station: string | null
  kds_state: string
  kds_timeline: Record<string, string>
}

/** A kitchen ticket: the order's head as every kitchen card shows it (domain/kds.ts), its status and its lines. */
export interface KdsTicket extends KdsHead {
  order_id: number
  status: string
  items: KdsItem[]
}

export function kdsItemView(l: LineRow): KdsItem {
  return {
    id: l.id,
    order_id: l.order_id,
    item_id: l.item_id,
    name: l.name,
    variation: l.variant_name,
    quantity: l.quantity,
    extras: (JSON.parse(l.extras) as Array<{ name: string }>).map((e) => e.name),
    note: l.note,
    station: l.station,
    kds_state: l.kds_state,
    kds_timeline: JSON.parse(l.kds_timeline) as Record<string, string>,
  }
}

/** The same item from a line of the order view (src/storage/orders.ts `lineView`). */
export function kdsItemOfView(orderId: number, l: KdsViewLine): KdsItem {
  return {
    id: l.id, order_id: orderId, item_id: l.item_id, name: l.name, variation: l.variation?.name ?? null, quantity: l.quantity,
    extras: l.extras.map((e) => e.name), note: l.note, station: l.station, kds_state: l.kds_state, kds_timeline: l.kds_timeline,
  }
}

const LIVE_LINES = "l.kds_state IN ('queued', 'preparing', 'ready')"
const OPEN_ORDERS = "o.status IN ('new', 'preparing', 'ready')"

export function createKdsQueries(db: Db) {
  const cols = `l.*, o.type, o.status AS order_status, o.table_number, o.customer_name, o.note AS order_note, o.created_at AS order_created_at`
  const q = {
    all: db.prepare<[number], TicketRow>(`SELECT ${cols} FROM orders o JOIN order_lines l ON l.order_id = o.id
      WHERE o.store_id = ? AND ${OPEN_ORDERS} AND ${LIVE_LINES} ORDER BY o.id, l.id`),
    station: db.prepare<[number, string], TicketRow>(`SELECT ${cols} FROM orders o JOIN order_lines l ON l.order_id = o.id
      WHERE o.store_id = ? AND ${OPEN_ORDERS} AND ${LIVE_LINES} AND l.station = ? ORDER BY o.id, l.id`),
    order: db.prepare<[number], TicketRow>(`SELECT ${cols} FROM orders o JOIN order_lines l ON l.order_id = o.id WHERE o.id = ? ORDER BY l.id`),
    line: db.prepare<[number, number], KdsLineHome>('SELECT l.id, l.order_id, l.station FROM order_lines l JOIN orders o ON o.id = l.order_id WHERE l.id = ? AND o.store_id = ?'),
  }
  /**
   * The order, store and station of recently seen lines (line id → [order, store, station]): a line
   * never moves to another order or station, nor an order to another store, so a bump finds its
   * order and checks its station without a read (one per bump was ~10 µs, right after the previous
   * bump's commit). Filled by the lines a new ticket reads and by each lookup; bounded, oldest
   * first out. A cached line whose order was deleted since reaches the order's actor, which
   * answers not found.
   */
  const homes = new Map<number, readonly [orderId: number, storeId: number, station: string | null]>()
  const remember = (lineId: number, orderId: number, storeId: number, station: string | null) => {
    homes.set(lineId, [orderId, storeId, station])
    if (homes.size > LINE_HOMES) homes.delete(homes.keys().next().value!)
  }
  return {
    /** Live tickets of a store, oldest order first; `station` null means every station. */
    tickets(storeId: number, station: string | null): KdsTicket[] {
      return group(station === null ? q.all.all(storeId) : q.station.all(storeId, station))
    },
    /** One order's ticket (every line, any state) for building frames; undefined when it has no lines. */
    orderLines(orderId: number, storeId?: number): TicketRow[] {
      const rows = q.order.all(orderId)
      if (storeId !== undefined) for (const r of rows) remember(r.id, orderId, storeId, r.station)
      return rows
    },
    /** Tenancy at lookup: a line of another store's order is not found. */
    lineInStore(lineId: number, storeId: number): KdsLineHome | undefined {
      const home = homes.get(lineId)
      if (home) return home[1] === storeId ? { id: lineId, order_id: home[0], station: home[2] } : undefined
      const row = q.line.get(lineId, storeId)
      if (row) remember(lineId, row.order_id, storeId, row.station)
      return row
    },
  }
}

/** Where a line lives: its order, and the station its screens are (both fixed once ordered). */
export interface KdsLineHome { id: number; order_id: number; station: string | null }

/** Lines whose order, store and station the kitchen queries keep (a few hours of a busy city's tickets; ~100 bytes each). */
const LINE_HOMES = 100_000
export type KdsQueries = ReturnType<typeof createKdsQueries>

/** Rows (ordered by order, line) → tickets. */
export function group(rows: readonly TicketRow[]): KdsTicket[] {
  const out: KdsTicket[] = []
  let cur: KdsTicket | null = null
  for (const r of rows) {
    if (!cur || cur.order_id !== r.order_id) {
      cur = { order_id: r.order_id, type: r.type, status: r.order_status, table_number: r.table_number, customer_name: r.customer_name, note: r.order_note, created_at: r.order_created_at, items: [] }
      out.push(cur)
    }
    cur.items.push(kdsItemView(r))
  }
  return out
}

/** The queries of a connection, prepared once (operations read through this; the socket keeps its own). */
export const kdsQueriesOf: (db: Db) => KdsQueries = perDb(createKdsQueries)
