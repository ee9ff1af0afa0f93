/**
 * Owner driver management (api-v1 §4.2 `/drivers`, §2.7, §5): token once, rotation, tenancy, scopes.
 * Requests racing a delete: test/delete-races.test.ts.
 */
import t from 'tap'
import { startServer } from './helpers/server.ts'
import { createFleet, deliveryOrder, assign } from './helpers/delivery.ts'
import { WsClient, wsBase } from './helpers/ws-client.ts'
import { createOwnerToken } from '../src/seed.ts'

const s = await startServer({ RATE_LIMIT_PER_MINUTE: '100000' })
t.teardown(() => s.close())
const db = s.app.svc.db
const a = createFleet(db)
const b = createFleet(db)

t.test('create returns the raw token once; list and read never show it', async (t) => {
  const r = await s.req('POST', '/drivers', { token: a.ownerToken, body: { name: 'Ravi', phone: '+1 (555) 010-0200', restaurant_id: a.storeId } })
  t.equal(r.status, 200, 'a create answers 200 (api-v1 §4)')
  t.match(r.body, { id: Number, name: 'Ravi', phone: '+15550100200', restaurant_id: a.storeId, on_shift: false, location: null, token: /^dsd_/ })
  const stored = db.prepare('SELECT token_hash FROM drivers WHERE id = ?').pluck().get(r.body.id) as string
  t.not(stored, r.body.token, 'only a hash is stored')

  const me = await s.req('GET', '/driver/me', { token: r.body.token })
  t.equal(me.status, 200, 'the token works for the driver app')
  t.equal(me.body.id, r.body.id)

  const list = await s.req('GET', '/drivers', { token: a.ownerToken })
  t.equal(list.status, 200)
  t.match(list.body, { current_page: 1, per_page: 50, total: 3 })
  t.ok(list.body.data.every((d: any) => !('token' in d)), 'no token in the list')
  const one = await s.req('GET', `/drivers/${r.body.id}`, { token: a.ownerToken })
  t.match(one.body, { id: r.body.id, connected: false, active_deliveries: [] })
  t.notOk('token' in one.body)

  const byStore = await s.req('GET', `/drivers?restaurant_id=${a.storeId}`, { token: a.ownerToken })
  t.equal(byStore.body.total, 3)
})

t.test('create validates fields; a store of another owner is a field error', async (t) => {
  const bad = await s.req('POST', '/drivers', { token: a.ownerToken, body: { name: '', phone: 'call me' } })
  t.equal(bad.status, 422)
  t.ok(bad.body.errors.name && bad.body.errors.phone)
  const foreign = await s.req('POST', '/drivers', { token: a.ownerToken, body: { name: 'X', phone: '+15550100', restaurant_id: b.storeId } })
  t.equal(foreign.status, 422)
  t.ok(foreign.body.errors.restaurant_id)
})

t.test('update and unbind; delete answers 204 and the driver is gone', async (t) => {
  const d = a.addDriver()
  const up = await s.req('PUT', `/drivers/${d.id}`, { token: a.ownerToken, body: { name: 'Renamed', restaurant_id: null } })
  t.equal(up.status, 200)
  t.match(up.body, { name: 'Renamed', restaurant_id: null })
  t.equal((await s.req('GET', '/driver/me', { token: d.token })).body.name, 'Renamed', 'the driver sees its new profile')
  const del = await s.req('DELETE', `/drivers/${d.id}`, { token: a.ownerToken })
  t.equal(del.status, 204)
  t.equal((await s.req('GET', `/drivers/${d.id}`, { token: a.ownerToken })).status, 404)
  t.equal((await s.req('PUT', `/drivers/${d.id}`, { token: a.ownerToken, body: { name: 'Back' } })).status, 404, 'an update does not bring it back')
  t.equal((await s.req('POST', `/drivers/${d.id}/rotate-token`, { token: a.ownerToken })).status, 404, 'nor does a new token')
  t.equal((await s.req('DELETE', `/drivers/${d.id}`, { token: a.ownerToken })).status, 404, 'a second delete is a 404')
  t.equal((await s.req('GET', '/driver/me', { token: d.token })).status, 401, 'its token is dead')
})

t.test('a driver with active deliveries cannot be deleted (409 driver_busy)', async (t) => {
  const d = a.addDriver()
  const o = await deliveryOrder(s, a)
  await assign(s, a, o.id, d.id)
  const del = await s.req('DELETE', `/drivers/${d.id}`, { token: a.ownerToken })
  t.equal(del.status, 409)
  t.equal(del.body.code, 'driver_busy')
})

t.test('rotate-token: the old token (and its open socket) stop at once, the new one works', async (t) => {
  const d = a.addDriver()
  const sock = await WsClient.open(`${wsBase(s)}/ws/driver`, { token: d.token })
  await sock.next((f) => f.type === 'hello')
  const r = await s.req('POST', `/drivers/${d.id}/rotate-token`, { token: a.ownerToken })
  t.equal(r.status, 200)
  t.match(r.body, { id: d.id, token: /^dsd_/ })
  t.not(r.body.token, d.token)
  t.equal((await s.req('GET', '/driver/me', { token: d.token })).status, 401, 'old token refused')
  t.equal((await s.req('GET', '/driver/me', { token: r.body.token })).status, 200, 'new token accepted')
  const closed = await sock.closed
  t.equal(closed.code, 4001, 'the socket opened with the old token is closed')
  const refused = await WsClient.open(`${wsBase(s)}/ws/driver`, { token: d.token }).then(() => null, (e) => e)
  t.equal(refused?.status, 401, 'a new socket with the old token is refused')
})

t.test("another owner's driver is 404 on every route", async (t) => {
  const theirs = b.drivers[0]!
  for (const [method, path, body] of [
    ['GET', `/drivers/${theirs.id}`, undefined],
    ['PUT', `/drivers/${theirs.id}`, { name: 'x' }],
    ['DELETE', `/drivers/${theirs.id}`, undefined],
    ['POST', `/drivers/${theirs.id}/rotate-token`, undefined],
    ['GET', '/drivers/999999', undefined],
  ] as const) {
    const r = await s.req(method, path, { token: a.ownerToken, body })
    t.equal(r.status, 404, `${method} ${path}`)
    t.equal(r.body.code, 'not_found')
  }
  t.equal((await s.req('GET', '/driver/me', { token: theirs.token })).status, 200, 'and it is untouched')
  const list = await s.req('GET', '/drivers', { token: a.ownerToken })
  t.notOk(list.body.data.some((d: any) => d.id === theirs.id), 'not listed')
})

t.test("another owner's driver with an invalid body is still 404, not 422 (404 before 422)", async (t) => {
  const theirs = b.drivers[0]!
  for (const body of [{ name: '', phone: 'call me' }, { restaurant_id: 'x' }, [1, 2]]) {
    const r = await s.req('PUT', `/drivers/${theirs.id}`, { token: a.ownerToken, body })
    t.equal(r.status, 404, `PUT ${JSON.stringify(body)}`)
    t.equal(r.body.code, 'not_found')
  }
  const mine = await s.req('PUT', `/drivers/${a.drivers[0]!.id}`, { token: a.ownerToken, body: { name: '' } })
  t.equal(mine.status, 422, 'the same body on an own driver is a validation error')
})

t.test('capabilities: drivers:read reads, only drivers:write changes; no token is 401', async (t) => {
  const reader = createOwnerToken(db, a.ownerId, ['drivers:read']).token
  t.equal((await s.req('GET', '/drivers', { token: reader })).status, 200)
  const w = await s.req('POST', '/drivers', { token: reader, body: { name: 'N', phone: '+15550111' } })
  t.equal(w.status, 403)
  t.equal(w.body.code, 'forbidden')
  t.equal((await s.req('POST', `/drivers/${a.drivers[0]!.id}/rotate-token`, { token: reader })).status, 403)
  t.equal((await s.req('GET', '/drivers')).status, 401)
  t.equal((await s.req('GET', '/drivers', { token: a.drivers[0]!.token })).status, 401, 'a driver token is not an owner token')
  t.equal((await s.req('GET', '/driver/me', { token: a.ownerToken })).status, 401, 'an owner token is not a driver token')
})
