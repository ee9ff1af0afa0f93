/**
 * Customer bookings (issue 17 item 4; docs/operations.md "Reservations"): a signed-in customer
 * books at their store under every rule (lead time, business hours, the `enabled` switch), sees
 * and cancels only their own (another customer's is a 404), and an agent sees them through the
 * customer MCP tool `my_bookings`, upcoming first.
 */
import t from 'tap'
import { startServer } from './helpers/server.ts'
import { createAccount, createCustomer } from './helpers/fixtures.ts'
import { bearer, callTool, connectMcp } from './helpers/mcp.ts'
import { createEndpoint, startReceiver } from './helpers/webhook-receiver.ts'

const s = await startServer({ RATE_LIMIT_PER_MINUTE: '100000', WEBHOOK_ALLOW_LOOPBACK: '1' })
t.teardown(() => s.close())
const db = s.app.svc.db

const day = (n: number) => new Date(Date.now() + n * 86_400_000).toISOString().slice(0, 10)
const at = (n: number, hhmm: string) => `${day(n)}T${hhmm}:00Z`
async function ok(p: Promise<{ status: number; body: any; text: string }>, what = 'request') {
  const r = await p
  if (r.status !== 200) throw new Error(`${what}: ${r.status} ${r.text}`)
  return r.body
}

const a = createAccount(db)
const R = `/restaurants/${a.storeId}`
for (const [name, capacity] of [['T2', 2], ['T4', 4]] as const) await ok(s.req('POST', `${R}/tables`, { token: a.token, body: { name, capacity } }))
// Open 11:00-23:00 every day (UTC), so hours bind customer bookings.
const week = Object.fromEntries(['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'].map((d) => [d, [['11:00', '23:00']]]))
await ok(s.req('PUT', `${R}/settings`, { token: a.token, body: { business_hours: week, reservations: { lead_minutes: 120 } } }))
const me = createCustomer(db, a.storeId)
const other = createCustomer(db, a.storeId)

t.test('a customer books under the rules and sees only their own', async (t) => {
  const rcv = await startReceiver()
  t.teardown(() => rcv.close())
  await createEndpoint(s.base, a.token, rcv.url + '/c', ['reservation.created', 'reservation.cancelled'])

  const mine = await ok(s.req('POST', '/customer/reservations', { token: me.token, body: { party_size: 2, starts_at: at(2, '19:00'), customer_id: other.id } }))
  t.match(mine, { customer_id: me.id, source: 'customer', name: 'Cust', phone: me.phone, status: 'booked', table: { name: 'T2' } }, 'identity from the token only')

  const closed = await s.req('POST', '/customer/reservations', { token: me.token, body: { party_size: 2, starts_at: at(2, '08:00') } })
  t.equal(closed.status, 422)
  t.match(closed.body.errors.starts_at, [/closed/], 'outside business hours')
  t.equal((await ok(s.req('POST', `${R}/reservations`, { token: a.token, body: { name: 'Early', party_size: 2, starts_at: at(2, '08:00') } }))).source, 'owner', 'the owner may book outside hours')

  const soon = new Date(Math.ceil((Date.now() + 60 * 60_000) / (30 * 60_000)) * 30 * 60_000).toISOString()
  const lead = await s.req('POST', '/customer/reservations', { token: me.token, body: { party_size: 2, starts_at: soon } })
  t.equal(lead.status, 422)
  t.match(lead.body.errors.starts_at, [/120 minutes ahead/], 'inside the lead time')

  const theirs = await ok(s.req('POST', '/customer/reservations', { token: other.token, body: { party_size: 3, starts_at: at(3, '19:00') } }))
  const list = await ok(s.req('GET', '/customer/reservations', { token: me.token }))
  t.same(list.data.map((x: any) => x.id), [mine.id], 'only my own')
  t.equal(list.total, 1)

  const steal = await s.req('POST', `/customer/reservations/${theirs.id}/cancel`, { token: me.token, body: {} })
  t.equal(steal.status, 404, 'cancelling another customer\'s reservation')
  t.equal(steal.body.code, 'not_found')
  t.equal((await ok(s.req('GET', `${R}/reservations/${theirs.id}`, { token: a.token }))).status, 'booked', 'untouched')

  const cancelled = await ok(s.req('POST', `/customer/reservations/${mine.id}/cancel`, { token: me.token, body: { reason: 'plans changed' } }))
  t.match(cancelled, { status: 'cancelled', cancel_reason: 'plans changed' })
  await rcv.until((all) => all.some((x) => x.body.event === 'reservation.cancelled'), 10_000, 'cancelled event')
  t.match(rcv.of('reservation.cancelled')[0]!.body.data, { reservation_id: mine.id, source: 'customer', customer_id: me.id })
  await rcv.until((all) => all.filter((x) => x.body.event === 'reservation.created').length >= 3, 10_000, 'created events')
  t.match(rcv.of('reservation.created').map((x) => x.body.data).find((d: any) => d.reservation_id === mine.id), { source: 'customer', customer_id: me.id })

  const av = await ok(s.req('GET', `/customer/reservations/availability?date=${day(2)}&party_size=4`, { token: me.token }))
  t.ok(av.slots.length > 0)
  t.ok(av.slots.every((x: any) => x.starts_at.slice(11, 16) >= '11:00' && x.starts_at.slice(11, 16) < '23:00'), 'customers are offered slots inside the hours only')
  t.equal((await s.req('GET', '/customer/reservations/availability?date=nope&party_size=2', { token: me.token })).status, 422)
})

t.test('bookings switched off: customers get bookings_disabled, the owner still books', async (t) => {
  const b = createAccount(db)
  await ok(s.req('POST', `/restaurants/${b.storeId}/tables`, { token: b.token, body: { name: 'T', capacity: 4 } }))
  await ok(s.req('PUT', `/restaurants/${b.storeId}/settings`, { token: b.token, body: { reservations: { enabled: false } } }))
  const c = createCustomer(db, b.storeId)
  const r = await s.req('POST', '/customer/reservations', { token: c.token, body: { party_size: 2, starts_at: at(2, '19:00') } })
  t.equal(r.status, 422)
  t.match(r.body, { code: 'validation_failed', reason: 'bookings_disabled' })
  t.equal((await s.req('POST', `/restaurants/${b.storeId}/reservations`, { token: b.token, body: { name: 'Phone', party_size: 2, starts_at: at(2, '19:00') } })).status, 200)
})

t.test('my_bookings through the customer MCP server: own bookings, upcoming first', async (t) => {
  const c = createCustomer(db, a.storeId)
  const later = await ok(s.req('POST', '/customer/reservations', { token: c.token, body: { party_size: 2, starts_at: at(5, '20:00') } }))
  const sooner = await ok(s.req('POST', '/customer/reservations', { token: c.token, body: { party_size: 2, starts_at: at(4, '20:00') } }))
  const gone = await ok(s.req('POST', '/customer/reservations', { token: c.token, body: { party_size: 2, starts_at: at(6, '20:00') } }))
  await ok(s.req('POST', `/customer/reservations/${gone.id}/cancel`, { token: c.token, body: {} }))
  await ok(s.req('POST', '/customer/reservations', { token: other.token, body: { party_size: 2, starts_at: at(4, '21:00') } }))
  const client = await connectMcp(s, '/mcp/customer', bearer(c.token))
  t.teardown(() => client.close())
  const out = await callTool(client, 'my_bookings')
  t.notOk(out.isError)
  t.same(out.json.map((x: any) => x.id), [sooner.id, later.id, gone.id], 'upcoming soonest first, then the cancelled one; nobody else\'s')
  t.match(out.json[0], { status: 'booked', party_size: 2, table: { name: 'T2' } })
  t.equal(out.json[2].status, 'cancelled')
})
