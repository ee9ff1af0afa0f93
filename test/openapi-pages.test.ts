/**
 * The site's pages answer what the OpenAPI document says (issue 32 item 4), checked the way a
 * fuzzer reading the document checks them: for every page operation, requests that are refused or
 * redirected (unknown addresses, malformed ids, posts from elsewhere or with the wrong body type,
 * signed out, invalid form fields, past a rate limit), and each answer's status and media type must
 * be listed for that operation. A page answers its own refusals as a page (text/html); what the HTTP
 * door refuses before the page runs is the §7 envelope (application/json).
 */
import t from 'tap'
import { startServer, type TestServer } from './helpers/server.ts'
import { createAccount, createOwner } from './helpers/fixtures.ts'
import { undocumented } from './helpers/openapi.ts'
import { fill, liveRoutes, paramsOf, type Route } from './helpers/routes.ts'
import { createShellToken, signedIn } from './helpers/apps.ts'
import { docPath } from '../src/http/openapi.ts'
import { hashSecretSync } from '../src/auth/passwords.ts'
import { nowIso } from '../src/storage/db.ts'

const s = await startServer({ RATE_LIMIT_PER_MINUTE: '100000' })
t.teardown(() => s.close())
const db = s.app.svc.db
const acct = createAccount(db)
const doc = (await s.req('GET', '/openapi.json')).body as Record<string, any>
const site = new URL(s.site).origin

/** The pages: site addresses that answer HTML. */
const pages = liveRoutes().filter((r) => r.site && r.produces?.startsWith('text/html'))
const opOf = (r: Route) => doc.paths[docPath(r)]?.[r.method.toLowerCase()]
const label = (r: Route) => `${r.method} ${r.path}`
const isId = (name: string) => /(^id|Id)$/.test(name)

interface Attempt { what: string; path?: string; headers?: Record<string, string>; body?: string }
interface Answer { status: number; contentType: string | null; body: string; location: string | null }

async function send(server: TestServer, r: Route, a: Attempt): Promise<Answer> {
  const res = await fetch(server.site + (a.path ?? fill(r.path, {}, 'no-such-thing-42')), { method: r.method, headers: a.headers, body: a.body, redirect: 'manual' })
  return { status: res.status, contentType: res.headers.get('content-type'), body: await res.text(), location: res.headers.get('location') }
}

/** Every answer checked: each must be a refusal or a redirect, and said by the document. */
const seen = new Map<Route, string[]>()
const problems: string[] = []
async function check(server: TestServer, r: Route, a: Attempt): Promise<Answer> {
  const answer = await send(server, r, a)
  const at = `${label(r)} ${a.what}: ${answer.status} ${answer.contentType ?? ''}`
  if (answer.status !== 303 && (answer.status < 400 || answer.status >= 500)) problems.push(`${at}: not a refusal or a redirect (${answer.body.slice(0, 120)})`)
  const wrong = undocumented(doc, opOf(r), answer)
  if (wrong) problems.push(`${at}: ${wrong}`)
  seen.set(r, [...(seen.get(r) ?? []), `${answer.status} ${answer.contentType?.split(';')[0] ?? '-'}`])
  return answer
}

const form = (fields: Record<string, string>) => new URLSearchParams(fields).toString()
const FORM = { 'content-type': 'application/x-www-form-urlencoded' }

/**
 * What a fuzzer sends to a page without knowing the site: made-up addresses, no Origin, a JSON body
 * to a form. A page at a fixed address (the sign-in page) simply answers: only the rate limit refuses it.
 */
function blind(r: Route, signedIn = false): Attempt[] {
  if (!r.form && paramsOf(r.path).length === 0 && (r.auth !== 'session' || signedIn)) return []
  const out: Attempt[] = [{ what: 'an unknown address', headers: r.form ? FORM : {}, body: r.form ? form({ email: 'a@b.c', password: 'x' }) : undefined }]
  if (paramsOf(r.path).some(isId)) out.push({ what: 'a malformed id', path: fill(r.path, {}, 'x1') })
  if (r.form) out.push({ what: 'a JSON body to a form', headers: { 'content-type': 'application/json' }, body: '{"email":"a@b.c"}' })
  return out
}

t.test('what a fuzzer sends blind: every page answers as documented', async (t) => {
  for (const r of pages) for (const a of blind(r)) await check(s, r, a)
  // Signed in, the session pages run: their own refusals are pages, the door's are the envelope.
  const owner = signedIn(db, acct.ownerId)
  for (const r of pages.filter((x) => x.auth === 'session')) {
    for (const a of blind(r, true)) await check(s, r, { ...a, what: `${a.what}, signed in`, headers: { ...a.headers, cookie: owner.cookie, ...(r.form ? { origin: site } : {}) } })
  }
  t.same(problems.splice(0), [], 'every refusal said by the document')
})

t.test('forms filled in as a person would, and refused: the page again, as documented', async (t) => {
  // The store website: the visitor's CSRF cookie and field from a page, posted from the site.
  const home = await fetch(`${s.site}/s/${acct.slug}`)
  await home.text()
  const csrf = /(?:^|,\s*)csrf=([^;]+)/.exec(home.headers.get('set-cookie') ?? '')?.[1] ?? ''
  t.ok(csrf, 'the store page gives the visitor a CSRF token')
  const visitor = { ...FORM, origin: site, cookie: `csrf=${csrf}` }
  for (const r of pages.filter((x) => x.path.startsWith('/s/{slug}') && x.form)) {
    await check(s, r, { what: 'from the site, invalid fields', path: fill(r.path, { slug: acct.slug, address: '999999' }), headers: visitor, body: form({ csrf, item_id: '999999', email: 'not-an-email', password: 'x', phone: 'x', code: '1', address: '' }) })
  }
  await check(s, route('GET', '/s/{slug}/account'), { what: 'a guest', path: `/s/${acct.slug}/account` })

  // The owner's sign-in pages, from the site.
  const ownerId = createOwner(db)
  const email = `pages-${ownerId}@example.test`
  db.prepare('UPDATE owners SET email = ?, password_hash = ?, email_verified_at = ? WHERE id = ?').run(email, hashSecretSync('correct horse battery'), nowIso(), ownerId)
  const fromSite = { ...FORM, origin: site }
  await check(s, route('POST', '/signup'), { what: 'an invalid email', headers: fromSite, body: form({ name: 'N', email: 'nope', password: 'long enough password' }) })
  await check(s, route('POST', '/forgot-password'), { what: 'an invalid email', headers: fromSite, body: form({ email: 'nope' }) })
  await check(s, route('POST', '/reset-password/{token}'), { what: 'an unknown link', headers: fromSite, body: form({ password: 'long enough password' }) })
  await check(s, route('POST', '/reset-password/{token}'), { what: 'a short password', headers: fromSite, body: form({ password: 'x' }) })
  // Wrong passwords until the account's own limit answers 429, as the sign-in page.
  let last: Answer | undefined
  for (let i = 0; i < 6 && last?.status !== 429; i++) last = await check(s, route('POST', '/login'), { what: `wrong password #${i + 1}`, headers: fromSite, body: form({ email, password: 'wrong password' }) })
  t.equal(last?.status, 429, 'the sign-in page itself says: too many attempts')

  // The account's security page and the consent page, signed in, with the session's CSRF token.
  const owner = signedIn(db, acct.ownerId)
  const session = { ...FORM, origin: site, cookie: owner.cookie }
  const twoFactor = (path: string, what: string) => check(s, route('POST', path), { what, headers: session, body: form({ csrf: owner.csrf, code: '000000' }) })
  await twoFactor('/account/two-factor/confirm', 'nothing to confirm')
  await twoFactor('/account/two-factor/disable', 'two-factor is off')
  db.prepare('UPDATE owners SET totp_secret = ? WHERE id = ?').run('JBSWY3DPEHPK3PXP', acct.ownerId)
  await twoFactor('/account/two-factor/start', 'two-factor is on already')
  await twoFactor('/account/two-factor/disable', 'a wrong code')
  await check(s, route('POST', '/account/sessions/{id}/revoke'), { what: 'another account\'s session', path: '/account/sessions/999999/revoke', headers: session, body: form({ csrf: owner.csrf }) })
  await check(s, route('POST', '/account/sessions/{id}/revoke'), { what: 'without the CSRF token', path: '/account/sessions/999999/revoke', headers: session, body: form({}) })
  await check(s, route('POST', '/oauth/authorize'), { what: 'an unknown client', headers: session, body: form({ csrf: owner.csrf, client_id: 'nope', decision: 'approve' }) })
  await check(s, route('POST', '/oauth/authorize'), { what: 'without the CSRF token', headers: session, body: form({ client_id: 'nope' }) })
  await check(s, route('GET', '/oauth/authorize'), { what: 'an unknown client', path: '/oauth/authorize?response_type=code&client_id=nope', headers: { cookie: owner.cookie } })
  await check(s, route('GET', '/apps/{appId}/embed'), { what: 'an app not installed', path: '/apps/999999/embed', headers: { cookie: owner.cookie } })
  t.same(problems.splice(0), [], 'every refusal said by the document')
})

t.test('past the rate limit the door answers the envelope, and the document says so for every page', async (t) => {
  const tight = await startServer({ RATE_LIMIT_PER_MINUTE: '1' })
  t.teardown(() => tight.close())
  await fetch(`${tight.site}/login`).then((r) => r.text())
  for (const r of pages) {
    const a = await check(tight, r, { what: 'past the limit', headers: r.form ? FORM : {}, body: r.form ? form({}) : undefined })
    t.equal(a.status, 429, `${label(r)}: 429`)
  }
  t.same(problems.splice(0), [], 'every 429 said by the document')
})

t.test('the mobile shell\'s handoff answers 303 to the dashboard, as documented; a used nonce 404', async (t) => {
  const shell = createShellToken(db, acct.ownerId)
  const handoff = route('GET', '/app/handoff/{nonce}')
  const { url } = (await s.req('POST', '/app/session', { token: shell })).body as { url: string }
  const path = new URL(url).pathname + new URL(url).search
  const first = await check(s, handoff, { what: 'a fresh nonce', path })
  t.equal(first.status, 303)
  t.match(first.location, /\/dashboard/, 'to the dashboard')
  t.equal((await check(s, handoff, { what: 'the nonce again', path })).status, 404)
  const op = opOf(handoff)
  t.notOk(op.responses['200'], 'no 200 is promised: it never answers one')
  t.same(problems.splice(0), [], 'said by the document')
})

t.test('every page was asked', async (t) => {
  for (const r of pages) t.ok(seen.get(r)?.length, `${label(r)}: ${seen.get(r)?.join(', ')}`)
})

function route(method: string, path: string): Route {
  const r = liveRoutes().find((x) => x.method === method && x.path === path)
  if (!r) throw new Error(`no route ${method} ${path}`)
  return r
}
