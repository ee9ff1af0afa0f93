/**
 * PIN devices (issue 10 #8; docs/staff.md "PIN devices"): the owner or a manager signed in with a
 * password enrolls a device and gets its key once; the key is what `device` carries at PIN
 * sign-in; devices are listed without keys; revoking one stops its key and every token signed in
 * through it at once, closing its kitchen screens. Others get 403 or 404.
 */
import t from 'tap'
import { startServer } from './helpers/server.ts'
import { createAccount, createStaff, isError } from './helpers/fixtures.ts'
import { WsClient, wsBase } from './helpers/ws-client.ts'
import { enrollDevice } from './helpers/pin-devices.ts'
import { MAX_ACTIVE_DEVICES } from '../src/auth/pin-devices.ts'

const s = await startServer({ RATE_LIMIT_PER_MINUTE: '100000' })
t.teardown(() => s.close())
const db = s.app.svc.db
const a = createAccount(db)
const b = createAccount(db)
const base = `/restaurants/${a.storeId}`
const manager = createStaff(db, a.storeId, { role: 'manager' })
const cook = createStaff(db, a.storeId, { role: 'kitchen', pin: '3141' })
const waiter = createStaff(db, a.storeId, { role: 'waiter', pin: '2718' })
const pinIn = (pin: string, device: string) => s.req('POST', `${base}/staff/pin`, { body: { pin, device } })

t.test('the owner enrolls a device: the key once, then only a hint; the key signs staff in by PIN', async (t) => {
  const r = await s.req('POST', `${base}/pin-devices`, { token: a.token, body: { name: 'Kitchen screen 1' } })
  t.equal(r.status, 200, 'enrolling answers 200 (api-v1 §4)')
  t.match(r.body, { id: Number, restaurant_id: a.storeId, name: 'Kitchen screen 1', key: /^dsk_[\w-]{43}$/, enrolled_by: 'owner', enrolled_by_staff_id: null, revoked_at: null, last_used_at: null, locked_until: null })
  t.equal(r.body.key_hint, r.body.key.slice(0, 8), 'the hint is the start of the key')
  const row = db.prepare('SELECT key_hash FROM staff_pin_devices WHERE id = ?').get(r.body.id) as { key_hash: string }
  t.notOk(row.key_hash.includes(r.body.key), 'only a hash is kept')
  const list = await s.req('GET', `${base}/pin-devices`, { token: a.token })
  t.ok(list.body.some((d: { id: number }) => d.id === r.body.id))
  t.notOk(JSON.stringify(list.body).includes(r.body.key), 'the list never shows a key')
  const signed = await pinIn(cook.pin, r.body.key)
  t.equal(signed.status, 200, 'the key signs in by PIN')
  t.equal(signed.body.staff.id, cook.id)
  t.ok((await s.req('GET', `${base}/pin-devices`, { token: a.token })).body.find((d: { id: number }) => d.id === r.body.id).last_used_at, 'last_used_at is set')
  isError(t, await s.req('POST', `${base}/pin-devices`, { token: a.token, body: { name: '' } }), 422, 'validation_failed', 'a name is needed')
})

t.test('a manager signed in with a password enrolls, lists and revokes; PIN tokens and other roles cannot', async (t) => {
  const r = await s.req('POST', '/staff/pin-devices', { token: manager.token, body: { name: 'Till' } })
  t.equal(r.status, 200)
  t.match(r.body, { key: /^dsk_/, enrolled_by: 'staff', enrolled_by_staff_id: manager.id, restaurant_id: a.storeId })
  const list = await s.req('GET', '/staff/pin-devices', { token: manager.token })
  t.ok(list.body.some((d: { id: number }) => d.id === r.body.id), 'the manager sees the store\'s devices')
  t.notOk(JSON.stringify(list.body).includes(r.body.key))
  for (const m of [cook, waiter]) isError(t, await s.req('POST', '/staff/pin-devices', { token: m.token, body: { name: 'Mine' } }), 403, 'forbidden', `a ${m === cook ? 'cook' : 'waiter'}`)
  // A manager's PIN is short and typed on shared screens: not enough to let more devices in.
  const managerByPin = createStaff(db, a.storeId, { role: 'manager', pin: '9090' })
  const pinToken = (await pinIn(managerByPin.pin, r.body.key)).body.token as string
  t.ok(pinToken, 'the manager signs in by PIN on the till')
  isError(t, await s.req('POST', '/staff/pin-devices', { token: pinToken, body: { name: 'Sneaky' } }), 403, 'forbidden', 'a PIN-signed manager cannot enroll')
  isError(t, await s.req('DELETE', `/staff/pin-devices/${r.body.id}`, { token: pinToken }), 403, 'forbidden', 'nor revoke')
  t.equal((await s.req('DELETE', `/staff/pin-devices/${r.body.id}`, { token: manager.token })).status, 204)
  isError(t, await pinIn(cook.pin, r.body.key), 401, 'device_not_enrolled', 'the revoked till')
})

t.test('revoking a device revokes its key and every token signed in through it, and closes their kitchen screens', async (t) => {
  const screen1 = enrollDevice(db, a.storeId, 'Screen 1')
  const screen2 = enrollDevice(db, a.storeId, 'Screen 2')
  const viaOne = (await pinIn(cook.pin, screen1.key)).body.token as string
  const waiterViaOne = (await pinIn(waiter.pin, screen1.key)).body.token as string
  const viaTwo = (await pinIn(cook.pin, screen2.key)).body.token as string
  t.ok(viaOne && waiterViaOne && viaTwo, 'signed in on both screens')
  const socket = await WsClient.open(`${wsBase(s)}/ws/kds?token=${encodeURIComponent(viaOne)}`)
  await socket.next((f) => f.type === 'snapshot')

  t.equal((await s.req('DELETE', `${base}/pin-devices/${screen1.id}`, { token: a.token })).status, 204)
  t.equal((await socket.closedWithin()).code, 4001, 'the kitchen screen signed in through the device closes')
  for (const tok of [viaOne, waiterViaOne]) isError(t, await s.req('GET', '/staff/me', { token: tok }), 401, 'unauthenticated', 'a token signed in through the revoked device')
  t.equal((await s.req('GET', '/staff/me', { token: viaTwo })).status, 200, 'the other device stays signed in')
  t.equal((await s.req('GET', '/staff/me', { token: cook.token })).status, 200, 'and so does the cook\'s password device')
  isError(t, await pinIn(cook.pin, screen1.key), 401, 'device_not_enrolled', 'the revoked device cannot sign in, even with the right PIN')
  const listed = (await s.req('GET', `${base}/pin-devices`, { token: a.token })).body.find((d: { id: number }) => d.id === screen1.id)
  t.ok(listed.revoked_at, 'listed as revoked')
  const first = listed.revoked_at
  t.equal((await s.req('DELETE', `${base}/pin-devices/${screen1.id}`, { token: a.token })).status, 204, 'revoking again is fine')
  t.equal((await s.req('GET', `${base}/pin-devices`, { token: a.token })).body.find((d: { id: number }) => d.id === screen1.id).revoked_at, first, 'and keeps the first time')
  isError(t, await s.req('DELETE', `${base}/pin-devices/999999`, { token: a.token }), 404, 'not_found', 'no such device')
})

t.test('another store: 404 for its owner and its manager; a key works only at its own store', async (t) => {
  const dev = enrollDevice(db, a.storeId, 'A only')
  const managerB = createStaff(db, b.storeId, { role: 'manager', pin: cook.pin })
  isError(t, await s.req('GET', `${base}/pin-devices`, { token: b.token }), 404, 'not_found', 'list')
  isError(t, await s.req('POST', `${base}/pin-devices`, { token: b.token, body: { name: 'Mole' } }), 404, 'not_found', 'enroll')
  isError(t, await s.req('POST', `${base}/pin-devices`, { token: b.token, body: { name: '' } }), 404, 'not_found', 'enroll with an invalid body: 404 before 422')
  isError(t, await s.req('DELETE', `${base}/pin-devices/${dev.id}`, { token: b.token }), 404, 'not_found', 'revoke')
  isError(t, await s.req('DELETE', `/restaurants/${b.storeId}/pin-devices/${dev.id}`, { token: b.token }), 404, 'not_found', 'revoke through its own store')
  isError(t, await s.req('DELETE', `/staff/pin-devices/${dev.id}`, { token: managerB.token }), 404, 'not_found', "another store's manager")
  t.notOk((await s.req('GET', '/staff/pin-devices', { token: managerB.token })).body.some((d: { id: number }) => d.id === dev.id), "not in the other store's list")
  t.equal((db.prepare('SELECT revoked_at FROM staff_pin_devices WHERE id = ?').get(dev.id) as { revoked_at: string | null }).revoked_at, null, 'untouched')
  isError(t, await s.req('POST', `/restaurants/${b.storeId}/staff/pin`, { body: { pin: cook.pin, device: dev.key } }), 401, 'device_not_enrolled', "store A's key at store B")
  isError(t, await s.req('GET', `${base}/pin-devices`, { token: manager.token }), 401, 'unauthenticated', 'a staff token is not an owner token')
})

t.test(`at most ${MAX_ACTIVE_DEVICES} enrolled devices per store`, async (t) => {
  const own = createAccount(db)
  const devices = Array.from({ length: MAX_ACTIVE_DEVICES }, (_, i) => enrollDevice(db, own.storeId, `d${i}`))
  isError(t, await s.req('POST', `/restaurants/${own.storeId}/pin-devices`, { token: own.token, body: { name: 'one more' } }), 409, 'conflict', 'the cap')
  t.equal((await s.req('DELETE', `/restaurants/${own.storeId}/pin-devices/${devices[0]!.id}`, { token: own.token })).status, 204)
  t.equal((await s.req('POST', `/restaurants/${own.storeId}/pin-devices`, { token: own.token, body: { name: 'one more' } })).status, 200, 'a revoked device frees its place')
})
