/** `GET /me` (api-v1 §4.2): binding of src/ops/accounts/account.ts. */
import { bind } from '../bind.ts'
import { whoAmI } from '../../ops/accounts/account.ts'

export const meRoutes = [
  bind(whoAmI, { method: 'GET', path: '/me', auth: 'owner' }),
]
