/**
 * App session tokens and the embed page (api-v1 §4.10, §5, §8; docs/apps.md "Embedding"): the token
 * is a 60 s HS256 JWT that a standard JWT library (jose) verifies with the app's client secret, with
 * the documented claims; only an installed app gets one, only for a signed-in owner; the embed page
 * frames the app's origin only (CSP frame-src) and, in Chromium, hands the framed app a token by
 * postMessage.
 */
import t from 'tap'
import { randomBytes } from 'node:crypto'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { jwtVerify, decodeJwt } from 'jose'
import { request, startServer } from './helpers/server.ts'
import { createAccount, createOwner } from './helpers/fixtures.ts'
import { createTestApp, installTestApp } from './helpers/apps.ts'
import { CHROMIUM, launchChromium } from './helpers/browser.ts'
import { sha256Hex } from '../src/auth/tokens.ts'
import { nowIso } from '../src/storage/db.ts'
import { insertSession } from '../src/storage/owner-auth.ts'

// The app's own site: another origin than the server's (another port), serving its embedded page.
const appSite = createServer((req, res) => {
  res.writeHead(200, { 'content-type': 'text/html' })
  res.end(`<!doctype html><title>Embedded app</title><p>app</p><script>
    window.__tokens = []
    window.addEventListener('message', (e) => { if (e.data && e.data.type === 'dispatch:session-token') window.__tokens.push({ origin: e.origin, token: e.data.token, expires_in: e.data.expires_in }) })
  </script>`)
})
await new Promise<void>((r) => appSite.listen(0, '127.0.0.1', r))
const appOrigin = `http://127.0.0.1:${(appSite.address() as AddressInfo).port}`

const s = await startServer({ RATE_LIMIT_PER_MINUTE: '100000' })
t.teardown(async () => { await s.close(); await new Promise((r) => appSite.close(r)) })
const db = s.app.svc.db

function signedIn(ownerId: number) {
  const raw = randomBytes(32).toString('base64url')
  const csrf = randomBytes(24).toString('base64url')
  const sessionId = insertSession(db, { ownerId, tokenHash: sha256Hex(raw), csrf, via: 'password', ip: '127.0.0.1', userAgent: 'test', expiresAt: nowIso(Date.now() + 3_600_000) })
  return { raw, cookie: `dsid=${raw}`, csrf, sessionId }
}
const get = (path: string, cookie?: string) => fetch(`${s.site}${path}`, { redirect: 'manual', headers: cookie ? { cookie } : {} })

const dev = createOwner(db)
const acct = createAccount(db)
const other = createAccount(db)
const app = createTestApp(db, dev, { embedUrl: `${appOrigin}/embedded?x=1` })
const otherApp = createTestApp(db, dev, { embedUrl: `${appOrigin}/other` })
const { installation } = installTestApp(db, app.id, acct.ownerId)
const me = signedIn(acct.ownerId)
const key = (secret: string) => new TextEncoder().encode(secret)

t.test('a session token verifies with jose and the client secret, with the documented claims', async (t) => {
  const r = await request(`${s.site}/apps/${app.id}/session-token`, 'GET', { headers: { cookie: me.cookie } })
  t.equal(r.status, 200, r.text)
  t.equal(r.body.expires_in, 60)
  t.equal(r.headers.get('cache-control'), 'no-store')
  const { payload, protectedHeader } = await jwtVerify(r.body.token, key(app.client_secret), { issuer: s.site, audience: app.client_id, algorithms: ['HS256'] })
  t.equal(protectedHeader.alg, 'HS256')
  t.equal(payload.sub, String(acct.ownerId))
  t.equal(payload.dest, `${s.site}/dashboard`)
  t.equal(payload.sid, String(me.sessionId))
  t.equal(payload.exp! - payload.iat!, 60, 'lives 60 s')
  t.equal(payload.nbf, payload.iat)
  t.match(payload.jti, /^[\w-]{16,}$/)
  t.equal(db.prepare('SELECT installation_id FROM app_session_tokens WHERE jti = ?').pluck().get(payload.jti), installation.id, 'its jti is recorded')

  const again = await request(`${s.site}/apps/${app.id}/session-token`, 'GET', { headers: { cookie: me.cookie } })
  t.not(decodeJwt(again.body.token).jti, payload.jti, 'a unique jti per token')

  await t.rejects(jwtVerify(r.body.token, key(otherApp.client_secret), { algorithms: ['HS256'] }), 'another secret does not verify it')
  await t.rejects(jwtVerify(r.body.token, key(app.client_secret), { audience: otherApp.client_id, algorithms: ['HS256'] }), 'another app\'s audience refuses it')
  await t.rejects(jwtVerify(r.body.token, key(app.client_secret), { algorithms: ['HS256'], currentDate: new Date((payload.exp! + 1) * 1000) }),
    { code: 'ERR_JWT_EXPIRED' }, 'expired after 60 s')
})

t.test('dest names a store of the account; another account\'s store is a 404', async (t) => {
  const r = await request(`${s.site}/apps/${app.id}/session-token?store=${acct.storeId}`, 'GET', { headers: { cookie: me.cookie } })
  t.equal(decodeJwt(r.body.token).dest, `${s.site}/dashboard?store=${acct.storeId}`)
  t.equal((await request(`${s.site}/apps/${app.id}/session-token?store=${other.storeId}`, 'GET', { headers: { cookie: me.cookie } })).status, 404)
})

t.test('only an installed app, only for a signed-in owner', async (t) => {
  t.equal((await request(`${s.site}/apps/${otherApp.id}/session-token`, 'GET', { headers: { cookie: me.cookie } })).status, 404, 'not installed')
  t.equal((await request(`${s.site}/apps/${app.id}/session-token`, 'GET', { headers: { cookie: signedIn(other.ownerId).cookie } })).status, 404, 'installed by another account')
  const out = await get(`/apps/${app.id}/session-token`)
  t.equal(out.status, 303, 'signed out: to the sign-in page')
  t.match(out.headers.get('location'), /^\/login\?next=/)
  // An API token is not a web session.
  const bearer = await fetch(`${s.site}/apps/${app.id}/session-token`, { redirect: 'manual', headers: { authorization: `Bearer ${acct.token}` } })
  t.equal(bearer.status, 303)
})

t.test('the embed page frames the app\'s origin only', async (t) => {
  const r = await get(`/apps/${app.id}/embed`, me.cookie)
  t.equal(r.status, 200)
  const csp = r.headers.get('content-security-policy') ?? ''
  const frameSrc = /frame-src ([^;]+)/.exec(csp)?.[1]
  t.equal(frameSrc, appOrigin, 'frame-src is exactly the app\'s origin')
  t.match(csp, /frame-ancestors 'none'/)
  t.match(csp, /script-src 'nonce-/)
  const html = await r.text()
  t.match(html, `src="${appOrigin}/embedded?x=1"`)
  t.equal((await get(`/apps/${otherApp.id}/embed`, me.cookie)).status, 404, 'not installed: a 404 page')
  t.equal((await get(`/apps/${app.id}/embed`)).status, 303, 'signed out: to /login')
})

t.test('in Chromium the framed app receives a session token by postMessage', async (t) => {
  const browser = await launchChromium()
  if (!browser) { t.fail(`${CHROMIUM} is missing: apt-get install -y chromium (.ci/run does this)`); return }
  t.teardown(() => browser.close())
  const ctx = await browser.newContext()
  await ctx.addCookies([{ name: 'dsid', value: me.raw, url: s.site }])
  const page = await ctx.newPage()
  const violations: string[] = []
  page.on('console', (m) => { if (/Content Security Policy/i.test(m.text())) violations.push(m.text()) })
  await page.goto(`${s.site}/apps/${app.id}/embed`)
  const frame = page.frames().find((f) => f.url().startsWith(appOrigin))
  t.ok(frame, 'the app is framed')
  await frame!.waitForFunction('window.__tokens && window.__tokens.length > 0', undefined, { timeout: 10_000 })
  const got = await frame!.evaluate('window.__tokens[0]') as { origin: string; token: string; expires_in: number }
  t.equal(got.origin, new URL(s.site).origin, 'sent by the dashboard page')
  t.equal(got.expires_in, 60)
  const { payload } = await jwtVerify(got.token, key(app.client_secret), { issuer: s.site, audience: app.client_id, algorithms: ['HS256'] })
  t.equal(payload.sub, String(acct.ownerId))
  t.same(violations, [], 'no CSP violations')
})

t.test('the dashboard Apps page lists installed apps with Open and Uninstall, and the marketplace', async (t) => {
  const browser = await launchChromium()
  if (!browser) { t.fail(`${CHROMIUM} is missing`); return }
  t.teardown(() => browser.close())
  const owner = createAccount(db)
  const inst = installTestApp(db, app.id, owner.ownerId).installation
  const who = signedIn(owner.ownerId)
  const ctx = await browser.newContext()
  await ctx.addCookies([{ name: 'dsid', value: who.raw, url: s.site }])
  const page = await ctx.newPage()
  await page.goto(`${s.site}/dashboard/apps`)
  await page.waitForSelector('body[data-ready="1"]')
  const row = page.locator(`tr[data-installation-id="${inst.id}"]`)
  t.equal(await row.locator('td').first().textContent(), app.name)
  t.match(await row.locator('a', { hasText: 'Open' }).getAttribute('href'), new RegExp(`/apps/${app.id}/embed`))
  t.ok(await page.locator(`tr[data-app-id="${otherApp.id}"]`).count(), 'the marketplace lists published apps')
  page.on('dialog', (d) => { void d.accept() })
  await row.locator('button', { hasText: 'Uninstall' }).click()
  await page.waitForSelector(`tr[data-installation-id="${inst.id}"]`, { state: 'detached' })
  t.equal(db.prepare('SELECT status FROM app_installations WHERE id = ?').pluck().get(inst.id), 'uninstalled', 'uninstalled from the dashboard')
})
