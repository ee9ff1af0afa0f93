/**
 * The kitchen screen on a wall tablet (issue 34 item 15), walked in Chromium with touch: every
 * enroll and sign-in field has a visible label (a manager enrolls by them), the PIN is tapped on
 * the on-screen keypad (and typing still works), a new ticket flashes with a NEW badge and is
 * counted in the header until a cook starts it, and order and line notes are highlighted.
 */
import t from 'tap'
import type { Page } from 'playwright-core'
import { browserAndServer, axeCheck } from './helpers/browser.ts'
import { createAccount, postOrder } from './helpers/fixtures.ts'
import { createStaff } from './helpers/people.ts'

/** The page's window, as far as these checks use it (the tests are type-checked without the DOM library). */
interface Win { getComputedStyle(el: unknown): Record<string, string> }

const world = await browserAndServer(t)
if (world) {
  const { browser, s } = world
  const db = s.app.svc.db
  const acct = createAccount(db)
  createStaff(db, acct.storeId, { role: 'kitchen', pin: '4711' })
  const manager = createStaff(db, acct.storeId, { role: 'manager' })
  // A tablet: touch, a tablet's viewport; axe needs its script let in (bypassCSP).
  const ctx = await browser.newContext({ viewport: { width: 1024, height: 768 }, hasTouch: true, isMobile: true, bypassCSP: true })
  t.teardown(() => ctx.close())
  const page = await ctx.newPage()
  const problems: string[] = []
  page.on('pageerror', (e) => problems.push(String(e)))

  /** Signs in by tapping the PIN on the keypad. */
  const tapPin = async (p: Page, pin: string) => {
    const pad = p.getByRole('group', { name: 'PIN keypad' })
    for (const d of pin) await pad.getByRole('button', { name: d, exact: true }).tap()
  }

  t.test('enroll by the labelled fields, as a manager', async (t) => {
    await page.goto(`${s.site}/kds?store=${acct.storeId}`)
    await page.locator('#enroll').waitFor()
    for (const label of ['Store id', 'Screen name', 'Device key', 'Manager email', 'Manager password', 'Two-factor code (if on)']) {
      t.equal(await page.getByLabel(label, { exact: true }).isVisible(), true, `"${label}" labels a visible field`)
    }
    t.equal(await page.getByLabel('Store id', { exact: true }).inputValue(), String(acct.storeId), 'the store id comes from the address')
    await axeCheck(t, page, 'enroll panel')
    await page.getByLabel('Screen name', { exact: true }).fill('Pass tablet')
    await page.getByLabel('Manager email', { exact: true }).fill(manager.email)
    await page.getByLabel('Manager password', { exact: true }).fill(manager.password)
    await page.getByRole('button', { name: 'Enroll' }).tap()
    await page.locator('#login').waitFor()
    t.equal(db.prepare("SELECT COUNT(*) FROM staff_pin_devices WHERE store_id = ? AND name = 'Pass tablet'").pluck().get(acct.storeId), 1, 'the screen is enrolled')
  })

  t.test('the PIN keypad fills the PIN field; Clear and ⌫ correct it; the keyboard still types', async (t) => {
    t.equal(await page.getByLabel('PIN', { exact: true }).isVisible(), true, 'the PIN field is labelled')
    t.equal(await page.getByLabel('Station (optional)').isVisible(), true, 'the station field is labelled')
    await axeCheck(t, page, 'PIN panel')
    const pad = page.getByRole('group', { name: 'PIN keypad' })
    const box = await pad.getByRole('button', { name: '5', exact: true }).boundingBox()
    t.ok(box && box.height >= 48 && box.width >= 48, `keys are finger-sized (${box?.width}×${box?.height} px)`)
    await tapPin(page, '99')
    t.equal(await page.locator('#pin').inputValue(), '99', 'tapped digits fill the field')
    await pad.getByRole('button', { name: 'Delete the last digit' }).tap()
    t.equal(await page.locator('#pin').inputValue(), '9', '⌫ takes one back')
    await pad.getByRole('button', { name: 'Clear' }).tap()
    t.equal(await page.locator('#pin').inputValue(), '', 'Clear empties it')
    await page.locator('#pin').pressSequentially('47')
    await tapPin(page, '11')
    t.equal(await page.locator('#pin').inputValue(), '4711', 'typed and tapped digits together')
    await page.getByRole('button', { name: 'Sign in' }).tap()
    await page.locator('#board').waitFor()
    await page.locator('#conn.live').waitFor()
    t.pass('signed in: the board is live')
  })

  let orderId = 0
  t.test('a new ticket flashes with a NEW badge and is counted; notes are highlighted', async (t) => {
    const r = await postOrder(s, acct.token, acct.storeId, { type: 'on-table', table_number: 4, customer_name: 'Ada', note: 'Birthday: bring a candle', items: [{ item_id: acct.menu.burger.id, quantity: 1, note: 'No onions, nut allergy' }, { item_id: acct.menu.fries, quantity: 1 }] })
    t.equal(r.status, 200, 'an order placed')
    orderId = r.body.id
    const card = page.locator(`.ticket[data-ticket="${orderId}"]`)
    await card.waitFor()
    t.equal(await card.getAttribute('data-new'), '1', 'marked new')
    t.equal(await card.locator('.new').textContent(), 'NEW', 'with a NEW badge')
    t.match(await card.evaluate((el) => { const st = (globalThis as unknown as Win).getComputedStyle(el); return `${st.outlineStyle} ${st.animationName}` }), /solid kds-flash/, 'outlined and flashing')
    t.equal(await page.locator('#newCount').textContent(), '1 new', 'counted in the header')
    const orderNote = card.locator('.note', { hasText: 'Birthday: bring a candle' })
    const lineNote = card.locator('.item .note', { hasText: 'No onions, nut allergy' })
    t.equal(await orderNote.isVisible(), true, 'the order note is shown')
    t.equal(await lineNote.isVisible(), true, 'the line note is shown on its line')
    for (const [what, el] of [['order note', orderNote], ['line note', lineNote]] as const) {
      const bg = await el.evaluate((n) => (globalThis as unknown as Win).getComputedStyle(n).backgroundColor)
      t.not(bg, 'rgba(0, 0, 0, 0)', `${what}: highlighted (background ${bg})`)
    }
    const second = await postOrder(s, acct.token, acct.storeId, { type: 'takeaway', customer_name: 'Bo', items: [{ item_id: acct.menu.fries, quantity: 2 }] })
    await page.locator(`.ticket[data-ticket="${second.body.id}"][data-new="1"]`).waitFor()
    t.equal(await page.locator('#newCount').textContent(), '2 new', 'two new')
    await axeCheck(t, page, 'board with new tickets')
  })

  t.test('starting a ticket clears its badge and the count', async (t) => {
    const card = page.locator(`.ticket[data-ticket="${orderId}"]`)
    await card.locator('.item .bump').first().tap()
    await page.locator(`.ticket[data-ticket="${orderId}"]:not([data-new])`).waitFor()
    t.equal(await page.locator(`.ticket[data-ticket="${orderId}"] .new`).count(), 0, 'no badge once a line is started')
    t.equal(await page.locator('#newCount').textContent(), '1 new', 'one left')
    t.same(problems, [], 'no script errors')
  })
}
