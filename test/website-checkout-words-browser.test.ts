/**
 * The store website's checkout says what is true for the order (issue 34 item 6; docs/website.md
 * "Checkout"), walked in headless Chromium as a customer does, every form submitted by the browser:
 * a signed-in customer starts on Delivery (not On table), the table-number field shows only for a
 * table order, each mode says where its order is paid (never "Pay when you pick up or at your table"
 * on a delivery), the lines keep their size and extras, the totals show the store's currency and a
 * breakdown (subtotal, discount, tip, delivery fee, total) that follows the tip typed in; the
 * tracking page the checkout leads to (the order's confirmation) shows the same. A guest starts on
 * Takeaway. `UPDATE_SCREENSHOTS=1` writes the phone screenshots docs/screenshots/checkout-phone.png and
 * tracking-phone.png (else a scratch folder).
 */
import t from 'tap'
import { mkdirSync, mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Browser, Page } from 'playwright-core'
import type { Test } from 'tap'
import { startServer } from './helpers/server.ts'
import { browserFor, websiteSignIn } from './helpers/browser.ts'

const PHONE = { width: 390, height: 844 }

const launched = await browserFor(t)
if (launched) {
  const browser: Browser = launched
  const s = await startServer({ RATE_LIMIT_PER_MINUTE: '100000' })
  t.teardown(() => s.close())
  const db = s.app.svc.db
  const shots = process.env.UPDATE_SCREENSHOTS === '1' ? new URL('../docs/screenshots/', import.meta.url).pathname : mkdtempSync(join(tmpdir(), 'shots-'))
  mkdirSync(shots, { recursive: true })

  async function open(t: Test): Promise<Page & { clean: () => void }> {
    const ctx = await browser.newContext({ viewport: PHONE })
    const page = await ctx.newPage()
    t.teardown(() => ctx.close())
    const problems: string[] = []
    page.on('pageerror', (e) => problems.push(String(e)))
    page.on('console', (m) => { if (m.type() === 'error') problems.push(m.text()) })
    return Object.assign(page, { clean: () => { t.same(problems, [], 'no script errors or CSP violations') } })
  }

  /** The Margherita, Large with extra cheese, into the cart from its page. */
  async function addLargeMargherita(page: Page, storeUrl: string): Promise<void> {
    await page.goto(`${storeUrl}/menu`)
    await page.getByRole('link', { name: /Margherita/ }).first().click()
    await page.waitForURL(/\/items\/\d+$/)
    await page.getByRole('radio', { name: /Large/ }).check()
    await page.getByRole('checkbox', { name: /Extra cheese/ }).check()
    await page.getByRole('button', { name: 'Add to cart' }).click()
    await page.locator('[data-cart-count]', { hasText: /^1$/ }).first().waitFor()
  }

  t.test('a signed-in customer: Delivery first, words and fields for the mode, a breakdown in euros, the same on tracking', async (t) => {
    const demo = s.seed()
    db.prepare("UPDATE stores SET currency = 'EUR' WHERE id = ?").run(demo.store.id)
    const page = await open(t)
    await websiteSignIn(page, demo.store.url, demo.customer)
    await page.goto(`${demo.store.url}/account`)
    await page.getByLabel('Address', { exact: true }).fill('7 Canal Walk')
    await page.getByRole('button', { name: 'Save address' }).click()
    await page.waitForSelector('text=7 Canal Walk')
    await addLargeMargherita(page, demo.store.url)

    await page.goto(`${demo.store.url}/checkout`)
    t.ok(await page.getByRole('radio', { name: 'Delivery' }).isChecked(), 'a signed-in customer starts on Delivery')
    t.notOk(await page.getByRole('radio', { name: 'On table' }).isChecked(), 'not On table')
    t.notOk(await page.getByLabel('Table number').isVisible(), 'no table-number field for a delivery')
    t.ok(await page.getByLabel('Deliver to').isVisible(), 'the delivery address is asked')
    const body = await page.textContent('main')
    t.notMatch(body, /pick up or at your table/, 'no "Pay when you pick up or at your table"')
    t.equal(await page.locator('[data-pay-note]:visible').textContent(), 'Pay the driver when your order arrives.', 'a delivery is paid to the driver')
    t.match(await page.getByRole('list', { name: 'Your order' }).textContent(), /1 × Margherita \(Large\)\s*\+ Extra cheese\s*€15\.00/, 'the line keeps its size and extras, in euros')

    // The breakdown follows what the customer types and picks.
    const amount = (k: string) => page.locator(`[data-amount="${k}"]`).textContent()
    t.equal(await amount('subtotal'), '€15.00')
    t.equal(await amount('delivery_fee'), '€0.00', 'the saved address\'s delivery fee (no zones: nothing)')
    await page.getByLabel('Tip').fill('2.5')
    await page.locator('[data-amount="tip"]', { hasText: '€2.50' }).waitFor()
    t.equal(await page.locator('[data-total]').textContent(), '€17.50', 'subtotal + tip + delivery fee, in euros')

    await page.getByRole('radio', { name: 'On table' }).check()
    t.ok(await page.getByLabel('Table number').isVisible(), 'On table: the table number is asked')
    t.notOk(await page.getByLabel('Deliver to').isVisible(), 'and no delivery address')
    t.equal(await page.locator('[data-pay-note]:visible').textContent(), 'Pay at your table.')
    await page.getByRole('radio', { name: 'Takeaway' }).check()
    t.notOk(await page.getByLabel('Table number').isVisible(), 'Takeaway: no table number')
    t.equal(await page.locator('[data-pay-note]:visible').textContent(), 'Pay when you collect your order.')
    t.notOk(await page.locator('[data-amount="delivery_fee"]').isVisible(), 'no delivery fee for takeaway')

    // Back to delivery, placed: the tracking page is the order's confirmation.
    await page.getByRole('radio', { name: 'Delivery' }).check()
    await page.screenshot({ path: join(shots, 'checkout-phone.png'), fullPage: true })
    await page.getByRole('button', { name: 'Place order' }).click()
    await page.waitForURL(/\/t\/[\w-]+$/)
    await page.waitForSelector('#conn.live')
    t.match(await page.textContent('#items'), /1 × Margherita \(Large\)\s*\+ Extra cheese/, 'tracking keeps the size and the extras')
    const rows = await page.locator('#totals dt').allTextContents()
    const values = await page.locator('#totals dd').allTextContents()
    t.same(Object.fromEntries(rows.map((r, i) => [r, values[i]])), { Subtotal: '€15.00', Tip: '€2.50', 'Delivery fee': '€0.00', Total: '€17.50' }, 'the breakdown in the store\'s currency')
    t.equal(await page.textContent('#total'), '€17.50')
    await page.screenshot({ path: join(shots, 'tracking-phone.png'), fullPage: true })
    page.clean()
  })

  t.test('a guest starts on Takeaway; the table number only for a table order', async (t) => {
    const demo = s.seed()
    const page = await open(t)
    await addLargeMargherita(page, demo.store.url)
    await page.goto(`${demo.store.url}/checkout`)
    t.ok(await page.getByRole('radio', { name: 'Takeaway' }).isChecked(), 'a guest starts on Takeaway, not On table')
    t.notOk(await page.getByLabel('Table number').isVisible(), 'no table-number field for takeaway')
    t.equal(await page.locator('[data-pay-note]:visible').textContent(), 'Pay when you collect your order.')
    await page.getByRole('radio', { name: 'On table' }).check()
    await page.getByLabel('Table number').fill('12')
    await page.getByLabel('Name').fill('Grace')
    await page.getByLabel('Phone').fill('+15550002222')
    await page.getByRole('button', { name: 'Place order' }).click()
    await page.waitForURL(/\/t\/[\w-]+$/)
    const order = db.prepare('SELECT type, table_number FROM orders WHERE track_token = ?').get(/\/t\/([\w-]+)$/.exec(page.url())![1]) as { type: string; table_number: string }
    t.same(order, { type: 'on-table', table_number: '12' }, 'the table order, with its table')
    page.clean()
  })
}
