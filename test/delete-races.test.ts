/**
 * Requests racing a delete (issue 10 #5): a delete goes through the owning actor like every other
 * write, so a GET/PUT/rotate-token of a driver or a PUT of a coupon that is queued behind the
 * delete answers 404 `not_found` from the actor itself — never a 500, and never a hang until the
 * actor query timeout. Each round fires the delete and the other requests in the same tick.
 *
 * Every request carries AbortSignal.timeout(REQUEST_BOUND_MS): a request left unanswered (the old
 * bug: a stopped actor's mailbox) fails the test through the abort, not through a timing assertion.
 */
import t, { type Test } from 'tap'
import { startServer } from './helpers/server.ts'
import { createFleet } from './helpers/delivery.ts'
import { createAccount } from './helpers/fixtures.ts'
import { createStaff, createStorefrontToken } from './helpers/people.ts'
import { placeOrder } from '../src/ops/orders/order-create.ts'

/** A failure bound, well under the actor query timeout (10 s), so a hang is an abort here. */
const REQUEST_BOUND_MS = 5000
const ROUNDS = 20

const s = await startServer({ RATE_LIMIT_PER_MINUTE: '1000000' })
t.teardown(() => s.close())
const db = s.app.svc.db

interface Answer { what: string; status: number; body: any }

/** One request; an unanswered one rejects after REQUEST_BOUND_MS (AbortError) and fails the test. */
async function call(what: string, method: string, path: string, token: string, body?: unknown): Promise<Answer> {
  const r = await fetch(s.base + path, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(REQUEST_BOUND_MS),
  })
  const text = await r.text()
  return { what, status: r.status, body: text ? JSON.parse(text) : null }
}

/** Every answer is one the API documents for the race: success, or 404 `not_found` in the envelope. */
function checkAnswers(t: Test, answers: Answer[], allowed: Record<string, number[]>): void {
  for (const a of answers) {
    const ok = allowed[a.what]!.includes(a.status)
    t.ok(ok, `${a.what} answered ${a.status}`, ok ? {} : { body: a.body })
    if (a.status === 404) t.equal(a.body?.code, 'not_found', `${a.what}: 404 in the error envelope`)
  }
}

t.test('DELETE /drivers/{id} racing GET, PUT and rotate-token of the same driver: 200/204/404, never 500 or a hang', async (t) => {
  const fleet = createFleet(db)
  const tally = { queuedBehindDelete: 0, servedBeforeDelete: 0 }
  for (let round = 0; round < ROUNDS; round++) {
    const d = fleet.addDriver()
    const path = `/drivers/${d.id}`
    const tok = fleet.ownerToken
    // The delete leaves first; the rest follow in the same tick, so most of them queue behind it.
    const answers = await Promise.all([
      call('delete', 'DELETE', path, tok),
      call('get', 'GET', path, tok),
      call('put', 'PUT', path, tok, { name: `Renamed ${round}` }),
      call('rotate', 'POST', `${path}/rotate-token`, tok),
      call('get', 'GET', path, tok),
      call('put', 'PUT', path, tok, { name: `Again ${round}` }),
      call('delete', 'DELETE', path, tok),
    ])
    checkAnswers(t, answers, { delete: [204, 404], get: [200, 404], put: [200, 404], rotate: [200, 404] })
    t.equal(answers.filter((a) => a.what === 'delete' && a.status === 204).length, 1, 'exactly one delete succeeded')
    for (const a of answers) if (a.what !== 'delete') tally[a.status === 404 ? 'queuedBehindDelete' : 'servedBeforeDelete']++
    // Afterwards the driver is gone everywhere, and stays gone (also after its actor is passivated).
    t.equal((await call('get', 'GET', path, tok)).status, 404)
    t.equal((await call('get', 'GET', '/driver/me', d.token)).status, 401, 'its token is dead')
  }
  t.ok(tally.queuedBehindDelete > 0, `some requests raced the delete and lost (${JSON.stringify(tally)})`)
})

t.test('messages queued behind a driver delete answer 404 from the actor, even when the delete evicts it', async (t) => {
  const fleet = createFleet(db)
  const d = fleet.addDriver()
  const drivers = s.app.svc.actors.drivers
  // As DELETE /drivers/{id} does: evict the actor the moment the delete is acknowledged, while
  // the get and the update (past their HTTP tenancy check) still wait in its mailbox.
  const [del, get, put] = await Promise.allSettled([
    drivers.ask<null>(d.id, (replyTo) => ({ type: 'delete', replyTo })).then(() => drivers.evict(d.id)),
    drivers.ask(d.id, (replyTo) => ({ type: 'get', replyTo }), REQUEST_BOUND_MS),
    drivers.ask(d.id, (replyTo) => ({ type: 'update', patch: { name: 'late' }, replyTo }), REQUEST_BOUND_MS),
  ])
  t.equal(del.status, 'fulfilled', 'the delete is acknowledged')
  t.match(get, { status: 'rejected', reason: { code: 'not_found' } }, 'a get queued behind the delete is a 404, not a query timeout')
  t.match(put, { status: 'rejected', reason: { code: 'not_found' } }, 'an update queued behind the delete is a 404, not a query timeout')
  t.equal(db.prepare('SELECT COUNT(*) FROM drivers WHERE id = ?').pluck().get(d.id), 0, 'the late update wrote nothing back')
  await t.rejects(drivers.ask(d.id, (replyTo) => ({ type: 'get', replyTo }), REQUEST_BOUND_MS), { code: 'not_found' }, 'later messages too')
})

t.test('DELETE racing PUT of a coupon (owner and staff routes): 200/204/404, never 500 or a hang', async (t) => {
  const a = createAccount(db)
  const cashier = createStaff(db, a.storeId, { role: 'cashier' })
  let queuedBehind = 0
  for (let round = 0; round < ROUNDS; round++) {
    const staff = round % 2 === 1
    const created = await call('create', 'POST', staff ? '/staff/coupons' : `/restaurants/${a.storeId}/coupons`, staff ? cashier.token : a.token,
      { code: `RACE-${round}`, kind: 'percent', value: 10 })
    t.equal(created.status, 200)
    const path = staff ? `/staff/coupons/${created.body.id}` : `/restaurants/${a.storeId}/coupons/${created.body.id}`
    const tok = staff ? cashier.token : a.token
    const answers = await Promise.all([
      call('delete', 'DELETE', path, tok),
      call('put', 'PUT', path, tok, { value: 20 }),
      call('put', 'PUT', path, tok, { active: false, usage_limit: 5 }),
      call('put', 'PUT', path, tok, { code: `RACE-${round}-B` }),
      call('delete', 'DELETE', path, tok),
    ])
    checkAnswers(t, answers, { delete: [204, 404], put: [200, 404] })
    t.equal(answers.filter((x) => x.what === 'delete' && x.status === 204).length, 1, 'exactly one delete succeeded')
    queuedBehind += answers.filter((x) => x.what === 'put' && x.status === 404).length
    t.equal(db.prepare('SELECT COUNT(*) FROM coupons WHERE id = ?').pluck().get(created.body.id), 0, 'no PUT brought the coupon back')
    t.equal((await call('put', 'PUT', path, tok, { value: 5 })).status, 404, 'a PUT after the delete is a 404')
  }
  t.ok(queuedBehind > 0, `some PUTs raced the delete and lost (${queuedBehind})`)
})

t.test('a coupon redeemed by past orders can be deleted; the orders keep their code and discount', async (t) => {
  const a = createAccount(db)
  const sf = createStorefrontToken(db, a.storeId)
  const c = (await call('create', 'POST', `/restaurants/${a.storeId}/coupons`, a.token, { code: 'PAST1', kind: 'fixed', value: 1 })).body
  const order = await fetch(`${s.base}/storefront/orders`, {
    method: 'POST', headers: { 'x-storefront-token': sf, 'content-type': 'application/json' },
    body: JSON.stringify({ type: 'takeaway', coupon_code: 'PAST1', items: [{ item_id: a.menu.fries, quantity: 1 }] }),
    signal: AbortSignal.timeout(REQUEST_BOUND_MS),
  }).then(async (r) => ({ status: r.status, body: await r.json() as any }))
  t.equal(order.status, 200)
  t.equal((await call('delete', 'DELETE', `/restaurants/${a.storeId}/coupons/${c.id}`, a.token)).status, 204, 'no foreign-key refusal')
  const after = await call('get', 'GET', `/restaurants/${a.storeId}/orders/${order.body.id}`, a.token)
  t.match(after.body, { coupon_code: 'PAST1', discount: 1 }, 'the order still says what was applied')
  const again = await call('create', 'POST', `/restaurants/${a.storeId}/coupons`, a.token, { code: 'PAST1', kind: 'fixed', value: 2 })
  t.equal(again.status, 200, 'the code is free again')
})

t.test('orders racing a coupon delete are priced with the coupon or refused with 422, never 500', async (t) => {
  const a = createAccount(db)
  const sf = createStorefrontToken(db, a.storeId)
  for (let round = 0; round < 10; round++) {
    const code = `ORD-${round}`
    const c = (await call('create', 'POST', `/restaurants/${a.storeId}/coupons`, a.token, { code, kind: 'fixed', value: 1 })).body
    const place = () => fetch(`${s.base}/storefront/orders`, {
      method: 'POST', headers: { 'x-storefront-token': sf, 'content-type': 'application/json' },
      body: JSON.stringify({ type: 'takeaway', coupon_code: code, items: [{ item_id: a.menu.fries, quantity: 1 }] }),
      signal: AbortSignal.timeout(REQUEST_BOUND_MS),
    }).then(async (r) => ({ what: 'order', status: r.status, body: await r.json() as any }))
    const answers = await Promise.all([place(), call('delete', 'DELETE', `/restaurants/${a.storeId}/coupons/${c.id}`, a.token), place()])
    checkAnswers(t, answers, { order: [200, 422], delete: [204] })
    for (const o of answers) if (o.what === 'order' && o.status === 200) t.match(o.body, { coupon_code: code, discount: 1 })
  }
})

t.test('coupon writes and orders are one queue in the store actor: an order ahead of the delete keeps its discount', async (t) => {
  const a = createAccount(db)
  const c = (await call('create', 'POST', `/restaurants/${a.storeId}/coupons`, a.token, { code: 'QUEUE', kind: 'fixed', value: 1 })).body
  const stores = s.app.svc.actors.stores
  const input = { type: 'takeaway', coupon_code: 'QUEUE', items: [{ item_id: a.menu.fries, quantity: 1 }] }
  // Each call puts its message in the store's mailbox synchronously, so this is the actor's order.
  const [before, del, put, after] = await Promise.allSettled([
    placeOrder(s.app.svc, { storeId: a.storeId, caller: 'test', input, couponCode: 'QUEUE' }),
    stores.ask<null>(a.storeId, (replyTo) => ({ type: 'coupon_delete', couponId: c.id, replyTo }), REQUEST_BOUND_MS),
    stores.ask(a.storeId, (replyTo) => ({ type: 'coupon_update', couponId: c.id, input: { value: 2 }, replyTo }), REQUEST_BOUND_MS),
    placeOrder(s.app.svc, { storeId: a.storeId, caller: 'test', input, couponCode: 'QUEUE' }),
  ])
  t.match(before, { status: 'fulfilled', value: { value: { coupon_code: 'QUEUE', discount: 1 } } }, 'the order ahead of the delete redeemed the coupon')
  t.equal(del.status, 'fulfilled', 'the delete of a just-redeemed coupon succeeds')
  t.match(put, { status: 'rejected', reason: { code: 'not_found' } }, 'the update behind the delete is a 404')
  t.match(after, { status: 'rejected', reason: { code: 'validation_failed', errors: { coupon_code: [/does not exist/] } } }, 'the order behind it is refused with 422')
})
