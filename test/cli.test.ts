/**
 * The operator CLI against the same database file as a running server: demo seeds, token create and
 * revoke take effect at once; output shapes; bad input exits non-zero.
 */
import t from 'tap'
import { spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { startServer } from './helpers/server.ts'
import { runCli } from '../src/cli.ts'

const ROOT = fileURLToPath(new URL('..', import.meta.url))
const s = await startServer({ RATE_LIMIT_PER_MINUTE: '100000' })
t.teardown(() => s.close())
const env = { DB_PATH: s.dbPath, SITE_URL: s.site, LOG_LEVEL: 'silent' }
const cli = (...args: string[]) => runCli(args, env)
const json = (...args: string[]) => {
  const r = cli(...args)
  if (r.code !== 0) throw new Error(`dispatch ${args.join(' ')} exited ${r.code}: ${r.out}`)
  return JSON.parse(r.out)
}
/** The real binary, for exit codes and stdout. */
const bin = (...args: string[]) => spawnSync(process.execPath, ['bin/dispatch.js', ...args], { cwd: ROOT, env: { ...process.env, ...env }, encoding: 'utf8', timeout: 20_000 })

const demo = json('seed', '--demo', '--json')

t.test('seed --demo --json prints a complete account that the running server accepts', async (t) => {
  t.match(demo, {
    owner: { id: Number, token: /^dso_/ },
    store: { id: Number, slug: String, storefront_token: /^dss_/ },
    driver: { id: Number, token: /^dsd_/ },
    customer: { email: String, password: String, phone: String },
  })
  t.equal(demo.staff.length, 4)
  t.same(demo.staff.map((x: { role: string }) => x.role).sort(), ['cashier', 'kitchen', 'manager', 'waiter'], 'staff of every role')
  for (const m of demo.staff) t.match(m, { id: Number, role: String, email: String, password: String, pin: /^\d+$/ })

  const me = await s.req('GET', '/me', { token: demo.owner.token })
  t.equal(me.status, 200, 'the new owner token works at once')
  t.same(me.body.token.capabilities, ['*'])
  const stores = await s.req('GET', '/restaurants', { token: demo.owner.token })
  t.same(stores.body.data.map((x: { id: number; slug: string }) => [x.id, x.slug]), [[demo.store.id, demo.store.slug]], 'the new store is visible at once')
  const menu = (await s.req('GET', `/restaurants/${demo.store.id}/menu`, { token: demo.owner.token })).body as Array<{ items: Array<Record<string, any>> }>
  const items = menu.flatMap((c) => c.items)
  t.ok(menu.length >= 2, 'several categories')
  t.ok(items.some((i) => i.is_sold_out), 'one item sold out')
  t.ok(items.some((i) => i.variations.length > 0) && items.some((i) => i.extras.length > 0), 'variations and extras')
  const item = items.find((i) => !i.is_sold_out && i.variations.length > 0 && i.extras.length > 0)!
  const o = await s.req('POST', `/restaurants/${demo.store.id}/orders`, { token: demo.owner.token, body: { type: 'takeaway', items: [{ item_id: item.id, quantity: 1, variation: item.variations[1].id, extras: [item.extras[0].id] }] } })
  t.equal(o.status, 200, 'the demo store takes orders')
  t.equal(o.body.total, Math.round((item.variations[1].price + item.extras[0].price) * 100) / 100)
})

t.test('each seed run is a new, separate account', async (t) => {
  const second = json('seed', '--demo', '--json')
  t.not(second.owner.id, demo.owner.id)
  t.not(second.store.id, demo.store.id)
  t.not(second.store.slug, demo.store.slug)
  t.not(second.owner.token, demo.owner.token)
  t.not(second.staff[0].email, demo.staff[0].email)
  const r = await s.req('GET', `/restaurants/${demo.store.id}`, { token: second.owner.token })
  t.equal(r.status, 404, "one demo owner cannot see the other's store")
})

t.test('token create prints {token} and the scoped token works at once', async (t) => {
  const out = json('token', 'create', '--owner', String(demo.owner.id), '--scopes', 'orders:read,menu:write', '--json')
  t.match(out, { token: /^dso_/ })
  const orders = await s.req('GET', `/restaurants/${demo.store.id}/orders`, { token: out.token })
  t.equal(orders.status, 200, 'orders:read granted')
  t.equal((await s.req('GET', `/restaurants/${demo.store.id}/menu`, { token: out.token })).status, 200, 'menu:write implies menu:read')
  t.equal((await s.req('GET', `/restaurants/${demo.store.id}/analytics`, { token: out.token })).status, 403, 'nothing else')
  t.same((await s.req('GET', '/me', { token: out.token })).body.token.capabilities, ['orders:read', 'menu:write'])

  const plain = cli('token', 'create', '--owner', String(demo.owner.id), '--scopes', 'read')
  t.equal(plain.code, 0)
  t.match(plain.out.trim(), /^dso_[A-Za-z0-9_-]+$/, 'without --json: just the token')
})

t.test('token create --expires-in makes a token that stops working', async (t) => {
  const out = json('token', 'create', '--owner', String(demo.owner.id), '--scopes', '*', '--expires-in', '1s', '--json')
  t.ok(Date.parse(out.expires_at) > Date.now(), 'expires_at reported')
  t.equal((await s.req('GET', '/me', { token: out.token })).status, 200)
  await new Promise((r) => setTimeout(r, Math.max(0, Date.parse(out.expires_at) - Date.now()) + 50))
  t.equal((await s.req('GET', '/me', { token: out.token })).status, 401, 'refused once expired')
  const week = json('token', 'create', '--owner', String(demo.owner.id), '--scopes', 'read', '--expires-in', '7d', '--json')
  const days = (Date.parse(week.expires_at) - Date.now()) / 86_400_000
  t.ok(days > 6.99 && days <= 7, '7d is seven days')
})

t.test('token revoke refuses the token at once', async (t) => {
  const { token } = json('token', 'create', '--owner', String(demo.owner.id), '--scopes', '*', '--json')
  t.equal((await s.req('GET', '/me', { token })).status, 200)
  t.same(json('token', 'revoke', '--token', token, '--json'), { revoked: true })
  const r = await s.req('GET', '/me', { token })
  t.equal(r.status, 401)
  t.equal(r.body.code, 'unauthenticated')
  t.equal(cli('token', 'revoke', '--token', token, '--json').code, 0, 'revoking twice is harmless')
  t.equal((await s.req('GET', '/me', { token: demo.owner.token })).status, 200, 'other tokens are untouched')
})

t.test('bad input exits non-zero, via the real binary', async (t) => {
  const bad = bin('token', 'create', '--owner', String(demo.owner.id), '--scopes', 'orders:delete', '--json')
  t.not(bad.status, 0, 'an unknown scope is refused')
  t.match(JSON.parse(bad.stdout), { error: /orders:delete/ }, '--json errors are JSON')
  const before = s.app.svc.db.prepare('SELECT COUNT(*) FROM owner_tokens').pluck().get()
  for (const args of [
    ['token', 'create', '--owner', String(demo.owner.id), '--scopes', 'root'],
    ['token', 'create', '--owner', String(demo.owner.id), '--scopes', ''],
    ['token', 'create', '--owner', String(demo.owner.id)],
    ['token', 'create', '--owner', '999999', '--scopes', '*'],
    ['token', 'create', '--owner', 'abc', '--scopes', '*'],
    ['token', 'create', '--owner', String(demo.owner.id), '--scopes', '*', '--expires-in', 'soon'],
    ['token', 'revoke', '--token', 'dso_unknown'],
    ['token', 'revoke'],
    ['seed'],
    ['frobnicate'],
  ]) {
    t.throws(() => cli(...args), `dispatch ${args.join(' ')} fails`)
  }
  t.equal(s.app.svc.db.prepare('SELECT COUNT(*) FROM owner_tokens').pluck().get(), before, 'no token was created by a failed command')
  t.throws(() => cli('token', 'create', '--bogus'), 'an unknown option fails')
  const ok = bin('token', 'create', '--owner', String(demo.owner.id), '--scopes', 'analytics:read', '--json')
  t.equal(ok.status, 0, 'the binary succeeds on good input')
  const { token } = JSON.parse(ok.stdout)
  t.equal((await s.req('GET', `/restaurants/${demo.store.id}/analytics`, { token })).status, 200, 'and its token works on the running server')
  t.same(json('migrate', '--json'), { applied: [] }, 'migrate on an up-to-date database')
})
