/**
 * Store reads (api-v1 §4.2): the owner's stores, one store in detail, its menu, and the sales
 * report (§2.6) that the owner and staff (§4.7) routes share.
 */
import { VEHICLE_FILTER_DOC, VehicleQuerySchema, vehicleMenuView } from '../menu/fitments.ts'
import * as v from 'valibot'
import { defineOp } from '../op.ts'
import { ownerOf, storeOf } from '../scope.ts'
import { PageQuery, PaginatedSchema, pageOf, paginate } from '../schemas/common.ts'
import { AnalyticsSchema, MenuSchema, StoreDetailSchema, StoreSummarySchema } from '../schemas/named.ts'
import { AnalyticsQuery, analyticsRange } from '../orders/analytics-query.ts'
import { storeSummary } from '../../storage/stores.ts'
import { analyticsSummary } from '../../storage/analytics.ts'

const tag = 'Restaurants'
const STORES_PER_PAGE = 20

export const listStores = defineOp({
  id: 'stores.list', tag, summary: 'List your stores (20 per page)', access: { owner: 'restaurants:read' }, scope: [],
  input: PageQuery, output: PaginatedSchema(StoreSummarySchema),
  run: (ctx, input) => {
    const page = pageOf(input)
    const { rows, total } = ctx.svc.stores.page(ownerOf(ctx).ownerId, page, STORES_PER_PAGE)
    return paginate(rows.map((s) => storeSummary(s, ctx.svc.config.siteUrl)), page, STORES_PER_PAGE, total)
  },
})

export const getStore = defineOp({
  id: 'stores.get', tag, summary: 'A store with its vertical, categories and item counts', access: { owner: 'restaurants:read' }, scope: ['store'],
  output: StoreDetailSchema,
  run: (ctx) => {
    const store = storeOf(ctx)
    const categories = ctx.svc.stores.categoryCounts(store.id)
    return {
      ...storeSummary(store, ctx.svc.config.siteUrl),
      currency: store.currency,
      city: store.city,
      settings: JSON.parse(store.settings) as Record<string, unknown>,
      item_count: categories.reduce((n, c) => n + c.item_count, 0),
      categories,
    }
  },
})

export const getMenu = defineOp({
  id: 'menu.get', tag: 'Menu', summary: 'The menu: categories with their items (sold-out included)', access: { owner: 'menu:read' }, scope: ['store'],
  description: VEHICLE_FILTER_DOC,
  input: VehicleQuerySchema, output: MenuSchema,
  run: (ctx, input) => vehicleMenuView(ctx, input, true),
})

export const salesReport = defineOp({
  id: 'analytics.sales.get', feature: 'analytics', tag: 'Analytics', summary: 'Sales summary for a date range (default: the last 30 days)',
  description: 'Query `from`, `to` (`YYYY-MM-DD`, api-v1 §2.6). Cancelled orders count but earn nothing.',
  access: { owner: 'analytics:read', staff: 'analytics' }, scope: ['store'],
  input: AnalyticsQuery, output: AnalyticsSchema,
  run: (ctx, input) => analyticsSummary(ctx.svc.db, storeOf(ctx).id, analyticsRange(input)),
})

export const storeOps = [listStores, getStore, getMenu, salesReport]
