/** Owner store reads (api-v1 §4.2): list, detail with categories and counts, menu. */
import { route } from '../route.ts'
import { PageQuery, PaginatedSchema, pageOf, paginate } from '../schemas.ts'
import { MenuSchema, StoreDetailSchema, StoreSummarySchema } from '../docs-schemas.ts'
import { menuView, storeSummary } from '../../storage/stores.ts'
import { verticalOf } from '../../domain/verticals.ts'
import { ownedStore } from './owner-access.ts'

const STORES_PER_PAGE = 20

export const restaurantRoutes = [
  route({
    method: 'GET', path: '/restaurants', tag: 'Restaurants', summary: 'List your stores (20 per page)',
    auth: 'owner', capability: 'restaurants:read', query: PageQuery, response: PaginatedSchema(StoreSummarySchema),
    handler: ({ svc, principal, query }) => {
      const page = pageOf(query)
      const { rows, total } = svc.stores.page(principal.ownerId, page, STORES_PER_PAGE)
      return paginate(rows.map((s) => storeSummary(s, svc.config.siteUrl)), page, STORES_PER_PAGE, total)
    },
  }),
  route({
    method: 'GET', path: '/restaurants/{id}', tag: 'Restaurants', summary: 'A store with its vertical, categories and item counts',
    auth: 'owner', capability: 'restaurants:read', response: StoreDetailSchema,
    handler: ({ svc, principal, params }) => {
      const store = ownedStore(svc, principal, params.id)
      const categories = svc.stores.categoryCounts(store.id)
      return {
        ...storeSummary(store, svc.config.siteUrl),
        currency: store.currency,
        city: store.city,
        settings: JSON.parse(store.settings) as Record<string, unknown>,
        item_count: categories.reduce((n, c) => n + c.item_count, 0),
        categories,
      }
    },
  }),
  route({
    method: 'GET', path: '/restaurants/{id}/menu', tag: 'Menu', summary: 'The menu: categories with their items (sold-out included)',
    auth: 'owner', capability: 'menu:read', response: MenuSchema,
    handler: ({ svc, principal, params }) => {
      const store = ownedStore(svc, principal, params.id)
      return menuView(svc.stores.menu(store.id), verticalOf(store.store_type), true)
    },
  }),
]
