/**
 * Idempotent order creation (api-v1 §2.4, docs/orders.md; IETF idempotency-key draft):
 * `Idempotency-Key` or `client_uuid`; replay → the original order with 200 and
 * `Idempotent-Replayed: true`; same key, other body → 422 `idempotency_key_reused`; a concurrent
 * retry → 409 `idempotency_in_flight` or a replay, never a second order.
 */
import t, { type Test } from 'tap'
import { startServer } from './helpers/server.ts'
import { counts, createAccount, createCustomer, createMenu, createStore, isError, postOrder } from './helpers/fixtures.ts'
import { createStorefrontToken } from './helpers/people.ts'
import { holdNextCommit } from './helpers/hold-commit.ts'
import { newToken } from '../src/auth/tokens.ts'
import type { CreatedOrder } from '../src/actors/store.ts'
import type { Db } from '../src/storage/db.ts'

const s = await startServer({ RATE_LIMIT_PER_MINUTE: '100000' })
t.teardown(() => s.close())
const db = s.app.svc.db
const acct = createAccount(db)
const body = { type: 'takeaway', items: [{ item_id: acct.menu.burger.id, quantity: 2, extras: [acct.menu.burger.cheese] }] }
const create = (b: unknown, headers?: Record<string, string>, storeId = acct.storeId) => postOrder(s, acct.token, storeId, b, headers)
const ordersFor = (storeId = acct.storeId) => db.prepare('SELECT COUNT(*) FROM orders WHERE store_id = ?').pluck().get(storeId) as number

t.test('Idempotency-Key: a replay returns the original order with 200 and Idempotent-Replayed', async (t) => {
  const first = await create(body, { 'idempotency-key': 'key-1' })
  t.equal(first.status, 200)
  t.equal(first.headers.get('idempotent-replayed'), null, 'a first request is not marked replayed')
  const before = counts(db)
  const replay = await create(body, { 'idempotency-key': 'key-1' })
  t.equal(replay.status, 200)
  t.equal(replay.headers.get('idempotent-replayed'), 'true')
  t.equal(replay.body.id, first.body.id)
  t.equal(replay.body.track_token, first.body.track_token, 'the replay carries the same track_token')
  t.equal(replay.body.total, first.body.total)
  // Key order in the JSON body does not matter: same request, same key.
  const reordered = await create({ items: body.items, type: body.type }, { 'idempotency-key': 'key-1' })
  t.equal(reordered.status, 200)
  t.equal(reordered.headers.get('idempotent-replayed'), 'true')
  t.equal(reordered.body.id, first.body.id)
  t.same(counts(db), before, 'replays write nothing')
})

t.test('same key with a different body is 422 idempotency_key_reused, nothing written', async (t) => {
  await create(body, { 'idempotency-key': 'key-2' })
  const before = counts(db)
  const r = await create({ ...body, note: 'different' }, { 'idempotency-key': 'key-2' })
  isError(t, r, 422, 'idempotency_key_reused')
  const r2 = await create({ type: 'takeaway', items: [{ item_id: acct.menu.fries, quantity: 1 }] }, { 'idempotency-key': 'key-2' })
  isError(t, r2, 422, 'idempotency_key_reused', 'other items')
  t.same(counts(db), before)
})

t.test('client_uuid in the body works like the header', async (t) => {
  const b = { ...body, client_uuid: '6f1c1d1e-0000-4000-8000-000000000001' }
  const first = await create(b)
  t.equal(first.status, 200)
  t.equal(first.headers.get('idempotent-replayed'), null)
  const replay = await create(b)
  t.equal(replay.status, 200)
  t.equal(replay.headers.get('idempotent-replayed'), 'true')
  t.equal(replay.body.id, first.body.id)
  isError(t, await create({ ...b, tip_amount: 1 }), 422, 'idempotency_key_reused', 'client_uuid with another body')
  const other = await create({ ...body, client_uuid: '6f1c1d1e-0000-4000-8000-000000000002' })
  t.equal(other.status, 200, 'another client_uuid is another order')
  t.not(other.body.id, first.body.id)
})

t.test('a failed request does not burn its key', async (t) => {
  const bad = await create({ type: 'takeaway', items: [{ item_id: acct.menu.soup, quantity: 1 }] }, { 'idempotency-key': 'key-3' })
  t.equal(bad.status, 422)
  const good = await create(body, { 'idempotency-key': 'key-3' })
  t.equal(good.status, 200, 'the key is free after a validation failure')
})

t.test('keys are scoped per store; without a key every request is a new order', async (t) => {
  const other = createStore(db, acct.ownerId)
  const otherMenu = createMenu(db, other.id)
  const a = await create(body, { 'idempotency-key': 'shared' })
  const b = await create({ type: 'takeaway', items: [{ item_id: otherMenu.fries, quantity: 1 }] }, { 'idempotency-key': 'shared' }, other.id)
  t.equal(a.status, 200)
  t.equal(b.status, 200, 'the same key in another store is a different request')
  const n = ordersFor()
  const x = await create(body)
  const y = await create(body)
  t.equal(x.status, 200)
  t.equal(y.status, 200)
  t.not(x.body.id, y.body.id)
  t.equal(ordersFor(), n + 2)
})

t.test('a key must be 1..255 characters', async (t) => {
  isError(t, await create(body, { 'idempotency-key': 'k'.repeat(256) }), 422, 'validation_failed', '256 chars')
  isError(t, await create({ ...body, client_uuid: '' }), 422, 'validation_failed', 'empty client_uuid')
  t.equal((await create(body, { 'idempotency-key': 'k'.repeat(255) })).status, 200, '255 chars')
})

t.test('concurrent requests with one key create one order', async (t) => {
  const n = ordersFor()
  const rs = await Promise.all(Array.from({ length: 8 }, () => create(body, { 'idempotency-key': 'race-1' })))
  const statuses = rs.map((r) => r.status)
  const isFirst = (r: (typeof rs)[number]) => r.status === 200 && r.headers.get('idempotent-replayed') === null
  t.equal(rs.filter(isFirst).length, 1, `exactly one first create (got ${statuses.join(',')})`)
  for (const r of rs.filter((r) => !isFirst(r))) {
    if (r.status === 409) t.equal(r.body.code, 'idempotency_in_flight')
    else {
      t.equal(r.status, 200)
      t.equal(r.headers.get('idempotent-replayed'), 'true')
      t.equal(r.body.id, rs.find(isFirst)!.body.id, 'a replay of the one order')
    }
  }
  t.equal(ordersFor(), n + 1, 'one order written')

  const mixed = await Promise.all([create(body, { 'idempotency-key': 'race-2' }), create({ ...body, note: 'other' }, { 'idempotency-key': 'race-2' })])
  t.same(mixed.map((r) => r.status).sort(), [200, 422], 'a different body racing the first is refused as reused')
  t.match(mixed.find((r) => r.status === 422)!.body, { code: 'validation_failed', reason: 'idempotency_key_reused' })
})

/** Hold every durable write for `ms` so a first request is still in flight when the next arrives. */
function slowCommits(t: Test, ms: number): { firstWrite: Promise<void> } {
  const committer = s.app.svc.committer
  const write = committer.write.bind(committer)
  let started!: () => void
  const firstWrite = new Promise<void>((r) => { started = r })
  committer.write = <T>(fn: (db: Db) => T) => {
    started()
    return new Promise<void>((r) => setTimeout(r, ms)).then(() => write(fn))
  }
  t.teardown(() => { committer.write = write })
  return { firstWrite }
}

t.test('a retry while the first request is still being written is 409 idempotency_in_flight', async (t) => {
  const { firstWrite } = slowCommits(t, 300)
  const n = ordersFor()
  const first = create(body, { 'idempotency-key': 'in-flight' })
  await firstWrite // the first request is priced and waiting for its commit
  const second = await create(body, { 'idempotency-key': 'in-flight' })
  isError(t, second, 409, 'idempotency_in_flight')
  const other = await create({ ...body, note: 'x' }, { 'idempotency-key': 'in-flight' })
  isError(t, other, 422, 'idempotency_key_reused', 'a different body while in flight')
  t.equal((await first).status, 200)
  const replay = await create(body, { 'idempotency-key': 'in-flight' })
  t.equal(replay.status, 200, 'after the commit it is a replay')
  t.equal(replay.headers.get('idempotent-replayed'), 'true')
  t.equal(ordersFor(), n + 1)
})

t.test('a replay still works after the store actor was passivated', async (t) => {
  const first = await create(body, { 'idempotency-key': 'after-evict' })
  s.app.svc.actors.stores.evict(acct.storeId)
  const replay = await create(body, { 'idempotency-key': 'after-evict' })
  t.equal(replay.status, 200)
  t.equal(replay.headers.get('idempotent-replayed'), 'true')
  t.equal(replay.body.id, first.body.id)
})

t.test('in-flight keys of different callers of one store do not collide (store actor protocol)', async (t) => {
  // Two principals (e.g. the owner and a customer) may pick the same key; their scopes differ.
  const input = { type: 'takeaway', items: [{ item_id: acct.menu.fries, quantity: 1 }] }
  const ask = (scope: string) => s.app.svc.actors.stores.ask<CreatedOrder>(acct.storeId, (replyTo) => ({
    type: 'create_order', input, customerId: null, couponCode: null, idem: { scope, key: 'same-key', hash: 'h' }, trackToken: newToken('track'), replyTo,
  }))
  slowCommits(t, 50)
  const [a, b] = await Promise.allSettled([ask('owner:1/store:x'), ask('customer:9/store:x')])
  t.equal(a.status, 'fulfilled')
  t.equal(b.status, 'fulfilled', `the second scope is not refused as in flight (${b.status === 'rejected' ? (b.reason as Error).message : ''})`)
  if (a.status === 'fulfilled' && b.status === 'fulfilled') t.not(a.value.order.id, b.value.order.id, 'two orders')
})

t.test('the storefront and customer APIs answer the same rule: 409 in flight, 422 reused, scoped per caller', async (t) => {
  const sfToken = createStorefrontToken(db, acct.storeId)
  const customer = createCustomer(db, acct.storeId)
  const input = { type: 'takeaway', customer_name: 'Ada', phone: '+15550001111', items: [{ item_id: acct.menu.fries, quantity: 1 }] }
  const doors = {
    storefront: (b: unknown, key: string) => s.req('POST', '/storefront/orders', { body: b, headers: { 'x-storefront-token': sfToken, 'idempotency-key': key } }),
    customer: (b: unknown, key: string) => s.req('POST', '/customer/orders', { token: customer.token, body: b, headers: { 'idempotency-key': key } }),
  }
  for (const [door, send] of Object.entries(doors)) {
    const n = ordersFor()
    const gate = holdNextCommit(t, s.app.svc.committer, 'src/actors/store.ts')
    const first = send(input, `${door}-1`)
    await gate.held
    isError(t, await send(input, `${door}-1`), 409, 'idempotency_in_flight', `${door}: the same request while the first is written`)
    isError(t, await send({ ...input, note: 'other' }, `${door}-1`), 422, 'idempotency_key_reused', `${door}: another request while the first is written`)
    gate.open()
    t.equal((await first).status, 200)
    const replay = await send(input, `${door}-1`)
    t.equal(replay.headers.get('idempotent-replayed'), 'true', `${door}: a replay once written`)
    isError(t, await send({ ...input, note: 'other' }, `${door}-1`), 422, 'idempotency_key_reused', `${door}: another request under a written key`)
    t.equal(ordersFor(), n + 1, `${door}: one order`)
  }
  // The owner picking the storefront's key is another caller: a new order, not a replay or a 422.
  const owner = await create({ ...body, note: 'owner' }, { 'idempotency-key': 'storefront-1' })
  t.equal(owner.status, 200)
  t.equal(owner.headers.get('idempotent-replayed'), null, 'keys are scoped per caller')
})
