/** Orders and revenue per day (docs/dashboard.md "Analytics"): binding of src/ops/orders/analytics-daily.ts. */
import { bind } from '../bind.ts'
import { dailySales } from '../../ops/orders/analytics-daily.ts'

export const analyticsDailyRoutes = [
  bind(dailySales, { method: 'GET', path: '/restaurants/{id}/analytics/daily', auth: 'owner', ids: { store: 'id' } }),
]
