/** Store list and detail (api-v1 §2.1, §2.2, §4.2): 20 per page, the envelope, every store type's vertical. */
import t from 'tap'
import { startServer } from './helpers/server.ts'
import { createAccount, createOwner, createStore, isError, tokenFor } from './helpers/fixtures.ts'
import { STORE_TYPES } from '../src/domain/verticals.ts'

const s = await startServer({ RATE_LIMIT_PER_MINUTE: '100000' })
t.teardown(() => s.close())
const db = s.app.svc.db

t.test('20 stores per page with the pagination envelope', async (t) => {
  const owner = createOwner(db)
  const token = tokenFor(db, owner, ['restaurants:read'])
  const ids = Array.from({ length: 23 }, (_, i) => createStore(db, owner, { type: STORE_TYPES[i % STORE_TYPES.length] }).id)
  createAccount(db) // someone else's store must not show up
  const list = (q = '') => s.req('GET', `/restaurants${q}`, { token })

  const p1 = await list()
  t.equal(p1.status, 200)
  t.match(p1.body, { current_page: 1, last_page: 2, per_page: 20, total: 23 })
  t.same(p1.body.data.map((x: { id: number }) => x.id), ids.slice(0, 20))
  const p2 = await list('?page=2')
  t.match(p2.body, { current_page: 2, last_page: 2, per_page: 20, total: 23 })
  t.same(p2.body.data.map((x: { id: number }) => x.id), ids.slice(20))
  t.same((await list('?page=3')).body, { data: [], current_page: 3, last_page: 2, per_page: 20, total: 23 }, 'beyond the last page')
  for (const q of ['?page=0', '?page=abc', '?page=', '?page=2.0']) isError(t, await list(q), 422, 'validation_failed', q)

  const item = p1.body.data[0]
  t.match(item, { id: ids[0], title: String, slug: String, template: 'classic', created_at: String, store_type: 'restaurant' })
  t.equal(item.url, `${s.site}/s/${item.slug}`, 'the public address of the store')
  const page = await s.req('GET', item.url)
  t.equal(page.status, 200, 'which answers')
  t.match(page.headers.get('content-type'), /text\/html/)
})

t.test('an owner without stores gets an empty first page', async (t) => {
  const owner = createOwner(db)
  const r = await s.req('GET', '/restaurants', { token: tokenFor(db, owner, ['read']) })
  t.same(r.body, { data: [], current_page: 1, last_page: 1, per_page: 20, total: 0 })
})

t.test('every store type has its vertical in list and detail', async (t) => {
  const owner = createOwner(db)
  const token = tokenFor(db, owner, ['*'])
  for (const type of STORE_TYPES) createStore(db, owner, { type })
  const list = (await s.req('GET', '/restaurants', { token })).body.data
  t.same(list.map((x: { store_type: string }) => x.store_type), [...STORE_TYPES])
  for (const st of list) {
    t.match(st.vertical, { label: String, group: /^(food|goods|services|stays)$/, capabilities: Object, fulfillment_modes: Array }, st.store_type)
    t.ok(st.vertical.fulfillment_modes.length > 0)
    for (const flag of ['fitment', 'age_gate', 'expiry']) t.type(st.vertical.capabilities[flag], 'boolean', `${st.store_type} reports ${flag}`)
    const d = await s.req('GET', `/restaurants/${st.id}`, { token })
    t.same(d.body.vertical, st.vertical, `${st.store_type}: detail shows the same vertical`)
    t.match(d.body, { item_count: 0, categories: [] })
  }
  const byType = Object.fromEntries(list.map((x: { store_type: string; vertical: unknown }) => [x.store_type, x.vertical]))
  t.equal(byType.restaurant.group, 'food')
  t.equal(byType.hotel.group, 'stays')
  t.equal(byType.laundry.group, 'services')
  t.equal(byType.carparts.capabilities.fitment, true)
})
