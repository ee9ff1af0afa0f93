/**
 * Brands (issue 18 item 2, api-v1 §4.2 `/brands`, docs/verticals.md "Brands"): CRUD, item counts,
 * the brand's items, items naming a brand by id or by name, rename and delete kept in step with the
 * items' `brand`, goods stores only, another owner's brands 404.
 */
import t from 'tap'
import { startServer } from './helpers/server.ts'
import { createAccount, isError } from './helpers/fixtures.ts'
import type { MenuSnapshot } from '../src/actors/store.ts'

const s = await startServer({ RATE_LIMIT_PER_MINUTE: '100000' })
t.teardown(() => s.close())
const db = s.app.svc.db
const shop = createAccount(db, { type: 'clothing' })
const other = createAccount(db, { type: 'clothing' })
const base = `/restaurants/${shop.storeId}/brands`
const api = (method: string, path: string, body?: unknown, token = shop.token) => s.req(method, path, { token, body })
const menuItem = async (id: number) => (await api('GET', `/restaurants/${shop.storeId}/menu`)).body.flatMap((c: any) => c.items).find((i: any) => i.id === id)

t.test('create, list with counts, read with items, rename, delete', async (t) => {
  const acme = await api('POST', base, { name: 'Acme Wear', description: 'Since 1920', logo_url: 'https://cdn.example/acme.png' })
  t.equal(acme.status, 200)
  t.match(acme.body, { name: 'Acme Wear', slug: 'acme-wear', item_count: 0, items: [] })
  const dup = await api('POST', base, { name: 'Acme Wear' })
  t.equal(dup.body.slug, 'acme-wear-2', 'a free slug is made')
  isError(t, await api('POST', base, { name: 'X', slug: 'acme-wear' }), 422, 'validation_failed')
  isError(t, await api('POST', base, { name: '' }), 422, 'validation_failed')

  const shirt = await api('POST', `/restaurants/${shop.storeId}/menu/items`, { name: 'Shirt', price: 20, brand_id: acme.body.id, stock: 4 })
  t.match(shirt.body, { brand: 'Acme Wear', brand_id: acme.body.id })
  isError(t, await api('POST', `/restaurants/${shop.storeId}/menu/items`, { name: 'Sock', price: 2, brand_id: (await api('POST', `/restaurants/${other.storeId}/brands`, { name: 'Theirs' }, other.token)).body.id }), 422, 'validation_failed', 'another store\'s brand id')
  const byName = await api('POST', `/restaurants/${shop.storeId}/menu/items`, { name: 'Cap', price: 9, brand: 'acme wear' })
  t.equal(byName.body.brand_id, acme.body.id, 'a brand named by name matches case-insensitively')

  const list = await api('GET', base)
  t.match(list.body, { current_page: 1, per_page: 20, total: 2 })
  t.same(list.body.data.map((b: any) => [b.slug, b.item_count]), [['acme-wear', 2], ['acme-wear-2', 0]])
  const detail = await api('GET', `${base}/${acme.body.id}`)
  t.same(detail.body.items.map((i: any) => i.name), ['Shirt', 'Cap'])

  const renamed = await api('PUT', `${base}/${acme.body.id}`, { name: 'Acme Apparel' })
  t.match(renamed.body, { name: 'Acme Apparel', slug: 'acme-wear' })
  t.equal((await menuItem(shirt.body.id)).brand, 'Acme Apparel', 'items show the new name')

  t.equal((await api('DELETE', `${base}/${acme.body.id}`)).status, 204)
  isError(t, await api('GET', `${base}/${acme.body.id}`), 404, 'not_found')
  t.match(await menuItem(shirt.body.id), { brand: null, brand_id: null }, 'items stay, without a brand')
})

t.test('goods stores only; other owners 404', async (t) => {
  const food = createAccount(db)
  isError(t, await api('POST', `/restaurants/${food.storeId}/brands`, { name: 'Nope' }, food.token), 422, 'not_for_store_type')
  t.same((await api('GET', `/restaurants/${food.storeId}/brands`, undefined, food.token)).body.data, [])
  const mine = (await api('POST', base, { name: 'Mine' })).body
  for (const [method, path, body] of [['GET', `${base}/${mine.id}`], ['PUT', `${base}/${mine.id}`, { name: 1 }], ['DELETE', `${base}/${mine.id}`], ['GET', base], ['POST', base, { bad: 1 }]] as const) {
    isError(t, await api(method, path, body, other.token), 404, 'not_found', `${method} ${path} by another owner`)
  }
  isError(t, await api('GET', `/restaurants/${other.storeId}/brands/${mine.id}`, undefined, other.token), 404, 'not_found', 'a brand id of another store under one\'s own')
  t.equal((await api('GET', `${base}/${mine.id}`)).body.name, 'Mine', 'still there')
})

t.test("a brand rename or delete reaches the store actor's held menu: a later item edit keeps it", async (t) => {
  const brand = await api('POST', base, { name: 'Northwind' })
  const item = await api('POST', `/restaurants/${shop.storeId}/menu/items`, { name: 'Scarf', price: 15, brand_id: brand.body.id })
  t.equal(item.status, 200, item.text)
  // An order makes the store actor hold the menu before the brand changes beside it.
  t.equal((await api('POST', `/restaurants/${shop.storeId}/orders`, { type: 'in_store', items: [{ item_id: item.body.id, quantity: 1 }] })).status, 200)
  t.equal((await api('PUT', `${base}/${brand.body.id}`, { name: 'Northwind Traders' })).status, 200)
  // The actor's own copy (what it prices and checks orders with), read through its protocol.
  const held = async () => (await s.app.svc.actors.stores.ask<MenuSnapshot>(shop.storeId, (replyTo) => ({ type: 'get_menu', replyTo }))).menu.items.find((i) => i.id === item.body.id)
  t.equal((await held())?.brand, 'Northwind Traders', 'the held menu has the new name')
  const edited = await api('PUT', `/restaurants/${shop.storeId}/menu/items/${item.body.id}`, { price: 16 })
  t.match(edited.body, { price: 16, brand: 'Northwind Traders' }, 'the edit answers with the new name')
  t.match(await menuItem(item.body.id), { price: 16, brand: 'Northwind Traders' }, 'the edit did not write the old name back')
  t.equal((await api('DELETE', `${base}/${brand.body.id}`)).status, 204)
  t.equal((await held())?.brand, null, 'the held menu dropped the deleted brand')
  const again = await api('PUT', `/restaurants/${shop.storeId}/menu/items/${item.body.id}`, { price: 17 })
  t.match(again.body, { price: 17, brand: null, brand_id: null })
  t.match(await menuItem(item.body.id), { price: 17, brand: null }, 'nor the deleted brand')
})
