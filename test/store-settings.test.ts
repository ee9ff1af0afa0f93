/**
 * Store settings (docs/stores.md; issue 12 item 3): `GET/PUT /restaurants/{id}/settings` and
 * `PUT /restaurants/{id}/business-hours`. A partial update keeps the keys it does not name (also
 * ones this API does not manage, like `driver_fee`); bad input is 422 with nothing written; another
 * owner's store is 404; hours are stored in the canonical week whatever format came in (the legacy
 * `{mon_sun: …}` too); staff read their store's settings; the write reaches the store actor, so the
 * next order is checked against the new hours at once.
 */
import t from 'tap'
import { startServer } from './helpers/server.ts'
import { createAccount, createStaff, createStore, isError, tokenFor } from './helpers/fixtures.ts'

const s = await startServer({ RATE_LIMIT_PER_MINUTE: '100000' })
t.teardown(() => s.close())
const db = s.app.svc.db
const a = createAccount(db)
const b = createAccount(db)

const get = (storeId = a.storeId, token = a.token) => s.req('GET', `/restaurants/${storeId}/settings`, { token })
const put = (body: unknown, storeId = a.storeId, token = a.token) => s.req('PUT', `/restaurants/${storeId}/settings`, { token, body })
const putHours = (body: unknown, storeId = a.storeId, token = a.token) => s.req('PUT', `/restaurants/${storeId}/business-hours`, { token, body })
const stored = (storeId = a.storeId) => db.prepare('SELECT settings, city FROM stores WHERE id = ?').get(storeId) as { settings: string; city: string | null }
const allDay = [['00:00', '24:00']]

t.test('a store with nothing set reads the defaults: always open', async (t) => {
  const r = await get()
  t.equal(r.status, 200)
  t.match(r.body, {
    restaurant_id: a.storeId, timezone: 'UTC', business_hours: null, holidays: [], prep_minutes: 15, accepting_orders: true, public_listing: true,
    address: null, phone: null, email: null, open_now: true, closed_reason: null, next_opening: null,
  })
})

t.test('PUT changes only the keys it names and keeps the others', async (t) => {
  db.prepare('UPDATE stores SET settings = ? WHERE id = ?').run(JSON.stringify({ driver_fee: 4.5, prep_minutes: 20 }), a.storeId)
  const r = await put({ timezone: 'Europe/Berlin', address: ' 1 Main St ', phone: '+49 (30) 1234-567', email: 'Shop@Example.com', city: 'Berlin', public_listing: false })
  t.equal(r.status, 200)
  t.match(r.body, { timezone: 'Europe/Berlin', address: '1 Main St', phone: '+49301234567', email: 'shop@example.com', city: 'Berlin', public_listing: false, prep_minutes: 20, accepting_orders: true })
  const row = stored()
  t.equal(row.city, 'Berlin', 'city is the stores.city column')
  t.same(JSON.parse(row.settings), { driver_fee: 4.5, prep_minutes: 20, timezone: 'Europe/Berlin', address: '1 Main St', phone: '+49301234567', email: 'shop@example.com', public_listing: false },
    'driver_fee (not managed here) and prep_minutes stay')
  const again = await put({ prep_minutes: 30, address: null })
  t.match(again.body, { prep_minutes: 30, address: null, timezone: 'Europe/Berlin', city: 'Berlin' }, 'null clears one key; the rest stay')
  t.notOk('address' in JSON.parse(stored().settings))
  t.match((await get()).body, { prep_minutes: 30, public_listing: false }, 'GET reads what PUT wrote')
})

t.test('business hours are stored as the canonical week', async (t) => {
  const r = await putHours({ business_hours: { mon: [['11:00', '14:00'], ['17:00', '22:00']], fri: [['18:00', '02:00']] }, timezone: 'America/New_York', holidays: [{ date: '2026-12-25', note: 'Christmas' }, { from: '2026-12-31', to: '2027-01-01' }] })
  t.equal(r.status, 200)
  t.same(r.body.business_hours, { mon: [['11:00', '14:00'], ['17:00', '22:00']], tue: [], wed: [], thu: [], fri: [['18:00', '02:00']], sat: [], sun: [] }, 'every day listed; a missing one is closed')
  t.same(r.body.holidays, [{ date: '2026-12-25', note: 'Christmas' }, { from: '2026-12-31', to: '2027-01-01' }])
  t.equal(r.body.timezone, 'America/New_York')
  t.same(JSON.parse(stored().settings).business_hours, r.body.business_hours)
  t.type(r.body.open_now, 'boolean')

  const legacy = await putHours({ business_hours: { mon_sun: '11:00-22:00' } })
  t.equal(legacy.status, 200, 'the legacy format is accepted')
  t.same(JSON.parse(stored().settings).business_hours.sun, [['11:00', '22:00']], '… and stored canonical')
  t.same(legacy.body.holidays.length, 2, 'holidays not named stay')

  db.prepare('UPDATE stores SET settings = ? WHERE id = ?').run(JSON.stringify({ business_hours: { mon_sun: '09:00-17:00' } }), b.storeId)
  t.same((await get(b.storeId, b.token)).body.business_hours.wed, [['09:00', '17:00']], 'a store still holding the legacy format reads canonical')

  const open = await putHours({ business_hours: null })
  t.match(open.body, { business_hours: null, open_now: true }, 'null: no hours, always open')
})

t.test('the open state reflects hours, holidays and the switch', async (t) => {
  const closed = await putHours({ business_hours: { mon: [], tue: [], wed: [], thu: [], fri: [], sat: [], sun: [] }, holidays: [] })
  t.match(closed.body, { open_now: false, closed_reason: 'hours', next_opening: null }, 'no interval at all: closed with no known opening')
  const all = await putHours({ business_hours: Object.fromEntries(['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'].map((d) => [d, allDay])) })
  t.match(all.body, { open_now: true })
  t.match((await put({ accepting_orders: false })).body, { open_now: false, closed_reason: 'not_accepting', accepting_orders: false })
  t.match((await put({ accepting_orders: true })).body, { open_now: true })
})

t.test('bad input is 422 keyed by field and writes nothing', async (t) => {
  const before = stored()
  const cases: Array<[unknown, string]> = [
    [{ timezone: 'Mars/Olympus' }, 'timezone'],
    [{ prep_minutes: 0 }, 'prep_minutes'],
    [{ prep_minutes: 2.5 }, 'prep_minutes'],
    [{ accepting_orders: 'yes' }, 'accepting_orders'],
    [{ email: 'not-an-email' }, 'email'],
    [{ phone: 'call me' }, 'phone'],
    [{ business_hours: { mon: [['25:00', '26:00']] } }, 'business_hours.mon.0.0'],
    [{ business_hours: { mon: [['10:00', '10:00']] } }, 'business_hours.mon.0'],
    [{ business_hours: { funday: [['10:00', '12:00']] } }, 'business_hours'],
    [{ business_hours: { mon: [['10:00', '11:00'], ['12:00', '13:00'], ['14:00', '15:00'], ['16:00', '17:00'], ['18:00', '19:00'], ['20:00', '21:00'], ['22:00', '23:00']] } }, 'business_hours.mon'],
    [{ holidays: [{ date: '2026-02-30' }] }, 'holidays.0.date'],
    [{ holidays: [{ from: '2026-12-31', to: '2026-12-01' }] }, 'holidays.0'],
    [{ holidays: [{ date: '2026-12-25', from: '2026-12-24', to: '2026-12-26' }] }, 'holidays.0'],
    [{ timezone: 'Europe/Berlin', prep_minutes: -1 }, 'prep_minutes'],
  ]
  for (const [body, field] of cases) {
    const r = await put(body)
    isError(t, r, 422, 'validation_failed', JSON.stringify(body))
    t.ok(r.body.errors?.[field], `${JSON.stringify(body)} names ${field}: ${JSON.stringify(r.body.errors)}`)
  }
  isError(t, await putHours({ timezone: 'Europe/Berlin' }), 422, 'validation_failed', 'business-hours without business_hours')
  t.same(stored(), before, 'nothing was written')
})

t.test('another owner\'s store is 404; capabilities apply; staff read their own store', async (t) => {
  const before = stored()
  isError(t, await get(a.storeId, b.token), 404, 'not_found', 'GET')
  isError(t, await put({ prep_minutes: 99 }, a.storeId, b.token), 404, 'not_found', 'PUT settings')
  isError(t, await putHours({ business_hours: null }, a.storeId, b.token), 404, 'not_found', 'PUT hours')
  isError(t, await put({ prep_minutes: 'x' }, a.storeId, b.token), 404, 'not_found', 'a bad body on another owner\'s store: still 404')
  t.same(stored(), before)
  const reader = tokenFor(db, a.ownerId, ['restaurants:read'])
  t.equal((await get(a.storeId, reader)).status, 200, 'restaurants:read reads')
  isError(t, await put({ prep_minutes: 10 }, a.storeId, reader), 403, 'forbidden', 'restaurants:read cannot write')
  const cook = createStaff(db, a.storeId, { role: 'kitchen' })
  const staffRead = await s.req('GET', '/staff/settings', { token: cook.token })
  t.equal(staffRead.status, 200)
  t.equal(staffRead.body.restaurant_id, a.storeId, 'the staff member\'s own store')
  const other = createStore(db, b.ownerId)
  t.not(staffRead.body.restaurant_id, other.id)
})
