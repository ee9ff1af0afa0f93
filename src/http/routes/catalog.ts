/** The public catalog (issue 12 item 6, docs/mcp-catalog.md) and the owner's starter-menu route: bindings of src/ops/web/catalog.ts. */
import { bind } from '../bind.ts'
import * as catalog from '../../ops/web/catalog.ts'

export const catalogRoutes = [
  bind(catalog.searchCatalogStores, { method: 'GET', path: '/catalog/stores', auth: 'none' }),
  bind(catalog.searchCatalogItems, { method: 'GET', path: '/catalog/items', auth: 'none' }),
  bind(catalog.listStarterMenus, { method: 'GET', path: '/catalog/starter-menus', auth: 'none' }),
  bind(catalog.getCatalogStore, { method: 'GET', path: '/catalog/stores/{store}', auth: 'none', params: { store: 'store' } }),
  bind(catalog.applyStarterMenu, { method: 'POST', path: '/restaurants/{id}/menu/starter', auth: 'owner', ids: { store: 'id' } }),
]
