/**
 * Third-party order-integration controls (api-v1 §4.7 "integration"; docs/staff.md "Busy and
 * snooze"): bindings of src/ops/orders/integration.ts.
 */
import { bind } from '../bind.ts'
import * as integration from '../../ops/orders/integration.ts'

export const staffIntegrationRoutes = [
  bind(integration.setBusy, { method: 'POST', path: '/staff/integration/busy', auth: 'staff' }),
  bind(integration.setSnooze, { method: 'POST', path: '/staff/integration/snooze', auth: 'staff' }),
  bind(integration.getIntegration, { method: 'GET', path: '/staff/integration/status', auth: 'staff' }),
]
