/**
 * The store adds a customer to its CRM (api-v1 §4.2 `POST /restaurants/{id}/customers`, §4.7
 * `POST /staff/customers`; docs/customers.md "Adding a customer"): one operation, two bindings.
 * An email or a phone is required, both are unique per store, the phone is normalised as the
 * customer app does, the answer is the customer profile, `customer.created` (source `crm`) is in
 * the outbox with the row, and the customer's first SMS sign-in finds this record, not a new one.
 */
import t from 'tap'
import { startServer } from './helpers/server.ts'
import { createAccount, createStore, isError, outbox, tokenFor } from './helpers/fixtures.ts'
import { createCustomer, createStaff } from './helpers/people.ts'
import { checkSchema } from './helpers/jsonschema.ts'
import { EVENT_CATALOG } from '../src/domain/webhook-events.ts'
import type { RecordingSmsProvider } from '../src/providers/sms.ts'

const s = await startServer({ RATE_LIMIT_PER_MINUTE: '100000' })
t.teardown(() => s.close())
const db = s.app.svc.db
const a = createAccount(db)
const b = createAccount(db)
const sms = s.app.svc.sms as RecordingSmsProvider

const create = (storeId: number, body: unknown, token = a.token) => s.req('POST', `/restaurants/${storeId}/customers`, { token, body })
const customerCount = () => db.prepare('SELECT COUNT(*) FROM customers').pluck().get() as number
const createdEvents = (customerId: number) => outbox(db, 'customer.created').filter((e) => e.data.customer_id === customerId)
let seq = 0
/** A phone no other test uses, as `+1555…` and in the spelling a person would type. */
const newPhone = () => {
  const n = String(4_000_000 + seq++ * 7919).padStart(7, '0')
  return { e164: `+1555${n}`, typed: `+1 (555) ${n.slice(0, 3)}-${n.slice(3)}` }
}

t.test('the owner creates a customer: 200 with the profile, and it is in the store\'s list', async (t) => {
  const phone = newPhone()
  const r = await create(a.storeId, { name: 'Ada', email: 'Ada.L@Example.com', phone: phone.typed, birthday: '1990-12-10', consents: { marketing_sms: true } })
  t.equal(r.status, 200, 'a create answers 200 (api-v1 §4)')
  t.match(r.body, { id: Number, restaurant_id: a.storeId, name: 'Ada', email: 'ada.l@example.com', phone: phone.e164, birthday: '1990-12-10', consents: { marketing_sms: true }, created_at: String, updated_at: String })
  t.notOk('password_hash' in r.body, 'no secret in the view')
  const stored = db.prepare('SELECT store_id, password_hash FROM customers WHERE id = ?').get(r.body.id) as { store_id: number; password_hash: string | null }
  t.same(stored, { store_id: a.storeId, password_hash: null }, 'stored at this store, without a password')

  const list = await s.req('GET', `/restaurants/${a.storeId}/customers?search=ada.l`, { token: a.token })
  t.equal(list.status, 200)
  t.same(list.body.data, [{ id: r.body.id, name: 'Ada', email: 'ada.l@example.com', phone: phone.e164, created_at: r.body.created_at }], 'the list item is the same customer')

  const phoneOnly = await create(a.storeId, { phone: newPhone().typed })
  t.equal(phoneOnly.status, 200, 'a phone alone is enough')
  t.match(phoneOnly.body, { name: null, email: null, birthday: null, consents: {} })
  const emailOnly = await create(a.storeId, { email: `solo-${Date.now()}@example.com`, phone: null })
  t.equal(emailOnly.status, 200, 'an email alone is enough')
  t.equal(emailOnly.body.phone, null)
})

t.test('staff with the customers permission create at their own store through POST /staff/customers', async (t) => {
  const cashier = createStaff(db, a.storeId, { role: 'cashier' })
  const phone = newPhone()
  const r = await s.req('POST', '/staff/customers', { token: cashier.token, body: { name: 'Till sign-up', phone: phone.typed } })
  t.equal(r.status, 200)
  t.match(r.body, { restaurant_id: a.storeId, name: 'Till sign-up', phone: phone.e164 })
  const list = await s.req('GET', `/staff/customers?search=${encodeURIComponent(phone.e164)}`, { token: cashier.token })
  t.same(list.body.data.map((c: { id: number }) => c.id), [r.body.id], 'in the staff list too')
  t.match(createdEvents(r.body.id), [{ store_id: a.storeId, data: { source: 'crm' } }])

  const waiter = createStaff(db, a.storeId, { role: 'waiter' })
  const before = customerCount()
  isError(t, await s.req('POST', '/staff/customers', { token: waiter.token, body: { phone: newPhone().typed } }), 403, 'forbidden', 'a waiter (no customers permission)')
  t.equal(customerCount(), before, 'nothing written')
})

t.test("another owner's store is 404 whatever the body, and nothing is written", async (t) => {
  const before = customerCount()
  const events = outbox(db, 'customer.created').length
  isError(t, await create(a.storeId, [0], b.token), 404, 'not_found', 'an invalid body')
  isError(t, await create(a.storeId, {}, b.token), 404, 'not_found', 'no email or phone')
  isError(t, await create(a.storeId, { name: 'Mallory', email: 'mallory@example.com' }, b.token), 404, 'not_found', 'a valid body')
  isError(t, await create(999_999_999, { email: 'nobody@example.com' }), 404, 'not_found', 'a store that does not exist')
  t.equal(customerCount(), before, 'no customer written')
  t.equal(outbox(db, 'customer.created').length, events, 'no event written')
})

t.test('a token without customers:write gets 403', async (t) => {
  const before = customerCount()
  const readOnly = tokenFor(db, a.ownerId, ['customers:read', 'restaurants:write', 'orders:write'])
  isError(t, await create(a.storeId, { email: 'read-only@example.com' }, readOnly), 403, 'forbidden', 'customers:read only')
  t.equal((await s.req('GET', `/restaurants/${a.storeId}/customers`, { token: readOnly })).status, 200, 'the same token may read the list')
  t.equal((await create(a.storeId, { email: `writer-${Date.now()}@example.com` }, tokenFor(db, a.ownerId, ['customers:write']))).status, 200, 'customers:write may')
  t.equal(customerCount(), before + 1, 'only the allowed create wrote')
})

t.test('422: neither email nor phone, a taken email, a taken phone', async (t) => {
  const store = createStore(db, a.ownerId).id
  const before = customerCount()
  for (const body of [{}, { name: 'Nobody' }, { name: 'Nobody', email: null, phone: null }]) {
    const r = await create(store, body)
    isError(t, r, 422, 'validation_failed', `without email or phone: ${JSON.stringify(body)}`)
    t.ok(r.body.errors?.email && r.body.errors?.phone, 'keyed email and phone')
  }
  isError(t, await create(store, { email: 'not-an-email' }), 422, 'validation_failed', 'a malformed email')
  isError(t, await create(store, { phone: 'call me' }), 422, 'validation_failed', 'not a phone number')
  t.equal(customerCount(), before, 'nothing written')

  const phone = newPhone()
  const first = await create(store, { name: 'First', email: 'taken@example.com', phone: phone.typed })
  t.equal(first.status, 200)
  const events = outbox(db, 'customer.created').length

  const dupEmail = await create(store, { name: 'Second', email: 'TAKEN@example.com' })
  isError(t, dupEmail, 422, 'validation_failed', 'an email another customer of the store has (any case)')
  t.same(Object.keys(dupEmail.body.errors), ['email'], 'keyed email')
  const dupPhone = await create(store, { name: 'Second', phone: phone.e164 })
  isError(t, dupPhone, 422, 'validation_failed', 'a phone another customer of the store has (another spelling)')
  t.same(Object.keys(dupPhone.body.errors), ['phone'], 'keyed phone')

  const registered = createCustomer(db, store)
  const dupApp = await create(store, { email: registered.email })
  isError(t, dupApp, 422, 'validation_failed', 'the email of a customer who registered in the app')
  t.ok(dupApp.body.errors.email)

  t.equal(customerCount(), before + 2, 'only the first create and the fixture wrote')
  t.equal(outbox(db, 'customer.created').length, events, 'refused creates emit nothing')
  t.equal((await create(b.storeId, { email: 'taken@example.com', phone: phone.typed }, b.token)).status, 200, 'the same email and phone at another store is another customer')
})

t.test('two racing creates with one email: exactly one wins', async (t) => {
  const store = createStore(db, a.ownerId).id
  const rs = await Promise.all([create(store, { name: 'One', email: 'race@example.com' }), create(store, { name: 'Two', email: 'race@example.com' })])
  t.same(rs.map((r) => r.status).sort(), [200, 422])
  t.equal(db.prepare('SELECT COUNT(*) FROM customers WHERE store_id = ?').pluck().get(store), 1)
})

t.test('customer.created is in the outbox with the row: the app\'s payload with source crm', async (t) => {
  const r = await create(a.storeId, { name: 'Evented', phone: newPhone().typed })
  t.equal(r.status, 200)
  const evs = createdEvents(r.body.id)
  t.equal(evs.length, 1, 'one event, already durable when the create answered')
  const ev = evs[0]!
  t.equal(ev.owner_id, a.ownerId)
  t.equal(ev.store_id, a.storeId)
  t.same(ev.data, { customer_id: r.body.id, restaurant_id: a.storeId, source: 'crm' }, 'the customer app\'s payload shape')
  const schema = EVENT_CATALOG['customer.created']!.data as { properties: Record<string, unknown> }
  t.same(checkSchema(schema, ev.data, {}), [], 'matches the documented webhook schema')
})

t.test('a phone customer the store created signs in by SMS code as the same customer', async (t) => {
  const phone = newPhone()
  const made = await create(a.storeId, { name: 'Walk-in', phone: phone.typed })
  t.equal(made.status, 200)
  const req = await s.req('POST', `/restaurants/${a.storeId}/customer/otp/request`, { body: { phone: phone.e164 } })
  t.equal(req.status, 200)
  const code = /\b(\d{6})\b/.exec(sms.lastTo(phone.e164)!.body)![1]!
  const v = await s.req('POST', `/restaurants/${a.storeId}/customer/otp/verify`, { body: { phone: phone.typed.replace(/[()-]/g, ' '), code } })
  t.equal(v.status, 200)
  t.match(v.body, { created: false, customer: { id: made.body.id, name: 'Walk-in', phone: phone.e164 } }, 'found, not created')
  t.equal(db.prepare('SELECT COUNT(*) FROM customers WHERE store_id = ? AND phone = ?').pluck().get(a.storeId, phone.e164), 1, 'no duplicate record')
  t.equal(createdEvents(made.body.id).length, 1, 'customer.created once, from the store\'s create')
  const me = await s.req('GET', '/customer/me', { token: v.body.token })
  t.same(me.body, made.body, 'the profile the store created')
})
