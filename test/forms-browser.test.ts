/**
 * The owner's form pages submitted by Chromium itself (issue 31 item 2; docs/dashboard.md "CSRF"):
 * here the browser, not the test, decides the `Origin` and `Referer` a post carries, and those
 * follow the page's `Referrer-Policy` (`no-referrer` makes Chromium send `Origin: null`). The OAuth
 * consent (signed out → sign-in → consent; approve and deny both end at the app's `redirect_uri`),
 * the forgotten-password and reset forms, the account security page (two-factor on and off,
 * another session signed out, sign out); and a same-site page of another origin posting the
 * consent form without the session's token (with its Origin, and with `Origin: null`) is refused.
 * Sign-up, sign-in and the dashboard: test/dashboard-browser.test.ts; the store website:
 * test/website-browser.test.ts.
 */
import t from 'tap'
import { createServer, type IncomingHttpHeaders } from 'node:http'
import type { AddressInfo } from 'node:net'
import * as OTPAuth from 'otpauth'
import type { Browser, Page, Response } from 'playwright-core'
import type { Test } from 'tap'
import { startServer } from './helpers/server.ts'
import { browserFor } from './helpers/browser.ts'
import { createTestApp, signedIn } from './helpers/apps.ts'
import { createOwner } from './helpers/fixtures.ts'
import { mail, signedUp } from './helpers/owner-site.ts'

/**
 * The third party on another origin of the same site (127.0.0.1, another port: the `SameSite=Lax`
 * session cookie still goes along, so only the CSRF check stands in the way): the app's
 * `redirect_uri` (`/cb`, every arrival recorded with its headers), and `forged()` — the address of
 * a page posting `fields` to `action` without any CSRF token, under the referrer policy `referrer`
 * (`no-referrer` makes the browser send `Origin: null`).
 */
async function thirdParty(): Promise<{ origin: string; arrivals: Array<{ url: URL; headers: IncomingHttpHeaders }>; forged: (action: string, fields: Record<string, string>, referrer?: string) => string; close: () => Promise<void> }> {
  const arrivals: Array<{ url: URL; headers: IncomingHttpHeaders }> = []
  const pages = new Map<string, string>()
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1')
    if (url.pathname === '/cb') {
      arrivals.push({ url, headers: req.headers })
      res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>Back at the app</title><h1>Back at the app</h1>')
      return
    }
    const page = pages.get(url.pathname)
    res.writeHead(page ? 200 : 404, { 'content-type': 'text/html' }).end(page ?? 'not found')
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  return {
    origin,
    arrivals,
    forged: (action, fields, referrer = 'strict-origin-when-cross-origin') => {
      const path = `/forged/${pages.size}`
      const inputs = Object.entries(fields).map(([k, v]) => `<input type="hidden" name="${k}" value="${v}">`).join('')
      pages.set(path, `<!doctype html><meta name="referrer" content="${referrer}"><title>Win a prize</title><form method="post" action="${action}">${inputs}<button>Claim</button></form>`)
      return origin + path
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  }
}

const browser = await browserFor(t)
if (browser) {
  const s = await startServer({ RATE_LIMIT_PER_MINUTE: '100000' })
  t.teardown(() => s.close())
  const db = s.app.svc.db
  const other = await thirdParty()
  t.teardown(() => other.close())
  const callback = `${other.origin}/cb`
  const developer = createOwner(db)
  const installs = (appId: number, ownerId: number) =>
    db.prepare("SELECT COUNT(*) FROM app_installations WHERE app_id = ? AND owner_id = ? AND status = 'active'").pluck().get(appId, ownerId) as number

  /** A fresh browser (closed when `t` ends) and its page. */
  async function open(t: Test, b: Browser): Promise<Page> {
    const ctx = await b.newContext()
    t.teardown(() => ctx.close())
    return ctx.newPage()
  }

  /** Clicks the button `name` and waits for the answer to the post it sends: 403 says the form was refused. */
  async function submit(page: Page, name: string): Promise<Response> {
    const [answer] = await Promise.all([page.waitForResponse((r) => r.request().method() === 'POST'), page.getByRole('button', { name, exact: true }).click()])
    return answer
  }
  /** A post's answer for an assertion's message: its status, and the refusal's text or where it redirects. */
  const shown = async (r: Response) => `${r.status()}${r.status() >= 400 ? `: ${(await r.text()).slice(0, 300)}` : r.headers().location ? ` → ${r.headers().location}` : ''}`

  /** Fills and sends the sign-in form the browser was sent to. */
  async function signIn(t: Test, page: Page, who: { email: string; password: string }): Promise<void> {
    await page.waitForURL((u) => u.pathname === '/login')
    await page.getByLabel('Email').fill(who.email)
    await page.getByLabel('Password').fill(who.password)
    const r = await submit(page, 'Sign in')
    t.equal(r.status(), 303, `signed in (${await shown(r)})`)
  }

  t.test('OAuth consent: approve and deny, clicked in the browser, both end at the app\'s redirect_uri', async (t) => {
    const demo = s.seed()
    const app = createTestApp(db, developer, { name: 'Label Printer', redirectUris: [callback], scopes: ['orders:read'] })
    const authorize = (state: string) => `${s.site}/oauth/authorize?${new URLSearchParams({ response_type: 'code', client_id: app.client_id, redirect_uri: callback, state })}`
    const page = await open(t, browser)

    // Signed out: the consent sends the browser to sign in, and back.
    await page.goto(authorize('deny-1'))
    await signIn(t, page, demo.owner)
    await page.waitForURL((u) => u.pathname === '/oauth/authorize')
    const deny = await submit(page, 'Deny')
    if (!t.equal(deny.status(), 303, `deny: the form is accepted (${await shown(deny)})`)) return
    await page.waitForURL((u) => u.href.startsWith(callback))
    const denied = new URL(page.url())
    t.equal(denied.searchParams.get('error'), 'access_denied', `deny: back at the app with access_denied (at ${page.url()})`)
    t.equal(denied.searchParams.get('state'), 'deny-1', 'with the state')
    t.equal(installs(app.id, demo.owner.id), 0, 'nothing installed')

    await page.goto(authorize('approve-1'))
    const approve = await submit(page, 'Approve')
    if (!t.equal(approve.status(), 303, `approve: the form is accepted (${await shown(approve)})`)) return
    await page.waitForURL((u) => u.href.startsWith(callback))
    const approved = new URL(page.url())
    t.match(approved.searchParams.get('code'), /.{20,}/, `approve: back at the app with a code (at ${page.url()})`)
    t.equal(approved.searchParams.get('state'), 'approve-1', 'with the state')
    t.equal(approved.searchParams.get('iss'), s.site, 'and the issuer')
    t.equal(installs(app.id, demo.owner.id), 1, 'installed')
    t.same(other.arrivals.map((a) => a.headers.referer), [undefined, undefined], 'the app never sees the consent page\'s address (no Referer)')
  })

  t.test('a page of another origin posting the consent form without the session\'s token is refused', async (t) => {
    const demo = s.seed()
    const app = createTestApp(db, developer, { redirectUris: [callback] })
    const page = await open(t, browser)
    await page.goto(`${s.site}/login`)
    await signIn(t, page, demo.owner)
    await page.waitForURL((u) => u.pathname.startsWith('/dashboard'))
    const fields = { response_type: 'code', client_id: app.client_id, redirect_uri: callback, state: 'x', decision: 'approve' }
    for (const referrer of ['strict-origin-when-cross-origin', 'no-referrer']) {
      await page.goto(other.forged(`${s.site}/oauth/authorize`, fields, referrer))
      const res = await submit(page, 'Claim')
      t.equal(res.status(), 403, `refused (${referrer === 'no-referrer' ? 'Origin: null' : 'the other origin'})`)
      t.equal((await res.request().allHeaders()).origin, referrer === 'no-referrer' ? 'null' : other.origin, 'the Origin the browser sent')
      t.match((await res.request().allHeaders()).cookie, /dsid=/, 'with the session cookie: the CSRF check refused it')
    }
    t.equal(installs(app.id, demo.owner.id), 0, 'nothing installed')
    t.equal(other.arrivals.filter((a) => a.url.searchParams.get('state') === 'x').length, 0, 'no code went to the app')
  })

  t.test('forgotten password: the link\'s form sets the new password, which then signs in', async (t) => {
    const { email } = await signedUp(s)
    const page = await open(t, browser)
    await page.goto(`${s.site}/login`)
    await page.getByRole('link', { name: 'Forgot your password?' }).click()
    await page.getByLabel('Email').fill(email)
    const sent = await submit(page, 'Send the link')
    if (!t.equal(sent.status(), 200, `the link is asked for (${await shown(sent)})`)) return
    await page.getByText('a link to set a new password is on its way').waitFor()
    const link = /\/reset-password\/[A-Za-z0-9_-]+/.exec(mail(s).lastTo(email)?.text ?? '')?.[0]
    t.ok(link, 'the mail holds the link')
    await page.goto(`${s.site}${link}`)
    const fresh = 'a brand new passphrase'
    await page.getByLabel(/New password/).fill(fresh)
    const set = await submit(page, 'Set the new password')
    if (!t.equal(set.status(), 200, `the form is accepted (${await shown(set)})`)) return
    await page.getByRole('heading', { name: 'Password changed' }).waitFor()
    await page.getByRole('link', { name: 'Sign in' }).click()
    await signIn(t, page, { email, password: fresh })
    await page.waitForURL((u) => u.pathname.startsWith('/dashboard'))
    t.pass('signed in with the new password')
  })

  t.test('account security: two-factor on and off, another session signed out, then this one', async (t) => {
    const demo = s.seed()
    const elsewhere = signedIn(db, demo.owner.id)
    const page = await open(t, browser)
    await page.goto(`${s.site}/account/security`)
    await signIn(t, page, demo.owner)
    await page.waitForURL((u) => u.pathname === '/account/security')

    /** Each of the page's forms, as clicked: accepted with `status`, the page then showing `text`. */
    const send = async (button: string, status: number, text?: string) => {
      const r = await submit(page, button)
      t.equal(r.status(), status, `${button}: accepted (${await shown(r)})`)
      if (text) await page.getByText(text).waitFor()
    }
    await send('Set up two-factor sign-in', 200, 'Add the key to your app and enter its code.')
    const secret = (await page.locator('p', { hasText: 'Key:' }).locator('code').textContent())!.trim()
    const totp = new OTPAuth.TOTP({ secret: OTPAuth.Secret.fromBase32(secret), algorithm: 'SHA1', digits: 6, period: 30 })
    // The server accepts ±1 step and never a code twice: the previous step's code turns it on, the
    // next one's off. Not within 5 s of a step's end, so the server sees the same current step.
    const intoStep = Date.now() % 30_000
    if (intoStep > 25_000) await new Promise((r) => setTimeout(r, 30_000 - intoStep + 50))
    const [previous, next] = [-30_000, 30_000].map((d) => totp.generate({ timestamp: Date.now() + d }))
    await page.getByLabel('Code').fill(previous!)
    await send('Turn on', 200, 'Two-factor sign-in is on.')
    await page.getByLabel('Current code').fill(next!)
    await send('Turn off', 200, 'Two-factor sign-in is off.')

    await send(`Sign out session ${elsewhere.sessionId}`, 303)
    await page.waitForURL((u) => u.pathname === '/account/security')
    t.equal(await page.getByRole('button', { name: `Sign out session ${elsewhere.sessionId}` }).count(), 0, 'the other session is gone from the list')
    t.equal((await fetch(`${s.site}/account/security`, { headers: { cookie: elsewhere.cookie }, redirect: 'manual' })).status, 303, 'and signed out')

    await send('Sign out of this browser', 303)
    await page.waitForURL((u) => u.pathname === '/login')
    t.pass('signed out')
  })
}
