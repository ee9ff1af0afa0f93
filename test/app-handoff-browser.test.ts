/**
 * The shell's handoff in a real web view (headless Chromium, as the tracking page's test): loading
 * the nonce's URL lands signed in on the dashboard with the `dsid` cookie (HttpOnly, SameSite=Lax);
 * loading it a second time is a 404 and leaves the cookie jar as it was; another browser that
 * replays the link gets no cookie (api-v1 §4.9, docs/app-shell.md "Handoff into the web view").
 */
import t from 'tap'
import { startServer } from './helpers/server.ts'
import { browserFor } from './helpers/browser.ts'
import { createAccount } from './helpers/fixtures.ts'
import { createShellToken } from './helpers/apps.ts'

const browser = await browserFor(t)
if (browser) {
  const s = await startServer({ RATE_LIMIT_PER_MINUTE: '100000' })
  t.teardown(() => s.close())
  const shell = createShellToken(s.app.svc.db, createAccount(s.app.svc.db).ownerId, 'web-view-test', 'ios', '1.0.0')

  t.test('the nonce signs the web view in once; a second load and a replay elsewhere get 404 and no cookie', async (t) => {
    const { url } = (await s.req('POST', '/app/session', { token: shell })).body as { url: string }
    const context = await browser.newContext()
    t.teardown(() => context.close())
    const page = await context.newPage()

    await page.goto(`${url}?next=${encodeURIComponent('/dashboard')}`)
    // The dashboard's home may forward to its first page (the orders board): any dashboard page, never /login.
    t.match(new URL(page.url()).pathname, /^\/dashboard(\/|$)/, `landed signed in on the dashboard (at ${page.url()})`)
    const jar = await context.cookies(s.site)
    const dsid = jar.find((c) => c.name === 'dsid')
    t.ok(dsid, 'the web view holds the session cookie')
    t.match(dsid, { httpOnly: true, sameSite: 'Lax', path: '/' })
    t.equal(await page.evaluate('document.cookie.includes("dsid")'), false, 'page scripts cannot read it')

    const again = await page.goto(url)
    t.equal(again?.status(), 404, 'the second load is refused')
    t.same((await context.cookies(s.site)).filter((c) => c.name === 'dsid').map((c) => c.value), [dsid!.value], 'the cookie jar is unchanged')

    const other = await browser.newContext()
    t.teardown(() => other.close())
    const replay = await (await other.newPage()).goto(url)
    t.equal(replay?.status(), 404, 'a replay from another browser is refused')
    t.same((await other.cookies(s.site)).filter((c) => c.name === 'dsid'), [], 'and gets no cookie')
  })
}
