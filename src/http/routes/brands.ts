/** Brands and expiry batches (api-v1 §4.2 `/brands`; docs/verticals.md): bindings of src/ops/menu/brands.ts. */
import { bind } from '../bind.ts'
import * as brands from '../../ops/menu/brands.ts'

const store = { store: 'id' } as const
const brand = { brandId: 'brand_id' } as const
const item = { itemId: 'item_id' } as const

export const brandRoutes = [
  bind(brands.listBrands, { method: 'GET', path: '/restaurants/{id}/brands', auth: 'owner', ids: store }),
  bind(brands.createBrandOp, { method: 'POST', path: '/restaurants/{id}/brands', auth: 'owner', ids: store }),
  bind(brands.getBrand, { method: 'GET', path: '/restaurants/{id}/brands/{brandId}', auth: 'owner', ids: store, params: brand }),
  bind(brands.updateBrandOp, { method: 'PUT', path: '/restaurants/{id}/brands/{brandId}', auth: 'owner', ids: store, params: brand }),
  bind(brands.deleteBrandOp, { method: 'DELETE', path: '/restaurants/{id}/brands/{brandId}', auth: 'owner', ids: store, params: brand }),
  bind(brands.listBatches, { method: 'GET', path: '/restaurants/{id}/menu/items/{itemId}/batches', auth: 'owner', ids: store, params: item }),
  bind(brands.createBatch, { method: 'POST', path: '/restaurants/{id}/menu/items/{itemId}/batches', auth: 'owner', ids: store, params: item }),
  bind(brands.deleteBatchOp, { method: 'DELETE', path: '/restaurants/{id}/menu/items/{itemId}/batches/{batchId}', auth: 'owner', ids: store, params: { ...item, batchId: 'batch_id' } }),
]
