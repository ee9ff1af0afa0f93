/**
 * Revocation reaches open sockets (issue 10 #3, docs/realtime.md "Close codes"): revoking a token
 * (from the CLI in another process too), its expiry, removing a permission, changing a role,
 * signing out, deleting a member and rotating a driver's token close every socket the credential
 * opened — 4001 when it is no longer valid, 4003 when it lost the permission — and leave every
 * other socket alone.
 */
import t, { type Test } from 'tap'
import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import Database from 'better-sqlite3'
import { ROOT } from './helpers/process.ts'
import { startServer } from './helpers/server.ts'
import { createFleet } from './helpers/delivery.ts'
import { createStaff } from './helpers/fixtures.ts'
import { WsClient, wsBase } from './helpers/ws-client.ts'
import { createOwnerToken } from '../src/seed.ts'
import { newToken, sha256Hex } from '../src/auth/tokens.ts'
import { nowIso } from '../src/storage/db.ts'

const run = promisify(execFile)
const s = await startServer({ RATE_LIMIT_PER_MINUTE: '100000' })
t.teardown(() => s.close())
const db = s.app.svc.db
const f = createFleet(db)
const feedUrl = `${wsBase(s)}/ws/dispatch/${f.storeId}`
const kdsUrl = `${wsBase(s)}/ws/kds`
const driverUrl = `${wsBase(s)}/ws/driver`

/** Another connection to the server's database, as another process (the CLI) would write it. */
function otherConnection(): Database.Database {
  const other = new Database(s.dbPath)
  other.pragma('busy_timeout = 5000')
  return other
}

/** The real operator CLI, in its own process, against the running server's database. */
const cli = (...args: string[]) => run(process.execPath, ['bin/dispatch.js', ...args], {
  cwd: ROOT, env: { ...process.env, DB_PATH: s.dbPath, SITE_URL: s.site, LOG_LEVEL: 'silent' }, timeout: 60_000,
})

const moveDriver = async (tt: Test, lat: number) => {
  const r = await s.req('PUT', '/driver/location', { token: f.drivers[0]!.token, body: { lat, lng: 13.4 } })
  tt.equal(r.status, 200, 'position stored')
}

/** How a socket closed, failing clearly (not by the test's timeout) if it stays open. */
const closing = (c: WsClient) => c.closedWithin(15_000)

t.test('an owner token revoked by the CLI in another process closes its dispatch sockets with 4001', async (t) => {
  const doomed = createOwnerToken(db, f.ownerId, ['drivers:read']).token
  const kept = createOwnerToken(db, f.ownerId, ['drivers:read']).token
  const a = await WsClient.open(feedUrl, { token: doomed })
  const b = await WsClient.open(`${feedUrl}?token=${doomed}`) // a second socket with the same token
  const other = await WsClient.open(feedUrl, { token: kept })
  for (const c of [a, b, other]) await c.next((x) => x.type === 'snapshot')
  await moveDriver(t, 52.5)
  for (const c of [a, b, other]) await c.next((x) => x.type === 'location' && x.lat === 52.5)

  const { stdout } = await cli('token', 'revoke', '--token', doomed, '--json')
  t.same(JSON.parse(stdout), { revoked: true })
  t.same(await closing(a), { code: 4001, reason: 'token_revoked' }, 'the socket closes with the documented code')
  t.same(await closing(b), { code: 4001, reason: 'token_revoked' }, 'every socket of that token')
  t.equal((await s.req('GET', '/me', { token: doomed })).status, 401, 'as HTTP refuses it')

  await moveDriver(t, 52.6)
  t.match(await other.next((x) => x.type === 'location' && x.lat === 52.6), { driver_id: f.drivers[0]!.id }, 'a socket of another token keeps its feed')
  t.notOk(a.frames.some((x) => x.type === 'location' && x.lat === 52.6), 'nothing reached the revoked socket')
  await other.close()
})

t.test('an owner token that expires closes its dispatch socket with 4001', async (t) => {
  const { token } = createOwnerToken(db, f.ownerId, ['drivers:read'], nowIso(Date.now() + 3000))
  const c = await WsClient.open(feedUrl, { token })
  await c.next((x) => x.type === 'snapshot')
  t.same(await closing(c), { code: 4001, reason: 'token_revoked' })
  t.equal((await s.req('GET', '/me', { token })).status, 401)
})

t.test('kds taken away by the owner closes the member\'s kitchen screens with 4003; other screens stay', async (t) => {
  const cook = createStaff(db, f.storeId, { role: 'kitchen' })
  const waiter = createStaff(db, f.storeId, { role: 'waiter' })
  const screen = await WsClient.open(`${kdsUrl}?token=${encodeURIComponent(cook.token)}`)
  const other = await WsClient.open(`${kdsUrl}?token=${encodeURIComponent(waiter.token)}`)
  await screen.next((x) => x.type === 'snapshot')
  await other.next((x) => x.type === 'snapshot')
  const base = `/restaurants/${f.storeId}/staff`

  const rename = await s.req('PUT', `${base}/${cook.id}`, { token: f.ownerToken, body: { name: 'Still a cook' } })
  t.equal(rename.status, 200)
  screen.send({ type: 'ping' })
  await screen.next((x) => x.type === 'pong')
  t.pass('a change that keeps `kds` keeps the screen')

  const r = await s.req('PUT', `${base}/${cook.id}`, { token: f.ownerToken, body: { permissions: { revoke: ['kds'] } } })
  t.equal(r.status, 200)
  t.notOk(r.body.permissions.includes('kds'))
  t.same(await closing(screen), { code: 4003, reason: 'permission_removed' })
  t.match(await WsClient.open(`${kdsUrl}?token=${encodeURIComponent(cook.token)}`).then(() => null, (e) => e), { status: 403 }, 'a new screen is refused with 403')

  // A role without `kds` does the same.
  const role = await s.req('PUT', `${base}/${waiter.id}`, { token: f.ownerToken, body: { role: 'cashier' } })
  t.equal(role.status, 200)
  t.same(await closing(other), { code: 4003, reason: 'permission_removed' }, 'waiter → cashier')
})

t.test('changes written by another connection are noticed: a revoked permission and a revoked driver device token', async (t) => {
  const cook = createStaff(db, f.storeId, { role: 'kitchen' })
  const screen = await WsClient.open(`${kdsUrl}?token=${encodeURIComponent(cook.token)}`)
  await screen.next((x) => x.type === 'snapshot')
  const device = newToken('driver')
  db.prepare('INSERT INTO driver_tokens (driver_id, token_hash, device, created_at) VALUES (?, ?, ?, ?)').run(f.drivers[1]!.id, sha256Hex(device), 'phone', nowIso())
  const app = await WsClient.open(driverUrl, { token: device })
  await app.next((x) => x.type === 'hello')
  const sibling = await WsClient.open(driverUrl, { token: f.drivers[1]!.token })
  await sibling.next((x) => x.type === 'hello')

  const other = otherConnection()
  t.teardown(() => other.close())
  other.prepare('UPDATE staff SET permissions = ? WHERE id = ?').run(JSON.stringify({ revoke: ['kds'] }), cook.id)
  other.prepare('UPDATE driver_tokens SET revoked_at = ? WHERE token_hash = ?').run(nowIso(), sha256Hex(device))
  t.same(await closing(screen), { code: 4003, reason: 'permission_removed' })
  t.same(await closing(app), { code: 4001, reason: 'token_revoked' })
  sibling.send({ type: 'ping' })
  await sibling.next((x) => x.type === 'pong')
  t.pass('the driver\'s socket opened with its other, still valid token stays')
  await sibling.close()
})

t.test('signing out, removing the member and rotating a driver token close their sockets with 4001', async (t) => {
  const a = createStaff(db, f.storeId, { role: 'kitchen' })
  const b = createStaff(db, f.storeId, { role: 'kitchen' })
  const sa = await WsClient.open(`${kdsUrl}?token=${encodeURIComponent(a.token)}`)
  const sb = await WsClient.open(`${kdsUrl}?token=${encodeURIComponent(b.token)}`)
  await sa.next((x) => x.type === 'snapshot')
  await sb.next((x) => x.type === 'snapshot')
  t.equal((await s.req('POST', '/staff/logout', { token: a.token })).status, 200)
  t.equal((await closing(sa)).code, 4001, 'signed out')
  t.equal((await s.req('DELETE', `/restaurants/${f.storeId}/staff/${b.id}`, { token: f.ownerToken })).status, 204)
  t.equal((await closing(sb)).code, 4001, 'member removed')

  const d = f.addDriver()
  const app = await WsClient.open(driverUrl, { token: d.token })
  await app.next((x) => x.type === 'hello')
  t.equal((await s.req('POST', `/drivers/${d.id}/rotate-token`, { token: f.ownerToken })).status, 200)
  t.same(await closing(app), { code: 4001, reason: 'token_rotated' })
})

t.test('the registry forgets closed sockets', async (t) => {
  const sessions = (s.app.svc.realtime as unknown as { sessions: { size: number } }).sessions
  const before = sessions.size
  const c = await WsClient.open(feedUrl, { token: f.ownerToken })
  await c.next((x) => x.type === 'snapshot')
  t.equal(sessions.size, before + 1)
  await c.close()
  for (let i = 0; i < 100 && sessions.size !== before; i++) await new Promise((r) => setTimeout(r, 10))
  t.equal(sessions.size, before)
})
