/**
 * One search (issue 36 item 6): the storefront server's `search_menu` and the catalog server's
 * `search_items` are asked the same questions about the same store through the official SDK
 * client, and find the same items in the same order. Before, "pizza" found nothing on the
 * storefront (it matched names and descriptions only, with no stemming) while the catalog found
 * Diavola and Margherita (category "Pizzas").
 */
import t from 'tap'
import { startServer } from './helpers/server.ts'
import { createStorefrontToken } from './helpers/fixtures.ts'
import { callTool, connectMcp } from './helpers/mcp.ts'

const s = await startServer({ RATE_LIMIT_PER_MINUTE: '100000', MCP_PUBLIC_RATE_PER_MINUTE: '100000' })
t.teardown(() => s.close())
const demo = s.seed()
const db = s.app.svc.db
// An item whose name carries an accent, and a vegan one in the Pizzas category.
db.prepare('UPDATE menu_items SET name = ? WHERE store_id = ? AND name = ?').run('Café crème', demo.store.id, 'Espresso')
const pizzas = db.prepare("SELECT id FROM menu_categories WHERE store_id = ? AND name = 'Pizzas'").pluck().get(demo.store.id) as number
db.prepare("INSERT INTO menu_items (store_id, category_id, name, description, price, position, is_vegan, is_halal, created_at, updated_at) VALUES (?, ?, 'Marinara', 'Tomato, garlic, oregano', 800, 9, 1, 0, '2026-01-01', '2026-01-01')").run(demo.store.id, pizzas)

const token = createStorefrontToken(db, demo.store.id, ['menu:read', 'agent'])
const storefront = await connectMcp(s, '/mcp/storefront', { 'x-storefront-token': token })
const catalog = await connectMcp(s, '/mcp/catalog')
t.teardown(async () => { await storefront.close(); await catalog.close() })

const QUESTIONS: Array<{ query: string; dietary?: string[]; max_price?: number }> = [
  { query: 'pizza' }, { query: 'pizzas' }, { query: 'Margherita' }, { query: 'marg' }, { query: 'cafe' }, { query: 'CRÈME' },
  { query: 'pizza', dietary: ['vegan'] }, { query: 'pizza', max_price: 10 }, { query: 'salad', dietary: ['halal'] },
  { query: 'garlic' }, { query: 'lemonade large' }, { query: 'nothing like this' },
]

t.test('storefront search_menu and catalog search_items agree on every question', async (t) => {
  for (const q of QUESTIONS) {
    const mine = await callTool(storefront, 'search_menu', q)
    t.equal(mine.isError, false, `search_menu ${JSON.stringify(q)} answers`)
    const all = await callTool(catalog, 'search_items', { ...q, items_per_store: 10, limit: 20 })
    t.equal(all.isError, false, `search_items ${JSON.stringify(q)} answers`)
    const group = all.json.data.find((g: { store: { id: number } }) => g.store.id === demo.store.id)
    const fromCatalog = (group?.items ?? []).map((i: { name: string }) => i.name)
    const fromStore = mine.json.map((i: { name: string }) => i.name)
    t.same(fromStore, fromCatalog, `${JSON.stringify(q)}: ${fromStore.join(', ') || 'nothing'}`)
  }
})

t.test('what the storefront used to miss', async (t) => {
  const pizza = await callTool(storefront, 'search_menu', { query: 'pizza' })
  t.same(pizza.json.map((i: { name: string }) => i.name).sort(), ['Diavola', 'Margherita', 'Marinara'], 'pizza finds the Pizzas category (stemmed), sold-out Truffle Bianca left out')
  const soldOut = await callTool(storefront, 'search_menu', { query: 'pizza', include_sold_out: true })
  t.ok(soldOut.json.some((i: { name: string }) => i.name === 'Truffle Bianca'), 'the storefront may still ask for sold-out items')
  const all = await callTool(storefront, 'search_menu', {})
  t.ok(all.json.length >= 7, 'no query: the whole menu, filtered')
})

t.test('a store that is not publicly listed is still searched on its storefront, and hidden from the catalog', async (t) => {
  const settings = JSON.parse(db.prepare('SELECT settings FROM stores WHERE id = ?').pluck().get(demo.store.id) as string)
  db.prepare('UPDATE stores SET settings = ? WHERE id = ?').run(JSON.stringify({ ...settings, public_listing: false }), demo.store.id)
  const mine = await callTool(storefront, 'search_menu', { query: 'pizza' })
  t.equal(mine.json.length, 3, 'the storefront finds its pizzas')
  const all = await callTool(catalog, 'search_items', { query: 'pizza' })
  t.notOk(all.json.data.some((g: { store: { id: number } }) => g.store.id === demo.store.id), 'the catalog does not show the store')
})
