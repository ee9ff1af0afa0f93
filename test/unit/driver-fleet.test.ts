/**
 * A store's dispatch fleet (src/storage/drivers.ts `fleetFor`, the dispatch socket's snapshot): the
 * drivers bound to that store and the owner's unbound ones, in id order — never another store's or
 * another owner's — found by index (migration 030), not by reading the owner's whole fleet.
 */
import t from 'tap'
import Database from 'better-sqlite3'
import { migrate, type Db } from '../../src/storage/db.ts'
import { createDriverQueries, FLEET_SQL } from '../../src/storage/drivers.ts'

const db = new Database(':memory:') as unknown as Db
t.teardown(() => db.close())
migrate(db)
for (const o of [1, 2]) db.prepare("INSERT INTO owners (id, email, name, created_at) VALUES (?, ?, 'x', '2026-01-01')").run(o, `o${o}@example.com`)
const store = db.prepare("INSERT INTO stores (id, owner_id, title, slug, template, store_type, currency, city, settings, created_at) VALUES (?, ?, 's', ?, 'classic', 'restaurant', 'USD', 'c', '{}', '2026-01-01')")
store.run(10, 1, 's10')
store.run(11, 1, 's11')
store.run(20, 2, 's20')
const driver = db.prepare("INSERT INTO drivers (owner_id, name, phone, created_at, restaurant_id) VALUES (?, ?, ?, '2026-01-01', ?)")
const ids: Record<string, number> = {}
for (const [name, owner, st] of [['bound10a', 1, 10], ['free1', 1, null], ['bound11', 1, 11], ['bound10b', 1, 10], ['free2', 2, null], ['bound20', 2, 20]] as const) {
  ids[name] = Number(driver.run(owner, name, `+1555000${Object.keys(ids).length}`, st).lastInsertRowid)
}
db.prepare("INSERT INTO driver_positions (driver_id, lat, lng, location_updated_at) VALUES (?, 52.5, 13.4, '2026-01-01T00:00:00.000+00:00')").run(ids.bound10b)

t.test('the store\'s drivers and the owner\'s unbound ones, in id order, with positions', async (t) => {
  const fleet = createDriverQueries(db).fleetFor(1, 10)
  t.same(fleet.map((d) => d.name), ['bound10a', 'free1', 'bound10b'])
  t.match(fleet.find((d) => d.name === 'bound10b'), { lat: 52.5, lng: 13.4 })
  t.same(createDriverQueries(db).fleetFor(2, 20).map((d) => d.name), ['free2', 'bound20'], 'another owner sees only its own')
})

t.test('found by index, not by reading the owner\'s whole fleet', async (t) => {
  const plan = (db.prepare(`EXPLAIN QUERY PLAN ${FLEET_SQL}`).all(1, 10, 1) as Array<{ detail: string }>).map((r) => r.detail)
  t.same(plan.filter((d) => /^SEARCH d USING (COVERING )?INDEX drivers_owner_store \(owner_id=\? AND restaurant_id=\?\)/.test(d)).length, 2, plan.join(' | '))
  t.same(plan.filter((d) => d.startsWith('SCAN')), [], 'no table scanned')
})
