/** Owner API tokens (api-v1 §5; docs/dashboard.md "API tokens"): bindings of src/ops/accounts/owner-tokens.ts. */
import { bind } from '../bind.ts'
import * as tokens from '../../ops/accounts/owner-tokens.ts'

export const ownerTokenRoutes = [
  bind(tokens.listOwnerTokens, { method: 'GET', path: '/tokens', auth: 'owner' }),
  bind(tokens.createOwnerToken, { method: 'POST', path: '/tokens', auth: 'owner' }),
  bind(tokens.revokeOwnerToken, { method: 'DELETE', path: '/tokens/{id}', auth: 'owner', params: { id: 'token_id' } }),
]
