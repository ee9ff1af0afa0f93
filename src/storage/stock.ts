/**
 * Stock counters and expiry batches in SQLite (docs/verticals.md "Stock and variants", "Expiry").
 * Orders take stock in their own transaction (`takeStock`, called by the store actor's insert, and
 * by the order actor when a cancelled order is reopened: `retakeLines`); cancellations and refunds
 * put back what the order took (`restockOrder`, `restockLines`), once.
 */
import { groupBy, stmt, type Db } from './db.ts'
import { ApiError } from '../errors.ts'
import type { StockBatch, StockLine, StockMove } from '../domain/stock.ts'

export interface BatchRow { id: number; item_id: number; batch_code: string | null; expires_on: string; quantity: number; created_at: string }

/** A batch as the API shows it. */
export const batchView = (b: BatchRow, today?: string) => ({
  id: b.id, item_id: b.item_id, batch_code: b.batch_code, expires_on: b.expires_on, quantity: b.quantity,
  ...(today === undefined ? {} : { expired: b.expires_on < today }), created_at: b.created_at,
})

export const toStockBatch = (b: BatchRow): StockBatch => ({ id: b.id, expires_on: b.expires_on, quantity: b.quantity })

/** An item's batches, first-expiring first. */
export const itemBatches = (db: Db, itemId: number): BatchRow[] =>
  stmt<[number], BatchRow>(db, 'SELECT * FROM item_batches WHERE item_id = ? ORDER BY expires_on, id').all(itemId)

/** Every batch of a store's items, grouped by item. */
export function storeBatches(db: Db, storeId: number): Map<number, BatchRow[]> {
  const rows = stmt<[number], BatchRow>(db, 'SELECT b.* FROM item_batches b JOIN menu_items i ON i.id = b.item_id WHERE i.store_id = ? ORDER BY b.expires_on, b.id').all(storeId)
  return groupBy(rows, (r) => r.item_id)
}

export function insertBatch(db: Db, itemId: number, d: { batch_code?: string | null; expires_on: string; quantity: number }, now: string): number {
  return Number(stmt(db, 'INSERT INTO item_batches (item_id, batch_code, expires_on, quantity, created_at) VALUES (?, ?, ?, ?, ?)')
    .run(itemId, d.batch_code ?? null, d.expires_on, d.quantity, now).lastInsertRowid)
}

/** Delete batch `id` of item `itemId`; false when it is not that item's. */
export const deleteBatch = (db: Db, itemId: number, id: number): boolean =>
  stmt(db, 'DELETE FROM item_batches WHERE id = ? AND item_id = ?').run(id, itemId).changes > 0

const TAKE = {
  item: 'UPDATE menu_items SET stock = stock - ? WHERE id = ? AND stock >= ?',
  variant: 'UPDATE item_variants SET stock = stock - ? WHERE id = ? AND stock >= ?',
  batch: 'UPDATE item_batches SET quantity = quantity - ? WHERE id = ? AND quantity >= ?',
} as const
const PUT_BACK = {
  item: 'UPDATE menu_items SET stock = stock + ? WHERE id = ? AND stock IS NOT NULL',
  variant: 'UPDATE item_variants SET stock = stock + ? WHERE id = ? AND stock IS NOT NULL',
  batch: 'UPDATE item_batches SET quantity = quantity + ? WHERE id = ?',
} as const
const counterId = (m: StockMove) => (m.counter === 'item' ? m.item_id : m.counter === 'variant' ? m.variant_id! : m.batch_id!)

/**
 * Inside the order's transaction: decrement every counter the allocation names and record the moves.
 * Each decrement is guarded (`stock >= quantity`): the store actor allocated from its held copy, and
 * should that ever disagree with SQLite the whole order rolls back with 422 instead of overselling.
 */
export function takeStock(db: Db, orderId: number, moves: readonly StockMove[]): void {
  const record = stmt(db, 'INSERT INTO stock_moves (order_id, line_index, item_id, variant_id, batch_id, counter, quantity) VALUES (?, ?, ?, ?, ?, ?, ?)')
  for (const m of moves) {
    if (stmt(db, TAKE[m.counter]).run(m.quantity, counterId(m), m.quantity).changes !== 1) {
      const msg = 'Not enough left in stock.'
      throw new ApiError('out_of_stock', undefined, { [`items.${m.line_index}.quantity`]: [msg] })
    }
    record.run(orderId, m.line_index, m.item_id, m.variant_id, m.batch_id, m.counter, m.quantity)
  }
}

interface MoveRow extends StockMove { id: number }

/**
 * Does order `orderId` hold stock now (moves recorded and not put back)? A cancellation puts back and
 * deletes all of them, so a reopened order holding moves has taken its stock again already.
 */
export const holdsStock = (db: Db, orderId: number): boolean =>
  stmt<[number], number>(db, 'SELECT 1 FROM stock_moves WHERE order_id = ? LIMIT 1').pluck().get(orderId) !== undefined

/**
 * What order `orderId` takes from stock again when it is reopened (a kitchen override out of
 * `cancelled`, docs/verticals.md "Stock and variants"): each line in order (index N is the order's
 * Nth line, as `items.N` is at creation), less the units completed line refunds gave back, which the
 * customer no longer gets. A pending refund's units are taken: its completion puts them back.
 */
export function retakeLines(db: Db, orderId: number): StockLine[] {
  const lines = stmt<[number], StockLine & { id: number }>(db, 'SELECT id, item_id, variant_id, quantity FROM order_lines WHERE order_id = ? ORDER BY id').all(orderId)
  const refunded = new Map<number, number>()
  for (const r of stmt<[number], { lines: string }>(db, "SELECT lines FROM refunds WHERE order_id = ? AND status = 'completed' AND lines IS NOT NULL").all(orderId)) {
    for (const l of JSON.parse(r.lines) as Array<{ line_id: number; quantity: number }>) refunded.set(l.line_id, (refunded.get(l.line_id) ?? 0) + l.quantity)
  }
  return lines.map((l) => ({ item_id: l.item_id, variant_id: l.variant_id, quantity: Math.max(0, l.quantity - (refunded.get(l.id) ?? 0)) }))
}

/**
 * Put back everything order `orderId` still holds from stock (a cancellation), in the caller's
 * transaction; the moves are deleted, so a second call restores nothing. Returns what was put back,
 * for the store actor's held copy (`items_changed`).
 */
export function restockOrder(db: Db, orderId: number): StockMove[] {
  const rows = stmt<[number], MoveRow>(db, 'SELECT * FROM stock_moves WHERE order_id = ? ORDER BY id').all(orderId)
  return putBack(db, rows.map((r) => ({ row: r, quantity: r.quantity })))
}

/**
 * Put back part of an order (a refund of some lines): for each `{item_id, variant_id?, quantity}`,
 * up to `quantity` units of what the order took for that item (and variant), latest-expiring batch
 * first. Call inside the refund's transaction; returns what was put back (send it to the store actor
 * as `items_changed`, as the order actor does on cancellation).
 */
export function restockLines(db: Db, orderId: number, lines: readonly { item_id: number; variant_id?: number | null; quantity: number }[]): StockMove[] {
  const rows = stmt<[number], MoveRow>(db, 'SELECT * FROM stock_moves WHERE order_id = ? ORDER BY id DESC').all(orderId)
  const picks: { row: MoveRow; quantity: number }[] = []
  const left = new Map(rows.map((r) => [r.id, r.quantity]))
  for (const l of lines) {
    // Each counter the line touched (item or batches, and its variant) gives back `quantity` in all.
    for (const counter of ['variant', 'item', 'batch'] as const) {
      let need = l.quantity
      for (const r of rows) {
        if (need === 0) break
        if (r.counter !== counter || r.item_id !== l.item_id || (l.variant_id != null && r.variant_id !== l.variant_id)) continue
        const q = Math.min(need, left.get(r.id)!)
        if (q <= 0) continue
        left.set(r.id, left.get(r.id)! - q)
        picks.push({ row: r, quantity: q })
        need -= q
      }
    }
  }
  return putBack(db, picks)
}

function putBack(db: Db, picks: readonly { row: MoveRow; quantity: number }[]): StockMove[] {
  const out: StockMove[] = []
  for (const { row, quantity } of picks) {
    const m: StockMove = { line_index: row.line_index, item_id: row.item_id, variant_id: row.variant_id, batch_id: row.batch_id, counter: row.counter, quantity }
    // A counter deleted (or made untracked) since the order was placed has nothing to take it back.
    if (stmt(db, PUT_BACK[m.counter]).run(quantity, counterId(m)).changes === 1) out.push(m)
    if (quantity === row.quantity) stmt(db, 'DELETE FROM stock_moves WHERE id = ?').run(row.id)
    else stmt(db, 'UPDATE stock_moves SET quantity = quantity - ? WHERE id = ?').run(quantity, row.id)
    row.quantity -= quantity
  }
  return out
}
