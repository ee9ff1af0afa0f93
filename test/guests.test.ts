/**
 * Guests and segments (issue 17 item 5; docs/operations.md "Guests and segments"): one guest per
 * person across orders, reservations and customer accounts, matched by account, else normalised
 * phone, else email (the merge rule); visits, spend net of refunds, first/last visit, no-shows; each
 * segment's membership on crafted data; search, sort, pagination; tenancy (404), capability,
 * staff permission and plan (403).
 *
 * Orders and reservations with past timestamps (a guest who came 120 days ago) cannot be made
 * through the routes, so the crafted histories are rows written here; one no-show goes through the
 * reservation routes end to end.
 */
import t from 'tap'
import { startServer } from './helpers/server.ts'
import { createAccount, createCustomer, createStaff, createStore, isError, tokenFor } from './helpers/fixtures.ts'
import { nowIso } from '../src/storage/db.ts'

const s = await startServer({ RATE_LIMIT_PER_MINUTE: '100000' })
t.teardown(() => s.close())
const db = s.app.svc.db
const a = createAccount(db)
const b = createAccount(db)
const DAY = 86_400_000
const ago = (days: number) => nowIso(Date.now() - days * DAY)

let tokenSeq = 0
/** An order row (total in cents) `daysAgo` days old. */
function order(storeId: number, o: { customerId?: number; name?: string | null; phone?: string | null; status?: string; total?: number; paid?: boolean; daysAgo: number }): number {
  const at = ago(o.daysAgo)
  return Number(db.prepare(`INSERT INTO orders (store_id, type, status, is_paid, customer_id, customer_name, phone, subtotal, total, track_token, timeline, created_at, updated_at)
    VALUES (?, 'takeaway', ?, ?, ?, ?, ?, ?, ?, ?, '{}', ?, ?)`)
    .run(storeId, o.status ?? 'completed', o.paid ? 1 : 0, o.customerId ?? null, o.name ?? null, o.phone ?? null, o.total ?? 1000, o.total ?? 1000, `guest-test-${tokenSeq++}-${Math.random()}`, at, at).lastInsertRowid)
}
function payment(storeId: number, orderId: number, amount: number, status = 'succeeded') {
  db.prepare("INSERT INTO payments (order_id, store_id, method, amount, status, created_at) VALUES (?, ?, 'card', ?, ?, ?)").run(orderId, storeId, amount, status, nowIso())
}
function refund(storeId: number, orderId: number, amount: number, status = 'completed') {
  db.prepare("INSERT INTO refunds (order_id, store_id, method, amount, status, created_at) VALUES (?, ?, 'card', ?, ?, ?)").run(orderId, storeId, amount, status, nowIso())
}
/** A reservation row starting `daysAgo` days ago (negative: in the future). */
function reservation(storeId: number, r: { customerId?: number; name?: string; phone?: string | null; email?: string | null; status: string; daysAgo: number; orderId?: number }): number {
  const starts = Date.now() - r.daysAgo * DAY
  return Number(db.prepare(`INSERT INTO reservations (store_id, customer_id, name, phone, email, party_size, starts_at, ends_at, status, order_id, created_at, updated_at)
    VALUES (?, ?, ?, ?, ?, 2, ?, ?, ?, ?, ?, ?)`)
    .run(storeId, r.customerId ?? null, r.name ?? 'Booker', r.phone ?? null, r.email ?? null, nowIso(starts), nowIso(starts + 7_200_000), r.status, r.orderId ?? null, nowIso(starts - DAY), nowIso()).lastInsertRowid)
}

interface Guest { id: string; customer_id: number | null; name: string | null; phone: string | null; email: string | null; visits: number; spend: number; first_visit: string | null; last_visit: string | null; no_shows: number; segments: string[] }
const list = async (storeId: number, query = '', token = a.token) => s.req('GET', `/restaurants/${storeId}/guests${query}`, { token })
async function all(storeId: number, query = ''): Promise<Guest[]> {
  const r = await list(storeId, query)
  if (r.status !== 200) throw new Error(`list ${r.status} ${r.text}`)
  return r.body.data as Guest[]
}
const byName = (gs: Guest[], name: string) => gs.find((g) => g.name === name)

t.test('the merge rule: account, then phone (any spelling), then email; one guest per person', async (t) => {
  const store = createStore(db, a.ownerId).id
  const acct = createCustomer(db, store, { email: 'ada@example.com', phone: '+15551230001' })
  db.prepare("UPDATE customers SET name = 'Ada Account' WHERE id = ?").run(acct.id)
  // The account's order carries a second phone of Ada's; a phone-only order with that phone, typed
  // otherwise, is hers too (the phone's owner is the account of the earliest linked touch).
  const o1 = order(store, { customerId: acct.id, name: 'Ada', phone: '+1 (555) 123-0002', total: 1000, daysAgo: 10 })
  payment(store, o1, 1000)
  refund(store, o1, 300)
  const o2 = order(store, { name: 'A. L.', phone: '+1 555 123 0002', total: 2000, paid: true, daysAgo: 5 })
  const o3 = order(store, { name: null, phone: '+1-555-123-0001', total: 1500, daysAgo: 4 }) // the account's own phone, unpaid
  const o4 = order(store, { customerId: acct.id, status: 'cancelled', total: 900, daysAgo: 2 })
  const r1 = reservation(store, { name: 'Ada L', email: 'ADA@example.com', status: 'completed', daysAgo: 3 }) // email only, any case
  // Bob: no account; two spellings of one phone are one guest, named by the latest order.
  order(store, { name: 'Bob', phone: '+1 (555) 999-0001', total: 500, paid: true, daysAgo: 30 })
  order(store, { name: 'Bobby', phone: '+15559990001', total: 700, daysAgo: 1 })
  // Eve booked by email only and did not come; a walk-in without contact is nobody's guest.
  reservation(store, { name: 'Eve', email: 'eve@example.com', status: 'no_show', daysAgo: 6 })
  order(store, { name: 'Walk-in', phone: null, daysAgo: 1 })
  order(store, { name: 'Typo', phone: 'call me', daysAgo: 1 }) // not a phone number: no phone to match by

  const guests = await all(store)
  t.equal(guests.length, 3, 'Ada, Bob and Eve: three people')
  const ada = guests.find((g) => g.id === `c${acct.id}`)!
  t.match(ada, {
    customer_id: acct.id, name: 'Ada Account', phone: '+15551230001', email: 'ada@example.com',
    visits: 4, spend: 27, no_shows: 0, first_visit: ago(10).slice(0, 10), last_visit: String,
  }, 'four visits (o1, o2, o3, the completed booking; the cancelled order is none); spend 10-3 refunded + 20 marked paid, the unpaid 15 is none')
  // Within a minute of the oldest order's time, not its minute: the clock may cross a minute between the two readings.
  t.ok(Math.abs(Date.parse(ada.first_visit!) - Date.parse(ago(10))) < 60_000, 'first visit: the oldest order')
  t.ok(Date.parse(ada.last_visit!) > Date.parse(ago(3.01)) && Date.parse(ada.last_visit!) < Date.parse(ago(2.99)), 'last visit: the completed booking 3 days ago (the cancelled order 2 days ago is no visit)')

  const bob = byName(guests, 'Bobby')!
  t.match(bob, { customer_id: null, phone: '+15559990001', email: null, visits: 2, spend: 5, id: /^p[\w-]{16}$/ }, 'Bob: one phone-only guest, the latest name, paid 5')
  t.notMatch(bob.id, /5559990001/, 'the id does not spell the phone')
  const eve = byName(guests, 'Eve')!
  t.match(eve, { customer_id: null, phone: null, email: 'eve@example.com', visits: 0, no_shows: 1, spend: 0, first_visit: null, last_visit: null, id: /^e[\w-]{16}$/ })

  const detail = await s.req('GET', `/restaurants/${store}/guests/c${acct.id}`, { token: a.token })
  t.equal(detail.status, 200)
  t.same(detail.body.recent_orders.map((o: { id: number }) => o.id), [o4, o3, o2, o1], 'every order of hers, cancelled too, newest first')
  t.match(detail.body.recent_orders[3], { status: 'completed', total: 10 })
  t.same(detail.body.recent_reservations.map((x: { id: number }) => x.id), [r1])
  const bobDetail = await s.req('GET', `/restaurants/${store}/guests/${bob.id}`, { token: a.token })
  t.equal(bobDetail.status, 200, 'a phone-only guest by its opaque id')
  t.match(bobDetail.body, { id: bob.id, name: 'Bobby', visits: 2, recent_orders: [{}, {}], recent_reservations: [] })
  t.equal((await s.req('GET', `/restaurants/${store}/guests/${eve.id}`, { token: a.token })).body.no_shows, 1, 'an email-only guest by its id')
  const again = await all(store)
  t.same(again.map((g) => g.id).sort(), guests.map((g) => g.id).sort(), 'ids are stable between requests')
})

t.test('an order placed later with the account and a phone seen on anonymous orders joins them (no second guest)', async (t) => {
  const store = createStore(db, a.ownerId).id
  const acct = createCustomer(db, store, { phone: '+15552220001' })
  order(store, { name: 'Anon', phone: '+1 555 222 0009', daysAgo: 50 })
  order(store, { name: 'Anon again', phone: '(+1) 555-222-0009', daysAgo: 40 }) // not a phone (bracketed +): no key
  order(store, { customerId: acct.id, name: 'Known', phone: '+15552220009', daysAgo: 1 })
  const guests = await all(store)
  t.same(guests.map((g) => [g.id, g.visits]), [[`c${acct.id}`, 2]], 'the anonymous order is the account\'s; the order without a valid phone is nobody\'s')
  t.equal(guests[0]!.first_visit!.slice(0, 13), ago(50).slice(0, 13), 'her history starts with the anonymous order')
})

t.test('reservations: seated with an order count once, booked and cancelled are no visits, no-shows count', async (t) => {
  const store = createStore(db, a.ownerId).id
  const seatedOrder = order(store, { name: 'Sam', phone: '+15553330001', daysAgo: 7 })
  reservation(store, { name: 'Sam', phone: '+15553330001', status: 'seated', daysAgo: 7, orderId: seatedOrder })
  reservation(store, { name: 'Sam', phone: '+15553330001', status: 'completed', daysAgo: 20 })
  reservation(store, { name: 'Sam', phone: '+15553330001', status: 'booked', daysAgo: -3 })
  reservation(store, { name: 'Sam', phone: '+15553330001', status: 'cancelled', daysAgo: 2 })
  reservation(store, { name: 'Sam', phone: '+15553330001', status: 'no_show', daysAgo: 30 })
  const [sam] = await all(store)
  t.match(sam, { name: 'Sam', visits: 2, no_shows: 1 }, 'the seated booking and its order: one visit; plus the completed booking')
})

t.test('segments: each one\'s membership on crafted histories, counts, and the segment filter', async (t) => {
  const store = createStore(db, a.ownerId).id
  const who = (name: string, phone: string) => ({ name, phone })
  // new: first visit 5 days ago.
  order(store, { ...who('Nina New', '+15554440001'), total: 1000, paid: true, daysAgo: 5 })
  // regular: 3 visits within 90 days, the first 40 days ago (so not new).
  for (const d of [40, 20, 10]) order(store, { ...who('Rita Regular', '+15554440002'), total: 500, paid: true, daysAgo: d })
  // lapsed: 2 visits, the latest 120 days ago.
  for (const d of [200, 120]) order(store, { ...who('Lars Lapsed', '+15554440003'), total: 100, paid: true, daysAgo: d })
  // one visit 200 days ago: not lapsed (needs 2), not new.
  order(store, { ...who('Olga Once', '+15554440004'), daysAgo: 200 })
  // vip: the top 10 % of the 4 guests with spend = 1 guest, the highest spend.
  order(store, { ...who('Vera Vip', '+15554440005'), total: 10_000, paid: true, daysAgo: 100 })
  // no_show: 2 no-shows; one no-show alone is not enough.
  for (const d of [15, 45]) reservation(store, { ...who('Noah Noshow', '+15554440006'), status: 'no_show', daysAgo: d })
  reservation(store, { ...who('Otto Once-missed', '+15554440007'), status: 'no_show', daysAgo: 15 })
  // regular by 2 orders + 1 completed booking within 90 days, the 4th visit long ago.
  order(store, { ...who('Mia Mixed', '+15554440008'), daysAgo: 300 })
  for (const d of [80, 60]) order(store, { ...who('Mia Mixed', '+15554440008'), daysAgo: d })
  reservation(store, { ...who('Mia Mixed', '+15554440008'), status: 'completed', daysAgo: 30 })

  const expected: Record<string, string[]> = {
    'Nina New': ['new'], 'Rita Regular': ['regular'], 'Lars Lapsed': ['lapsed'], 'Olga Once': [], 'Vera Vip': ['vip'],
    'Noah Noshow': ['no_show'], 'Otto Once-missed': [], 'Mia Mixed': ['regular'],
  }
  const guests = await all(store)
  t.same(Object.fromEntries(guests.map((g) => [g.name, g.segments])), expected, 'every guest\'s segments')

  const seg = await s.req('GET', `/restaurants/${store}/guests/segments`, { token: a.token })
  t.equal(seg.status, 200)
  t.equal(seg.body.guests, 8)
  t.same(seg.body.segments.map((x: { key: string; count: number }) => [x.key, x.count]), [['new', 1], ['regular', 2], ['vip', 1], ['lapsed', 1], ['no_show', 1]])
  for (const x of seg.body.segments as Array<{ key: string; definition: string }>) {
    t.ok(x.definition.length > 10, `${x.key} has a definition`)
    const members = (await all(store, `?segment=${x.key}`)).map((g) => g.name).sort()
    t.same(members, Object.keys(expected).filter((n) => expected[n]!.includes(x.key)).sort(), `?segment=${x.key} lists exactly its members`)
  }
  isError(t, await list(store, '?segment=whales'), 422, 'validation_failed', 'an unknown segment')
})

t.test('VIP is the top 10 % of spenders, ties included', async (t) => {
  const store = createStore(db, a.ownerId).id
  for (let i = 0; i < 12; i++) order(store, { name: `Spender ${i}`, phone: `+1555600${String(i).padStart(4, '0')}`, total: 100 * (i + 1), paid: true, daysAgo: 50 })
  order(store, { name: 'Tied top', phone: '+15556009999', total: 1200, paid: true, daysAgo: 50 })
  const vips = (await all(store, '?segment=vip')).map((g) => g.name).sort()
  t.same(vips, ['Spender 11', 'Tied top'], 'ceil(13 × 10 %) = 2 places: the two spending 12 (tied); 11 is third')
})

t.test('search, sort and pagination', async (t) => {
  const store = createStore(db, a.ownerId).id
  for (let i = 0; i < 35; i++) {
    const phone = `+1555777${String(i).padStart(4, '0')}`
    for (let v = 0; v <= i % 3; v++) order(store, { name: `Guest ${String(i).padStart(2, '0')}`, phone, total: 100 * (i + 1), paid: true, daysAgo: 60 - i })
  }
  const p1 = await list(store)
  t.match(p1.body, { current_page: 1, last_page: 2, per_page: 30, total: 35 })
  t.equal(p1.body.data.length, 30)
  t.equal(p1.body.data[0].name, 'Guest 34', 'latest visit first by default')
  const p2 = await list(store, '?page=2')
  t.equal(p2.body.data.length, 5)
  t.same(new Set([...p1.body.data, ...p2.body.data].map((g: Guest) => g.id)).size, 35, 'the pages do not overlap')
  t.same((await list(store, '?page=9')).body, { data: [], current_page: 9, last_page: 2, per_page: 30, total: 35 }, 'past the end: empty, with the total')

  t.same((await all(store, '?sort=spend')).slice(0, 2).map((g) => g.name), ['Guest 32', 'Guest 29'], 'spend: highest first (3 visits × 33 beats 2 × 35)')
  t.same((await all(store, '?sort=visits')).slice(0, 1).map((g) => g.visits), [3])
  t.equal((await all(store, '?sort=name'))[0]!.name, 'Guest 00')
  isError(t, await list(store, '?sort=random'), 422, 'validation_failed', 'an unknown sort')

  t.same((await all(store, '?search=guest%2007')).map((g) => g.name), ['Guest 07'], 'by name, any case')
  t.same((await all(store, `?search=${encodeURIComponent('(555) 777-0012')}`)).map((g) => g.name), ['Guest 12'], 'by phone typed with brackets and dashes')
  t.same((await all(store, '?search=nobody')), [])
  // The digits of an email are not a phone search: this one must not find Guest 12's (555) 777-0012.
  t.same((await all(store, `?search=${encodeURIComponent('x5557770012y@mail.test')}`)), [], 'digits inside an email do not match phones')
  t.same((await all(store, '?search=100%25')), [], 'LIKE wildcards are literal')
})

t.test('tenancy: another owner\'s store and another store\'s guest are 404', async (t) => {
  const c = createCustomer(db, a.storeId)
  const other = createCustomer(db, b.storeId)
  t.equal((await s.req('GET', `/restaurants/${a.storeId}/guests/c${c.id}`, { token: a.token })).status, 200)
  for (const path of [`/restaurants/${a.storeId}/guests`, `/restaurants/${a.storeId}/guests/segments`, `/restaurants/${a.storeId}/guests/c${c.id}`]) {
    isError(t, await s.req('GET', path, { token: b.token }), 404, 'not_found', `B on ${path}`)
  }
  isError(t, await s.req('GET', `/restaurants/${a.storeId}/guests/c${other.id}`, { token: a.token }), 404, 'not_found', 'a customer of another store')
  const second = createStore(db, a.ownerId).id
  isError(t, await s.req('GET', `/restaurants/${second}/guests/c${c.id}`, { token: a.token }), 404, 'not_found', 'the owner\'s other store')
  isError(t, await s.req('GET', `/restaurants/${a.storeId}/guests/pAAAAAAAAAAAAAAAA`, { token: a.token }), 404, 'not_found', 'an unknown phone guest')
  isError(t, await s.req('GET', `/restaurants/${a.storeId}/guests/x1`, { token: a.token }), 422, 'validation_failed', 'not a guest id')
  const bStaff = createStaff(db, b.storeId, { role: 'cashier' })
  isError(t, await s.req('GET', `/staff/guests/c${c.id}`, { token: bStaff.token }), 404, 'not_found', 'staff of another store')
})

t.test('access: customers:read, the staff customers permission, the CRM plan feature', async (t) => {
  const noCustomers = tokenFor(db, a.ownerId, ['orders:read', 'restaurants:read'])
  isError(t, await list(a.storeId, '', noCustomers), 403, 'forbidden', 'a token without customers:read')
  isError(t, await s.req('GET', `/restaurants/${a.storeId}/guests/segments`, { token: noCustomers }), 403, 'forbidden', 'segments without customers:read')
  t.equal((await list(a.storeId, '', tokenFor(db, a.ownerId, ['customers:read']))).status, 200, 'customers:read is enough')

  const c = createCustomer(db, a.storeId)
  const cashier = createStaff(db, a.storeId, { role: 'cashier' })
  const staffList = await s.req('GET', `/staff/guests?search=${encodeURIComponent(c.email)}`, { token: cashier.token })
  t.equal(staffList.status, 200, 'staff with customers')
  t.same(staffList.body.data.map((g: Guest) => g.id), [`c${c.id}`], 'their own store\'s guests')
  t.equal((await s.req('GET', '/staff/guests/segments', { token: cashier.token })).status, 200)
  t.equal((await s.req('GET', `/staff/guests/c${c.id}`, { token: cashier.token })).status, 200)
  const waiter = createStaff(db, a.storeId, { role: 'waiter' })
  for (const path of ['/staff/guests', '/staff/guests/segments', `/staff/guests/c${c.id}`]) {
    isError(t, await s.req('GET', path, { token: waiter.token }), 403, 'forbidden', `a waiter on ${path}`)
  }

  const free = createAccount(db, { plan: 'free' })
  const freeCashier = createStaff(db, free.storeId, { role: 'cashier' })
  for (const [what, r] of [
    ['owner list', await list(free.storeId, '', free.token)],
    ['owner segments', await s.req('GET', `/restaurants/${free.storeId}/guests/segments`, { token: free.token })],
    ['staff list', await s.req('GET', '/staff/guests', { token: freeCashier.token })],
  ] as const) {
    isError(t, r, 403, 'feature_not_in_plan', what)
    t.same(r.body.details, { feature: 'crm', plan: 'free' })
  }
})

t.test('a no-show marked through the reservation routes counts on the guest', async (t) => {
  const phone = '+15558880001'
  const table = await s.req('POST', `/restaurants/${a.storeId}/tables`, { token: a.token, body: { name: `T-${Date.now()}`, capacity: 4 } })
  const starts = new Date(Date.now() + 3 * DAY)
  starts.setUTCHours(12, 0, 0, 0)
  const booked = await s.req('POST', `/restaurants/${a.storeId}/reservations`, { token: a.token, body: { name: 'Route Guest', phone: '+1 (555) 888-0001', party_size: 2, starts_at: starts.toISOString(), table_id: table.body?.id } })
  t.equal(table.status, 200, `table created ${table.text}`)
  t.equal(booked.status, 200, `booked ${booked.text}`)
  const marked = await s.req('POST', `/restaurants/${a.storeId}/reservations/${booked.body.id}/no-show`, { token: a.token })
  t.equal(marked.status, 200, `marked no-show ${marked.text}`)
  const [g] = await all(a.storeId, `?search=${encodeURIComponent(phone)}`)
  t.match(g, { name: 'Route Guest', phone, no_shows: 1, visits: 0 })
})
