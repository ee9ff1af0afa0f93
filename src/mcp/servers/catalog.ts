/**
 * The public catalog MCP server at `{site_url}/mcp/catalog` (api-v1 §4.11, issue 12 item 6;
 * docs/mcp-catalog.md): no credential; an agent finds stores and dishes across the platform. Every
 * tool binds a public operation of src/ops/web/catalog.ts, the same ones as `GET /catalog/...`. The
 * argument schemas are written out (the op inputs also accept HTTP query strings, which would only
 * confuse an agent).
 */
import * as catalog from '../../ops/web/catalog.ts'
import { STARTER_KEYS } from '../../domain/starter-menus.ts'
import { tool, type JsonSchema, type McpServerDef } from '../tool.ts'

const text = (description: string, maxLength: number): JsonSchema => ({ type: 'string', maxLength, description })
const count = (description: string, minimum: number, maximum: number, dflt: number): JsonSchema => ({ type: 'integer', minimum, maximum, default: dflt, description })
const city = text('City name; keeps results whose city starts with these words (case and accents ignored).', 100)
const object = (properties: Record<string, JsonSchema>, required: string[] = []): JsonSchema =>
  ({ type: 'object', properties, ...(required.length ? { required } : {}), additionalProperties: false })

export const catalogServer: McpServerDef = {
  path: '/mcp/catalog',
  name: 'catalog',
  title: 'Store and menu catalog',
  instructions: [
    'Public catalog of the stores on this platform: no credential needed, read-only.',
    'Use search_items to find dishes or products (with dietary needs, a price ceiling and a city), grouped by store;',
    'search_stores to find stores by name, kind or city; get_store for one store\'s public menu and its `url` (where a person orders) and `menu_url`.',
    'Prices are in each store\'s own `currency`, major units. Only stores that are publicly listed appear; no owner contact data is available.',
    `list_starter_menus shows the starter menus (${STARTER_KEYS.join(', ')}) an owner can apply to an empty store with POST /restaurants/{id}/menu/starter.`,
  ].join(' '),
  auth: 'none',
  tools: [
    tool(catalog.searchCatalogStores, {
      name: 'search_stores',
      readOnly: true,
      inputSchema: object({
        keyword: text('Words of the store\'s name, kind or menu categories, e.g. "pizza" or "corner shop".', 200),
        city,
        limit: count('Stores per page.', 1, catalog.STORES_MAX, 20),
        offset: count('Stores to skip (paging).', 0, 10_000, 0),
      }),
    }),
    tool(catalog.searchCatalogItems, {
      name: 'search_items',
      readOnly: true,
      inputSchema: object({
        query: { ...text('Words of the item\'s name, category or description, e.g. "margherita" or "oat latte".', 200), minLength: 1 },
        dietary: { type: 'array', items: { type: 'string', enum: [...catalog.DIETARY] }, uniqueItems: true, description: 'Needs every item must meet.' },
        max_price: { type: 'number', minimum: 0, description: 'Highest price (major units of each store\'s currency); an item qualifies when its base price or one of its variations is at most this.' },
        city,
        limit: count('Stores per page.', 1, catalog.GROUPS_MAX, 10),
        offset: count('Stores to skip (paging).', 0, 1000, 0),
        items_per_store: count('Best matching items shown per store.', 1, catalog.ITEMS_PER_STORE_MAX, 3),
      }, ['query']),
    }),
    tool(catalog.getCatalogStore, {
      name: 'get_store',
      readOnly: true,
      inputSchema: object({
        store: { anyOf: [{ type: 'integer', minimum: 1 }, { type: 'string', minLength: 1, maxLength: 120 }], description: 'The store\'s id or slug (from a search result).' },
      }, ['store']),
    }),
    tool(catalog.listStarterMenus, { name: 'list_starter_menus', readOnly: true, inputSchema: object({}) }),
  ],
}
