/**
 * Owner driver management (api-v1 §4.2 `/drivers`, §2.7): bindings of the driver operations
 * (src/ops/delivery/drivers.ts). `{id}` names the driver; another owner's is a 404 (policy scope `driver`).
 */
import { bind } from '../bind.ts'
import * as drivers from '../../ops/delivery/drivers.ts'

const driver = { driver: 'id' } as const

export const driverRoutes = [
  bind(drivers.listDrivers, { method: 'GET', path: '/drivers', auth: 'owner' }),
  bind(drivers.createDriver, { method: 'POST', path: '/drivers', auth: 'owner' }),
  bind(drivers.getDriver, { method: 'GET', path: '/drivers/{id}', auth: 'owner', ids: driver }),
  bind(drivers.updateDriver, { method: 'PUT', path: '/drivers/{id}', auth: 'owner', ids: driver }),
  bind(drivers.deleteDriver, { method: 'DELETE', path: '/drivers/{id}', auth: 'owner', ids: driver }),
  bind(drivers.rotateDriverToken, { method: 'POST', path: '/drivers/{id}/rotate-token', auth: 'owner', ids: driver }),
]
