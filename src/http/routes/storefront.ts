/**
 * The storefront API (api-v1 §4.3; docs/storefront.md): bindings of src/ops/web/storefront.ts. The
 * `X-Storefront-Token` names the store; CORS is answered by the front door.
 */
import { bind } from '../bind.ts'
import * as storefront from '../../ops/web/storefront.ts'

export const storefrontRoutes = [
  bind(storefront.getStorefrontMenu, { method: 'GET', path: '/storefront/menu', auth: 'storefront' }),
  bind(storefront.getStorefrontStore, { method: 'GET', path: '/storefront/restaurant', auth: 'storefront' }),
  bind(storefront.createStorefrontOrder, {
    method: 'POST', path: '/storefront/orders', auth: 'storefront',
    headers: [{ name: 'Idempotency-Key', description: 'Makes the request safe to retry.' }],
  }),
]
