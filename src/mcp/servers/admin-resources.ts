/**
 * The admin MCP server's resources and completions (issue 36 item 4; docs/mcp.md "Resources and
 * completions"): a store's menu, settings, one menu item and one order, read through the same
 * operations as the tools (so the same capabilities and tenancy apply: another owner's store is
 * "not found"), and completions of `restaurant_id`, `order_id` and `item_id` from what the caller
 * can see.
 */
import { ApiError } from '../../errors.ts'
import { getMenu, listStores } from '../../ops/stores/stores.ts'
import { getStoreSettings } from '../../ops/stores/store-settings.ts'
import { getOrder, listOrders } from '../../ops/orders/orders.ts'
import { startingWith, type Completer, type ResourceBinding, type ResourceEntry, type RunOp } from '../resources.ts'

const BASE = 'dispatch://restaurants'
/** Stores listed (resources/list) or completed at most: 5 pages of 20. */
const STORE_PAGES = 5

interface Store { id: number; title: string }
interface Page<T> { data: T[]; last_page: number }
interface MenuCategory { items: Array<{ id: number; name: string }> }

/** The caller's stores, through the listing operation. */
async function stores(run: RunOp): Promise<Store[]> {
  const out: Store[] = []
  for (let page = 1; page <= STORE_PAGES; page++) {
    const p = (await run(listStores, {}, { page: String(page) })) as Page<Store>
    out.push(...p.data)
    if (page >= p.last_page) break
  }
  return out
}

const positive = (raw: string | undefined): number => (raw && /^[1-9]\d{0,15}$/.test(raw) ? Number(raw) : 0)

const perStore = (suffix: string, what: string) => async (run: RunOp): Promise<ResourceEntry[]> =>
  (await stores(run)).map((s) => ({ uri: `${BASE}/${s.id}/${suffix}`, name: `${suffix}-${s.id}`, title: `${s.title}: ${what}` }))

export const adminResources: ResourceBinding[] = [
  {
    uriTemplate: `${BASE}/{restaurant_id}/menu`, name: 'menu', title: 'A restaurant\'s menu', mimeType: 'application/json',
    description: 'Categories in display order with their items (sold-out ones flagged), variants and extras; amounts in the store currency. As get_menu.',
    op: getMenu, ids: { store: 'restaurant_id' }, list: perStore('menu', 'menu'),
  },
  {
    uriTemplate: `${BASE}/{restaurant_id}/settings`, name: 'settings', title: 'A restaurant\'s settings', mimeType: 'application/json',
    description: 'Time zone, business hours, holidays, whether it accepts orders and is open now. As get_restaurant_settings.',
    op: getStoreSettings, ids: { store: 'restaurant_id' }, list: perStore('settings', 'settings'),
  },
  {
    uriTemplate: `${BASE}/{restaurant_id}/menu/items/{item_id}`, name: 'menu-item', title: 'One menu item', mimeType: 'application/json',
    description: 'One item of the menu with its variants and extras (from the same menu read as get_menu).',
    op: getMenu, ids: { store: 'restaurant_id' },
    text: (menu, vars) => {
      const item = (menu as MenuCategory[]).flatMap((c) => c.items).find((i) => i.id === positive(vars.item_id))
      if (!item) throw new ApiError('not_found')
      return JSON.stringify(item)
    },
  },
  {
    uriTemplate: `${BASE}/{restaurant_id}/orders/{order_id}`, name: 'order', title: 'One order', mimeType: 'application/json',
    description: 'An order in full: lines, totals, customer, driver, delivery timeline. As get_order.',
    op: getOrder, ids: { store: 'restaurant_id', order: 'order_id' },
  },
]

export const adminCompletions: Record<string, Completer> = {
  restaurant_id: async (run, value) => startingWith((await stores(run)).map((s) => String(s.id)), value),
  order_id: async (run, value, context) => {
    const store = positive(context.restaurant_id)
    if (!store) return []
    const page = (await run(listOrders, { store }, {})) as Page<{ id: number }>
    return startingWith(page.data.map((o) => String(o.id)), value)
  },
  item_id: async (run, value, context) => {
    const store = positive(context.restaurant_id)
    if (!store) return []
    const menu = (await run(getMenu, { store }, {})) as MenuCategory[]
    return startingWith(menu.flatMap((c) => c.items.map((i) => String(i.id))), value)
  },
}
