/** Third-party apps for developers and the marketplace (docs/apps.md): bindings of src/ops/apps/apps.ts. */
import { bind } from '../bind.ts'
import * as apps from '../../ops/apps/apps.ts'

const app = { ids: { app: 'id' } } as const

export const appRoutes = [
  bind(apps.listDeveloperApps, { method: 'GET', path: '/developer/apps', auth: 'owner' }),
  bind(apps.createDeveloperApp, { method: 'POST', path: '/developer/apps', auth: 'owner' }),
  bind(apps.getDeveloperApp, { method: 'GET', path: '/developer/apps/{id}', auth: 'owner', ...app }),
  bind(apps.updateDeveloperApp, { method: 'PUT', path: '/developer/apps/{id}', auth: 'owner', ...app }),
  bind(apps.submitDeveloperApp, { method: 'POST', path: '/developer/apps/{id}/submit', auth: 'owner', ...app }),
  bind(apps.rotateAppSecret, { method: 'POST', path: '/developer/apps/{id}/rotate-secret', auth: 'owner', ...app }),
  bind(apps.listMarketplace, { method: 'GET', path: '/apps', auth: 'none' }),
]
