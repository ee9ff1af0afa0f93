/**
 * Owner sign-in on the site (issue 14 item 1; docs/dashboard.md "Signing in"), black-box over HTTP:
 * sign-up → verification mail → verify → sign in → cookie flags → rotation → sessions list/revoke
 * → sign-out; CSRF refusals; /login and back; the session never authenticates /api/v1; limits;
 * TOTP; suspended accounts; the dashboard's short-lived API token; the CLI and the demo seed.
 */
import t from 'tap'
import * as OTPAuth from 'otpauth'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startServer, type TestServer } from './helpers/server.ts'
import { createOwner, isError } from './helpers/fixtures.ts'
import { suspendAccount, unsuspendAccount } from '../src/storage/accounts.ts'
import { quotaUsage } from '../src/storage/entitlements.ts'
import { runCli } from '../src/cli.ts'
import { mountHttp } from '../src/http/server.ts'
import { route } from '../src/http/route.ts'
import { PASSWORD, csrfOf, linkIn, mail, newEmail, session, sessionOf, signIn, signedUp, visit } from './helpers/owner-site.ts'

t.test('sign-up, verification mail, sign-in, cookie flags, rotation, sessions and sign-out', async (t) => {
  const s = await startServer()
  t.teardown(() => s.close())
  const email = newEmail()

  const form = await visit(s, 'GET', '/signup')
  t.equal(form.status, 200)
  t.match(form.text, /<input id="email" type="email"/)
  t.match(form.headers.get('content-security-policy') ?? '', /default-src 'none'/, 'strict CSP')

  const owners = () => s.app.svc.db.prepare('SELECT COUNT(*) FROM owners').pluck().get() as number
  const before = owners()
  t.equal((await visit(s, 'POST', '/signup', { form: { email, password: PASSWORD }, origin: 'http://evil.example' })).status, 403, 'sign-up from another origin is refused')
  t.equal((await visit(s, 'POST', '/signup', { form: { email, password: PASSWORD }, origin: null })).status, 403, 'sign-up with neither Origin nor Referer is refused')
  t.equal((await visit(s, 'POST', '/signup', { form: { email, password: PASSWORD }, origin: 'null' })).status, 403, 'sign-up with Origin: null and no Referer is refused')
  t.equal((await visit(s, 'POST', '/signup', { form: { email, password: PASSWORD }, origin: 'null', headers: { referer: 'http://evil.example/' } })).status, 403, 'Origin: null and another site\'s Referer')
  const short = await visit(s, 'POST', '/signup', { form: { email, password: 'short' } })
  t.equal(short.status, 422, 'a short password is refused')
  t.match(short.text, /at least 10 characters/)
  t.equal((await visit(s, 'POST', '/signup', { form: { email: 'not-an-email', password: PASSWORD } })).status, 422, 'a bad address is refused')
  t.equal((await visit(s, 'POST', '/signup', { form: { email: 'not-an-email', password: PASSWORD }, origin: 'null', headers: { referer: `${s.site}/signup` } })).status, 422, 'Origin: null with the site\'s Referer reaches the form')
  t.equal(owners(), before, 'nothing written')

  const done = await visit(s, 'POST', '/signup', { form: { name: 'Olga', email, password: PASSWORD } })
  t.equal(done.status, 200)
  t.match(done.text, /Check your email/)
  t.equal(owners(), before + 1)
  const verification = mail(s).lastTo(email)
  t.ok(verification, 'a verification mail was sent through the email provider')
  const link = linkIn(verification!.text)
  t.ok(link, 'with a link')
  t.ok(verification!.text.includes(s.site + link), 'an absolute link to this site')

  // Signing up again with the address: the same answer, a mail to the owner, no second account.
  const again = await visit(s, 'POST', '/signup', { form: { email: email.toUpperCase(), password: 'another password 1' } })
  t.equal(again.status, 200)
  t.match(again.text, /Check your email/, 'same answer for a taken address')
  t.equal(owners(), before + 1, 'no second account')
  t.match(mail(s).lastTo(email)!.subject, /already have an account/)

  // Not verified yet: the right password answers 403 and mails a new link.
  const unverified = await signIn(s, email)
  t.equal(unverified.status, 403)
  t.match(unverified.text, /Confirm/)
  t.equal(sessionOf(unverified), undefined, 'no session')
  const newLink = linkIn(mail(s).lastTo(email)!.text)
  t.not(newLink, link, 'a new link was mailed')

  t.equal((await visit(s, 'GET', link)).status, 200, 'the link confirms the address')
  t.equal((await visit(s, 'GET', link)).status, 404, 'a link works once')
  t.equal((await visit(s, 'GET', '/verify-email/nope-nope-nope-nope-nope')).status, 404, 'an unknown link')

  // Signed out, a session page redirects to the sign-in page and back.
  const out = await visit(s, 'GET', '/account/security?tab=1')
  t.equal(out.status, 303)
  t.equal(out.location, `/login?next=${encodeURIComponent('/account/security?tab=1')}`)
  const login = await visit(s, 'GET', out.location!)
  t.equal(login.status, 200)
  t.match(login.text, /<input id="email" type="email"/)
  t.match(login.text, /<input id="password" type="password"/)
  t.match(login.text, /<button type="submit">/)
  t.match(login.text, /name="next" value="\/account\/security\?tab=1"/, 'the form carries next')

  const wrong = await signIn(s, email, 'wrong password!!')
  t.equal(wrong.status, 401)
  t.equal(sessionOf(wrong), undefined)
  const unknown = await signIn(s, 'nobody@example.test', PASSWORD)
  t.equal(unknown.status, 401, 'an unknown address gets the same answer')
  t.match(unknown.text, /The email or password is wrong/, 'the same message for an unknown address')
  t.match(wrong.text, /The email or password is wrong/)

  const ok = await signIn(s, email.toUpperCase(), PASSWORD, { next: '/account/security?tab=1' })
  t.equal(ok.status, 303)
  t.equal(ok.location, '/account/security?tab=1', 'back to the page first asked for')
  const setCookie = ok.cookies.find((c) => c.startsWith('dsid='))!
  t.match(setCookie, /; HttpOnly/, 'HttpOnly')
  t.match(setCookie, /; SameSite=Lax/, 'SameSite=Lax')
  t.match(setCookie, /; Path=\//, 'Path=/')
  t.notMatch(setCookie, /Secure/, 'not Secure on an http site')
  const cookie = sessionOf(ok)!
  t.notOk(s.app.svc.db.prepare('SELECT 1 FROM owner_sessions WHERE token_hash = ?').get(cookie.slice(5)), 'the raw cookie value is not stored')

  const page = await visit(s, 'GET', '/account/security', { cookie })
  t.equal(page.status, 200)
  t.match(page.text, email)
  t.match(page.text, /this browser/)
  const csrf = csrfOf(page.text)
  t.ok(csrf.length >= 32, 'the page carries the CSRF token')
})

// A server of its own: sign-in attempts per address are limited to 10 a minute.
t.test('next, rotation on sign-in, sessions list and revoke, sign-out', async (t) => {
  const s = await startServer()
  t.teardown(() => s.close())
  const { email } = await signedUp(s)
  const cookie = sessionOf(await signIn(s, email))!

  // An open redirect is not possible through next.
  for (const next of ['//evil.example/x', 'https://evil.example', '/\\evil.example']) {
    const r = await signIn(s, email, PASSWORD, { next })
    t.equal(r.location, '/dashboard', `next=${next} goes to the dashboard instead`)
  }

  // Signing in again in the same browser rotates the session: a new value, the old one ends.
  const rotated = await signIn(s, email, PASSWORD, {}, cookie)
  const cookie2 = sessionOf(rotated)!
  t.ok(cookie2 && cookie2 !== cookie, 'a new cookie value')
  t.equal((await visit(s, 'GET', '/account/security', { cookie })).status, 303, 'the old value no longer signs in')
  t.equal((await visit(s, 'GET', '/account/security', { cookie: cookie2 })).status, 200)

  // Sessions: a second browser, listed; revoked from the first; a stranger's id is 404.
  const other = await session(s, email)
  const mine = await visit(s, 'GET', '/account/security', { cookie: cookie2 })
  const csrf2 = csrfOf(mine.text)
  const ids = [...mine.text.matchAll(/\/account\/sessions\/(\d+)\/revoke/g)].map((m) => Number(m[1]))
  const otherId = s.app.svc.db.prepare("SELECT id FROM owner_sessions WHERE revoked_at IS NULL ORDER BY id DESC LIMIT 1").pluck().get() as number
  t.ok(ids.includes(otherId), 'the other browser\'s session is listed')
  const otherCsrf = s.app.svc.db.prepare('SELECT csrf FROM owner_sessions WHERE id = ?').pluck().get(otherId) as string
  t.notMatch(mine.text, otherCsrf, 'but never its CSRF token (the list shows no session secret)')
  const stranger = await signedUp(s)
  const strangerSession = await session(s, stranger.email)
  const strangerId = s.app.svc.db.prepare('SELECT id FROM owner_sessions WHERE owner_id = ? AND revoked_at IS NULL').pluck().get(stranger.ownerId) as number
  t.notOk(ids.includes(strangerId), 'another account\'s sessions are not listed')
  const foreign = await visit(s, 'POST', `/account/sessions/${strangerId}/revoke`, { cookie: cookie2, form: { csrf: csrf2 } })
  t.equal(foreign.status, 404, 'revoking another account\'s session is 404')
  t.equal((await visit(s, 'GET', '/account/security', { cookie: strangerSession.cookie })).status, 200, 'and it still works')
  const revoke = await visit(s, 'POST', `/account/sessions/${otherId}/revoke`, { cookie: cookie2, form: { csrf: csrf2 } })
  t.equal(revoke.status, 303)
  t.equal((await visit(s, 'GET', '/account/security', { cookie: other.cookie })).status, 303, 'the revoked session is signed out')

  // Sign-out ends the session and clears the cookie.
  const bye = await visit(s, 'POST', '/logout', { cookie: cookie2, form: { csrf: csrf2 } })
  t.equal(bye.status, 303)
  t.equal(bye.location, '/login')
  t.match(bye.cookies.find((c) => c.startsWith('dsid='))!, /Max-Age=0/, 'the cookie is cleared')
  t.equal((await visit(s, 'GET', '/account/security', { cookie: cookie2 })).status, 303, 'the session has ended')
})

t.test('CSRF: every state-changing session request needs the token', async (t) => {
  const s = await startServer()
  t.teardown(() => s.close())
  const { email, ownerId } = await signedUp(s)
  const { cookie, csrf } = await session(s, email)
  const pending = () => s.app.svc.db.prepare('SELECT totp_pending FROM owners WHERE id = ?').pluck().get(ownerId)

  t.equal((await visit(s, 'POST', '/account/two-factor/start', { cookie, form: {} })).status, 403, 'form without the token')
  t.equal((await visit(s, 'POST', '/account/two-factor/start', { cookie, form: { csrf: 'x'.repeat(csrf.length) } })).status, 403, 'a wrong token')
  t.equal((await visit(s, 'POST', '/account/two-factor/start', { cookie, form: { csrf }, origin: 'http://evil.example' })).status, 403, 'the right token from another origin')
  t.equal((await visit(s, 'POST', '/account/two-factor/start', { cookie, form: { csrf }, headers: { 'x-csrf-token': 'nope' } })).status, 403, 'a wrong header is not rescued by the field')
  t.equal((await visit(s, 'POST', '/account/two-factor/start', { cookie, form: {}, origin: 'null' })).status, 403, 'Origin: null without the token')
  t.equal((await visit(s, 'POST', '/account/two-factor/start', { cookie, form: { csrf: 'x'.repeat(csrf.length) }, origin: 'null' })).status, 403, 'Origin: null with a wrong token')
  t.equal(pending(), null, 'nothing happened')
  t.equal((await visit(s, 'POST', '/logout', { cookie, form: {} })).status, 403, 'sign-out without the token')
  t.equal((await visit(s, 'GET', '/account/security', { cookie })).status, 200, 'still signed in')

  t.equal((await visit(s, 'POST', '/account/two-factor/start', { cookie, form: { csrf }, origin: 'null' })).status, 200, 'the form field, from a page that sends Origin: null')
  t.ok(pending(), 'enrolment started')
  t.equal((await visit(s, 'POST', '/account/two-factor/start', { cookie, form: { csrf } })).status, 200, 'the form field')

  // The dashboard's API token: JSON with the header.
  const noHeader = await visit(s, 'POST', '/dashboard/api-token', { cookie })
  t.equal(noHeader.status, 403)
  t.equal(JSON.parse(noHeader.text).code, 'forbidden')
  const signedOut = await visit(s, 'POST', '/dashboard/api-token', { headers: { 'x-csrf-token': csrf } })
  t.equal(signedOut.status, 401, 'signed out, a non-page request is 401')
  const other = await signedUp(s)
  const otherSession = await session(s, other.email)
  t.equal((await visit(s, 'POST', '/dashboard/api-token', { cookie, headers: { 'x-csrf-token': otherSession.csrf } })).status, 403, 'another session\'s token')
  t.equal(s.app.svc.db.prepare('SELECT COUNT(*) FROM owner_tokens WHERE session_id IS NOT NULL').pluck().get(), 0, 'no token was issued')
  t.equal((await visit(s, 'POST', '/dashboard/api-token', { cookie, origin: 'null' })).status, 403, 'Origin: null without the header')
  t.equal((await visit(s, 'POST', '/dashboard/api-token', { cookie, headers: { 'x-csrf-token': csrf }, origin: 'null' })).status, 200, 'Origin: null with the header: the token decides')
})

t.test('the dashboard API token: short-lived, of the session\'s account, ends with the session', async (t) => {
  const s = await startServer()
  t.teardown(() => s.close())
  const { email, ownerId } = await signedUp(s)
  const { cookie, csrf } = await session(s, email)

  // The session cookie alone never authenticates the API.
  isError(t, await s.req('GET', '/me', { headers: { cookie } }), 401, 'unauthenticated', 'GET /api/v1/me with the cookie only')
  isError(t, await s.req('GET', '/restaurants', { headers: { cookie, 'x-csrf-token': csrf } }), 401, 'unauthenticated', 'with the cookie and CSRF token')

  const quotaBefore = quotaUsage(s.app.svc.db, ownerId, 'api_tokens')
  const r = await visit(s, 'POST', '/dashboard/api-token', { cookie, headers: { 'x-csrf-token': csrf } })
  t.equal(r.status, 200, r.text)
  t.equal(r.headers.get('cache-control'), 'no-store')
  const { token, expires_at } = JSON.parse(r.text)
  t.match(token, /^dso_/)
  const life = Date.parse(expires_at) - Date.now()
  t.ok(life > 14 * 60_000 && life <= 15 * 60_000, `lives 15 minutes (${Math.round(life / 1000)} s)`)
  const me = await s.req('GET', '/me', { token })
  t.equal(me.status, 200)
  t.equal(me.body.id ?? me.body.owner?.id, ownerId, 'the session\'s account')
  t.equal(quotaUsage(s.app.svc.db, ownerId, 'api_tokens'), quotaBefore, 'not counted in the api_tokens quota')
  const listed = await s.req('GET', '/tokens', { token })
  if (listed.status === 200) {
    const rows = Array.isArray(listed.body) ? listed.body : listed.body.data
    t.notOk(rows.some((x: { prefix: string }) => token.startsWith(x.prefix)), 'not in the account\'s token list')
  }

  await visit(s, 'POST', '/logout', { cookie, form: { csrf } })
  isError(t, await s.req('GET', '/me', { token }), 401, 'unauthenticated', 'the token after sign-out')
})

t.test('limits: 10 attempts a minute per address, 5 failures per account', async (t) => {
  const s = await startServer()
  t.teardown(() => s.close())
  const a = await signedUp(s)
  const b = await signedUp(s)
  for (let i = 0; i < 5; i++) t.equal((await signIn(s, a.email, `wrong password ${i}`)).status, 401)
  const locked = await signIn(s, a.email)
  t.equal(locked.status, 429, 'the right password after 5 failures is refused')
  t.ok(Number(locked.headers.get('retry-after')) > 0, 'with Retry-After')
  t.equal(sessionOf(locked), undefined, 'no session')
  t.equal((await signIn(s, a.email.toUpperCase())).status, 429, 'the account, whatever the case of the address')
  t.equal((await signIn(s, b.email)).status, 303, 'another account still signs in')
  // 8 attempts so far from this address; the 11th within the minute is refused.
  t.equal((await signIn(s, b.email, 'nope nope nope')).status, 401)
  t.equal((await signIn(s, b.email, 'nope nope nope')).status, 401)
  const flood = await signIn(s, b.email)
  t.equal(flood.status, 429, 'the 11th attempt in a minute from one address')
  t.match(flood.text, /from this address/)
})

t.test('two-factor: enrol, sign in with a code, replay refused, turn off', async (t) => {
  const s = await startServer()
  t.teardown(() => s.close())
  const { email, ownerId } = await signedUp(s)
  const { cookie, csrf } = await session(s, email)
  const started = await visit(s, 'POST', '/account/two-factor/start', { cookie, form: { csrf } })
  const secret = /Key: <code>([A-Z2-7]+)<\/code>/.exec(started.text)?.[1]
  t.ok(secret, 'the key is shown')
  const totp = new OTPAuth.TOTP({ secret: OTPAuth.Secret.fromBase32(secret!), algorithm: 'SHA1', digits: 6, period: 30 })
  // Codes of three consecutive 30 s steps (the server accepts ±1 step): the previous one enrols,
  // the current one signs in, the next one turns it off. Not within 5 s of a step's end, so the
  // server's clock sees the same current step (a guard, not a timing assertion).
  const intoStep = Date.now() % 30_000
  if (intoStep > 25_000) await new Promise((r) => setTimeout(r, 30_000 - intoStep + 50))
  const now = Date.now()
  const [previous, current, next] = [-30_000, 0, 30_000].map((d) => totp.generate({ timestamp: now + d }))
  const wrongCode = [previous, current, next].includes('000000') ? '999999' : '000000'
  const bad = await visit(s, 'POST', '/account/two-factor/confirm', { cookie, form: { csrf, code: wrongCode } })
  t.equal(bad.status, 422, 'a wrong code does not turn it on')
  t.equal(s.app.svc.db.prepare('SELECT totp_secret FROM owners WHERE id = ?').pluck().get(ownerId), null)
  const on = await visit(s, 'POST', '/account/two-factor/confirm', { cookie, form: { csrf, code: previous! } })
  t.equal(on.status, 200)
  t.match(on.text, /Two-factor sign-in is on/)

  const noCode = await signIn(s, email)
  t.equal(noCode.status, 401, 'the password alone is not enough')
  t.match(noCode.text, /name="otp"/, 'the form asks for the code')
  t.equal(sessionOf(noCode), undefined)
  t.equal((await signIn(s, email, PASSWORD, { otp: previous! })).status, 422, 'the enrolment\'s code cannot sign in (replay)')
  const withCode = await signIn(s, email, PASSWORD, { otp: current! })
  t.equal(withCode.status, 303, withCode.text.slice(0, 200))
  t.ok(sessionOf(withCode))
  const replay = await signIn(s, email, PASSWORD, { otp: current! })
  t.equal(replay.status, 422, 'the same code twice is refused')
  t.equal(sessionOf(replay), undefined)

  const c2 = sessionOf(withCode)!
  const csrf2 = csrfOf((await visit(s, 'GET', '/account/security', { cookie: c2 })).text)
  t.equal((await visit(s, 'POST', '/account/two-factor/disable', { cookie: c2, form: { csrf: csrf2, code: current! } })).status, 422, 'turning off needs a fresh code')
  const off = await visit(s, 'POST', '/account/two-factor/disable', { cookie: c2, form: { csrf: csrf2, code: next! } })
  t.equal(off.status, 200)
  t.equal((await signIn(s, email)).status, 303, 'the password alone signs in again')
})

t.test('a suspended account neither signs in nor keeps its sessions', async (t) => {
  const s = await startServer()
  t.teardown(() => s.close())
  const { email, ownerId } = await signedUp(s)
  const { cookie, csrf } = await session(s, email)
  suspendAccount(s.app.svc.db, ownerId, 'test')
  const r = await signIn(s, email)
  t.equal(r.status, 403)
  t.match(r.text, /suspended/)
  t.equal(sessionOf(r), undefined)
  t.equal((await visit(s, 'GET', '/account/security', { cookie })).status, 403, 'its session is refused')
  t.equal((await visit(s, 'POST', '/dashboard/api-token', { cookie, headers: { 'x-csrf-token': csrf } })).status, 403, 'no API token')
  unsuspendAccount(s.app.svc.db, ownerId)
  t.equal((await visit(s, 'GET', '/account/security', { cookie })).status, 200, 'back once unsuspended')
})

t.test('Secure cookie on an https site', async (t) => {
  const port = 40000 + Math.floor(Math.random() * 20000)
  const s = await startServer({ SITE_URL: `https://dispatch.example:${port}` })
  t.teardown(() => s.close())
  const local = { ...s, site: `http://127.0.0.1:${s.port}` } as TestServer
  const email = newEmail()
  await visit(local, 'POST', '/signup', { form: { email, password: PASSWORD }, origin: 'https://dispatch.example:' + port })
  const link = linkIn(mail(s).lastTo(email)!.text)
  await visit(local, 'GET', link)
  const r = await visit(local, 'POST', '/login', { form: { email, password: PASSWORD }, origin: 'https://dispatch.example:' + port })
  t.equal(r.status, 303)
  t.match(r.cookies.find((c) => c.startsWith('dsid='))!, /; Secure/, 'Secure when the site is https')
})

t.test('the demo seed and the CLI give working credentials', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'dispatch-cli-'))
  const dbPath = join(dir, 'cli.db')
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const env = { DB_PATH: dbPath, LOG_LEVEL: 'silent' }
  const seeded = JSON.parse(runCli(['seed', '--demo', '--json'], env).out)
  t.match(seeded.owner, { email: /@/, password: /.{8,}/ }, 'seed --demo --json prints owner.email and owner.password')

  const s = await startServer({ DB_PATH: dbPath })
  t.teardown(() => s.close())
  t.equal((await signIn(s, seeded.owner.email, seeded.owner.password)).status, 303, 'the demo owner signs in')
  const demo = s.seed()
  t.equal((await signIn(s, demo.owner.email, demo.owner.password)).status, 303, 'seedDemo credentials sign in')
  const { cookie } = await session(s, demo.owner.email, demo.owner.password)

  // set-password for an owner made without one (an operator's account).
  const ownerId = createOwner(s.app.svc.db)
  const ownerEmail = s.app.svc.db.prepare('SELECT email FROM owners WHERE id = ?').pluck().get(ownerId) as string
  t.equal((await signIn(s, ownerEmail, 'operator chosen 1')).status, 401, 'no password yet')
  t.throws(() => runCli(['owner', 'set-password', '--owner', String(ownerId), '--password', 'short'], env), /at least 10/)
  t.throws(() => runCli(['owner', 'set-password', '--owner', '999999', '--password', 'operator chosen 1'], env), /no owner/)
  const set = JSON.parse(runCli(['owner', 'set-password', '--owner', String(ownerId), '--password', 'operator chosen 1', '--json'], env).out)
  t.match(set, { owner_id: ownerId, email: ownerEmail, sessions_ended: 0 })
  t.equal((await signIn(s, ownerEmail, 'operator chosen 1')).status, 303, 'signs in with the new password')

  // A reset ends the owner's sessions.
  const reset = JSON.parse(runCli(['owner', 'set-password', '--owner', String(demo.owner.id), '--password', 'a brand new one', '--json'], env).out)
  t.ok(reset.sessions_ended >= 1)
  t.equal((await visit(s, 'GET', '/account/security', { cookie })).status, 303, 'the old session is signed out')
  t.equal((await signIn(s, demo.owner.email, demo.owner.password)).status, 401, 'the old password no longer works')
})

t.test('the session family is for site routes only', async (t) => {
  const r = route({ method: 'GET', path: '/x', auth: 'session', tag: 't', summary: 's', handler: () => null })
  t.throws(() => mountHttp({ any() {} } as never, { config: {} } as never, [r as never], {} as never), /site routes only/, 'an /api/v1 route declaring the session family does not start')
})
