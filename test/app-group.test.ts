/**
 * The app group (api-v1 §4.9, docs/app-shell.md) through real HTTP: shell sign-in (password, TOTP,
 * suspended accounts, one token per device), the shell token authenticating only `/app` routes,
 * `/app/me` and `/app/config` per account, push registration reaching the push provider, the
 * handoff nonce (single use, 60 s, only while its device is signed in, a web session with the
 * cookie), sign-out, the path configuration, and APP_GROUP=0 removing the group everywhere.
 */
import t, { type Test } from 'tap'
import * as OTPAuth from 'otpauth'
import { startServer, type TestServer } from './helpers/server.ts'
import { createAccount, createOwner, createStore, envelopeProblem } from './helpers/fixtures.ts'
import { hashSecretSync } from '../src/auth/passwords.ts'
import { sha256Hex } from '../src/auth/tokens.ts'
import { createShellToken } from './helpers/apps.ts'
import { nowIso } from '../src/storage/db.ts'
import { suspendAccount, unsuspendAccount } from '../src/storage/accounts.ts'
import type { RecordingPushProvider } from '../src/providers/push.ts'

const s = await startServer({ RATE_LIMIT_PER_MINUTE: '100000' })
t.teardown(() => s.close())
const db = s.app.svc.db
const push = s.app.svc.push as RecordingPushProvider

const PASSWORD = 'correct horse battery'
/** An owner who can sign in: email and a real (slow) password hash. */
function signInAble(plan = 'pro') {
  const ownerId = createOwner(db, undefined, plan)
  const email = `owner${ownerId}-${Date.now()}@shell.test`
  db.prepare('UPDATE owners SET email = ?, password_hash = ?, email_verified_at = ? WHERE id = ?').run(email, hashSecretSync(PASSWORD), nowIso(), ownerId)
  return { ownerId, email }
}
const shellToken = (ownerId: number, device?: string, platform?: string, appVersion?: string | null) => createShellToken(db, ownerId, device, platform, appVersion)
const device = { id: 'install-1', platform: 'ios', name: 'Ana’s iPhone', app_version: '1.3.0' }
/** Sign-in spends the web sign-in's budget, 10 a minute per address: this file's server signs in 10 times at most. */
const login = (body: unknown) => s.req('POST', '/app/auth/login', { body })
const isError = (t: Test, r: { status: number; body: any; text?: string }, status: number, code: string, what = '') => {
  t.equal(r.status, status, `${what} → ${status} (got ${r.status} ${r.text ?? ''})`)
  t.equal(envelopeProblem(r.body, code), null, `${what}: ${code} envelope`)
}
/** GET without following the redirect, so the 303 and its cookie can be read. */
const handoff = (url: string) => fetch(url, { redirect: 'manual', headers: { 'user-agent': 'ShellTest/1.0 Hotwire Native iOS' } })
const sessionOf = (setCookie: string) => s.app.svc.auth.session({ headers: { cookie: setCookie.split(';')[0]! }, query: {}, bearer: null })

t.test('sign-in: a shell token for the device; wrong password or unknown email 401; the same device again replaces its token', async (t) => {
  const o = signInAble()
  isError(t, await login({ email: o.email, password: 'wrong password', device }), 401, 'unauthenticated', 'wrong password')
  isError(t, await login({ email: `nobody-${Date.now()}@shell.test`, password: PASSWORD, device }), 401, 'unauthenticated', 'unknown email')
  isError(t, await login({ email: o.email, password: PASSWORD }), 422, 'validation_failed', 'no device')
  t.equal(db.prepare('SELECT COUNT(*) FROM shell_tokens WHERE owner_id = ?').pluck().get(o.ownerId), 0, 'nothing written by refused sign-ins')

  const first = await login({ email: o.email.toUpperCase(), password: PASSWORD, device })
  t.equal(first.status, 200, first.text)
  t.match(first.body, { token: /^dsh_/, token_type: 'Bearer', owner: { id: o.ownerId, email: o.email }, device: { id: 'install-1', platform: 'ios', app_version: '1.3.0' } })
  t.ok(Date.parse(first.body.expires_at) > Date.now() + 80 * 86_400_000, 'lives about 90 days')
  t.notOk(JSON.stringify(db.prepare('SELECT * FROM shell_tokens').all()).includes(first.body.token), 'only the digest is stored')
  t.equal((await s.req('GET', '/app/me', { token: first.body.token })).status, 200)
  const pushToken = `fcm-${Date.now()}-replaced`
  t.equal((await s.req('POST', '/app/devices', { token: first.body.token, body: { push_token: pushToken } })).status, 200)
  const webCookie = (await handoff((await s.req('POST', '/app/session', { token: first.body.token })).body.url)).headers.get('set-cookie') ?? ''
  t.ok(sessionOf(webCookie), 'a web session from the first sign-in')

  const second = await login({ email: o.email, password: PASSWORD, device })
  t.equal(second.status, 200)
  isError(t, await s.req('GET', '/app/me', { token: first.body.token }), 401, 'unauthenticated', 'the replaced token')
  t.notOk(push.registered.has(pushToken), "the replaced sign-in's push registration is dropped at the provider")
  t.equal(sessionOf(webCookie), null, "the replaced sign-in's web session has ended")
  t.equal((await s.req('GET', '/app/me', { token: second.body.token })).status, 200, 'the new one works')
  const other = await login({ email: o.email, password: PASSWORD, device: 'install-2' })
  t.equal(other.status, 200, 'a bare installation id is a device too')
  isError(t, await s.req('POST', '/app/devices', { token: other.body.token, body: { push_token: 'fcm-token-of-install-2' } }), 422, 'validation_failed', 'push without a known platform')
  t.equal((await s.req('POST', '/app/devices', { token: other.body.token, body: { push_token: 'fcm-token-of-install-2', platform: 'android' } })).body.platform, 'android', 'push naming its platform')
  t.equal((await s.req('GET', '/app/me', { token: second.body.token })).status, 200, 'another device does not sign this one out')
})

t.test('the shell token opens only the /app routes; owner API tokens do not open them', async (t) => {
  const a = createAccount(db)
  const shell = shellToken(a.ownerId)
  isError(t, await s.req('GET', '/me', { token: shell }), 401, 'unauthenticated', 'GET /me with a shell token')
  isError(t, await s.req('GET', `/restaurants/${a.storeId}/orders`, { token: shell }), 401, 'unauthenticated', 'owner orders with a shell token')
  isError(t, await s.req('GET', '/app/me', { token: a.token }), 401, 'unauthenticated', 'GET /app/me with an owner API token')
  isError(t, await s.req('GET', '/app/me'), 401, 'unauthenticated', 'no token')
  isError(t, await s.req('POST', '/app/session', { token: `dsh_${'x'.repeat(43)}` }), 401, 'unauthenticated', 'an unknown shell token')
  db.prepare('UPDATE shell_tokens SET expires_at = ? WHERE token_hash = ?').run(nowIso(Date.now() - 1000), sha256Hex(shell))
  isError(t, await s.req('GET', '/app/me', { token: shell }), 401, 'unauthenticated', 'an expired shell token')
})

t.test('GET /app/me and /app/config show the token\'s own account only: stores, plan features, start URL, update_required', async (t) => {
  const a = createAccount(db, { plan: 'pro' })
  const second = createStore(db, a.ownerId)
  const b = createAccount(db, { plan: 'free' })
  const aShell = shellToken(a.ownerId, 'a-phone', 'android', '1.0.0')
  const bShell = shellToken(b.ownerId, 'b-phone', 'ios', '0.9.5')

  const aMe = await s.req('GET', '/app/me', { token: aShell })
  t.equal(aMe.status, 200)
  t.match(aMe.body, { owner: { id: a.ownerId }, device: { id: 'a-phone', platform: 'android' } })
  t.same(aMe.body.stores.map((x: { id: number }) => x.id).sort(), [a.storeId, second.id].sort(), "A's stores")
  const bMe = await s.req('GET', '/app/me', { token: bShell })
  t.same(bMe.body.stores.map((x: { id: number }) => x.id), [b.storeId], "B sees only B's store")

  const aConfig = (await s.req('GET', '/app/config', { token: aShell })).body
  const bConfig = (await s.req('GET', '/app/config', { token: bShell })).body
  t.match(aConfig, {
    start_url: `${s.site}/dashboard`, session_url: `${s.base}/app/session`, plan: { key: 'pro' },
    path_configuration: { ios: `${s.base}/app/path-configuration/ios.json`, android: `${s.base}/app/path-configuration/android.json` },
    min_shell_version: { ios: /^\d/, android: /^\d/ }, update_required: false,
  })
  t.equal(aConfig.features.crm, true, 'pro holds crm')
  t.equal(bConfig.features.crm, false, 'free does not')
  t.equal(bConfig.features.kds, true)
  t.equal(bConfig.update_required, true, 'a shell below the minimum version must update')
  t.equal(bConfig.branding.account_name, (db.prepare('SELECT name FROM owners WHERE id = ?').pluck().get(b.ownerId)))
})

t.test('push devices: registration reaches the provider; another account cannot unregister it; sign-out forgets it', async (t) => {
  const a = signInAble()
  const b = signInAble()
  const aShell = shellToken(a.ownerId, 'a-ios', 'ios')
  const bShell = shellToken(b.ownerId)
  const pushToken = `apns-${Date.now()}-abcdef`

  isError(t, await s.req('POST', '/app/devices', { token: aShell, body: { push_token: 'x' } }), 422, 'validation_failed', 'a too-short push token')
  isError(t, await s.req('POST', '/app/devices', { token: aShell, body: { push_token: pushToken, platform: 'windows' } }), 422, 'validation_failed', 'an unknown platform')
  const reg = await s.req('POST', '/app/devices', { token: aShell, body: { push_token: pushToken } })
  t.equal(reg.status, 200)
  t.same(reg.body, { registered: true, push_token: pushToken, platform: 'ios' }, 'the platform of the sign-in')
  t.same(push.registered.get(pushToken), { device_token: pushToken, platform: 'ios', owner_id: a.ownerId }, 'the push provider recorded the registration')

  t.same((await s.req('POST', '/app/devices/unregister', { token: bShell, body: { push_token: pushToken } })).body, { unregistered: false }, "B cannot remove A's device")
  t.ok(push.registered.has(pushToken), 'still registered')
  t.equal(db.prepare('SELECT owner_id FROM shell_push_devices WHERE push_token = ?').pluck().get(pushToken), a.ownerId)

  t.same((await s.req('POST', '/app/devices/unregister', { token: aShell, body: { push_token: pushToken } })).body, { unregistered: true })
  t.notOk(push.registered.has(pushToken), 'the provider forgot it')

  await s.req('POST', '/app/devices', { token: aShell, body: { push_token: pushToken } })
  const out = await s.req('POST', '/app/auth/logout', { token: aShell })
  t.equal(out.status, 200, 'a sign-out answers 200, as every other logout (api-v1 §4)')
  t.same(out.body, { revoked: true })
  t.notOk(push.registered.has(pushToken), 'signing the device out unregisters its pushes')
  t.equal(db.prepare('SELECT COUNT(*) FROM shell_push_devices WHERE push_token = ?').pluck().get(pushToken), 0)
  isError(t, await s.req('GET', '/app/me', { token: aShell }), 401, 'unauthenticated', 'the signed-out token')
})

t.test('handoff: a nonce opens a web session once, within 60 s, only to dashboard addresses', async (t) => {
  const o = signInAble()
  const shell = shellToken(o.ownerId)
  const started = await s.req('POST', '/app/session', { token: shell })
  t.equal(started.status, 200)
  t.match(started.body, { nonce: /^[\w-]{40,}$/, expires_in: 60 })
  t.equal(started.body.url, `${s.base}/app/handoff/${started.body.nonce}`)
  t.notOk(JSON.stringify(db.prepare('SELECT * FROM shell_handoffs').all()).includes(started.body.nonce), 'only the digest is stored')

  const first = await handoff(`${started.body.url}?next=${encodeURIComponent('/dashboard/orders?status=new')}`)
  t.equal(first.status, 303)
  t.equal(first.headers.get('location'), `${s.site}/dashboard/orders?status=new`)
  t.equal(first.headers.get('cache-control'), 'no-store')
  const cookie = first.headers.get('set-cookie') ?? ''
  t.match(cookie, /^dsid=[\w-]+;/)
  t.match(cookie, /HttpOnly/)
  t.match(cookie, /SameSite=Lax/)
  t.match(cookie, /Path=\//)
  t.match(sessionOf(cookie), { kind: 'session', ownerId: o.ownerId }, 'the cookie is a live web session of the account')
  t.match(db.prepare('SELECT via, user_agent FROM owner_sessions WHERE owner_id = ?').get(o.ownerId), { via: 'handoff', user_agent: /Hotwire/ })

  const again = await handoff(started.body.url)
  t.equal(again.status, 404, 'a second use is refused')
  t.equal(again.headers.get('set-cookie'), null, 'and sets no cookie')
  t.equal(envelopeProblem(await again.json(), 'not_found'), null)

  const late = (await s.req('POST', '/app/session', { token: shell })).body
  db.prepare('UPDATE shell_handoffs SET expires_at = ? WHERE nonce_hash = ?').run(nowIso(Date.now() - 1), sha256Hex(late.nonce))
  const lateUse = await handoff(late.url)
  t.equal(lateUse.status, 404, 'an expired nonce is refused')
  t.equal(lateUse.headers.get('set-cookie'), null)

  const unknown = await handoff(`${s.base}/app/handoff/${'A'.repeat(43)}`)
  t.equal(unknown.status, 404, 'an unknown nonce is refused')

  for (const next of ['//evil.example/x', 'https://evil.example/', '/login', '/dashboardx', '/dashboard/..//evil.example']) {
    const n = (await s.req('POST', '/app/session', { token: shell })).body
    const r = await handoff(`${n.url}?next=${encodeURIComponent(next)}`)
    t.equal(r.headers.get('location'), `${s.site}/dashboard`, `next=${next} lands on the dashboard's home`)
  }
})

t.test('a nonce of a signed-out device opens nothing; signing out ends the web sessions its handoffs started', async (t) => {
  const o = signInAble()
  const shell = shellToken(o.ownerId, 'phone-x')
  const used = (await s.req('POST', '/app/session', { token: shell })).body
  const cookie = (await handoff(used.url)).headers.get('set-cookie') ?? ''
  t.ok(sessionOf(cookie), 'web session live')
  const pending = (await s.req('POST', '/app/session', { token: shell })).body
  t.equal((await s.req('POST', '/app/auth/logout', { token: shell })).status, 200)
  t.equal(sessionOf(cookie), null, 'the web view is signed out with the shell')
  const r = await handoff(pending.url)
  t.equal(r.status, 404, 'a nonce issued before sign-out is dead')
  t.equal(r.headers.get('set-cookie'), null)
})

t.test("two-factor: the `otp` field is needed, checked, and a code is not accepted twice", async (t) => {
  const o = signInAble()
  const secret = new OTPAuth.Secret({ size: 20 }).base32
  db.prepare('UPDATE owners SET totp_secret = ? WHERE id = ?').run(secret, o.ownerId)
  const code = new OTPAuth.TOTP({ secret: OTPAuth.Secret.fromBase32(secret), algorithm: 'SHA1', digits: 6, period: 30 }).generate()
  isError(t, await login({ email: o.email, password: PASSWORD, device }), 401, 'two_factor_required', 'no otp')
  const ok = await login({ email: o.email, password: PASSWORD, device, otp: code })
  t.equal(ok.status, 200, ok.text)
  isError(t, await login({ email: o.email, password: PASSWORD, device, otp: code }), 422, 'otp_invalid', 'the same code again')
})

t.test('a suspended account cannot sign in and its shell tokens are refused; unsuspending restores them', async (t) => {
  const o = signInAble()
  const shell = shellToken(o.ownerId)
  const nonce = (await s.req('POST', '/app/session', { token: shell })).body
  suspendAccount(db, o.ownerId)
  isError(t, await login({ email: o.email, password: PASSWORD, device }), 403, 'account_suspended', 'sign-in')
  isError(t, await s.req('GET', '/app/me', { token: shell }), 403, 'account_suspended', 'GET /app/me')
  const r = await handoff(nonce.url)
  t.equal(r.status, 404, 'a nonce of a suspended account opens nothing')
  t.equal(r.headers.get('set-cookie'), null)
  unsuspendAccount(db, o.ownerId)
  t.equal((await s.req('GET', '/app/me', { token: shell })).status, 200)
})

t.test('path configuration for ios and android; other platforms 404', async (t) => {
  for (const platform of ['ios', 'android']) {
    const r = await s.req('GET', `/app/path-configuration/${platform}.json`)
    t.equal(r.status, 200)
    t.match(r.headers.get('content-type'), /application\/json/)
    t.ok(Array.isArray(r.body.rules) && r.body.rules.length > 3, `${platform}: rules`)
    const modal = r.body.rules.find((x: { properties: { context?: string } }) => x.properties.context === 'modal')
    t.ok(modal.patterns.includes('/new$'), `${platform}: create forms open as modals`)
    t.ok(r.body.rules.some((x: { properties: { external?: boolean } }) => x.properties.external), `${platform}: some URLs open in the browser`)
  }
  t.match((await s.req('GET', '/app/path-configuration/android.json')).body.rules[0].properties, { uri: 'hotwire://fragment/web' })
  t.equal((await s.req('GET', '/app/path-configuration/windows.json')).status, 404)
})

t.test('the group is in discovery and OpenAPI', async (t) => {
  const index = (await s.req('GET', '/')).body
  const paths = (index.groups['App group'] as Array<{ method: string; path: string }>).map((r) => `${r.method} ${r.path}`)
  for (const p of ['POST /app/auth/login', 'POST /app/auth/logout', 'GET /app/me', 'GET /app/config', 'POST /app/devices', 'POST /app/devices/unregister', 'POST /app/session', 'GET /app/handoff/{nonce}', 'GET /app/path-configuration/ios.json', 'GET /app/path-configuration/android.json']) {
    t.ok(paths.includes(p), `discovery lists ${p}`)
  }
  const spec = (await s.req('GET', '/openapi.json')).body
  t.ok(spec.paths['/app/auth/login']?.post, 'OpenAPI has POST /app/auth/login')
  t.ok(spec.paths['/app/handoff/{nonce}']?.get, 'OpenAPI has the handoff')
})

t.test('sign-in refuses unverified emails and shares the web sign-in budget: 10 a minute per address', async (t) => {
  const own: TestServer = await startServer({ RATE_LIMIT_PER_MINUTE: '100000' })
  t.teardown(() => own.close())
  const ownerId = createOwner(own.app.svc.db)
  const email = `unverified${ownerId}@shell.test`
  own.app.svc.db.prepare('UPDATE owners SET email = ?, password_hash = ? WHERE id = ?').run(email, hashSecretSync(PASSWORD), ownerId)
  isError(t, await own.req('POST', '/app/auth/login', { body: { email, password: PASSWORD, device } }), 403, 'email_not_verified', 'an unverified email')
  t.equal(own.app.svc.db.prepare('SELECT COUNT(*) FROM shell_tokens').pluck().get(), 0, 'no token')
  const codes: number[] = []
  for (let i = 0; i < 10; i++) codes.push((await own.req('POST', '/app/auth/login', { body: { email: `x${i}@y.test`, password: 'nope', device: 'd' } })).status)
  t.same(codes.slice(0, 9), Array(9).fill(401))
  t.equal(codes[9], 429, 'the 11th attempt from the address is rate limited')
})

t.test('APP_GROUP=0: every app route answers 404 and the group leaves discovery and OpenAPI', async (t) => {
  const off = await startServer({ APP_GROUP: '0' })
  t.teardown(() => off.close())
  const o = createAccount(off.app.svc.db)
  for (const [method, path] of [['POST', '/app/auth/login'], ['GET', '/app/me'], ['GET', '/app/config'], ['POST', '/app/session'], ['GET', '/app/handoff/abc'], ['GET', '/app/path-configuration/ios.json']] as const) {
    const r = await off.req(method, path, { token: o.token, ...(method === 'POST' ? { body: {} } : {}) })
    t.equal(r.status, 404, `${method} ${path} → 404`)
  }
  const index = (await off.req('GET', '/')).body
  t.notOk(index.groups['App group'], 'no App group in discovery')
  // The group's addresses are `/app/…` under the base URL (the apps platform's site route
  // `{site_url}/api/app/usage` is not the group's, and stays).
  t.notOk(/"\/app\/|\/api\/v1\/app\//.test(JSON.stringify(index)), 'no /app/ path in discovery')
  const spec = (await off.req('GET', '/openapi.json')).body
  t.same(Object.keys(spec.paths).filter((p) => p.startsWith('/app/')), [], 'no /app/ path in OpenAPI')
  // Make sure the same request works with the group on (the 404s above are the switch, not a typo).
  t.equal((await s.req('GET', '/app/path-configuration/ios.json')).status, 200)
})
