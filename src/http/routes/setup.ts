/** The setup checklist (docs/dashboard.md "First steps"): bindings of src/ops/accounts/setup.ts. */
import { bind } from '../bind.ts'
import * as setup from '../../ops/accounts/setup.ts'

export const setupRoutes = [
  bind(setup.getSetup, { method: 'GET', path: '/account/setup', auth: 'owner' }),
  bind(setup.setSetup, { method: 'PUT', path: '/account/setup', auth: 'owner' }),
]
