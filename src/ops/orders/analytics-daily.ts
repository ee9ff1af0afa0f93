/**
 * Orders and revenue per day (docs/dashboard.md "Analytics"): the series the dashboard's chart
 * draws next to the §2.6 summary. Same capability, plan feature and range rules as the summary.
 */
import { defineOp } from '../op.ts'
import { storeOf } from '../scope.ts'
import { AnalyticsQuery, analyticsRange } from './analytics-query.ts'
import { ApiError } from '../../errors.ts'
import { dailyTotals } from '../../storage/analytics-daily.ts'

/** A year and a day: enough for any chart, and a bound on the rows one call builds. */
export const MAX_DAYS = 366

export const dailySales = defineOp({
  id: 'analytics.daily.get', feature: 'analytics', tag: 'Analytics', summary: 'Orders and revenue per day for a date range (default: the last 30 days)',
  description: 'Query `from`, `to` (`YYYY-MM-DD`, at most 366 days). Every day of the range is listed (zeros on quiet days); cancelled orders count but earn nothing, as in the summary. `revenue` is the total of the day\'s orders, `paid` of those paid, `refunded` what refunds completed that day gave back and `net` = paid − refunded: the days add up to the summary of the range (`revenue.gross`, `paid`, `refunded`, `net`).',
  access: { owner: 'analytics:read' }, scope: ['store'],
  input: AnalyticsQuery,
  output: {
    type: 'object', required: ['range', 'days'],
    properties: {
      range: { type: 'object', required: ['from', 'to'], properties: { from: { type: 'string', format: 'date' }, to: { type: 'string', format: 'date' } } },
      days: {
        type: 'array',
        items: {
          type: 'object', required: ['date', 'orders', 'revenue', 'paid', 'refunded', 'net'],
          properties: {
            date: { type: 'string', format: 'date' }, orders: { type: 'integer' },
            revenue: { type: 'number', description: 'total of the day\'s orders, cancelled ones excluded' },
            paid: { type: 'number', description: 'total of the day\'s orders that are paid' },
            refunded: { type: 'number', description: 'what refunds that completed that day gave back' },
            net: { type: 'number', description: 'paid − refunded: may be negative on a day of refunds only' },
          },
        },
      },
    },
  },
  run: (ctx, input) => {
    const range = analyticsRange(input)
    const days = (Date.parse(`${range.to}T00:00:00Z`) - Date.parse(`${range.from}T00:00:00Z`)) / 86_400_000 + 1
    if (days > MAX_DAYS) throw new ApiError('validation_failed', undefined, { from: [`The range may span at most ${MAX_DAYS} days.`] })
    return { range, days: dailyTotals(ctx.svc.db, storeOf(ctx).id, range) }
  },
})

export const analyticsDailyOps = [dailySales]
