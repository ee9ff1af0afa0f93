/**
 * Apps for developers (docs/apps.md "Registering an app", "Review"): the developer routes (an
 * account-wide token; another developer's app is a 404), the input rules, the review rules of
 * api-v1 §9 rule 4 (a price or scope change of a published app goes back to review while installs
 * and the marketplace keep the published terms; metadata publishes at once), the CLI's exact JSON,
 * and the public marketplace.
 */
import t from 'tap'
import { spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { request, startServer } from './helpers/server.ts'
import { createOwner, tokenFor } from './helpers/fixtures.ts'
import { answerConsent, consentPage, createTestApp, installTestApp, signedIn } from './helpers/apps.ts'

const ROOT = fileURLToPath(new URL('..', import.meta.url))
const s = await startServer({ RATE_LIMIT_PER_MINUTE: '100000' })
t.teardown(() => s.close())
const db = s.app.svc.db
const env = { DB_PATH: s.dbPath, SITE_URL: s.site, LOG_LEVEL: 'silent' }
/** The real binary: exit code and exactly what it prints. */
const bin = (...args: string[]) => spawnSync(process.execPath, ['bin/dispatch.js', ...args], { cwd: ROOT, env: { ...process.env, ...env }, encoding: 'utf8', timeout: 20_000 })

const dev = createOwner(db)
const devToken = tokenFor(db, dev, ['*'])
const other = createOwner(db)
const otherToken = tokenFor(db, other, ['write'])
const REDIRECT = 'https://app.example/callback'
const count = () => db.prepare('SELECT COUNT(*) FROM apps').pluck().get() as number

const create = (body: Record<string, unknown>, token = devToken) => s.req('POST', '/developer/apps', { token, body })
const marketplace = async () => (await s.req('GET', '/apps')).body as Array<Record<string, any>>
const approve = (id: number) => {
  const r = bin('app', 'approve', String(id), '--json')
  if (r.status !== 0) throw new Error(`approve exited ${r.status}: ${r.stdout}${r.stderr}`)
  return JSON.parse(r.stdout)
}

t.test('a developer registers, reads, lists and changes an app; the secrets are shown once', async (t) => {
  const r = await create({ name: 'Menu sync', redirect_uris: [REDIRECT], scopes: ['orders:read', 'menu:read'], pricing: 'usage', price: 0.05, cap: 10, webhook_url: 'https://hooks.app.example/in', webhook_events: ['order.created'] })
  t.equal(r.status, 200)
  t.match(r.body, {
    id: Number, name: 'Menu sync', status: 'draft', client_id: /^app_/, client_secret: /^dscs_/, webhook_secret: /^whsec_/,
    redirect_uris: [REDIRECT], webhook_events: ['order.created'],
    terms: { scopes: ['menu:read', 'orders:read'], pricing: 'usage', price: 0.05, cap: 10, currency: 'USD' }, published_terms: null,
  })
  t.equal(Buffer.from(r.body.webhook_secret.slice(6), 'base64').length, 32, 'whsec_ + base64 of 32 bytes (Standard Webhooks)')
  const one = await s.req('GET', `/developer/apps/${r.body.id}`, { token: devToken })
  t.equal(one.status, 200)
  t.equal(one.body.client_id, r.body.client_id)
  t.notOk('client_secret' in one.body, 'the secret is not shown again')
  t.notOk('webhook_secret' in one.body)
  const list = await s.req('GET', '/developer/apps', { token: devToken })
  t.ok(list.body.some((a: { id: number }) => a.id === r.body.id))
  const put = await s.req('PUT', `/developer/apps/${r.body.id}`, { token: devToken, body: { description: 'Keeps menus in sync', scopes: ['orders:read'] } })
  t.equal(put.status, 200)
  t.equal(put.body.description, 'Keeps menus in sync')
  t.same(put.body.terms.scopes, ['orders:read'])
  t.equal(put.body.status, 'draft', 'a draft stays a draft')
})

t.test('another developer\'s app is a 404; managing apps needs an account-wide token', async (t) => {
  const mine = createTestApp(db, dev, { publish: false })
  for (const [method, path, body] of [['GET', `/developer/apps/${mine.id}`], ['PUT', `/developer/apps/${mine.id}`, { name: 'Mine now' }], ['POST', `/developer/apps/${mine.id}/submit`], ['POST', `/developer/apps/${mine.id}/rotate-secret`]] as const) {
    const r = await s.req(method, path, { token: otherToken, body })
    t.equal(r.status, 404, `${method} ${path} by another developer`)
  }
  t.equal((await s.req('GET', '/developer/apps', { token: otherToken })).body.length, 0, 'not in their list')
  t.equal(db.prepare('SELECT name FROM apps WHERE id = ?').pluck().get(mine.id), mine.name, 'unchanged')
  const scoped = tokenFor(db, dev, ['orders:write', 'menu:write'])
  t.equal((await create({ name: 'x', redirect_uris: [REDIRECT], scopes: ['orders:read'] }, scoped)).status, 403, 'a resource-scoped token cannot register apps')
  t.equal((await s.req('GET', '/developer/apps', { token: tokenFor(db, dev, ['read']) })).status, 200, 'read lists')
  t.equal((await s.req('PUT', `/developer/apps/${mine.id}`, { token: tokenFor(db, dev, ['read']), body: { name: 'y' } })).status, 403, 'read cannot change')
})

t.test('bad input is a 422 and writes nothing', async (t) => {
  const before = count()
  const base = { name: 'Bad', redirect_uris: [REDIRECT], scopes: ['orders:read'] }
  const cases: Array<[string, Record<string, unknown>, string]> = [
    ['unknown scope', { ...base, scopes: ['customers:read'] }, 'scopes.0'],
    ['no scopes', { ...base, scopes: [] }, 'scopes'],
    ['http redirect URI', { ...base, redirect_uris: ['http://app.example/cb'] }, 'redirect_uris.0'],
    ['redirect URI with fragment', { ...base, redirect_uris: ['https://app.example/cb#x'] }, 'redirect_uris.0'],
    ['no redirect URI', { ...base, redirect_uris: [] }, 'redirect_uris'],
    ['a free app with a price', { ...base, price: 1 }, 'price'],
    ['recurring without price', { ...base, pricing: 'recurring' }, 'price'],
    ['a cap on recurring pricing', { ...base, pricing: 'recurring', price: 5, cap: 10 }, 'cap'],
    ['three decimals', { ...base, pricing: 'usage', price: 0.005 }, 'price'],
    ['webhook to a private address', { ...base, webhook_url: 'https://10.0.0.1/hook' }, 'webhook_url'],
    ['webhook over http', { ...base, webhook_url: 'http://hooks.app.example/in' }, 'webhook_url'],
    ['unknown event', { ...base, webhook_events: ['order.exploded'] }, 'webhook_events.0'],
    ['no name', { ...base, name: '' }, 'name'],
  ]
  for (const [what, body, field] of cases) {
    const r = await create(body)
    t.equal(r.status, 422, what)
    t.ok(r.body?.errors?.[field], `${what}: names ${field} (${JSON.stringify(r.body?.errors)})`)
  }
  t.equal(count(), before, 'nothing written')
  const app = createTestApp(db, dev, { publish: false })
  const r = await s.req('PUT', `/developer/apps/${app.id}`, { token: devToken, body: { redirect_uris: ['ftp://x'] } })
  t.equal(r.status, 422)
  t.same(JSON.parse(db.prepare('SELECT redirect_uris FROM apps WHERE id = ?').pluck().get(app.id) as string), app.redirect_uris, 'unchanged')
})

t.test('review: draft → in_review → published; price or scopes send it back, metadata publishes at once', async (t) => {
  const r = await create({ name: 'Loyalty', redirect_uris: [REDIRECT], scopes: ['orders:read'], pricing: 'recurring', price: 4.99 })
  const id = r.body.id as number
  t.notOk((await marketplace()).some((a) => a.id === id), 'a draft is not listed')
  const sub = await s.req('POST', `/developer/apps/${id}/submit`, { token: devToken })
  t.equal(sub.body.status, 'in_review')
  t.equal((await s.req('POST', `/developer/apps/${id}/submit`, { token: devToken })).body.status, 'in_review', 'submitting again changes nothing')
  t.notOk((await marketplace()).some((a) => a.id === id), 'in review for the first time: not listed')

  t.match(approve(id), { id, status: 'published', published_at: String })
  let listed = (await marketplace()).find((a) => a.id === id)
  t.match(listed, { name: 'Loyalty', pricing: 'recurring', price: 4.99, scopes: ['orders:read'] }, 'listed with its terms')
  t.equal((await s.req('POST', `/developer/apps/${id}/submit`, { token: devToken })).status, 409, 'nothing to review')

  // Metadata: at once, still published.
  const meta = await s.req('PUT', `/developer/apps/${id}`, { token: devToken, body: { name: 'Loyalty Plus', description: 'Points for every order' } })
  t.equal(meta.body.status, 'published')
  listed = (await marketplace()).find((a) => a.id === id)
  t.equal(listed?.name, 'Loyalty Plus', 'the new name is live')

  // Price: back to review; the marketplace and new installs keep 4.99.
  const priced = await s.req('PUT', `/developer/apps/${id}`, { token: devToken, body: { price: 9.99 } })
  t.equal(priced.body.status, 'in_review')
  t.equal(priced.body.terms.price, 9.99)
  t.equal(priced.body.published_terms.price, 4.99)
  listed = (await marketplace()).find((a) => a.id === id)
  t.equal(listed?.price, 4.99, 'still listed at the published price')

  const owner = createOwner(db)
  db.prepare("INSERT INTO wallet_entries (owner_id, amount, currency, reason, reference, created_by, created_at) VALUES (?, 10000, 'USD', 'top_up', NULL, 'test', ?)").run(owner, new Date().toISOString())
  const who = signedIn(db, owner)
  const q = { response_type: 'code', client_id: r.body.client_id, redirect_uri: REDIRECT, state: 's' }
  const html = await (await consentPage(s.site, who, q)).text()
  t.match(html, '4.99 USD every 30 days', 'the consent page shows the published price')
  t.notMatch(html, '9.99')
  t.equal((await answerConsent(s.site, who, q, 'approve')).status, 303)
  const inst = db.prepare('SELECT terms, scopes FROM app_installations WHERE app_id = ? AND owner_id = ?').get(id, owner) as { terms: string; scopes: string }
  t.match(JSON.parse(inst.terms), { price: 499, pricing: 'recurring' }, 'the install agreed to the published terms')

  // Changing the price back leaves nothing to review.
  t.equal((await s.req('PUT', `/developer/apps/${id}`, { token: devToken, body: { price: 4.99 } })).body.status, 'published')
  // Scopes: back to review too.
  const scoped = await s.req('PUT', `/developer/apps/${id}`, { token: devToken, body: { scopes: ['orders:read', 'orders:write'] } })
  t.equal(scoped.body.status, 'in_review')
  t.same((await marketplace()).find((a) => a.id === id)?.scopes, ['orders:read'], 'published scopes stay')
  const wider = await consentPage(s.site, who, { ...q, scope: 'orders:read orders:write' })
  t.equal(new URL(wider.headers.get('location')!).searchParams.get('error'), 'invalid_scope', 'new installs cannot get the unreviewed scope')
  // A metadata change while in review still publishes at once and keeps it in review.
  const renamed = await s.req('PUT', `/developer/apps/${id}`, { token: devToken, body: { name: 'Loyalty Pro' } })
  t.equal(renamed.body.status, 'in_review')
  t.equal((await marketplace()).find((a) => a.id === id)?.name, 'Loyalty Pro')

  approve(id)
  t.same((await marketplace()).find((a) => a.id === id)?.scopes, ['orders:read', 'orders:write'], 'approved: the new scopes are published')
  const kept = db.prepare('SELECT scopes FROM app_installations WHERE app_id = ? AND owner_id = ?').pluck().get(id, owner) as string
  t.same(JSON.parse(kept), ['orders:read'], 'an existing install keeps what it agreed to until the owner re-consents')
})

t.test('rotating the client secret: the new one works at the token address, the old one is invalid_client', async (t) => {
  const app = createTestApp(db, dev)
  const r = await s.req('POST', `/developer/apps/${app.id}/rotate-secret`, { token: devToken })
  t.equal(r.status, 200)
  t.match(r.body, { client_id: app.client_id, client_secret: /^dscs_/ })
  t.not(r.body.client_secret, app.client_secret)
  const tokenWith = (secret: string) => request(`${s.site}/oauth/token`, 'POST', {
    raw: new URLSearchParams({ grant_type: 'authorization_code', client_id: app.client_id, client_secret: secret, code: 'x', redirect_uri: REDIRECT }).toString(),
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
  })
  t.equal((await tokenWith(app.client_secret)).body.error, 'invalid_client', 'the old secret')
  t.equal((await tokenWith(r.body.client_secret)).body.error, 'invalid_grant', 'the new secret authenticates (the code is bogus)')
})

t.test('CLI: app create --json prints exactly {id, client_id, client_secret, webhook_secret}; app approve publishes', async (t) => {
  const r = bin('app', 'create', '--owner', String(dev), '--name', 'CLI app', '--redirect-uri', REDIRECT, '--scopes', 'orders:read,mcp:use',
    '--pricing', 'usage', '--price', '0.05', '--webhook-url', 'https://hooks.app.example/x', '--embed-url', 'https://app.example/embed', '--json')
  t.equal(r.status, 0, r.stderr)
  const out = JSON.parse(r.stdout)
  t.same(Object.keys(out), ['id', 'client_id', 'client_secret', 'webhook_secret'], 'exactly these keys, in this order')
  t.match(out, { id: Number, client_id: /^app_/, client_secret: /^dscs_/, webhook_secret: /^whsec_/ })
  const row = db.prepare('SELECT status, terms, webhook_url, embed_url, client_secret, developer_id FROM apps WHERE id = ?').get(out.id) as Record<string, string>
  t.match(row, { status: 'draft', webhook_url: 'https://hooks.app.example/x', embed_url: 'https://app.example/embed', client_secret: out.client_secret, developer_id: dev })
  t.match(JSON.parse(row.terms), { pricing: 'usage', price: 5, scopes: ['orders:read', 'mcp:use'] }, '0.05 is 5 minor units')

  const a = bin('app', 'approve', String(out.id), '--json')
  t.equal(a.status, 0)
  t.match(JSON.parse(a.stdout), { id: out.id, status: 'published' })
  t.ok((await marketplace()).some((x) => x.id === out.id), 'listed')

  const free = JSON.parse(bin('app', 'create', '--owner', String(dev), '--name', 'Free', '--redirect-uri', REDIRECT, '--scopes', 'menu:read', '--json').stdout)
  t.match(JSON.parse(db.prepare('SELECT terms FROM apps WHERE id = ?').pluck().get(free.id) as string), { pricing: 'free', price: 0 }, 'free by default')

  const before = count()
  t.equal(bin('app', 'create', '--owner', String(dev), '--name', 'X', '--redirect-uri', REDIRECT, '--scopes', 'everything', '--json').status, 2, 'an unknown scope exits 2')
  t.equal(bin('app', 'create', '--owner', '999999', '--name', 'X', '--redirect-uri', REDIRECT, '--scopes', 'menu:read', '--json').status, 2, 'an unknown owner exits 2')
  t.equal(bin('app', 'create', '--owner', String(dev), '--name', 'X', '--redirect-uri', 'http://app.example/cb', '--scopes', 'menu:read', '--json').status, 2, 'a bad redirect URI exits 2')
  t.equal(bin('app', 'approve', '999999', '--json').status, 2, 'approving an unknown app exits 2')
  t.equal(count(), before, 'nothing written')
})

t.test('the marketplace is public and shows published apps only, never secrets', async (t) => {
  const pub = createTestApp(db, dev, { name: 'Public one', pricing: 'usage', price: 5, cap: 500 })
  const draft = createTestApp(db, dev, { name: 'Hidden', publish: false })
  const r = await s.req('GET', '/apps')
  t.equal(r.status, 200)
  const listed = (r.body as Array<Record<string, unknown>>).find((a) => a.id === pub.id)
  t.match(listed, { name: 'Public one', pricing: 'usage', price: 0.05, cap: 5, currency: 'USD', client_id: pub.client_id })
  t.notOk((r.body as Array<{ id: number }>).some((a) => a.id === draft.id), 'drafts are not listed')
  t.notMatch(r.text, /dscs_|whsec_/, 'no secrets')
  t.notMatch(r.text, /redirect_uris|webhook_url/, 'no developer-only fields')
})

t.test('an app token cannot manage apps (account-wide) even with every scope', async (t) => {
  const app = createTestApp(db, dev, { scopes: ['menu:write', 'orders:write', 'analytics:read', 'restaurant:read', 'mcp:use'] })
  const { accessToken } = installTestApp(db, app.id, dev)
  t.equal((await s.req('GET', '/developer/apps', { token: accessToken })).status, 403)
  t.equal((await s.req('POST', '/developer/apps', { token: accessToken, body: { name: 'x', redirect_uris: [REDIRECT], scopes: ['menu:read'] } })).status, 403)
})
