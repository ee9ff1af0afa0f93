/**
 * The setup checklist over the API (docs/dashboard.md "First steps"; issue 34 item 16): each step
 * is read from the account's data, another account's store is a 404, a bad store id a 422 with
 * nothing written, dismissing needs a write capability; and the pure rules of src/domain/setup.ts.
 */
import t from 'tap'
import { startServer } from './helpers/server.ts'
import { createOwner, createStore, tokenFor } from './helpers/fixtures.ts'
import { setupChecklist, type SetupFacts } from '../src/domain/setup.ts'

t.test('the rules: each step from its fact; online payments tick the payment step', async (t) => {
  const none: SetupFacts = { store: null, drivers: 0, dismissedAt: null }
  const empty = setupChecklist(none, 'none')
  t.same(empty.steps.map((s) => [s.key, s.done]), [['store', false], ['hours', false], ['menu', false], ['channel', false], ['driver', false], ['payment', false]])
  t.equal(setupChecklist(none, 'dev').steps.find((s) => s.key === 'payment')!.done, true, 'PAYMENT_PROVIDER=dev takes online payments')
  const full: SetupFacts = { store: { id: 1, title: 'A', hasHours: true, menuItems: 2, storefrontTokens: 0, websiteThemed: true, tills: 0, paymentsTaken: 1 }, drivers: 1, dismissedAt: null }
  t.match(setupChecklist(full, 'none'), { complete: true, done: 6, total: 6, dismissed: false, store_id: 1 })
  t.equal(setupChecklist({ ...full, store: { ...full.store!, menuItems: 0 } }, 'none').complete, false, 'an empty menu is not done')
})

t.test('over the API', async (t) => {
  const s = await startServer({ DEMO_SEED: '0' })
  t.teardown(() => s.close())
  const db = s.app.svc.db
  const me = createOwner(db)
  const other = createOwner(db)
  const mine = createStore(db, me, { settings: { business_hours: { mon: [['09:00', '17:00']] } } })
  const theirs = createStore(db, other)
  const read = tokenFor(db, me, ['read'])
  const all = tokenFor(db, me, ['*'])

  const r = await s.req('GET', '/account/setup', { token: read })
  t.equal(r.status, 200)
  t.match(r.body, { store_id: mine.id, done: 2, total: 6, complete: false, dismissed: false })
  t.same(r.body.steps.filter((x: { done: boolean }) => x.done).map((x: { key: string }) => x.key), ['store', 'hours'], 'store and hours done')

  t.equal((await s.req('GET', `/account/setup?restaurant_id=${theirs.id}`, { token: read })).status, 404, 'another account\'s store: 404')
  const bad = await s.req('GET', '/account/setup?restaurant_id=abc', { token: read })
  t.equal(bad.status, 422, 'not an id: 422')
  t.ok(bad.body.errors?.restaurant_id, 'names the field')

  t.equal((await s.req('PUT', '/account/setup', { token: read, body: { dismissed: true } })).status, 403, 'a read token cannot dismiss')
  t.equal((await s.req('PUT', '/account/setup', { token: all, body: { dismissed: 'yes' } })).status, 422, 'dismissed must be a boolean')
  t.equal((await s.req('PUT', '/account/setup', { token: all, body: { dismissed: true, restaurant_id: theirs.id } })).status, 404, 'dismissing with another account\'s store: 404')
  t.equal(db.prepare('SELECT setup_dismissed_at FROM owners WHERE id = ?').pluck().get(me), null, 'nothing written by the refusals')
  const d = await s.req('PUT', '/account/setup', { token: all, body: { dismissed: true } })
  t.match(d.body, { dismissed: true, dismissed_at: String })
  t.equal((await s.req('GET', '/account/setup', { token: tokenFor(db, other, ['read']) })).body.dismissed, false, 'the other account is not dismissed')
  t.equal((await s.req('GET', '/account/setup')).status, 401, 'no token: 401')
})
