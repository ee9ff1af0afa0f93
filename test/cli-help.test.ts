/**
 * The operator CLI's manners (README "Operator CLI"): `--help` for everything and for one command
 * exits 0, `--version` prints the package's version, a command group typed alone lists its
 * subcommands, mistyped words get the closest command, `--json` answers with one JSON object on
 * stdout (errors as {"error", "code"?} and a non-zero exit); `token list` shows no secrets and
 * `store create` keeps the rules of POST /restaurants (plan quota, multi_store, slugs, input schema).
 */
import t from 'tap'
import { spawnSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { startServer } from './helpers/server.ts'
import { createOwner, createStore, tokenFor } from './helpers/fixtures.ts'
import { runCli } from '../src/cli.ts'
import { closest, parseUsage } from '../src/cli-help.ts'

const ROOT = fileURLToPath(new URL('..', import.meta.url))
const VERSION = (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }).version
const s = await startServer({ RATE_LIMIT_PER_MINUTE: '100000' })
t.teardown(() => s.close())
const db = s.app.svc.db
const env = { DB_PATH: s.dbPath, SITE_URL: s.site, LOG_LEVEL: 'silent' }
const cli = (...args: string[]) => runCli(args, env)
/** The real binary, for exit codes and the stdout/stderr split. */
const bin = (...args: string[]) => spawnSync(process.execPath, ['bin/dispatch.js', ...args], { cwd: ROOT, env: { ...process.env, ...env }, encoding: 'utf8', timeout: 20_000 })

t.test('--help and COMMAND --help exit 0 with the usage', async (t) => {
  for (const args of [['--help'], ['-h']]) {
    const r = bin(...args)
    t.equal(r.status, 0, `dispatch ${args.join(' ')} exits 0`)
    t.match(r.stdout, /dispatch token create --owner ID --scopes LIST/)
    t.match(r.stdout, /dispatch store create --owner ID --title TITLE/)
    t.match(r.stdout, /dispatch COMMAND --help/, 'and says how to get one command\'s help')
  }
  const token = bin('token', '--help')
  t.equal(token.status, 0)
  t.match(token.stdout, /token create[\s\S]*token revoke[\s\S]*token list/, 'the group\'s subcommands')
  t.notMatch(token.stdout, /dispatch wallet/, 'and only those')
  t.match(token.stdout, /LIST is comma-separated capabilities/, 'with the notes its lines use')
  const one = bin('token', 'list', '--help')
  t.equal(one.status, 0)
  t.equal(one.stdout.trim(), 'usage:\n  dispatch token list --owner ID [--json]', 'one subcommand\'s usage')
  t.equal(cli('migrate', '--help').code, 0)
  t.match(JSON.parse(cli('store', '--help', '--json').out), { command: 'store', usage: [/^dispatch store create/] }, '--help --json is an object too')
  t.equal(cli().code, 2, 'no command at all is still a usage error')
})

t.test('--version prints the package version', async (t) => {
  const r = bin('--version')
  t.equal(r.status, 0)
  t.equal(r.stdout.trim(), `dispatch ${VERSION}`)
  t.same(JSON.parse(bin('--version', '--json').stdout), { version: VERSION })
})

t.test('a command group alone lists its subcommands', async (t) => {
  const r = bin('token')
  t.equal(r.status, 0, 'not "unknown command"')
  t.match(r.stdout, /"dispatch token" needs a subcommand:\n {2}dispatch token create[\s\S]*dispatch token revoke[\s\S]*dispatch token list/)
  t.match(JSON.parse(bin('token', '--json').stdout), { command: 'token', usage: Array })
  for (const group of ['store', 'plan', 'entitlement', 'account', 'wallet', 'billing', 'app', 'owner', 'reseller']) {
    t.match(cli(group).out, new RegExp(`needs a subcommand:\\n {2}dispatch ${group} `), `dispatch ${group}`)
  }
})

t.test('mistakes say what to type instead', async (t) => {
  const unknown = bin('tokne', 'list')
  t.equal(unknown.status, 2)
  t.match(unknown.stderr, /unknown command "tokne"; did you mean "dispatch token"\? Run "dispatch --help"/)
  const sub = bin('token', 'lst', '--json')
  t.equal(sub.status, 2)
  t.match(JSON.parse(sub.stdout), { error: /did you mean "dispatch token list"\? Run "dispatch token --help"/ }, '--json errors are an object with "error"')
  t.match(bin('frobnicate').stderr, /unknown command "frobnicate"\. Run "dispatch --help"/, 'nothing close: just where to look')
  const option = bin('token', 'list', '--ownr', '1')
  t.equal(option.status, 2)
  t.match(option.stderr, /Unknown option '--ownr'; did you mean --owner\? Run "dispatch token list --help"/)
  t.match(bin('store', 'create', '--json').stdout, /--owner must be an owner id: dispatch store create --owner ID/)
  t.equal(closest('migrat', ['migrate', 'seed']), 'migrate')
  t.equal(closest('xyzzy', ['migrate', 'seed']), null)
  t.ok(parseUsage('usage:\n  dispatch a b|c X\n      more\n\nNOTE is x').entries.length === 2, 'a|b documents two subcommands')
})

t.test('token list: every token of the owner, no secrets', async (t) => {
  const ownerId = createOwner(db, 'Lister', 'pro')
  const made = JSON.parse(cli('token', 'create', '--owner', String(ownerId), '--scopes', 'orders:read,menu:write', '--name', 'pos', '--expires-in', '7d', '--json').out)
  const other = tokenFor(db, ownerId, ['read'])
  cli('token', 'revoke', '--token', other, '--json')
  tokenFor(db, createOwner(db), ['*']) // someone else's
  const r = cli('token', 'list', '--owner', String(ownerId), '--json')
  t.equal(r.code, 0)
  const out = JSON.parse(r.out)
  t.equal(out.owner_id, ownerId)
  t.equal(out.tokens.length, 2, 'only this owner\'s tokens, revoked ones included')
  t.match(out.tokens[0], { capabilities: ['read'], revoked_at: String }, 'newest first: the revoked one')
  t.match(out.tokens[1], { id: made.id, name: 'pos', prefix: made.token.slice(0, 10), capabilities: ['orders:read', 'menu:write'], created_at: String, expires_at: made.expires_at, revoked_at: null })
  t.same(Object.keys(out.tokens[1]).sort(), ['capabilities', 'created_at', 'expires_at', 'id', 'name', 'prefix', 'revoked_at'])
  t.notOk(r.out.includes(made.token) || r.out.includes(other), 'no raw token appears')
  t.notMatch(r.out, /hash/, 'nor a hash')
  const text = cli('token', 'list', '--owner', String(ownerId)).out
  t.match(text, new RegExp(`^${made.id}\\t${made.token.slice(0, 10)}…\\tactive\\torders:read,menu:write\\tpos`, 'm'))
  t.match(text, /\trevoked\t/)
  t.match(cli('token', 'list', '--owner', String(createOwner(db))).out, /has no API tokens \(create one: dispatch token create/)
  t.throws(() => cli('token', 'list', '--owner', '999999'), /no owner with id 999999/)
})

t.test('store create: the rules of POST /restaurants, and the store is live on the server', async (t) => {
  const ownerId = createOwner(db, 'Grower', 'pro')
  const token = tokenFor(db, ownerId, ['*'])
  const r = cli('store', 'create', '--owner', String(ownerId), '--title', 'Harbour Café', '--type', 'restaurant', '--currency', 'EUR', '--city', 'Lisbon', '--json')
  t.equal(r.code, 0)
  const store = JSON.parse(r.out)
  t.match(store, { id: Number, title: 'Harbour Café', slug: /^harbour-caf/, url: `${s.site}/s/${store.slug}`, store_type: 'restaurant', currency: 'EUR', city: 'Lisbon' })
  const api = await s.req('POST', '/restaurants', { token, body: { title: 'Via the API' } })
  t.equal(api.status, 200)
  t.same(Object.keys(store).sort(), Object.keys(api.body).sort(), 'the same object POST /restaurants answers')
  const listed = await s.req('GET', '/restaurants', { token })
  t.ok(JSON.stringify(listed.body).includes('Harbour Café'), 'the running server lists it')

  t.throws(() => cli('store', 'create', '--owner', String(ownerId), '--title', 'Again', '--slug', store.slug, '--json'), { code: 'conflict' }, 'a taken slug')
  t.throws(() => cli('store', 'create', '--owner', String(ownerId), '--title', 'X', '--currency', 'euro'), /--currency: Use an ISO 4217 code/, 'the op\'s schema, named by flag')
  t.throws(() => cli('store', 'create', '--owner', String(ownerId), '--title', 'X', '--type', 'spaceship'), /--type/)
  t.throws(() => cli('store', 'create', '--owner', String(ownerId)), /--title is required/)

  const free = createOwner(db, 'Small', 'free')
  createStore(db, free)
  const before = db.prepare('SELECT COUNT(*) FROM stores WHERE owner_id = ?').pluck().get(free)
  const refused = bin('store', 'create', '--owner', String(free), '--title', 'Second', '--json')
  t.not(refused.status, 0)
  t.match(JSON.parse(refused.stdout), { error: String, code: 'forbidden', reason: /^(plan_limit_reached|feature_not_in_plan)$/ }, 'the plan refuses, with the API\'s code and reason')
  t.equal(db.prepare('SELECT COUNT(*) FROM stores WHERE owner_id = ?').pluck().get(free), before, 'nothing written')
})

t.test('--json on every command answers one JSON object', async (t) => {
  const ownerId = createOwner(db, 'Json', 'pro')
  for (const args of [
    ['migrate'], ['--version'], ['--help'], ['token'],
    ['token', 'list', '--owner', String(ownerId)],
    ['plan', 'set', '--owner', String(ownerId), '--plan', 'pro'],
    ['entitlement', 'grant', '--owner', String(ownerId), '--feature', 'crm'],
    ['wallet', 'top-up', '--owner', String(ownerId), '--amount', '1.00'],
  ]) {
    const r = cli(...args, '--json')
    const parsed = JSON.parse(r.out) as unknown
    t.ok(parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed), `dispatch ${args.join(' ')} --json`)
  }
})
