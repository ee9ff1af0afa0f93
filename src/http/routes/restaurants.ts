/** Owner store reads (api-v1 §4.2): bindings of the store operations (src/ops/stores/stores.ts). */
import { bind } from '../bind.ts'
import * as stores from '../../ops/stores/stores.ts'
import * as storeAdmin from '../../ops/stores/store-admin.ts'

const store = { store: 'id' } as const

export const restaurantRoutes = [
  bind(stores.listStores, { method: 'GET', path: '/restaurants', auth: 'owner' }),
  bind(stores.getStore, { method: 'GET', path: '/restaurants/{id}', auth: 'owner', ids: store }),
  bind(storeAdmin.updateStore, { method: 'PUT', path: '/restaurants/{id}', auth: 'owner', ids: store }),
  bind(storeAdmin.deleteStore, { method: 'DELETE', path: '/restaurants/{id}', auth: 'owner', ids: store }),
  bind(stores.getMenu, { method: 'GET', path: '/restaurants/{id}/menu', auth: 'owner', ids: store }),
]
