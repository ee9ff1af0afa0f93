/**
 * `customer.created` exactly once per new customer record, from every route that creates one
 * (issue 17 item 5; api-v1 §6; docs/webhooks.md): customer app registration and first SMS-code
 * sign-in, the store website's account pages (the same operations through forms), the CRM create
 * of the owner and of staff. Signing in again, refused creates and orders with an unknown phone
 * create no customer and emit nothing. Verified at a real webhook receiver (signed deliveries) and
 * against the outbox.
 */
import t from 'tap'
import { startServer } from './helpers/server.ts'
import { createAccount, createStaff, createStorefrontToken, outbox } from './helpers/fixtures.ts'
import { createEndpoint, startReceiver, verifyStandard, type Received } from './helpers/webhook-receiver.ts'
import { checkSchema } from './helpers/jsonschema.ts'
import { EVENT_CATALOG } from '../src/domain/webhook-events.ts'
import type { RecordingSmsProvider } from '../src/providers/sms.ts'

const s = await startServer({ WEBHOOK_ALLOW_LOOPBACK: '1', RATE_LIMIT_PER_MINUTE: '100000' })
const rcv = await startReceiver()
t.teardown(async () => { await s.close(); await rcv.close() })
const db = s.app.svc.db
const sms = s.app.svc.sms as RecordingSmsProvider
const a = createAccount(db)
db.prepare("UPDATE stores SET settings = '{\"business_hours\":null}' WHERE id = ?").run(a.storeId)
const ep = await createEndpoint(s.base, a.token, `${rcv.url}/customers`, ['customer.created'])
const R = `/restaurants/${a.storeId}`

let seq = 0
const newPhone = () => `+1555${String(7_100_000 + seq++ * 13).padStart(7, '0')}`
const codeFor = (phone: string) => /\b(\d{6})\b/.exec(sms.sent.findLast((m) => m.to === phone)!.body)![1]!

/** Deliveries of customer.created for `customerId`, waiting for at least one. */
async function deliveredFor(customerId: number): Promise<Received[]> {
  await rcv.until((all) => all.some((r) => r.body.data.customer_id === customerId), 5000, `customer.created for ${customerId}`)
  return rcv.of('customer.created').filter((r) => r.body.data.customer_id === customerId)
}

async function otpSignIn(phone: string, typed = phone) {
  const req = await s.req('POST', `${R}/customer/otp/request`, { body: { phone } })
  t.equal(req.status, 200, 'code sent')
  return s.req('POST', `${R}/customer/otp/verify`, { body: { phone: typed, code: codeFor(phone) } })
}

const created = new Map<number, string>() // customer id → source expected

t.test('customer app registration emits once, source register', async (t) => {
  const r = await s.req('POST', `${R}/customer/register`, { body: { name: 'Reg', email: 'reg@created.test', password: 'long-enough-pw' } })
  t.equal(r.status, 200)
  created.set(r.body.customer.id, 'register')
  const [d, ...more] = await deliveredFor(r.body.customer.id)
  t.same(more, [])
  t.same(d!.body.data, { customer_id: r.body.customer.id, restaurant_id: a.storeId, source: 'register' })
  t.ok(verifyStandard(ep.secret, d!), 'a signed delivery')
  t.same(checkSchema(EVENT_CATALOG['customer.created']!.data as { properties: Record<string, unknown> }, d!.body.data, {}), [], 'the documented payload')
  const dup = await s.req('POST', `${R}/customer/register`, { body: { name: 'Again', email: 'REG@created.test', password: 'long-enough-pw' } })
  t.equal(dup.status, 422, 'the same email again: refused, no customer')
})

t.test('the first SMS-code sign-in of a phone emits once, source otp; signing in again emits nothing', async (t) => {
  const phone = newPhone()
  const first = await otpSignIn(phone)
  t.equal(first.status, 200)
  t.equal(first.body.created, true)
  created.set(first.body.customer.id, 'otp')
  const again = await otpSignIn(phone, phone.replace(/^\+1555/, '+1 (555) '))
  t.equal(again.status, 200)
  t.match(again.body, { created: false, customer: { id: first.body.customer.id } }, 'the same customer, another spelling')
  const ds = await deliveredFor(first.body.customer.id)
  t.same(ds.map((d) => d.body.data.source), ['otp'])
})

t.test('the owner\'s and staff\'s CRM creates emit once each, source crm; that phone\'s first SMS sign-in emits nothing', async (t) => {
  const phone = newPhone()
  const owner = await s.req('POST', `${R}/customers`, { token: a.token, body: { name: 'Till', phone } })
  t.equal(owner.status, 200)
  created.set(owner.body.id, 'crm')
  const cashier = createStaff(db, a.storeId, { role: 'cashier' })
  const staff = await s.req('POST', '/staff/customers', { token: cashier.token, body: { email: 'staff-made@created.test' } })
  t.equal(staff.status, 200)
  created.set(staff.body.id, 'crm')
  t.equal((await s.req('POST', `${R}/customers`, { token: a.token, body: { phone } })).status, 422, 'the same phone again: refused')
  const signIn = await otpSignIn(phone)
  t.match(signIn.body, { created: false, customer: { id: owner.body.id } })
  t.same((await deliveredFor(owner.body.id)).map((d) => d.body.data.source), ['crm'])
  t.same((await deliveredFor(staff.body.id)).map((d) => d.body.data.source), ['crm'])
})

/** What a browser does with the website's cookies and forms (CSRF token from the cookie). */
class Visitor {
  jar = new Map<string, string>()
  keep(res: Response) {
    for (const c of res.headers.getSetCookie()) {
      const [pair] = c.split(';')
      const i = pair!.indexOf('=')
      this.jar.set(pair!.slice(0, i), pair!.slice(i + 1))
    }
  }
  cookie() { return [...this.jar].map(([k, v]) => `${k}=${v}`).join('; ') }
  async get(url: string) { const res = await fetch(url, { headers: { cookie: this.cookie() }, redirect: 'manual' }); this.keep(res); return res.status }
  async post(url: string, fields: Record<string, string>) {
    const body = new URLSearchParams({ ...fields, csrf: this.jar.get('csrf') ?? '' })
    const res = await fetch(url, { method: 'POST', body, redirect: 'manual', headers: { cookie: this.cookie(), origin: s.site, 'content-type': 'application/x-www-form-urlencoded' } })
    this.keep(res)
    return res.status
  }
}

t.test('the store website\'s account pages: registration and the first SMS sign-in emit once each', async (t) => {
  const url = `${s.site}/s/${a.slug}`
  const v = new Visitor()
  t.equal(await v.get(`${url}/account/login`), 200)
  t.equal(await v.post(`${url}/account/register`, { name: 'Web', email: 'web@created.test', password: 'long-enough-pw' }), 303)
  const webId = db.prepare('SELECT id FROM customers WHERE store_id = ? AND email = ?').pluck().get(a.storeId, 'web@created.test') as number
  created.set(webId, 'register')

  const phone = newPhone()
  const w = new Visitor()
  await w.get(`${url}/account/login`)
  t.equal(await w.post(`${url}/account/otp`, { phone }), 200)
  t.equal(await w.post(`${url}/account/otp/verify`, { phone, code: codeFor(phone) }), 303)
  const otpId = db.prepare('SELECT id FROM customers WHERE store_id = ? AND phone = ?').pluck().get(a.storeId, phone) as number
  created.set(otpId, 'otp')
  t.same((await deliveredFor(webId)).map((d) => d.body.data.source), ['register'])
  t.same((await deliveredFor(otpId)).map((d) => d.body.data.source), ['otp'])
})

t.test('orders with an unknown phone, from every front door, create no customer and emit nothing', async (t) => {
  const before = db.prepare('SELECT COUNT(*) FROM customers WHERE store_id = ?').pluck().get(a.storeId)
  const items = [{ item_id: a.menu.fries, quantity: 1 }]
  const byOwner = await s.req('POST', `${R}/orders`, { token: a.token, body: { type: 'takeaway', customer_name: 'Phone order', phone: newPhone(), items } })
  t.equal(byOwner.status, 200)
  const sf = createStorefrontToken(db, a.storeId)
  const bySf = await s.req('POST', '/storefront/orders', { headers: { 'x-storefront-token': sf }, body: { type: 'takeaway', customer_name: 'Web order', phone: newPhone(), items } })
  t.equal(bySf.status, 200, 'storefront order')
  t.equal(db.prepare('SELECT COUNT(*) FROM customers WHERE store_id = ?').pluck().get(a.storeId), before, 'no customer record')
})

t.test('in all: one event per new customer record, none for anything else', async (t) => {
  const ids = db.prepare('SELECT id FROM customers WHERE store_id = ? ORDER BY id').pluck().all(a.storeId) as number[]
  t.same(ids, [...created.keys()].sort((x, y) => x - y), 'the records are exactly the ones the routes created')
  const inOutbox = outbox(db, 'customer.created').filter((e) => e.store_id === a.storeId)
  t.same(inOutbox.map((e) => e.data.customer_id).sort((x, y) => x - y), ids, 'one outbox event per record')
  for (const id of ids) {
    const ds = await deliveredFor(id)
    t.equal(new Set(ds.map((d) => d.headers['webhook-id'])).size, 1, `customer ${id}: one event delivered`)
    t.equal(ds[0]!.body.data.source, created.get(id), `customer ${id}: source ${created.get(id)}`)
  }
})
