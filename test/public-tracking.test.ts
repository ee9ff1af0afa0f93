/** Public tracking by token (api-v1 §2.5, §4.4): no auth, the §2.5 shape, nothing private, 404 otherwise. */
import t from 'tap'
import { startServer } from './helpers/server.ts'
import { createAccount, isError, postOrder } from './helpers/fixtures.ts'

const s = await startServer({ RATE_LIMIT_PER_MINUTE: '100000' })
t.teardown(() => s.close())
const acct = createAccount(s.app.svc.db)

t.test('GET /track/{token} shows the order by its token, without auth', async (t) => {
  const o = (await postOrder(s, acct.token, acct.storeId, {
    type: 'delivery', address: '12 Secret Lane', customer_name: 'Private Person', phone: '+15550199', note: 'gate code 1234', tip_amount: 1,
    items: [{ item_id: acct.menu.burger.id, quantity: 2, variation: acct.menu.burger.double }, { item_id: acct.menu.fries, quantity: 1 }],
  })).body
  const r = await s.req('GET', `/track/${o.track_token}`)
  t.equal(r.status, 200)
  t.match(r.body, { id: o.id, status: 'new', delivery_status: 'pending', is_paid: false, total: 34 })
  t.match(r.body.timeline, { created_at: String })
  t.same(r.body.items, [{ name: 'Burger', quantity: 2, variation: 'Double', extras: [] }, { name: 'Fries', quantity: 1, variation: null, extras: [] }], 'each line with its variation and extras')
  t.match(r.body, { subtotal: 33, discount: 0, tip_amount: 1, delivery_fee: 0, currency: /^[A-Z]{3}$/ }, 'the breakdown of the total, and its currency')
  t.notOk('driver' in r.body, 'no driver before pickup')
  const text = JSON.stringify(r.body)
  for (const secret of ['12 Secret Lane', 'Private Person', '+15550199', 'gate code', o.track_token]) {
    t.notOk(text.includes(secret), `does not reveal ${secret}`)
  }

  await s.req('PUT', `/restaurants/${acct.storeId}/orders/${o.id}/status`, { token: acct.token, body: { status: 'preparing' } })
  const after = await s.req('GET', `/track/${o.track_token}`)
  t.equal(after.body.status, 'preparing', 'follows status changes at once')
  t.match(after.body.timeline, { created_at: String, preparing_at: String })
})

t.test('unknown or malformed tokens are 404 not_found', async (t) => {
  const o = (await postOrder(s, acct.token, acct.storeId, { type: 'takeaway', items: [{ item_id: acct.menu.fries, quantity: 1 }] })).body
  for (const tok of ['trk_doesnotexist', o.track_token.slice(0, -1), o.track_token.slice(4), String(o.id), 'x'.repeat(300)]) {
    isError(t, await s.req('GET', `/track/${encodeURIComponent(tok)}`), 404, 'not_found', `token ${tok.slice(0, 12)}…`)
  }
})
