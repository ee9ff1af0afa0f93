/** Owner analytics (api-v1 §2.6, §4.2). */
import { route } from '../route.ts'
import { AnalyticsSchema } from '../docs-schemas.ts'
import { AnalyticsQuery, analyticsRange } from '../analytics-query.ts'
import { analyticsSummary } from '../../storage/analytics.ts'
import { ownedStore } from './owner-access.ts'

export const analyticsRoutes = [
  route({
    method: 'GET', path: '/restaurants/{id}/analytics', tag: 'Analytics', summary: 'Sales summary for a date range (default: the last 30 days)',
    auth: 'owner', capability: 'analytics:read', query: AnalyticsQuery, response: AnalyticsSchema,
    handler: ({ svc, principal, params, query }) => {
      const store = ownedStore(svc, principal, params.id)
      return analyticsSummary(svc.db, store.id, analyticsRange(query))
    },
  }),
]
