/**
 * The public catalog over HTTP (issue 12 item 6, docs/mcp-catalog.md): store and item search
 * (keyword, city, dietary, price ceiling, accents, prefixes), grouping by store, one store by id or
 * slug; only listed stores of active accounts, live as owners opt out or accounts are suspended;
 * never an owner's name, email or settings contact data. Starter menus: listed publicly, applied by
 * an owner through the menu writes (events, quota), refused on a non-empty menu.
 */
import t from 'tap'
import { startServer, type Res } from './helpers/server.ts'
import { createCategory, createItem, createOwner, createStore, isError, outbox, tokenFor } from './helpers/fixtures.ts'
import { suspendAccount, unsuspendAccount } from '../src/storage/accounts.ts'
import { TIER_WINDOW } from '../src/storage/catalog.ts'
import { STARTER_MENUS, starterItemCount } from '../src/domain/starter-menus.ts'

const s = await startServer({ RATE_LIMIT_PER_MINUTE: '100000' })
t.teardown(() => s.close())
const db = s.app.svc.db

// Every answer of this file, to prove that no owner contact data appears in any of them.
const answers: string[] = []
const get = async (path: string, token?: string): Promise<Res> => {
  const r = await s.req('GET', path, token ? { token } : {})
  answers.push(r.text)
  return r
}
const q = (params: Record<string, string>) => new URLSearchParams(params).toString()

const CONTACT = { phone: '+15559876543', email: 'private-contact@owner.example', address: '1 Secret Lane' }
function store(title: string, city: string, opts: { type?: string; settings?: Record<string, unknown>; plan?: string } = {}) {
  const ownerId = createOwner(db, `Owner of ${title}`, opts.plan ?? 'pro')
  const st = createStore(db, ownerId, { title, ...(opts.type ? { type: opts.type } : {}), settings: { ...CONTACT, ...(opts.settings ?? {}) } })
  db.prepare('UPDATE stores SET city = ? WHERE id = ?').run(city, st.id)
  return { ownerId, ...st }
}
const price = (itemId: number, variant: { name: string; price: number }) =>
  db.prepare("INSERT INTO item_variants (item_id, name, price, position, created_at, updated_at) VALUES (?, ?, ?, 0, '2026-01-01T00:00:00.000+00:00', '2026-01-01T00:00:00.000+00:00')").run(itemId, variant.name, variant.price)
const flags = (itemId: number, f: { vegan?: boolean; halal?: boolean; description?: string }) =>
  db.prepare('UPDATE menu_items SET is_vegan = ?, is_halal = ?, description = ? WHERE id = ?').run(f.vegan ? 1 : 0, f.halal ? 1 : 0, f.description ?? '', itemId)

// Luigi's in Springfield: pizzas, one vegan, one sold out, one with a cheaper variation.
const luigi = store('Luigi Pizzeria', 'Springfield')
const pizzas = createCategory(db, luigi.id, 'Pizzas')
const margherita = createItem(db, luigi.id, pizzas, 'Margherita', 900)
price(margherita, { name: 'Large', price: 1300 })
const marinara = createItem(db, luigi.id, pizzas, 'Marinara', 800)
flags(marinara, { vegan: true, description: 'Tomato, garlic, oregano' })
const pepperoni = createItem(db, luigi.id, pizzas, 'Pepperoni', 1100)
const calzone = createItem(db, luigi.id, pizzas, 'Calzone', 1000, { soldOut: true })
const quattro = createItem(db, luigi.id, pizzas, 'Quattro Formaggi', 1400)
price(quattro, { name: 'Mini', price: 700 })

// Green Bowl in Shelbyville: a vegan and halal pizza.
const green = store('Green Bowl', 'Shelbyville')
const bowls = createCategory(db, green.id, 'Bowls')
const veganPizza = createItem(db, green.id, bowls, 'Vegan Pizza', 1200)
flags(veganPizza, { vegan: true, halal: true })

// Café Noir in São Paulo: accents.
const cafe = store('Café Noir', 'São Paulo')
createItem(db, cafe.id, createCategory(db, cafe.id, 'Crêpes'), 'Crêpe Suzette', 650)

// Opted out, and an account about to be suspended.
const hidden = store('Hidden Pizza Den', 'Springfield', { settings: { public_listing: false } })
createItem(db, hidden.id, createCategory(db, hidden.id, 'Pizzas'), 'Secret Pizza', 500)
const banned = store('Banned Pizza Place', 'Springfield')
createItem(db, banned.id, createCategory(db, banned.id, 'Pizzas'), 'Banned Pizza', 500)
suspendAccount(db, banned.ownerId, 'test')

const ownerRows = () => db.prepare('SELECT name, email FROM owners').all() as Array<{ name: string; email: string }>
const ids = (r: Res) => (r.body.data as Array<{ id: number }>).map((x) => x.id)
const groupIds = (r: Res) => (r.body.data as Array<{ store: { id: number } }>).map((g) => g.store.id)

t.test('store search: keyword over title, kind and categories; city; accents; listed stores only', async (t) => {
  const byTitle = await get(`/catalog/stores?${q({ keyword: 'pizzeria' })}`)
  t.equal(byTitle.status, 200)
  t.same(ids(byTitle), [luigi.id])
  t.match(byTitle.body.data[0], { id: luigi.id, title: 'Luigi Pizzeria', slug: luigi.slug, url: `${s.site}/s/${luigi.slug}`, menu_url: `${s.base}/menu/${luigi.id}`, city: 'Springfield', store_type: 'restaurant', vertical: 'Restaurant', currency: 'USD', categories: ['Pizzas'] })
  t.same(Object.keys(byTitle.body.data[0]).sort(), ['categories', 'city', 'currency', 'id', 'menu_url', 'slug', 'store_type', 'title', 'url', 'vertical'], 'public fields only')

  const pizza = await get(`/catalog/stores?${q({ keyword: 'pizza' })}`)
  t.same(ids(pizza), [luigi.id], 'a category name (Pizzas, by prefix) finds the store; the opted-out and the suspended one stay hidden')
  t.same(ids(await get(`/catalog/stores?${q({ keyword: 'restaurant', city: 'springfield' })}`)), [luigi.id], 'kind + city')
  t.same(ids(await get(`/catalog/stores?${q({ city: 'Shelbyville' })}`)), [green.id], 'city alone')
  t.same(ids(await get(`/catalog/stores?${q({ city: 'paulo' })}`)), [], 'a city matches from its start')
  t.same(ids(await get(`/catalog/stores?${q({ keyword: 'cafe', city: 'sao paulo' })}`)), [cafe.id], 'accents and case are ignored')
  t.same(ids(await get(`/catalog/stores?${q({ keyword: '%%%' })}`)), [], 'text without words finds nothing (not everything)')
  const all = await get('/catalog/stores')
  t.same(ids(all).sort((a, b) => a - b), [luigi.id, green.id, cafe.id], 'no filter: every listed store')

  const page = await get(`/catalog/stores?${q({ limit: '2' })}`)
  t.equal(page.body.data.length, 2)
  t.equal(page.body.has_more, true)
  const next = await get(`/catalog/stores?${q({ limit: '2', offset: '2' })}`)
  t.same(ids(next), [cafe.id])
  t.equal(next.body.has_more, false)
  isError(t, await get(`/catalog/stores?${q({ limit: '500' })}`), 422, 'validation_failed', 'a limit over 50')
})

t.test('item search: ranked, grouped by store, with dietary, price and city filters', async (t) => {
  const r = await get(`/catalog/items?${q({ query: 'pizza' })}`)
  t.equal(r.status, 200)
  t.same(groupIds(r).sort((a, b) => a - b), [luigi.id, green.id], 'the hidden store\'s and the suspended account\'s pizzas never appear')
  const g = r.body.data.find((x: { store: { id: number } }) => x.store.id === green.id)
  t.same(g.items.map((i: { name: string }) => i.name), ['Vegan Pizza'], 'an item-name match ranks first')
  t.match(g.items[0], { id: veganPizza, category: 'Bowls', price: 12, from_price: 12, is_vegan: true, is_halal: true, image: null })
  t.equal(r.body.data[0].store.id, green.id, 'the store with a name match ranks above category-only matches')
  const luigiGroup = r.body.data.find((x: { store: { id: number } }) => x.store.id === luigi.id)
  t.equal(luigiGroup.match_count, 4, 'Luigi\'s orderable pizzas match through their category; sold-out Calzone does not')
  t.equal(luigiGroup.items.length, 3, 'items_per_store defaults to 3')
  t.notOk(JSON.stringify(r.body).includes('Calzone'))

  t.same((await get(`/catalog/items?${q({ query: 'pizza', items_per_store: '10' })}`)).body.data.find((x: { store: { id: number } }) => x.store.id === luigi.id).items.length, 4)
  const vegan = await get(`/catalog/items?${q({ query: 'pizza', dietary: 'vegan' })}`)
  t.same(vegan.body.data.flatMap((x: { items: Array<{ id: number }> }) => x.items.map((i) => i.id)).sort((a: number, b: number) => a - b), [marinara, veganPizza].sort((a, b) => a - b))
  const both = await get(`/catalog/items?${q({ query: 'pizza', dietary: 'vegan,halal' })}`)
  t.same(groupIds(both), [green.id], 'every dietary need must hold')

  const cheap = await get(`/catalog/items?${q({ query: 'pizza', max_price: '9', items_per_store: '10' })}`)
  const cheapItems = cheap.body.data.flatMap((x: { items: Array<{ id: number; from_price: number }> }) => x.items)
  t.same(cheapItems.map((i: { id: number }) => i.id).sort((a: number, b: number) => a - b), [margherita, marinara, quattro].sort((a, b) => a - b), 'at most 9: base price or a variation (Quattro Formaggi Mini at 7)')
  t.equal(cheapItems.find((i: { id: number }) => i.id === quattro).from_price, 7)
  t.same(groupIds(await get(`/catalog/items?${q({ query: 'pizza', city: 'Shelbyville' })}`)), [green.id])
  t.same(groupIds(await get(`/catalog/items?${q({ query: 'oregano' })}`)), [luigi.id], 'descriptions are searched')
  t.same(groupIds(await get(`/catalog/items?${q({ query: 'marg' })}`)), [luigi.id], 'the last word matches as a prefix')
  t.same(groupIds(await get(`/catalog/items?${q({ query: 'crepe' })}`)), [cafe.id], 'accents are ignored')

  const one = await get(`/catalog/items?${q({ query: 'pizza', limit: '1' })}`)
  t.equal(one.body.data.length, 1)
  t.equal(one.body.has_more, true)
  const two = await get(`/catalog/items?${q({ query: 'pizza', limit: '1', offset: '1' })}`)
  t.equal(two.body.has_more, false)
  t.not(two.body.data[0].store.id, one.body.data[0].store.id, 'offset pages over stores')

  isError(t, await get('/catalog/items'), 422, 'validation_failed', 'no query')
  isError(t, await get(`/catalog/items?${q({ query: 'pizza', dietary: 'keto' })}`), 422, 'validation_failed', 'an unknown dietary need')
  isError(t, await get(`/catalog/items?${q({ query: 'pizza', max_price: 'cheap' })}`), 422, 'validation_failed', 'a price that is not a number')
})

t.test('ranking: name matches, then category, then anywhere; shortest names first; bounded windows keep better tiers', async (t) => {
  const works = store('Sprocket Works', 'Capital City')
  const parts = createCategory(db, works.id, 'Parts')
  const long = createItem(db, works.id, parts, 'Deluxe Family Sprocket Set', 900)
  const short = createItem(db, works.id, parts, 'Sprocket', 500)
  // Newer than both and more than a window's worth: descriptions that mention the word.
  const oil = store('Oil Depot', 'Capital City')
  const oils = createCategory(db, oil.id, 'Oils')
  db.transaction(() => { for (let i = 0; i < 600; i++) flags(createItem(db, oil.id, oils, `Oil ${i}`, 300), { description: 'good for every sprocket' }) })()
  const r = await get(`/catalog/items?${q({ query: 'sprocket', items_per_store: '2' })}`)
  t.same(groupIds(r), [works.id, oil.id], 'the store whose items are named so comes first, though 600 newer items mention the word')
  t.same(r.body.data[0].items.map((i: { id: number }) => i.id), [short, long], 'the shortest name first')
  t.equal(r.body.data[1].match_count, TIER_WINDOW, 'a tier reads at most its window of newest matches')
})

t.test('one store by id or slug, with its public menu', async (t) => {
  const byId = await get(`/catalog/stores/${luigi.id}`)
  t.equal(byId.status, 200)
  t.match(byId.body, { id: luigi.id, slug: luigi.slug, categories: ['Pizzas'] })
  t.same(byId.body.menu[0].items.map((i: { name: string }) => i.name).sort(), ['Margherita', 'Marinara', 'Pepperoni', 'Quattro Formaggi'], 'sold-out items left out')
  const bySlug = await get(`/catalog/stores/${luigi.slug}`)
  t.same(bySlug.body, byId.body)
  for (const [what, st] of [['opted out', hidden], ['suspended', banned]] as const) {
    isError(t, await get(`/catalog/stores/${st.id}`), 404, 'not_found', `${what}, by id`)
    isError(t, await get(`/catalog/stores/${st.slug}`), 404, 'not_found', `${what}, by slug`)
  }
  isError(t, await get('/catalog/stores/999999'), 404, 'not_found', 'a store that does not exist answers the same')
})

t.test('opting out and suspension take effect at once, both ways', async (t) => {
  const setListing = (id: number, value: boolean) =>
    db.prepare("UPDATE stores SET settings = json_set(settings, '$.public_listing', json(?)) WHERE id = ?").run(String(value), id)
  const findsGreen = async () => ({
    stores: ids(await get(`/catalog/stores?${q({ keyword: 'green' })}`)).includes(green.id),
    items: groupIds(await get(`/catalog/items?${q({ query: 'vegan pizza' })}`)).includes(green.id),
    store: (await get(`/catalog/stores/${green.slug}`)).status,
  })
  t.same(await findsGreen(), { stores: true, items: true, store: 200 })
  setListing(green.id, false)
  t.same(await findsGreen(), { stores: false, items: false, store: 404 }, 'public_listing: false hides the store and its items')
  setListing(green.id, true)
  t.same(await findsGreen(), { stores: true, items: true, store: 200 }, 'listed again')
  suspendAccount(db, green.ownerId, 'test')
  t.same(await findsGreen(), { stores: false, items: false, store: 404 }, 'a suspended account\'s store and items are gone')
  unsuspendAccount(db, green.ownerId)
  t.same(await findsGreen(), { stores: true, items: true, store: 200 })

  db.prepare("UPDATE stores SET settings = json_set(settings, '$.prep_minutes', 25) WHERE id = ?").run(green.id)
  t.same(await findsGreen(), { stores: true, items: true, store: 200 }, 'other settings changes leave the listing alone')
})

t.test('menu writes through the owner API are searchable at once', async (t) => {
  const token = tokenFor(db, luigi.ownerId, ['*'])
  const created = await s.req('POST', `/restaurants/${luigi.id}/menu/items`, { token, body: { category_id: pizzas, name: 'Diavola Piccante', price: 12, is_vegan: false } })
  t.equal(created.status, 200)
  t.same(groupIds(await get(`/catalog/items?${q({ query: 'diavola' })}`)), [luigi.id])
  await s.req('PUT', `/restaurants/${luigi.id}/menu/items/${created.body.id}`, { token, body: { name: 'Nduja Special' } })
  t.same(groupIds(await get(`/catalog/items?${q({ query: 'diavola' })}`)), [], 'a rename drops the old words')
  t.same(groupIds(await get(`/catalog/items?${q({ query: 'nduja' })}`)), [luigi.id])
  await s.req('PATCH', `/restaurants/${luigi.id}/menu/items/${created.body.id}/sold-out`, { token, body: { is_sold_out: true } })
  t.same(groupIds(await get(`/catalog/items?${q({ query: 'nduja' })}`)), [], 'sold out: not offered')
  await s.req('PATCH', `/restaurants/${luigi.id}/menu/items/${created.body.id}/sold-out`, { token, body: { is_sold_out: false } })
  t.same(groupIds(await get(`/catalog/items?${q({ query: 'nduja' })}`)), [luigi.id], 'back in stock')
  const del = await s.req('DELETE', `/restaurants/${luigi.id}/menu/items/${created.body.id}`, { token })
  t.equal(del.status, 204)
  t.same(groupIds(await get(`/catalog/items?${q({ query: 'nduja' })}`)), [])
  await s.req('PUT', `/restaurants/${luigi.id}/menu/categories/${pizzas}`, { token, body: { name: 'Napoletane' } })
  t.same(ids(await get(`/catalog/stores?${q({ keyword: 'napoletane' })}`)), [luigi.id], 'a category rename reaches the store\'s document')
  t.same(groupIds(await get(`/catalog/items?${q({ query: 'napoletane' })}`)), [luigi.id], 'and its items\' documents')
})

t.test('starter menus: listed publicly, applied to an empty store through the menu writes', async (t) => {
  const list = await get('/catalog/starter-menus')
  t.equal(list.status, 200)
  t.same(list.body.map((m: { key: string }) => m.key), ['pizzeria', 'cafe', 'burger_bar', 'corner_shop'])
  t.match(list.body[0], { key: 'pizzeria', title: 'Pizzeria', item_count: starterItemCount(STARTER_MENUS[0]!), categories: [{ name: 'Pizzas', items: [{ name: 'Margherita', price: 9 }] }] })

  const fresh = store('Fresh Start', 'Ogdenville')
  const token = tokenFor(db, fresh.ownerId, ['*'])
  const path = `/restaurants/${fresh.id}/menu/starter`
  const eventsBefore = outbox(db, 'menu.updated').filter((e) => e.store_id === fresh.id).length
  const applied = await s.req('POST', path, { token, body: { starter: 'burger_bar' } })
  t.equal(applied.status, 200)
  const burger = STARTER_MENUS.find((m) => m.key === 'burger_bar')!
  t.match(applied.body, { starter: 'burger_bar', category_count: burger.categories.length, item_count: starterItemCount(burger) })
  t.same(applied.body.menu.map((c: { name: string }) => c.name), burger.categories.map((c) => c.name))
  const classic = applied.body.menu[0].items.find((i: { name: string }) => i.name === 'Classic Burger')
  t.match(classic, { price: 10, is_halal: true })
  t.same(classic.variations.map((v: { name: string; price: number | null }) => [v.name, v.price]), [['Single', null], ['Double', 14]])
  const events = outbox(db, 'menu.updated').filter((e) => e.store_id === fresh.id).slice(eventsBefore)
  t.equal(events.length, burger.categories.length + starterItemCount(burger), 'one menu.updated per category and item, as the menu routes emit')
  t.same(groupIds(await get(`/catalog/items?${q({ query: 'veggie burger', city: 'Ogdenville' })}`)), [fresh.id], 'the new items are searchable')

  isError(t, await s.req('POST', path, { token, body: { starter: 'cafe' } }), 409, 'conflict', 'a store that already has a menu')
  t.equal((db.prepare('SELECT COUNT(*) FROM menu_categories WHERE store_id = ?').pluck().get(fresh.id) as number), burger.categories.length, 'nothing added')

  const empty = store('Empty Shop', 'Ogdenville', { type: 'retail' })
  const emptyToken = tokenFor(db, empty.ownerId, ['*'])
  isError(t, await s.req('POST', `/restaurants/${empty.id}/menu/starter`, { token: emptyToken, body: { starter: 'sushi' } }), 422, 'validation_failed', 'an unknown starter')
  isError(t, await s.req('POST', `/restaurants/${empty.id}/menu/starter`, { token: tokenFor(db, empty.ownerId, ['menu:read']), body: { starter: 'cafe' } }), 403, 'forbidden', 'a token without menu:write')
  isError(t, await s.req('POST', `/restaurants/${empty.id}/menu/starter`, { token, body: { starter: 'sushi' } }), 404, 'not_found', 'another owner\'s store, even with a bad body')
  isError(t, await s.req('POST', `/restaurants/${empty.id}/menu/starter`, { body: { starter: 'cafe' } }), 401, 'unauthenticated', 'no token')
  t.equal((db.prepare('SELECT COUNT(*) FROM menu_categories WHERE store_id = ?').pluck().get(empty.id) as number), 0, 'nothing written by the refusals')
  const shop = await s.req('POST', `/restaurants/${empty.id}/menu/starter`, { token: emptyToken, body: { starter: 'corner_shop' } })
  t.equal(shop.status, 200)
  t.match(shop.body.menu[0].items[0], { name: 'Whole Milk 1 l', price: 1.3, brand: null }, 'a retail store gets goods fields')
})

t.test('starter menus respect the plan quota and write nothing when it would be exceeded', async (t) => {
  const small = store('Small Plan Diner', 'Ogdenville', { plan: 'free' })
  const token = tokenFor(db, small.ownerId, ['*'])
  const other = createStore(db, small.ownerId, { title: 'Second' })
  const cat = createCategory(db, other.id, 'Stuff')
  for (let i = 0; i < 95; i++) createItem(db, other.id, cat, `Thing ${i}`, 100)
  const r = await s.req('POST', `/restaurants/${small.id}/menu/starter`, { token, body: { starter: 'pizzeria' } })
  t.equal(r.status, 403)
  t.match(r.body, { code: 'forbidden', reason: 'plan_limit_reached' })
  t.equal((db.prepare('SELECT COUNT(*) FROM menu_categories WHERE store_id = ?').pluck().get(small.id) as number), 0, 'nothing written')
})

t.test('no owner name, email or settings contact data in any answer', async (t) => {
  t.ok(answers.length > 40, `${answers.length} answers checked`)
  const all = answers.join('\n')
  for (const o of ownerRows()) {
    t.notOk(all.includes(o.email), `owner email ${o.email} never appears`)
    t.notOk(all.includes(o.name), `owner name "${o.name}" never appears`)
  }
  for (const value of Object.values(CONTACT)) t.notOk(all.includes(value), `settings contact ${value} never appears`)
  t.notOk(/"(owner_id|settings|email|phone|address)"/.test(all), 'no owner or contact fields at all')
})
