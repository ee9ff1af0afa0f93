/** Analytics summary (api-v1 §2.6) read straight from SQLite. Cancelled orders count but earn nothing. */
import type { Db } from './db.ts'
import { fromCents } from '../domain/money.ts'

export interface AnalyticsRange { from: string; to: string }

export function analyticsSummary(db: Db, storeId: number, range: AnalyticsRange) {
  const lo = `${range.from}T00:00:00`
  // Exclusive upper bound: every stored time of day `to` (`…THH:MM…`, HH ≤ 23) sorts below `…T24`.
  // (Computing the next day breaks for 9999-12-31, whose successor renders as `+010000-…`.)
  const hi = `${range.to}T24`
  const where = 'store_id = ? AND created_at >= ? AND created_at < ?'
  const totals = db.prepare(`SELECT COUNT(*) AS total, COALESCE(SUM(is_paid), 0) AS paid,
      COALESCE(SUM(CASE WHEN status != 'cancelled' THEN total END), 0) AS gross,
      COALESCE(SUM(CASE WHEN status != 'cancelled' AND is_paid = 1 THEN total END), 0) AS paid_revenue,
      COALESCE(SUM(status != 'cancelled'), 0) AS billable,
      COALESCE(SUM(CASE WHEN status != 'cancelled' THEN delivery_fee END), 0) AS delivery_fees
    FROM orders WHERE ${where}`).get(storeId, lo, hi) as { total: number; paid: number; gross: number; paid_revenue: number; billable: number; delivery_fees: number }
  const group = (col: 'status' | 'type') =>
    Object.fromEntries((db.prepare(`SELECT ${col} AS k, COUNT(*) AS n FROM orders WHERE ${where} GROUP BY ${col} ORDER BY ${col}`).all(storeId, lo, hi) as Array<{ k: string; n: number }>).map((r) => [r.k, r.n]))
  const top = db.prepare(`SELECT l.item_id, l.name, SUM(l.quantity) AS quantity FROM order_lines l JOIN orders o ON o.id = l.order_id
    WHERE o.store_id = ? AND o.created_at >= ? AND o.created_at < ? AND o.status != 'cancelled'
    GROUP BY l.item_id ORDER BY quantity DESC, l.item_id LIMIT 10`).all(storeId, lo, hi) as Array<{ item_id: number; name: string; quantity: number }>
  // Money given back in the range, by when the refund completed (issue 17 item 2; docs/operations.md "Refunds").
  const refunded = db.prepare(`SELECT COALESCE(SUM(amount), 0) FROM refunds WHERE store_id = ? AND status = 'completed' AND completed_at >= ? AND completed_at < ?`)
    .pluck().get(storeId, lo, hi) as number
  return {
    range,
    orders: { total: totals.total, paid: totals.paid, by_status: group('status'), by_type: group('type') },
    revenue: {
      gross: fromCents(totals.gross),
      paid: fromCents(totals.paid_revenue),
      // gross and paid keep their meaning (order totals); refunded is what went back, net = paid − refunded.
      refunded: fromCents(refunded),
      net: fromCents(totals.paid_revenue - refunded),
      avg_order_value: totals.billable === 0 ? 0 : fromCents(Math.round(totals.gross / totals.billable)),
      // Delivery zones' fees (docs/dispatch.md), part of gross: what deliveries charged on top of the goods.
      delivery_fees: fromCents(totals.delivery_fees),
    },
    top_items: top,
  }
}
