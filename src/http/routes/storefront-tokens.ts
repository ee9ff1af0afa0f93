/** Storefront tokens from the owner's side (api-v1 §5; docs/storefront.md "Tokens"): bindings of src/ops/web/storefront-tokens.ts. */
import { bind } from '../bind.ts'
import * as tokens from '../../ops/web/storefront-tokens.ts'

const store = { store: 'id' } as const

export const storefrontTokenRoutes = [
  bind(tokens.listStorefrontTokens, { method: 'GET', path: '/restaurants/{id}/storefront-tokens', auth: 'owner', ids: store }),
  bind(tokens.issueStorefrontToken, { method: 'POST', path: '/restaurants/{id}/storefront-tokens', auth: 'owner', ids: store }),
  bind(tokens.revokeStorefrontToken, { method: 'DELETE', path: '/restaurants/{id}/storefront-tokens/{tokenId}', auth: 'owner', ids: store, params: { tokenId: 'token_id' } }),
]
