/**
 * The catalog MCP server (issue 12 item 6, api-v1 §4.11; docs/mcp-catalog.md) driven by the official
 * SDK client with no credential: the four read-only tools, the same answers as `GET /catalog/...`
 * (one operation behind both), bad arguments as JSON-RPC -32602, a hidden or suspended store as an
 * `isError` not_found indistinguishable from a missing one, opt-out and suspension live, and no
 * owner contact data in any answer.
 */
import t from 'tap'
import { McpError } from '@modelcontextprotocol/sdk/types.js'
import { startServer } from './helpers/server.ts'
import { connectMcp, callTool, type ToolOutcome } from './helpers/mcp.ts'
import { createCategory, createItem, createOwner, createStore } from './helpers/fixtures.ts'
import { suspendAccount, unsuspendAccount } from '../src/storage/accounts.ts'

const s = await startServer({ RATE_LIMIT_PER_MINUTE: '100000' })
t.teardown(() => s.close())
const db = s.app.svc.db
const mcp = await connectMcp(s, '/mcp/catalog')
t.teardown(() => mcp.close())

const CONTACT = { phone: '+15551234987', email: 'owner-private@contact.example', address: '9 Hidden Road' }
function store(title: string, city: string, settings: Record<string, unknown> = {}) {
  const ownerId = createOwner(db, `Owner of ${title}`)
  const st = createStore(db, ownerId, { title, settings: { ...CONTACT, ...settings } })
  db.prepare('UPDATE stores SET city = ? WHERE id = ?').run(city, st.id)
  return { ownerId, ...st }
}
const ramen = store('Ramen Ya', 'Kyoto')
const noodles = createCategory(db, ramen.id, 'Noodles')
const shoyu = createItem(db, ramen.id, noodles, 'Shoyu Ramen', 1100)
const veggie = createItem(db, ramen.id, noodles, 'Vegetable Ramen', 1000)
db.prepare('UPDATE menu_items SET is_vegan = 1 WHERE id = ?').run(veggie)
const other = store('Ramen Two', 'Osaka')
createItem(db, other.id, createCategory(db, other.id, 'Soups'), 'Miso Ramen', 900)
const hidden = store('Secret Ramen', 'Kyoto', { public_listing: false })
createItem(db, hidden.id, createCategory(db, hidden.id, 'Noodles'), 'Hidden Ramen', 800)

const answers: string[] = []
async function call(name: string, args: Record<string, unknown> = {}): Promise<ToolOutcome> {
  const r = await callTool(mcp, name, args)
  answers.push(JSON.stringify(r.raw))
  return r
}
const groupIds = (r: ToolOutcome) => (r.json.data as Array<{ store: { id: number } }>).map((g) => g.store.id)

t.test('tools/list: four read-only tools, no credential needed', async (t) => {
  const { tools } = await mcp.listTools()
  t.same(tools.map((x) => x.name).sort(), ['get_store', 'list_starter_menus', 'search_items', 'search_stores'])
  for (const x of tools) t.equal(x.annotations?.readOnlyHint, true, `${x.name} is read-only`)
  const items = tools.find((x) => x.name === 'search_items')!
  t.same(items.inputSchema.required, ['query'])
  t.match(items.inputSchema.properties, { dietary: { type: 'array', items: { enum: ['vegan', 'halal'] } }, max_price: { type: 'number' } })
})

t.test('search_items answers what GET /catalog/items answers', async (t) => {
  const r = await call('search_items', { query: 'ramen' })
  t.equal(r.isError, false)
  t.same(groupIds(r).sort((a, b) => a - b), [ramen.id, other.id], 'the opted-out store never appears')
  const rest = await s.req('GET', '/catalog/items?query=ramen')
  t.same(r.json, rest.body, 'one operation behind both front doors')
  const vegan = await call('search_items', { query: 'ramen', dietary: ['vegan'], city: 'kyoto' })
  t.same(vegan.json.data.map((g: { items: Array<{ id: number }> }) => g.items.map((i) => i.id)), [[veggie]])
  const cheap = await call('search_items', { query: 'ramen', max_price: 9.5 })
  t.same(groupIds(cheap), [other.id], 'a JSON number price ceiling')
  const stores = await call('search_stores', { keyword: 'ramen', city: 'Kyoto' })
  t.same(stores.json.data.map((x: { id: number }) => x.id), [ramen.id])
  t.same(stores.json.data[0].categories, ['Noodles'])
  t.ok(shoyu)
})

t.test('bad arguments are JSON-RPC -32602 with the field named', async (t) => {
  for (const [name, args, field] of [
    ['search_items', { query: 'ramen', dietary: ['keto'] }, 'dietary'],
    ['search_items', {}, 'query'],
    ['search_stores', { limit: 1000 }, 'limit'],
  ] as const) {
    const err = await mcp.callTool({ name, arguments: args }).then(() => null, (e: unknown) => e)
    t.ok(err instanceof McpError, `${name} ${JSON.stringify(args)} is refused`)
    t.equal((err as McpError).code, -32602)
    t.match(JSON.stringify((err as McpError).data ?? (err as McpError).message), field)
  }
})

t.test('get_store by id or slug; an opted-out store answers the same not_found as a missing one', async (t) => {
  const byId = await call('get_store', { store: ramen.id })
  t.equal(byId.isError, false)
  t.match(byId.json, { id: ramen.id, slug: ramen.slug, url: `${s.site}/s/${ramen.slug}`, city: 'Kyoto', categories: ['Noodles'] })
  t.same(byId.json.menu[0].items.map((i: { name: string }) => i.name).sort(), ['Shoyu Ramen', 'Vegetable Ramen'])
  t.same((await call('get_store', { store: ramen.slug })).json, byId.json)

  const missing = await call('get_store', { store: 999_999 })
  t.equal(missing.isError, true)
  t.equal(missing.json.code, 'not_found')
  for (const args of [{ store: hidden.id }, { store: hidden.slug }]) {
    const r = await call('get_store', args)
    t.equal(r.isError, true)
    t.same(r.json, missing.json, 'no hint that the store exists')
  }
})

t.test('opting out and suspension hide a store from every tool at once', async (t) => {
  const visible = async () => ({
    stores: (await call('search_stores', { keyword: 'ramen ya' })).json.data.some((x: { id: number }) => x.id === ramen.id),
    items: groupIds(await call('search_items', { query: 'shoyu' })).includes(ramen.id),
    store: !(await call('get_store', { store: ramen.slug })).isError,
  })
  t.same(await visible(), { stores: true, items: true, store: true })
  db.prepare("UPDATE stores SET settings = json_set(settings, '$.public_listing', json('false')) WHERE id = ?").run(ramen.id)
  t.same(await visible(), { stores: false, items: false, store: false }, 'opted out')
  db.prepare("UPDATE stores SET settings = json_remove(settings, '$.public_listing') WHERE id = ?").run(ramen.id)
  t.same(await visible(), { stores: true, items: true, store: true }, 'no public_listing key: listed (the default)')
  suspendAccount(db, ramen.ownerId, 'test')
  t.same(await visible(), { stores: false, items: false, store: false }, 'suspended')
  unsuspendAccount(db, ramen.ownerId)
  t.same(await visible(), { stores: true, items: true, store: true })
})

t.test('list_starter_menus', async (t) => {
  const r = await call('list_starter_menus')
  t.equal(r.isError, false)
  t.same(r.json.map((m: { key: string }) => m.key), ['pizzeria', 'cafe', 'burger_bar', 'corner_shop'])
  t.ok(r.json.every((m: { item_count: number; categories: unknown[] }) => m.item_count > 0 && m.categories.length >= 3))
})

t.test('no owner name, email or settings contact data in any tool answer', async (t) => {
  t.ok(answers.length >= 15, `${answers.length} answers checked`)
  const all = answers.join('\n')
  for (const o of db.prepare('SELECT name, email FROM owners').all() as Array<{ name: string; email: string }>) {
    t.notOk(all.includes(o.email), `owner email ${o.email} never appears`)
    t.notOk(all.includes(o.name), `owner name "${o.name}" never appears`)
  }
  for (const value of Object.values(CONTACT)) t.notOk(all.includes(value), `${value} never appears`)
})
