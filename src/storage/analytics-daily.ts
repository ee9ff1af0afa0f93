/**
 * Orders and revenue per day for the dashboard's chart (docs/dashboard.md "Analytics"), with the
 * same rules as the §2.6 summary (src/storage/analytics.ts): UTC days of `created_at`, cancelled
 * orders count but earn nothing; `paid` is the total of the day's orders that are paid, `refunded`
 * what refunds gave back that day (by when they completed), `net` = paid − refunded. So the days of
 * a range add up to the summary of that range, `net` included. Every day of the range is present,
 * quiet days with zeros.
 */
import type { Db } from './db.ts'
import { stmt } from './db.ts'
import { fromCents } from '../domain/money.ts'
import type { AnalyticsRange } from './analytics.ts'

export interface DayTotals { date: string; orders: number; revenue: number; paid: number; refunded: number; net: number }

const DAY_MS = 86_400_000

export function dailyTotals(db: Db, storeId: number, range: AnalyticsRange): DayTotals[] {
  // Exclusive upper bound `…T24`, as the summary: every time of day `to` sorts below it.
  const lo = `${range.from}T00:00:00`
  const hi = `${range.to}T24`
  const rows = stmt<[number, string, string], { day: string; orders: number; revenue: number; paid: number }>(db,
    `SELECT substr(created_at, 1, 10) AS day, COUNT(*) AS orders,
       COALESCE(SUM(CASE WHEN status != 'cancelled' THEN total END), 0) AS revenue,
       COALESCE(SUM(CASE WHEN status != 'cancelled' AND is_paid = 1 THEN total END), 0) AS paid
     FROM orders WHERE store_id = ? AND created_at >= ? AND created_at < ? GROUP BY day`).all(storeId, lo, hi)
  const refunds = stmt<[number, string, string], { day: string; refunded: number }>(db,
    `SELECT substr(completed_at, 1, 10) AS day, SUM(amount) AS refunded
     FROM refunds WHERE store_id = ? AND status = 'completed' AND completed_at >= ? AND completed_at < ? GROUP BY day`).all(storeId, lo, hi)
  const byDay = new Map(rows.map((r) => [r.day, r]))
  const refundedOn = new Map(refunds.map((r) => [r.day, r.refunded]))
  const out: DayTotals[] = []
  for (let t = Date.parse(`${range.from}T00:00:00Z`), end = Date.parse(`${range.to}T00:00:00Z`); t <= end; t += DAY_MS) {
    const date = new Date(t).toISOString().slice(0, 10)
    const r = byDay.get(date)
    const paid = r?.paid ?? 0
    const refunded = refundedOn.get(date) ?? 0
    out.push({ date, orders: r?.orders ?? 0, revenue: fromCents(r?.revenue ?? 0), paid: fromCents(paid), refunded: fromCents(refunded), net: fromCents(paid - refunded) })
  }
  return out
}
