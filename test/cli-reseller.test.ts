/**
 * CLI contracts of the reseller model (docs/billing.md "Resellers"): `dispatch seed --reseller --json`
 * prints exactly {reseller: {id, token}, customers: [{id, token, store_id}]} and its tokens work at
 * once against a server running on the same database; `account create --reseller` and
 * `reseller grant` make reseller accounts.
 */
import t from 'tap'
import { startServer } from './helpers/server.ts'
import { runCli } from '../src/cli.ts'

const s = await startServer({ RATE_LIMIT_PER_MINUTE: '100000' })
t.teardown(() => s.close())
const env = { DB_PATH: s.dbPath, SITE_URL: s.site, LOG_LEVEL: 'silent' }
const json = (...args: string[]) => {
  const r = runCli(args, env)
  if (r.code !== 0) throw new Error(`dispatch ${args.join(' ')} exited ${r.code}: ${r.out}`)
  return JSON.parse(r.out)
}

t.test('seed --reseller --json: exactly the documented shape, and every token works against the running server', async (t) => {
  const seed = json('seed', '--reseller', '--json')
  t.same(Object.keys(seed).sort(), ['customers', 'reseller'])
  t.same(Object.keys(seed.reseller).sort(), ['id', 'token'])
  t.match(seed.reseller, { id: Number, token: /^dso_/ })
  t.equal(seed.customers.length, 2, 'two customers')
  for (const c of seed.customers) {
    t.same(Object.keys(c).sort(), ['id', 'store_id', 'token'])
    t.match(c, { id: Number, token: /^dso_/, store_id: Number })
  }

  const me = await s.req('GET', '/me', { token: seed.reseller.token })
  t.equal(me.status, 200)
  t.same(me.body.token.capabilities, ['*'], 'owner token with *')
  const customers = await s.req('GET', '/reseller/customers', { token: seed.reseller.token })
  t.equal(customers.status, 200, 'the reseller token opens the reseller area')
  t.same(customers.body.data.map((c: { id: number }) => c.id).sort(), seed.customers.map((c: { id: number }) => c.id).sort(), 'both customers are its own')
  for (const c of customers.body.data) {
    t.ok(c.wallet_balance > 0, 'funded wallet')
    t.equal(c.subscription.status, 'active')
    t.ok(c.plan.key.startsWith(`r${seed.reseller.id}-`), "on one of the reseller's plans")
  }
  const plans = await s.req('GET', '/reseller/plans', { token: seed.reseller.token })
  t.ok(plans.body.data[0].price > 0, 'a paid plan')

  for (const c of seed.customers) {
    const cm = await s.req('GET', '/me', { token: c.token })
    t.equal(cm.status, 200, 'customer token works')
    t.same(cm.body.token.capabilities, ['*'])
    t.equal((await s.req('GET', `/restaurants/${c.store_id}`, { token: c.token })).status, 200, 'its store is its own')
    t.equal((await s.req('GET', '/reseller/customers', { token: c.token })).status, 403, 'a customer is not a reseller')
  }
  const again = json('seed', '--reseller', '--json')
  t.not(again.reseller.id, seed.reseller.id, 'each run is a new reseller')
})

t.test('account create --reseller and reseller grant make reseller accounts', async (t) => {
  const created = json('account', 'create', '--reseller', '--name', 'Acme Resale', '--email', 'acme@example.com', '--json')
  t.match(created, { id: Number, name: 'Acme Resale', email: 'acme@example.com', role: 'reseller', token: /^dso_/ })
  t.equal((await s.req('GET', '/reseller/tier', { token: created.token })).status, 200)

  const demo = json('seed', '--demo', '--json')
  t.equal((await s.req('GET', '/reseller/tier', { token: demo.owner.token })).status, 403, 'a plain owner is not a reseller')
  const granted = json('reseller', 'grant', '--owner', String(demo.owner.id), '--json')
  t.match(granted, { id: demo.owner.id, role: 'reseller', reseller_since: String })
  t.equal((await s.req('GET', '/reseller/tier', { token: demo.owner.token })).status, 200, 'granted at once')

  t.throws(() => runCli(['account', 'create', '--reseller', '--name', 'X', '--json'], env), /--email/, 'an email is required')
  t.throws(() => runCli(['reseller', 'grant', '--owner', '999999', '--json'], env), /no owner/, 'an unknown owner is refused')
})
