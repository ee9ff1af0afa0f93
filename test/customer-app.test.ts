/**
 * The customer app (api-v1 §4.5, §2.7, §6; docs/customers.md): the profile, orders placed and
 * listed as the token's customer only, saved addresses (the first is the default), gift cards and
 * store credit as ledgers with real balances, and the per-store boundary (another store's
 * customer, address or card is not found).
 */
import t from 'tap'
import { startServer } from './helpers/server.ts'
import { createAccount, createDriver, createStore, isError, outbox, tokenFor } from './helpers/fixtures.ts'
import { createCustomer } from './helpers/people.ts'

const s = await startServer({ RATE_LIMIT_PER_MINUTE: '100000' })
t.teardown(() => s.close())
const db = s.app.svc.db
const a = createAccount(db)
const b = createAccount(db)
const ada = createCustomer(db, a.storeId)
const bob = createCustomer(db, a.storeId)
const elsewhere = createCustomer(db, b.storeId)
const fries = (store = a) => ({ type: 'takeaway', items: [{ item_id: store.menu.fries, quantity: 1 }] })

t.test('GET/PUT /customer/me: name, email, phone, birthday, consents (merged key by key)', async (t) => {
  const me = await s.req('GET', '/customer/me', { token: ada.token })
  t.match(me.body, { id: ada.id, restaurant_id: a.storeId, email: ada.email, phone: ada.phone, consents: {} })
  t.notOk('password_hash' in me.body)
  const put = await s.req('PUT', '/customer/me', { token: ada.token, body: { name: 'Ada L.', birthday: '1990-12-10', phone: '+1 555 010 4242', consents: { marketing_email: true, marketing_sms: false } } })
  t.match(put.body, { name: 'Ada L.', birthday: '1990-12-10', phone: '+15550104242', consents: { marketing_email: true, marketing_sms: false } })
  const again = await s.req('PUT', '/customer/me', { token: ada.token, body: { consents: { marketing_sms: true } } })
  t.same(again.body.consents, { marketing_email: true, marketing_sms: true }, 'consents merge')
  t.equal(again.body.name, 'Ada L.', 'fields left out stay')
  isError(t, await s.req('PUT', '/customer/me', { token: ada.token, body: { email: bob.email } }), 422, 'validation_failed', 'another customer\'s email')
  isError(t, await s.req('PUT', '/customer/me', { token: ada.token, body: { birthday: '2999-01-01' } }), 422, 'validation_failed', 'a birthday in the future')
  t.equal((await s.req('PUT', '/customer/me', { token: elsewhere.token, body: { email: ada.email } })).status, 200, 'the same email at another store is fine')
  isError(t, await s.req('GET', '/customer/me', { token: a.token }), 401, 'unauthenticated', 'an owner token is not a customer token')
})

t.test('POST /customer/orders: the customer comes from the token only; order.created; own history, paginated', async (t) => {
  const r = await s.req('POST', '/customer/orders', { token: bob.token, body: { ...fries(), customer_id: ada.id, customer: { id: ada.id }, phone: undefined } })
  t.equal(r.status, 200)
  t.match(r.body, { customer_id: bob.id, restaurant_id: a.storeId, track_token: /^trk_/, source: 'customer_app', customer_name: 'Cust', phone: bob.phone })
  t.match(outbox(db, 'order.created').find((e) => e.data.order_id === r.body.id), { store_id: a.storeId })
  const mine = await s.req('GET', '/customer/orders', { token: bob.token })
  t.same(mine.body.data.map((o: { id: number }) => o.id), [r.body.id])
  t.match(mine.body, { current_page: 1, per_page: 30, total: 1, last_page: 1 })
  const adas = await s.req('GET', '/customer/orders', { token: ada.token })
  t.notOk(adas.body.data.some((o: { id: number }) => o.id === r.body.id), 'Ada does not see Bob\'s order although the body named her')
  isError(t, await s.req('POST', '/customer/orders', { token: bob.token, body: fries(b) }), 422, 'validation_failed', 'an item of another store')

  for (let i = 0; i < 31; i++) await s.req('POST', '/customer/orders', { token: bob.token, body: fries() })
  const p1 = await s.req('GET', '/customer/orders', { token: bob.token })
  const p2 = await s.req('GET', '/customer/orders?page=2', { token: bob.token })
  t.match(p1.body, { total: 32, last_page: 2 })
  t.equal(p1.body.data.length, 30)
  t.equal(p2.body.data.length, 2)
  t.ok(p1.body.data[0].id > p1.body.data[29].id, 'newest first')
  t.ok(p2.body.data.every((o: { customer_id: number }) => o.customer_id === bob.id))
})

t.test('addresses: the first saved is the default; lat/lng together; the default moves; another customer\'s is 404', async (t) => {
  const c = createCustomer(db, a.storeId)
  const home = await s.req('POST', '/customer/addresses', { token: c.token, body: { label: 'Home', address: '1 Main St', lat: 52.52, lng: 13.405 } })
  t.equal(home.status, 200, 'a create answers 200 (api-v1 §4)')
  t.match(home.body, { label: 'Home', lat: 52.52, lng: 13.405, is_default: true }, 'the first address is the default')
  const work = await s.req('POST', '/customer/addresses', { token: c.token, body: { label: 'Work', address: '2 Side St' } })
  t.match(work.body, { is_default: false, lat: null, lng: null }, 'a later one is not')
  isError(t, await s.req('POST', '/customer/addresses', { token: c.token, body: { address: 'x', lat: 1 } }), 422, 'validation_failed', 'lat without lng')
  isError(t, await s.req('POST', '/customer/addresses', { token: c.token, body: { address: 'x', lat: 91, lng: 0 } }), 422, 'validation_failed', 'lat out of range')
  const moved = await s.req('PUT', `/customer/addresses/${work.body.id}`, { token: c.token, body: { is_default: true, lat: 1.5, lng: 2.5 } })
  t.match(moved.body, { is_default: true, lat: 1.5, lng: 2.5 })
  const list = await s.req('GET', '/customer/addresses', { token: c.token })
  t.same(list.body.map((x: { id: number; is_default: boolean }) => [x.id, x.is_default]), [[work.body.id, true], [home.body.id, false]], 'exactly one default, listed first')

  const o = await s.req('POST', '/customer/orders', { token: c.token, body: { type: 'delivery', address_id: home.body.id, items: [{ item_id: a.menu.fries, quantity: 1 }] } })
  t.match(o.body, { customer_id: c.id, address: '1 Main St' }, 'a saved address fills the order\'s address')

  isError(t, await s.req('PUT', `/customer/addresses/${home.body.id}`, { token: ada.token, body: { label: 'Mine' } }), 404, 'not_found', 'another customer\'s address')
  isError(t, await s.req('DELETE', `/customer/addresses/${home.body.id}`, { token: elsewhere.token }), 404, 'not_found', 'a customer of another store')
  isError(t, await s.req('POST', '/customer/orders', { token: ada.token, body: { type: 'delivery', address_id: home.body.id, items: [{ item_id: a.menu.fries, quantity: 1 }] } }), 422, 'validation_failed', 'ordering to someone else\'s address')

  t.equal((await s.req('DELETE', `/customer/addresses/${work.body.id}`, { token: c.token })).status, 204)
  const left = await s.req('GET', '/customer/addresses', { token: c.token })
  t.same(left.body.map((x: { id: number; is_default: boolean }) => [x.id, x.is_default]), [[home.body.id, true]], 'the remaining one becomes the default')
})

t.test('a saved address\'s notes for the driver reach the order, the driver and the owner, not the kitchen (issue 34 item 4)', async (t) => {
  const c = createCustomer(db, a.storeId)
  const home = await s.req('POST', '/customer/addresses', { token: c.token, body: { address: '5 Gate St', lat: 52.5, lng: 13.4, notes: 'Code 1234, 3rd floor' } })
  t.match(home.body, { notes: 'Code 1234, 3rd floor', lat: 52.5, lng: 13.4 })
  const order = (extra: Record<string, unknown>) => s.req('POST', '/customer/orders', { token: c.token, body: { type: 'delivery', items: [{ item_id: a.menu.fries, quantity: 1 }], note: 'No salt', ...extra } })
  const o = await order({ address_id: home.body.id })
  t.equal(o.status, 200)
  t.match(o.body, { address: '5 Gate St', delivery_notes: 'Code 1234, 3rd floor', note: 'No salt' }, 'the address\'s notes, apart from the kitchen\'s note')
  t.match((await s.req('GET', `/restaurants/${a.storeId}/orders/${o.body.id}`, { token: a.token })).body, { delivery_notes: 'Code 1234, 3rd floor' }, 'the owner reads them')
  t.equal(db.prepare('SELECT dest_lat FROM orders WHERE id = ?').pluck().get(o.body.id), 52.5, 'and the position came with the address')
  const own = await order({ address_id: home.body.id, delivery_notes: 'Leave it at the door' })
  t.equal(own.body.delivery_notes, 'Leave it at the door', 'notes given with the order win')
  const blank = await order({ address_id: home.body.id, delivery_notes: '  ' })
  t.equal(blank.body.delivery_notes, 'Code 1234, 3rd floor', 'blank notes with the order are none: the saved address\'s fill in')
  const typed = await order({ address: '9 Typed Rd' })
  t.equal(typed.body.delivery_notes, null, 'a typed address has no saved notes')
  const takeaway = await s.req('POST', '/customer/orders', { token: c.token, body: { ...fries(), delivery_notes: 'ignored' } })
  t.equal(takeaway.body.delivery_notes, null, 'only deliveries carry them')
  isError(t, await order({ address_id: home.body.id, delivery_notes: 'x'.repeat(501) }), 422, 'validation_failed', 'notes too long')
  const d = createDriver(db, a.ownerId, a.storeId, { onShift: true })
  t.equal((await s.req('POST', `/restaurants/${a.storeId}/orders/${o.body.id}/assign`, { token: a.token, body: { driver_id: d.id } })).status, 200)
  const mine = await s.req('GET', '/driver/deliveries', { token: d.token })
  t.match(mine.body.data.find((x: { id: number }) => x.id === o.body.id), { address: '5 Gate St', delivery_notes: 'Code 1234, 3rd floor', note: 'No salt' }, 'the driver reads them')
  const kitchen = db.prepare('SELECT * FROM order_lines WHERE order_id = ?').all(o.body.id) as Array<Record<string, unknown>>
  t.notOk(kitchen.some((l) => JSON.stringify(l).includes('1234')), 'not on the kitchen\'s lines')
})

t.test('store credit: a ledger whose balance is the sum; debits never go below zero; per store', async (t) => {
  const c = createCustomer(db, a.storeId)
  t.same((await s.req('GET', '/customer/store-credit', { token: c.token })).body, { balance: 0, currency: 'USD', entries: [] })
  const credit = (amount: number, token = a.token, store = a.storeId, customer = c.id) =>
    s.req('POST', `/restaurants/${store}/customers/${customer}/store-credit`, { token, body: { amount, reason: 'goodwill' } })
  t.equal((await credit(12.5)).status, 200)
  t.match((await credit(-2.25)).body, { balance: 10.25 })
  isError(t, await credit(-10.26), 422, 'validation_failed', 'a debit below zero')
  const mine = await s.req('GET', '/customer/store-credit', { token: c.token })
  t.match(mine.body, { balance: 10.25, currency: 'USD' })
  t.same(mine.body.entries.map((e: { amount: number }) => e.amount), [-2.25, 12.5], 'newest entry first')
  t.equal((await s.req('GET', '/customer/store-credit', { token: ada.token })).body.balance, 0, 'another customer has their own balance')
  isError(t, await credit(5, b.token, b.storeId, c.id), 404, 'not_found', 'another owner cannot credit this customer')
  isError(t, await credit(5, b.token, a.storeId, c.id), 404, 'not_found', 'nor through this store')
  isError(t, await credit(5, a.token, a.storeId, elsewhere.id), 404, 'not_found', 'a customer of another store is not found under this one')
})

t.test('gift cards: issued with a balance, redeemed down to zero and no further, expiry, per store', async (t) => {
  const c = createCustomer(db, a.storeId)
  const issued = await s.req('POST', `/restaurants/${a.storeId}/gift-cards`, { token: a.token, body: { amount: 25, customer_id: c.id } })
  t.equal(issued.status, 200)
  t.match(issued.body, { id: Number, code: /^[A-Z0-9]{16}$/, balance: 25, customer_id: c.id })
  t.notOk(JSON.stringify(db.prepare('SELECT * FROM gift_cards WHERE id = ?').get(issued.body.id)).includes(issued.body.code), 'only a hash of the code is kept')
  const cards = await s.req('GET', '/customer/gift-cards', { token: c.token })
  t.match(cards.body, [{ id: issued.body.id, code_last4: issued.body.code.slice(-4), balance: 25, issued: 25, currency: 'USD' }])
  t.notOk('code' in cards.body[0], 'the code itself is not listed')

  const redeem = (amount: number, id = issued.body.id, token = a.token, store = a.storeId, extra: Record<string, unknown> = {}) =>
    s.req('POST', `/restaurants/${store}/gift-cards/${id}/redeem`, { token, body: { amount, ...extra } })
  const order = await s.req('POST', '/customer/orders', { token: c.token, body: fries() })
  t.match((await redeem(10, issued.body.id, a.token, a.storeId, { order_id: order.body.id })).body, { balance: 15, redeemed: 10, order_id: order.body.id })
  // Two redemptions racing for the rest: one wins, the balance never goes negative.
  const race = await Promise.all([redeem(15), redeem(15)])
  t.same(race.map((r) => r.status).sort(), [200, 422])
  t.match((await s.req('GET', '/customer/gift-cards', { token: c.token })).body, [{ balance: 0, issued: 25 }])
  isError(t, await redeem(0.01), 422, 'validation_failed', 'an empty card')

  const old = await s.req('POST', `/restaurants/${a.storeId}/gift-cards`, { token: a.token, body: { amount: 5, customer_id: c.id, expires_at: '2030-01-01T00:00:00Z' } })
  db.prepare("UPDATE gift_cards SET expires_at = '2001-01-01T00:00:00.000+00:00' WHERE id = ?").run(old.body.id)
  isError(t, await redeem(1, old.body.id), 422, 'validation_failed', 'an expired card')
  isError(t, await redeem(1, old.body.id, b.token, b.storeId), 404, 'not_found', 'another owner\'s card')
  isError(t, await redeem(1, old.body.id, b.token, a.storeId), 404, 'not_found', 'through another owner\'s token')
  isError(t, await redeem(1, old.body.id, a.token, a.storeId, { order_id: 999999 }), 422, 'validation_failed', 'an order of nowhere')
  t.same((await s.req('GET', '/customer/gift-cards', { token: elsewhere.token })).body, [], 'a customer of another store sees none')
  isError(t, await s.req('POST', `/restaurants/${a.storeId}/gift-cards`, { token: a.token, body: { amount: 5, customer_id: elsewhere.id } }), 422, 'validation_failed', 'issuing to another store\'s customer')
})

t.test('the owner\'s customer list: newest first, 30 per page, search, capability customers:read, per store', async (t) => {
  const store = createStore(db, a.ownerId).id
  const made = Array.from({ length: 32 }, (_, i) => createCustomer(db, store, { email: `list-${i}-${store}@customer.test` }))
  const list = (query = '', token = a.token, id = store) => s.req('GET', `/restaurants/${id}/customers${query}`, { token })
  const p1 = await list()
  t.equal(p1.status, 200)
  t.match(p1.body, { current_page: 1, per_page: 30, total: 32, last_page: 2 })
  t.same(p1.body.data[0], { id: made[31]!.id, name: 'Cust', email: made[31]!.email, phone: made[31]!.phone, created_at: p1.body.data[0].created_at }, 'newest first, with the list fields only')
  t.equal((await list('?page=2')).body.data.length, 2)
  t.same((await list(`?search=${encodeURIComponent('list-7-')}`)).body.data.map((c: { id: number }) => c.id), [made[7]!.id], 'search matches a part of the email')
  t.equal((await list('?search=%25')).body.total, 0, '% is matched literally, not as a wildcard')
  t.equal((await list('', tokenFor(db, a.ownerId, ['customers:read']))).status, 200, 'customers:read is enough')
  isError(t, await list('', tokenFor(db, a.ownerId, ['orders:write'])), 403, 'forbidden', 'without customers:read')
  isError(t, await list('', b.token), 404, 'not_found', 'another owner\'s store')
  isError(t, await list('?page=0'), 422, 'validation_failed', 'a bad page')
})

t.test('another owner\'s store is 404 before the body is validated (issue 11 item 3)', async (t) => {
  const c = createCustomer(db, a.storeId)
  isError(t, await s.req('POST', `/restaurants/${a.storeId}/customers/${c.id}/store-credit`, { token: b.token, body: { amount: 0, reason: '' } }), 404, 'not_found', 'store credit with an invalid body')
  isError(t, await s.req('POST', `/restaurants/${a.storeId}/gift-cards`, { token: b.token, body: { amount: -1 } }), 404, 'not_found', 'a gift card with an invalid body')
  isError(t, await s.req('POST', `/restaurants/${a.storeId}/gift-cards/1/redeem`, { token: b.token, body: { amount: 'x' } }), 404, 'not_found', 'a redemption with an invalid body')
  isError(t, await s.req('POST', `/restaurants/${a.storeId}/gift-cards`, { token: a.token, body: { amount: -1 } }), 422, 'validation_failed', 'the same body at one\'s own store')
  t.equal((await s.req('GET', '/customer/store-credit', { token: c.token })).body.balance, 0, 'nothing written')
})

t.test('POST /customer/orders takes coupon_code for every mode, delivery included (issue 34 item 8)', async (t) => {
  const code = `CUST${process.pid}`
  const made = await s.req('POST', `/restaurants/${a.storeId}/coupons`, { token: a.token, body: { code, kind: 'percent', value: 10 } })
  t.equal(made.status, 200, made.text.slice(0, 200))
  const delivery = { type: 'delivery', address: '1 Main St', items: [{ item_id: a.menu.fries, quantity: 2 }] }
  const r = await s.req('POST', '/customer/orders', { token: ada.token, body: { ...delivery, coupon_code: code } })
  t.equal(r.status, 200, r.text.slice(0, 300))
  t.equal(r.body.coupon_code, code, 'the order names the code')
  t.ok(r.body.discount > 0, `a delivery order got its discount (${r.body.discount})`)
  t.equal(Math.round((r.body.subtotal - r.body.discount + (r.body.tip_amount ?? 0) + (r.body.delivery_fee ?? 0)) * 100), Math.round(r.body.total * 100), 'and the total is after it')
  isError(t, await s.req('POST', '/customer/orders', { token: ada.token, body: { ...delivery, coupon_code: 'NO-SUCH-CODE' } }), 422, 'validation_failed', 'an unknown code')
})
