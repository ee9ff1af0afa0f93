/**
 * Fitments (issue 18 item 3; docs/verticals.md "Fitments"): CRUD of vehicles, item links, the
 * vehicle filter on the owner, storefront and public menus (year-range edges, case-insensitive make
 * and model, engine, universal parts), cross-owner 404s and the refusal (422 `not_for_store_type`)
 * for other store types.
 */
import t from 'tap'
import { startServer } from './helpers/server.ts'
import { createAccount, createCategory, createItem, createStore, createStorefrontToken, isError } from './helpers/fixtures.ts'

const s = await startServer({ RATE_LIMIT_PER_MINUTE: '100000' })
t.teardown(() => s.close())
const db = s.app.svc.db

const shop = createAccount(db, { type: 'carparts' })
const cat = createCategory(db, shop.storeId, 'Brakes')
const pads = createItem(db, shop.storeId, cat, 'Brake pads', 4500)
const disc = createItem(db, shop.storeId, cat, 'Brake disc', 8000)
const oil = createItem(db, shop.storeId, cat, 'Engine oil 5W-30', 3000)
const wiper = createItem(db, shop.storeId, cat, 'Wiper blade', 1500)
const other = createAccount(db, { type: 'carparts' })
const otherFitStore = createStore(db, other.ownerId, { type: 'carparts' })
const restaurant = createAccount(db)

const base = `/restaurants/${shop.storeId}`
const call = (method: string, path: string, body?: unknown, token = shop.token) => s.req(method, path, { token, body })
const names = (menu: { items: { name: string }[] }[]) => menu.flatMap((c) => c.items.map((i) => i.name)).sort()

let golf: number, golfTdi: number, polo: number

t.test('create, read, update, list and delete fitments', async (t) => {
  const a = await call('POST', `${base}/fitments`, { make: 'Volkswagen', model: 'Golf', year_from: 2013, year_to: 2020 })
  t.equal(a.status, 200)
  t.match(a.body, { id: Number, make: 'Volkswagen', model: 'Golf', year_from: 2013, year_to: 2020, engine: null, items: [] })
  golf = a.body.id
  golfTdi = (await call('POST', `${base}/fitments`, { make: 'Volkswagen', model: 'Golf', year_from: 2009, year_to: 2012, engine: '2.0 TDI' })).body.id
  polo = (await call('POST', `${base}/fitments`, { make: 'Volkswagen', model: 'Polo', year_from: 2017, year_to: 2024 })).body.id

  isError(t, await call('POST', `${base}/fitments`, { make: 'VW', model: 'Up', year_from: 2020, year_to: 2019 }), 422, 'validation_failed', 'year_to before year_from')
  isError(t, await call('POST', `${base}/fitments`, { make: '', model: 'Up', year_from: 2020, year_to: 2021 }), 422, 'validation_failed', 'empty make')
  isError(t, await call('PATCH', `${base}/fitments/${polo}`, { year_to: 2000 }), 422, 'validation_failed', 'an update making the range backwards')

  const u = await call('PATCH', `${base}/fitments/${polo}`, { engine: '1.0 TSI' })
  t.match(u.body, { id: polo, model: 'Polo', year_from: 2017, engine: '1.0 TSI' }, 'fields not given keep their value')
  t.equal((await call('PATCH', `${base}/fitments/${polo}`, { engine: null })).body.engine, null, 'engine cleared')

  const list = await call('GET', `${base}/fitments`)
  t.match(list.body, { current_page: 1, per_page: 50, total: 3, last_page: 1 })
  t.same(list.body.data.map((f: { id: number }) => f.id), [golfTdi, golf, polo], 'by make, model, first year')
  t.same((await call('GET', `${base}/fitments?make=volkswagen&model=GOLF`)).body.data.map((f: { id: number }) => f.id), [golfTdi, golf], 'make/model case-insensitive')
  t.same((await call('GET', `${base}/fitments?model=golf&year=2012`)).body.data.map((f: { id: number }) => f.id), [golfTdi])
  isError(t, await call('GET', `${base}/fitments?year=20x4`), 422, 'validation_failed', 'a malformed year')

  const tmp = (await call('POST', `${base}/fitments`, { make: 'Fiat', model: 'Panda', year_from: 2003, year_to: 2011 })).body.id
  t.equal((await call('DELETE', `${base}/fitments/${tmp}`)).status, 204)
  isError(t, await call('GET', `${base}/fitments/${tmp}`), 404, 'not_found', 'a deleted fitment')
  isError(t, await call('DELETE', `${base}/fitments/${tmp}`), 404, 'not_found', 'deleting it again')
})

t.test('link items to fitments', async (t) => {
  const r = await call('PUT', `${base}/menu/items/${pads}/fitments`, { fitment_ids: [golf, golfTdi, golf] })
  t.equal(r.status, 200)
  t.match(r.body, { item_id: pads, universal: false })
  t.same(r.body.fitments.map((f: { id: number }) => f.id).sort(), [golf, golfTdi].sort(), 'duplicates are one link')
  await call('PUT', `${base}/menu/items/${disc}/fitments`, { fitment_ids: [polo] })
  await call('PUT', `${base}/menu/items/${oil}/fitments`, { fitment_ids: [], universal: true })
  const g = await call('GET', `${base}/fitments/${golf}`)
  t.same(g.body.items, [{ id: pads, name: 'Brake pads' }], 'the fitment lists its items')
  t.match((await call('GET', `${base}/menu/items/${oil}/fitments`)).body, { universal: true, fitments: [] })

  const foreign = (await call('POST', `/restaurants/${otherFitStore.id}/fitments`, { make: 'BMW', model: '3', year_from: 2012, year_to: 2019 }, other.token)).body.id
  const bad = await call('PUT', `${base}/menu/items/${pads}/fitments`, { fitment_ids: [golf, foreign] })
  isError(t, bad, 422, 'validation_failed', 'another store\'s fitment')
  t.ok(bad.body.errors['fitment_ids.1'])
  const ghost = await call('PUT', `${base}/menu/items/${pads}/fitments`, { fitment_ids: [golf, 99_999_999] })
  t.same([ghost.status, Object.keys(ghost.body.errors)], [bad.status, Object.keys(bad.body.errors)], 'another store\'s fitment reads like one that never existed')
  t.equal((await call('GET', `${base}/menu/items/${pads}/fitments`)).body.fitments.length, 2, 'nothing changed')
  isError(t, await call('PUT', `${base}/menu/items/999999/fitments`, { fitment_ids: [golf] }), 404, 'not_found', 'an unknown item')
})

t.test('the vehicle filter on the owner, storefront and public menus', async (t) => {
  const owner = async (q: string) => names((await call('GET', `${base}/menu?${q}`)).body)
  t.same(await owner(''), ['Brake disc', 'Brake pads', 'Burger', 'Engine oil 5W-30', 'Fries', 'Soup', 'Wiper blade'], 'no filter: the whole menu')
  t.same(await owner('make=VOLKSWAGEN&model=golf&year=2013'), ['Brake pads', 'Engine oil 5W-30'], 'first year of the range, case-insensitive, plus universal parts')
  t.same(await owner('make=Volkswagen&model=Golf&year=2020'), ['Brake pads', 'Engine oil 5W-30'], 'last year of the range')
  t.same(await owner('make=Volkswagen&model=Golf&year=2021'), ['Engine oil 5W-30'], 'a year after the range: only universal parts')
  t.same(await owner('make=Volkswagen&model=Golf&year=2008'), ['Engine oil 5W-30'], 'a year before every range')
  t.same(await owner('make=Volkswagen&model=Golf&year=2010&engine=2.0%20tdi'), ['Brake pads', 'Engine oil 5W-30'], 'the engine matches case-insensitively')
  t.same(await owner('make=Volkswagen&model=Golf&year=2010&engine=1.4%20TSI'), ['Engine oil 5W-30'], 'another engine does not fit an engine-specific fitment')
  t.same(await owner('make=Volkswagen&model=Golf&year=2015&engine=1.4%20TSI'), ['Brake pads', 'Engine oil 5W-30'], 'a fitment without engine fits every engine')
  t.same(await owner('make=Volkswagen&model=Polo&year=2018'), ['Brake disc', 'Engine oil 5W-30'])
  t.same(await owner('make=Toyota'), ['Engine oil 5W-30'], 'an unknown make: only universal parts')
  t.notOk((await owner('make=Volkswagen')).includes('Wiper blade'), 'an item without fitment data is not kept by a vehicle filter')

  const sf = createStorefrontToken(db, shop.storeId)
  const storefront = await s.req('GET', '/storefront/menu?make=volkswagen&model=polo&year=2024', { headers: { 'x-storefront-token': sf } })
  t.equal(storefront.status, 200)
  t.same(names(storefront.body), ['Brake disc', 'Engine oil 5W-30'], 'storefront menu')
  const pub = await s.req('GET', `/menu/${shop.storeId}?make=Volkswagen&model=Polo&year=2016`)
  t.equal(pub.status, 200)
  t.same(names(pub.body), ['Engine oil 5W-30'], 'public menu')
  isError(t, await call('GET', `${base}/menu?year=abcd`), 422, 'validation_failed', 'a malformed year on the menu')
})

t.test('another owner\'s store or fitment is 404, even with a bad body', async (t) => {
  isError(t, await call('GET', `/restaurants/${otherFitStore.id}/fitments`), 404, 'not_found', 'list')
  isError(t, await call('POST', `/restaurants/${otherFitStore.id}/fitments`, { make: '' }), 404, 'not_found', 'create with a bad body')
  isError(t, await call('GET', `/restaurants/${other.storeId}/fitments/${golf}`), 404, 'not_found', 'own fitment through another owner\'s store')
  isError(t, await call('GET', `${base}/fitments/${golf}`, undefined, other.token), 404, 'not_found', 'the other owner reading this store')
  isError(t, await call('PUT', `/restaurants/${otherFitStore.id}/menu/items/${pads}/fitments`, { fitment_ids: 'x' }), 404, 'not_found', 'link with a bad body')
})

t.test('stores without the fitment capability have no fitments', async (t) => {
  const r = `/restaurants/${restaurant.storeId}`
  const refused = (res: Awaited<ReturnType<typeof call>>, what: string) => isError(t, res, 422, 'not_for_store_type', what)
  refused(await call('GET', `${r}/fitments`, undefined, restaurant.token), 'list')
  refused(await call('POST', `${r}/fitments`, { make: 'VW', model: 'Golf', year_from: 2013, year_to: 2020 }, restaurant.token), 'create')
  refused(await call('GET', `${r}/fitments/${golf}`, undefined, restaurant.token), 'read')
  refused(await call('PUT', `${r}/menu/items/${restaurant.menu.fries}/fitments`, { fitment_ids: [] }, restaurant.token), 'link')
  refused(await call('GET', `${r}/menu?make=VW`, undefined, restaurant.token), 'a vehicle filter on a restaurant menu')
  t.equal((await call('GET', `${r}/menu`, undefined, restaurant.token)).status, 200, 'the plain menu still works')
})

t.test('deleting an item or a fitment removes its links', async (t) => {
  t.equal((await call('DELETE', `${base}/menu/items/${pads}`)).status, 204)
  t.same((await call('GET', `${base}/fitments/${golf}`)).body.items, [], 'the deleted item is gone from the fitment')
  t.equal((await call('DELETE', `${base}/fitments/${polo}`)).status, 204)
  t.same((await call('GET', `${base}/menu/items/${disc}/fitments`)).body.fitments, [], 'the deleted fitment is gone from the item')
})
