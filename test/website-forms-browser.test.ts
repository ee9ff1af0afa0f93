/**
 * Every form of the store website, submitted by Chromium (issue 33 item 5), each accepted once and
 * refused once, as a visitor does it: what the page shows afterwards is what is checked, plus the
 * server's record where the page cannot show it. The theme's forms (add to cart, remove a line,
 * coupon, checkout) in both built-in themes; the account pages' forms (the platform's markup inside
 * the theme: SMS code, code check, password sign-in, sign-up, address add and delete, sign-out) once.
 * The happy journeys (takeaway, JavaScript off, coupon, delivery to a saved address) stay in
 * test/website-browser.test.ts; the inventory of every form is docs/forms.md.
 */
import t from 'tap'
import type { Page } from 'playwright-core'
import type { Test } from 'tap'
import { browserAndServer, watchPage, websiteSignIn } from './helpers/browser.ts'
import { holdNextCommit } from './helpers/hold-commit.ts'
import { createAccount, createCustomer } from './helpers/fixtures.ts'
import type { RecordingSmsProvider } from '../src/providers/sms.ts'

const world = await browserAndServer(t)
if (world) {
  const { browser, s } = world
  const db = s.app.svc.db

  /** A page of a fresh visitor (own cookies) that fails the test on a script error or CSP violation. */
  async function visitor(t: Test): Promise<{ page: Page; other: () => Promise<Page>; clean: () => void }> {
    const ctx = await browser.newContext({ viewport: { width: 390, height: 844 } })
    t.teardown(() => ctx.close())
    const page = await ctx.newPage()
    const seen = watchPage(page)
    // A refusal answers 4xx, which Chromium logs as a failed resource: expected here, not a script error.
    const problems = () => seen.problems.filter((p) => !/^Failed to load resource: the server responded with a status of 4\d\d/.test(p))
    return { page, other: () => ctx.newPage(), clean: () => t.same(problems(), [], 'no script errors or CSP violations') }
  }
  const alert = (page: Page) => page.getByRole('alert').first()

  for (const theme of ['classic', 'market'] as const) {
    t.test(`the ${theme} theme's forms: add to cart, remove a line, coupon, checkout — accepted and refused`, async (t) => {
      const acct = createAccount(db)
      if (theme === 'market') t.equal((await s.req('PUT', `/restaurants/${acct.storeId}/theme`, { token: acct.token, body: { template: 'market' } })).status, 200)
      t.equal((await s.req('POST', `/restaurants/${acct.storeId}/coupons`, { token: acct.token, body: { code: 'TENOFF', kind: 'percent', value: 10 } })).status, 200)
      const url = `${s.site}/s/${acct.slug}`
      const { page, other, clean } = await visitor(t)
      const count = () => page.locator('[data-cart-count]').first().textContent()

      // Add to cart: 30 fries are accepted; 30 more would pass the cart's 40 items, and are refused.
      await page.goto(`${url}/items/${acct.menu.fries}`)
      await page.getByLabel('Quantity').fill('30')
      await page.getByRole('button', { name: 'Add to cart' }).click()
      await page.locator('[data-cart-count]', { hasText: /^30$/ }).first().waitFor()
      t.match(await page.getByRole('status').last().textContent(), /Added/, 'added: the page says so')
      await page.getByRole('button', { name: 'Add to cart' }).click()
      await page.getByRole('status').last().filter({ hasNotText: /Added/ }).waitFor()
      t.match(await page.getByRole('status').last().textContent(), /40/, 'refused: the limit is named')
      t.equal(await count(), '30', 'the cart keeps its 30')

      // Remove a line: accepted, the cart is empty; the same form from a page drawn before is refused.
      await page.goto(`${url}/items/${acct.menu.burger.id}`)
      await page.getByRole('button', { name: 'Add to cart' }).click()
      await page.locator('[data-cart-count]', { hasText: /^31$/ }).first().waitFor()
      await page.goto(`${url}/cart`)
      const stale = await other()
      await stale.goto(`${url}/cart`)
      await page.getByRole('button', { name: /^Remove/ }).last().click()
      await page.waitForLoadState()
      t.equal(await page.getByRole('button', { name: /^Remove/ }).count(), 1, 'removed: one line left')
      await stale.getByRole('button', { name: /^Remove/ }).last().click()
      await stale.waitForLoadState()
      // The form has no refusal of its own: a line that is no longer there is left alone.
      t.equal(await stale.getByRole('button', { name: /^Remove/ }).count(), 1, 'a line already removed, removed again from a stale page: the cart is as it was')
      await stale.close()

      // Coupon: an unknown code is refused, a real one lowers the total.
      await page.goto(`${url}/cart`)
      await page.getByLabel(/Coupon code|Discount code/).fill('NOSUCHCODE')
      await page.getByRole('button', { name: 'Apply' }).click()
      await page.waitForLoadState()
      t.match(await alert(page).textContent(), /coupon|code/i, 'unknown coupon: refused')
      await page.getByLabel(/Coupon code|Discount code/).fill('TENOFF')
      await page.getByRole('button', { name: 'Apply' }).click()
      await page.waitForLoadState()
      t.match(await page.textContent('main'), /Discount \(TENOFF\)/, 'accepted: the discount is on the cart')

      // Checkout: refused while an item in the cart is sold out (the owner marked it meanwhile): the
      // page names it and leaves it out, nothing is ordered; placed once it is back.
      const soldOut = (v: boolean) => s.req('PATCH', `/restaurants/${acct.storeId}/menu/items/${acct.menu.fries}/sold-out`, { token: acct.token, body: { is_sold_out: v } })
      const fillCheckout = async () => {
        await page.goto(`${url}/checkout`)
        const takeaway = page.getByRole('radio', { name: /Takeaway/i })
        if (await takeaway.count()) await takeaway.check()
        else await page.getByLabel('Fulfilment').selectOption('takeaway')
        await page.getByLabel('Name').fill('Grace Hopper')
        await page.getByLabel('Phone').fill('+15550002222')
      }
      await fillCheckout()
      t.equal((await soldOut(true)).status, 200)
      await page.getByRole('button', { name: 'Place order' }).click()
      await page.waitForLoadState()
      t.match(await alert(page).textContent(), /no longer available/i, 'an item sold out since: refused with the reason')
      t.equal((db.prepare('SELECT COUNT(*) AS n FROM orders WHERE store_id = ?').get(acct.storeId) as { n: number }).n, 0, 'no order was written')
      t.equal((await soldOut(false)).status, 200)
      await fillCheckout()
      await page.getByRole('button', { name: 'Place order' }).click()
      await page.waitForURL(/\/t\/[\w-]+$/)
      const order = db.prepare('SELECT * FROM orders WHERE store_id = ?').get(acct.storeId) as { customer_name: string; type: string }
      t.match(order, { customer_name: 'Grace Hopper', type: 'takeaway' }, 'accepted: the order is placed and its tracking page shown')
      clean()
    })
  }

  /** One visitor (signed in as `customer`, if given) with `itemId` in the cart and the checkout form open and filled by `fill` in two tabs. */
  async function checkoutInTwoTabs(t: Test, url: string, itemId: number, fill: (tab: Page) => Promise<unknown>, customer?: { email: string; password: string }) {
    const { page, other, clean } = await visitor(t)
    if (customer) await websiteSignIn(page, url, customer)
    await page.goto(`${url}/items/${itemId}`)
    await page.getByRole('button', { name: 'Add to cart' }).click()
    await page.locator('[data-cart-count]', { hasText: /^1$/ }).first().waitFor()
    const second = await other()
    for (const tab of [page, second]) {
      await tab.goto(`${url}/checkout`)
      await fill(tab)
    }
    return { page, second, clean }
  }
  const ordersOf = (storeId: number) => (db.prepare('SELECT COUNT(*) AS n FROM orders WHERE store_id = ?').get(storeId) as { n: number }).n
  /**
   * Place the order from `tab` while another tab's checkout is held in its commit, then let that
   * commit go (as soon as this one is answered: the first tab's answer waits at most the store
   * actor's 10 s ask timeout); the status and what the page says.
   */
  async function placeMeanwhile(tab: Page, hold: { open: () => void }): Promise<{ status: number; says: string }> {
    const answer = tab.waitForResponse((r) => r.request().method() === 'POST' && r.url().endsWith('/checkout'))
    await tab.getByRole('button', { name: 'Place order' }).click()
    const status = (await answer).status()
    hold.open()
    await tab.waitForLoadState()
    return { status, says: (await alert(tab).textContent()) ?? '' }
  }

  t.test('the checkout from two tabs: the second post while the first is written is refused (in flight), one order', async (t) => {
    const acct = createAccount(db)
    const url = `${s.site}/s/${acct.slug}`
    const { page, second, clean } = await checkoutInTwoTabs(t, url, acct.menu.fries, async (tab) => {
      const takeaway = tab.getByRole('radio', { name: /Takeaway/i })
      if (await takeaway.count()) await takeaway.check()
      else await tab.getByLabel('Fulfilment').selectOption('takeaway')
      await tab.getByLabel('Name').fill('Grace Hopper')
      await tab.getByLabel('Phone').fill('+15550002222')
    })
    const hold = holdNextCommit(t, s.app.svc.committer, 'src/actors/store.ts')
    // Not awaited: Playwright's click waits for the navigation it starts, and this one's answer is held.
    const placing = page.getByRole('button', { name: 'Place order' }).click()
    await hold.held // the first tab's order is priced and waiting for its commit
    const n = ordersOf(acct.storeId)
    const meanwhile = await placeMeanwhile(second, hold)
    t.equal(meanwhile.status, 422, 'the checkout page answers the refusal')
    t.match(meanwhile.says, /still being processed/, 'the second tab is told the first order is still being placed')
    t.equal(n, 0, 'nothing written while the first was held')
    await placing
    await page.waitForURL(/\/t\/[\w-]+$/)
    t.equal(ordersOf(acct.storeId), 1, 'one order')
    clean()
  })

  t.test('the checkout from two tabs: the saved address changed between the posts, the second is refused (key reused), one order', async (t) => {
    const acct = createAccount(db)
    const c = createCustomer(db, acct.storeId)
    const url = `${s.site}/s/${acct.slug}`
    const saved = await s.req('POST', '/customer/addresses', { token: c.token, body: { label: 'Office', address: '5 Harbour Road' } })
    t.equal(saved.status, 200)
    const { page, second, clean } = await checkoutInTwoTabs(t, url, acct.menu.fries, (tab) => tab.getByRole('radio', { name: 'Delivery' }).check(), c)
    const hold = holdNextCommit(t, s.app.svc.committer, 'src/actors/store.ts')
    // Not awaited: Playwright's click waits for the navigation it starts, and this one's answer is held.
    const placing = page.getByRole('button', { name: 'Place order' }).click()
    await hold.held
    // The same form and cart (the same key) now names another address: another request under the key.
    t.equal((await s.req('PUT', `/customer/addresses/${saved.body.id}`, { token: c.token, body: { address: '7 Quay Street' } })).status, 200)
    const meanwhile = await placeMeanwhile(second, hold)
    t.equal(meanwhile.status, 422)
    t.match(meanwhile.says, /used with a different request body/, 'refused as a reused key')
    await placing
    await page.waitForURL(/\/t\/[\w-]+$/)
    t.same(db.prepare('SELECT address FROM orders WHERE store_id = ?').all(acct.storeId), [{ address: '5 Harbour Road' }], 'one order, to the address of the first post')
    clean()
  })

  t.test('the account forms: SMS code and its check, password sign-in, sign-up, addresses, sign-out — accepted and refused', async (t) => {
    const acct = createAccount(db)
    const url = `${s.site}/s/${acct.slug}`
    const known = createCustomer(db, acct.storeId)
    const { page, other, clean } = await visitor(t)

    // Text me a code: a phone that is not one is refused; a real one gets a code form.
    await page.goto(`${url}/account/login`)
    await page.getByLabel('Phone number').fill('not a phone')
    await page.getByRole('button', { name: 'Text me a code' }).click()
    await page.waitForLoadState()
    t.ok(await alert(page).isVisible(), 'refused: the page says why')
    const phone = '+15557650001'
    await page.getByLabel('Phone number').fill(phone)
    await page.getByRole('button', { name: 'Text me a code' }).click()
    await page.getByLabel(/Code sent to/).waitFor()
    t.pass('accepted: the code form asks for it')

    // The code: a wrong one is refused, the texted one signs in.
    await page.getByLabel(/Code sent to/).fill('000000')
    await page.getByRole('button', { name: 'Sign in' }).first().click()
    await page.waitForLoadState()
    t.ok(await alert(page).isVisible(), 'a wrong code: refused')
    t.notMatch(page.url(), /\/account$/, 'and not signed in')
    const code = /(\d{6}) is your/.exec((s.app.svc.sms as RecordingSmsProvider).sent.findLast((m) => m.to === phone)!.body)![1]!
    await page.getByLabel(/Code sent to/).fill(code)
    await page.getByRole('button', { name: 'Sign in' }).first().click()
    await page.waitForLoadState()
    await page.goto(`${url}/account`)
    await page.getByRole('heading', { name: 'Your account' }).waitFor()
    t.pass('the texted code: signed in, the account page opens')

    // Addresses: a blank address is refused, a real one saved; deleting it works once, a stale page is refused.
    await page.getByLabel('Address', { exact: true }).fill('   ')
    await page.getByRole('button', { name: 'Save address' }).click()
    await page.waitForLoadState()
    t.ok(await alert(page).isVisible(), 'a blank address: refused')
    await page.getByLabel('Name of the place (optional)').fill('Studio')
    await page.getByLabel('Address', { exact: true }).fill('9 Dock Lane')
    await page.getByRole('button', { name: 'Save address' }).click()
    await page.getByRole('button', { name: 'Delete Studio' }).waitFor()
    t.pass('saved: listed with its delete button')
    const stale = await other()
    await stale.goto(`${url}/account`)
    await page.getByRole('button', { name: 'Delete Studio' }).click()
    await page.getByText('No saved addresses yet.').waitFor()
    t.pass('deleted')
    await stale.getByRole('button', { name: 'Delete Studio' }).click()
    await stale.waitForLoadState()
    t.not((await stale.request.get(stale.url())).status(), 500, 'a deleted address deleted again: no server error')
    t.match(await stale.textContent('body'), /not found|no longer|No saved addresses/i, 'refused: it is gone')
    await stale.close()

    // Sign out: back to signed-out pages.
    await page.goto(`${url}/account`)
    await page.getByRole('button', { name: 'Sign out' }).click()
    await page.waitForLoadState()
    await page.goto(`${url}/account`)
    t.match(page.url(), /\/account\/login/, 'signed out: the account page asks to sign in')

    // Password sign-in: a wrong password is refused, the right one signs in.
    await page.getByLabel('Email', { exact: true }).fill(known.email)
    await page.getByLabel('Password', { exact: true }).fill('not the password')
    await page.getByRole('button', { name: 'Sign in' }).last().click()
    await page.waitForLoadState()
    t.ok(await alert(page).isVisible(), 'a wrong password: refused')
    await page.getByLabel('Email', { exact: true }).fill(known.email)
    await page.getByLabel('Password', { exact: true }).fill(known.password)
    await page.getByRole('button', { name: 'Sign in' }).last().click()
    await page.waitForLoadState()
    await page.goto(`${url}/account`)
    await page.getByRole('heading', { name: 'Your account' }).waitFor()
    t.pass('the right password: signed in')
    await page.getByRole('button', { name: 'Sign out' }).click()
    await page.waitForLoadState()

    // Sign-up: an email that already has an account is refused; a new one creates it, signed in.
    await page.goto(`${url}/account/login`)
    await page.getByLabel('Your name').fill('Kim')
    await page.getByLabel('Email for the new account').fill(known.email)
    await page.getByLabel(/Choose a password/).fill('long enough pw')
    await page.getByRole('button', { name: 'Create account' }).click()
    await page.waitForLoadState()
    t.ok(await alert(page).isVisible(), 'a taken email: refused')
    const before = (db.prepare('SELECT COUNT(*) AS n FROM customers WHERE store_id = ?').get(acct.storeId) as { n: number }).n
    await page.getByLabel('Your name').fill('Kim')
    await page.getByLabel('Email for the new account').fill(`kim-${Date.now()}@example.test`)
    await page.getByLabel(/Choose a password/).fill('long enough pw')
    await page.getByRole('button', { name: 'Create account' }).click()
    await page.waitForLoadState()
    await page.goto(`${url}/account`)
    await page.getByRole('heading', { name: 'Your account' }).waitFor()
    t.equal((db.prepare('SELECT COUNT(*) AS n FROM customers WHERE store_id = ?').get(acct.storeId) as { n: number }).n, before + 1, 'accepted: one new customer, signed in')
    clean()
  })
}
