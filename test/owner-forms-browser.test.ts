/**
 * The owner's sign-in pages, each form refused once and accepted once, submitted by Chromium
 * (issue 33 item 5): sign-in, sign-up, the forgotten-password and reset forms, the account security
 * page (two-factor set-up, turn on, turn off, signing out a session) and the kitchen screen's
 * manager enrollment. The refusal is what a person meets — a wrong password, a taken address, a
 * used link, a wrong code — and the page says why without a change on the server. The accepted
 * journeys with their CSRF details stay in test/forms-browser.test.ts and test/dashboard-browser.test.ts;
 * the inventory of every form is docs/forms.md.
 */
import t from 'tap'
import * as OTPAuth from 'otpauth'
import type { Page, Response } from 'playwright-core'
import type { Test } from 'tap'
import { browserAndServer } from './helpers/browser.ts'
import { signedIn } from './helpers/apps.ts'
import { mail, newEmail, PASSWORD, signedUp } from './helpers/owner-site.ts'
import { createAccount } from './helpers/fixtures.ts'
import { createStaff } from './helpers/people.ts'

const world = await browserAndServer(t)
if (world) {
  const { browser, s } = world
  const db = s.app.svc.db

  async function open(t: Test): Promise<Page> {
    const ctx = await browser.newContext()
    t.teardown(() => ctx.close())
    return ctx.newPage()
  }
  /** Clicks the button `name` and waits for the answer to the post it sends. */
  async function submit(page: Page, name: string): Promise<Response> {
    const [answer] = await Promise.all([page.waitForResponse((r) => r.request().method() === 'POST'), page.getByRole('button', { name, exact: true }).click()])
    await page.waitForLoadState()
    return answer
  }
  const alert = (page: Page) => page.getByRole('alert').first().textContent()

  t.test('sign-in: a wrong password is refused, the right one opens the dashboard', async (t) => {
    const { email } = await signedUp(s)
    const page = await open(t)
    await page.goto(`${s.site}/login`)
    await page.getByLabel('Email').fill(email)
    await page.getByLabel('Password').fill('not the password at all')
    const refused = await submit(page, 'Sign in')
    t.ok(refused.status() >= 400, `refused (${refused.status()})`)
    t.match(await alert(page), /password|email/i, 'the page says why')
    t.equal(await page.getByLabel('Email').inputValue(), email, 'the email stays filled in')
    await page.getByLabel('Password').fill(PASSWORD)
    t.equal((await submit(page, 'Sign in')).status(), 303, 'accepted')
    await page.waitForURL((u) => u.pathname.startsWith('/dashboard'))
    t.pass('on the dashboard')
  })

  t.test('sign-up: a name past 100 characters is refused; a taken address gets the usual answer and no second account; a new one is asked to confirm', async (t) => {
    const { email: taken } = await signedUp(s)
    const page = await open(t)
    const owners = () => db.prepare('SELECT COUNT(*) FROM owners').pluck().get() as number
    const before = owners()
    await page.goto(`${s.site}/signup`)
    await page.getByLabel('Your name').fill('N'.repeat(101))
    await page.getByLabel('Email').fill(newEmail())
    await page.getByLabel(/Password/).fill('a long enough password')
    const refused = await submit(page, 'Create account')
    t.equal(refused.status(), 422, 'refused')
    t.ok((await alert(page))?.length, `the page says why: ${await alert(page)}`)
    t.equal(owners(), before, 'no account was created')

    // The answer does not tell who has an account: the same page; the address's owner gets a mail.
    await page.getByLabel('Your name').fill('Tess Taken')
    await page.getByLabel('Email').fill(taken)
    await page.getByLabel(/Password/).fill('a long enough password')
    t.equal((await submit(page, 'Create account')).status(), 200, 'a taken address: the usual answer')
    await page.getByText('We have sent a link to').waitFor()
    t.equal(owners(), before, 'and no second account')

    const fresh = newEmail()
    await page.goto(`${s.site}/signup`)
    await page.getByLabel('Your name').fill('Nia New')
    await page.getByLabel('Email').fill(fresh)
    await page.getByLabel(/Password/).fill('a long enough password')
    t.equal((await submit(page, 'Create account')).status(), 200, 'accepted')
    await page.getByText('We have sent a link to').waitFor()
    t.equal(owners(), before + 1, 'one account')
    t.ok(mail(s).lastTo(fresh), 'the confirmation mail went out')
  })

  t.test('forgotten password: an unknown address gets the same answer and no mail; a used reset link refuses the form', async (t) => {
    const page = await open(t)
    const unknown = newEmail()
    await page.goto(`${s.site}/forgot-password`)
    await page.getByLabel('Email').fill(unknown)
    t.equal((await submit(page, 'Send the link')).status(), 200, 'the same answer as for an account (nothing to learn about who has one)')
    await page.getByText('a link to set a new password is on its way').waitFor()
    t.notOk(mail(s).lastTo(unknown), 'and no mail to an address without an account')

    const { email } = await signedUp(s)
    await page.goto(`${s.site}/forgot-password`)
    await page.getByLabel('Email').fill(email)
    t.equal((await submit(page, 'Send the link')).status(), 200)
    const link = /\/reset-password\/[A-Za-z0-9_-]+/.exec(mail(s).lastTo(email)?.text ?? '')?.[0]
    if (!t.ok(link, 'the mail holds the link')) return
    // The link opened twice (a second tab): the first form sets the password, the second is refused.
    await page.goto(`${s.site}${link}`)
    const second = await page.context().newPage()
    await second.goto(`${s.site}${link}`)
    await page.getByLabel(/New password/).fill('the first new passphrase')
    t.equal((await submit(page, 'Set the new password')).status(), 200, 'accepted')
    await page.getByRole('heading', { name: 'Password changed' }).waitFor()
    await second.getByLabel(/New password/).fill('the second new passphrase')
    const refused = await submit(second, 'Set the new password')
    t.ok(refused.status() >= 400, `the used link: refused (${refused.status()})`)
    t.match(await second.textContent('body'), /no longer|expired|used|invalid|not valid/i, 'the page says the link is spent')
  })

  t.test('account security: wrong two-factor codes are refused, right ones accepted; a session signed out twice', async (t) => {
    const { email } = await signedUp(s)
    const ownerId = db.prepare('SELECT id FROM owners WHERE email = ?').pluck().get(email) as number
    const elsewhere = signedIn(db, ownerId)
    const page = await open(t)
    await page.goto(`${s.site}/login`)
    await page.getByLabel('Email').fill(email)
    await page.getByLabel('Password').fill(PASSWORD)
    await submit(page, 'Sign in')
    await page.goto(`${s.site}/account/security`)
    t.equal((await submit(page, 'Set up two-factor sign-in')).status(), 200, 'set-up: accepted, the key is shown')
    const secret = (await page.locator('p', { hasText: 'Key:' }).locator('code').textContent())!.trim()
    const totp = new OTPAuth.TOTP({ secret: OTPAuth.Secret.fromBase32(secret), algorithm: 'SHA1', digits: 6, period: 30 })
    const wrong = (code: string) => (code === '000000' ? '111111' : '000000')
    // Not within 5 s of a step's end, so the server sees the same current step (it accepts ±1 step, each code once).
    const intoStep = Date.now() % 30_000
    if (intoStep > 25_000) await new Promise((r) => setTimeout(r, 30_000 - intoStep + 50))
    const [previous, next] = [-30_000, 30_000].map((d) => totp.generate({ timestamp: Date.now() + d }))
    await page.getByLabel('Code').fill(wrong(previous!))
    const off = await submit(page, 'Turn on')
    t.ok(off.status() >= 400, `turn on with a wrong code: refused (${off.status()})`)
    t.ok((await alert(page))?.length, 'the page says why')
    t.equal(db.prepare('SELECT totp_secret IS NOT NULL FROM owners WHERE id = ?').pluck().get(ownerId), 0, 'still off')
    await page.getByLabel('Code').fill(previous!)
    t.equal((await submit(page, 'Turn on')).status(), 200, 'the right code: accepted')
    await page.getByText('Two-factor sign-in is on.').waitFor()
    await page.getByLabel('Current code').fill(wrong(next!))
    const still = await submit(page, 'Turn off')
    t.ok(still.status() >= 400, `turn off with a wrong code: refused (${still.status()})`)
    t.match(await page.textContent('body'), /On: sign-in asks for a code/, 'still on')
    await page.getByLabel('Current code').fill(next!)
    t.equal((await submit(page, 'Turn off')).status(), 200, 'the right code: accepted')
    await page.getByText('Two-factor sign-in is off.').waitFor()

    // Signing out another session from two tabs: the first is accepted, the stale second changes nothing.
    await page.goto(`${s.site}/account/security`)
    const stale = await page.context().newPage()
    await stale.goto(`${s.site}/account/security`)
    t.equal((await submit(page, `Sign out session ${elsewhere.sessionId}`)).status(), 303, 'accepted')
    t.equal((await fetch(`${s.site}/account/security`, { headers: { cookie: elsewhere.cookie }, redirect: 'manual' })).status, 303, 'that session is signed out')
    const again = await submit(stale, `Sign out session ${elsewhere.sessionId}`)
    t.ok(again.status() < 500, `the same session again from a stale page: no server error (${again.status()})`)
    t.equal(await stale.getByRole('button', { name: `Sign out session ${elsewhere.sessionId}` }).count(), 0, 'and it is not listed')
    t.equal((await fetch(`${s.site}/account/security`, { headers: { cookie: (await page.context().cookies()).map((c) => `${c.name}=${c.value}`).join('; ') }, redirect: 'manual' })).status, 200, 'this browser is still signed in')
  })

  t.test('kitchen screen enrollment by a manager: a wrong password is refused on the page, the right one enrolls', async (t) => {
    const acct = createAccount(db)
    const manager = createStaff(db, acct.storeId, { role: 'manager' })
    const page = await open(t)
    await page.goto(`${s.site}/kds?store=${acct.storeId}`)
    await page.waitForSelector('#enroll', { state: 'visible' })
    await page.fill('#email', manager.email)
    await page.fill('#password', 'not the password')
    await page.click('#enroll button[type=submit]')
    await page.locator('#enrollErr').filter({ hasText: /.+/ }).waitFor()
    t.ok((await page.textContent('#enrollErr'))?.length, `refused: ${await page.textContent('#enrollErr')}`)
    t.equal(db.prepare('SELECT COUNT(*) FROM staff_pin_devices WHERE store_id = ?').pluck().get(acct.storeId), 0, 'no screen was enrolled')
    await page.fill('#password', manager.password)
    await page.click('#enroll button[type=submit]')
    await page.waitForSelector('#login', { state: 'visible' })
    t.equal(db.prepare('SELECT COUNT(*) FROM staff_pin_devices WHERE store_id = ?').pluck().get(acct.storeId), 1, 'accepted: this screen is enrolled, the PIN pad shows')
  })
}
