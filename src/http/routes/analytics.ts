/** Owner analytics (api-v1 §2.6, §4.2): binding of the sales report (src/ops/stores/stores.ts). */
import { bind } from '../bind.ts'
import { salesReport } from '../../ops/stores/stores.ts'

export const analyticsRoutes = [
  bind(salesReport, { method: 'GET', path: '/restaurants/{id}/analytics', auth: 'owner', ids: { store: 'id' } }),
]
