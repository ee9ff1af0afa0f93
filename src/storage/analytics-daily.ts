/**
 * Orders and revenue per day for the dashboard's chart (docs/dashboard.md "Analytics"), with the
 * same rules as the §2.6 summary (src/storage/analytics.ts): UTC days of `created_at`, cancelled
 * orders count but earn nothing. Every day of the range is present, quiet days with zeros.
 */
import type { Db } from './db.ts'
import { stmt } from './db.ts'
import { fromCents } from '../domain/money.ts'
import type { AnalyticsRange } from './analytics.ts'

export interface DayTotals { date: string; orders: number; revenue: number }

const DAY_MS = 86_400_000

export function dailyTotals(db: Db, storeId: number, range: AnalyticsRange): DayTotals[] {
  // Exclusive upper bound `…T24`, as the summary: every time of day `to` sorts below it.
  const rows = stmt<[number, string, string], { day: string; orders: number; revenue: number }>(db,
    `SELECT substr(created_at, 1, 10) AS day, COUNT(*) AS orders,
       COALESCE(SUM(CASE WHEN status != 'cancelled' THEN total END), 0) AS revenue
     FROM orders WHERE store_id = ? AND created_at >= ? AND created_at < ? GROUP BY day`).all(storeId, `${range.from}T00:00:00`, `${range.to}T24`)
  const byDay = new Map(rows.map((r) => [r.day, r]))
  const out: DayTotals[] = []
  for (let t = Date.parse(`${range.from}T00:00:00Z`), end = Date.parse(`${range.to}T00:00:00Z`); t <= end; t += DAY_MS) {
    const date = new Date(t).toISOString().slice(0, 10)
    const r = byDay.get(date)
    out.push({ date, orders: r?.orders ?? 0, revenue: fromCents(r?.revenue ?? 0) })
  }
  return out
}
