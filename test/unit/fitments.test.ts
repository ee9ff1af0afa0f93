/**
 * Fitment matching and the age gate, pure (src/domain/fitments.ts, src/domain/age-gate.ts), and the
 * repository's SQL vehicle match against the pure definition on random vehicles and queries
 * (src/storage/fitments.ts `fitmentPage`, which the menu filter shares its WHERE with).
 */
import t from 'tap'
import fc from 'fast-check'
import Database from 'better-sqlite3'
import { fits, isVehicleQuery, vehicleLabel, yearRangeErrors, type Vehicle, type VehicleQuery } from '../../src/domain/fitments.ts'
import { ageGate, ageRefusalMessage } from '../../src/domain/age-gate.ts'
import { migrate } from '../../src/storage/db.ts'
import { fitmentPage, insertFitment } from '../../src/storage/fitments.ts'

const golf: Vehicle = { make: 'Volkswagen', model: 'Golf', year_from: 2013, year_to: 2020, engine: null }
const tdi: Vehicle = { ...golf, year_from: 2009, year_to: 2012, engine: '2.0 TDI' }

t.test('fits: year range edges, case, engine', async (t) => {
  t.ok(fits(golf, { make: 'volkswagen', model: 'GOLF', year: 2013 }), 'first year, any case')
  t.ok(fits(golf, { year: 2020 }), 'last year')
  t.notOk(fits(golf, { year: 2012 }), 'the year before')
  t.notOk(fits(golf, { year: 2021 }), 'the year after')
  t.ok(fits(golf, { make: ' Volkswagen ', engine: 'anything' }), 'no engine on the fitment: every engine; blanks ignored')
  t.ok(fits(tdi, { engine: '2.0 tdi' }))
  t.notOk(fits(tdi, { engine: '1.6 TDI' }))
  t.ok(fits(tdi, { model: 'Golf' }), 'no engine in the query: any fitment')
  t.notOk(fits(golf, { model: 'Polo' }))
  t.ok(isVehicleQuery({ year: 2015 }))
  t.notOk(isVehicleQuery({}))
  t.same(yearRangeErrors(2020, 2019), { year_to: ['year_to (2019) is before year_from (2020).'] })
  t.equal(yearRangeErrors(2019, 2019), null)
  t.equal(vehicleLabel(tdi), 'Volkswagen Golf 2009–2012 2.0 TDI')
})

t.test('the SQL vehicle match is the pure one', async (t) => {
  const db = new Database(':memory:')
  db.pragma('foreign_keys = ON')
  migrate(db)
  const now = '2026-01-01T00:00:00.000+00:00'
  const owner = Number(db.prepare("INSERT INTO owners (name, email, created_at) VALUES ('o', 'o@x', ?)").run(now).lastInsertRowid)
  const store = Number(db.prepare("INSERT INTO stores (owner_id, title, slug, store_type, currency, settings, created_at) VALUES (?, 's', 's', 'carparts', 'USD', '{}', ?)").run(owner, now).lastInsertRowid)
  const makes = ['VW', 'vw', 'Toyota', 'BMW']
  const models = ['Golf', 'GOLF', 'Polo', 'Corolla']
  const engines = [null, '2.0 TDI', '2.0 tdi', '1.4 TSI']
  const vehicle = fc.record({
    make: fc.constantFrom(...makes), model: fc.constantFrom(...models), year_from: fc.integer({ min: 2000, max: 2010 }),
    span: fc.integer({ min: 0, max: 8 }), engine: fc.constantFrom(...engines),
  }).map(({ span, ...v }) => ({ ...v, year_to: v.year_from + span }))
  const query = fc.record({
    make: fc.option(fc.constantFrom(...makes), { nil: undefined }), model: fc.option(fc.constantFrom(...models), { nil: undefined }),
    year: fc.option(fc.integer({ min: 1999, max: 2019 }), { nil: undefined }), engine: fc.option(fc.constantFrom('2.0 TDI', '1.4 tsi', '3.0'), { nil: undefined }),
  })
  fc.assert(fc.property(fc.array(vehicle, { maxLength: 20 }), fc.array(query, { minLength: 1, maxLength: 10 }), (vehicles, queries) => {
    db.prepare('DELETE FROM fitments').run()
    const rows = vehicles.map((v) => ({ ...v, id: insertFitment(db, store, v, now) }))
    for (const q of queries as VehicleQuery[]) {
      const sql = fitmentPage(db, store, q, 1, 1000).data.map((f) => f.id).sort((a, b) => a - b)
      const pure = rows.filter((v) => fits(v, q)).map((v) => v.id).sort((a, b) => a - b)
      if (JSON.stringify(sql) !== JSON.stringify(pure)) return false
    }
    return true
  }), { numRuns: 150 })
  t.pass('SQL and domain agree')
  db.close()
})

t.test('ageGate', async (t) => {
  t.equal(ageGate([{ item_id: 1, name: 'Water', min_age: null }], undefined), null, 'nothing restricted')
  const lines = [{ item_id: 1, name: 'Wine', min_age: 18 }, { item_id: 2, name: 'Whisky', min_age: 21 }, { item_id: 1, name: 'Wine', min_age: 18 }]
  const r = ageGate(lines, null)
  t.same(r, { min_age: 21, items: [{ item_id: 1, name: 'Wine', min_age: 18 }, { item_id: 2, name: 'Whisky', min_age: 21 }] }, 'the highest age, each item once')
  t.same(ageGate(lines, false), r, 'false is no confirmation')
  t.equal(ageGate(lines, true), null, 'confirmed')
  t.match(ageRefusalMessage(r!), /Wine, Whisky are for buyers aged 21 or over/)
})
