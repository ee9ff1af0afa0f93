/**
 * The kitchen screen page `{site_url}/kds` end to end in headless Chromium (Debian's `chromium`,
 * driven by playwright-core; api-v1 §3, §4.7; docs/kds.md "Kitchen screen"): enrollment of the
 * screen (a pasted device key, or a manager's email and password), PIN sign-in, a new order
 * appears as a card, a tap bumps the item, and bumps made elsewhere (another screen, HTTP) show up
 * live; a revoked screen goes back to enrollment. The page loads nothing from outside and raises
 * no script or CSP errors.
 */
import t, { type Test } from 'tap'
import type { Page } from 'playwright-core'
import { startServer } from './helpers/server.ts'
import { createAccount, postOrder } from './helpers/fixtures.ts'
import { createStaff } from './helpers/people.ts'
import { enrollDevice } from './helpers/pin-devices.ts'
import { CHROMIUM, launchChromium } from './helpers/browser.ts'

const browser = await launchChromium()
if (!browser) {
  t.fail(`${CHROMIUM} is missing: apt-get install -y chromium (.ci/run does this)`)
} else {
  const chromium = browser
  t.teardown(() => chromium.close())
  const s = await startServer({ RATE_LIMIT_PER_MINUTE: '100000' })
  t.teardown(() => s.close())
  const db = s.app.svc.db
  const acct = createAccount(db)
  const cook = createStaff(db, acct.storeId, { role: 'kitchen', pin: '4711' })
  const chef = createStaff(db, acct.storeId, { role: 'kitchen', pin: '8264' })
  const cashier = createStaff(db, acct.storeId, { role: 'cashier', pin: '5150' })
  const manager = createStaff(db, acct.storeId, { role: 'manager' })

  /** A fresh browser context per screen: its own localStorage, so its own device and token. */
  async function screen(t: Test): Promise<{ page: Page; outside: () => string[]; problems: string[] }> {
    const ctx = await chromium.newContext()
    t.teardown(() => ctx.close())
    const page = await ctx.newPage()
    const requests: string[] = []
    const problems: string[] = []
    page.on('request', (r) => requests.push(r.url()))
    page.on('pageerror', (e) => problems.push(String(e)))
    page.on('console', (m) => { if (m.type() === 'error') problems.push(m.text()) })
    const origin = new URL(s.site)
    return { page, problems, outside: () => requests.filter((u) => new URL(u).host !== origin.host) }
  }
  /** Enroll the screen with a device key the owner created (docs/staff.md "PIN devices"). */
  async function enroll(page: Page, key = enrollDevice(db, acct.storeId, 'Kitchen screen').key): Promise<void> {
    await page.goto(`${s.site}/kds?store=${acct.storeId}`)
    await page.waitForSelector('#enroll', { state: 'visible' })
    if (await page.inputValue('#store') !== String(acct.storeId)) throw new Error('the store id should come from the address')
    await page.fill('#deviceKey', key)
    await page.click('#enroll button[type=submit]')
    await page.waitForSelector('#login', { state: 'visible' })
  }
  async function signIn(page: Page, pin: string, station = ''): Promise<void> {
    // A fresh screen (a new browser context) is enrolled first; later sign-ins reuse its key.
    if (!page.url().startsWith(s.site)) await enroll(page)
    else {
      await page.goto(`${s.site}/kds?store=${acct.storeId}`)
      await page.waitForSelector('#login', { state: 'visible' })
    }
    await page.fill('#pin', pin)
    if (station) await page.fill('#stationIn', station)
    await page.click('#login button[type=submit]')
  }
  const order = async () => {
    const r = await postOrder(s, acct.token, acct.storeId, { type: 'on-table', table_number: 7, customer_name: 'Ada', items: [{ item_id: acct.menu.burger.id, quantity: 2, extras: [acct.menu.burger.cheese] }, { item_id: acct.menu.fries, quantity: 1 }] })
    if (r.status !== 200) throw new Error(`order failed: ${r.status} ${r.text}`)
    return r.body as { id: number; items: Array<{ id: number; item_id: number }> }
  }
  const stateOf = (lineId: number) => (db.prepare('SELECT kds_state FROM order_lines WHERE id = ?').get(lineId) as { kds_state: string }).kds_state
  const item = (lineId: number, state: string) => `.item[data-item="${lineId}"][data-state="${state}"]`

  t.test('the page is self-contained and locked down', async (t) => {
    const r = await fetch(`${s.site}/kds`)
    t.equal(r.status, 200)
    t.match(r.headers.get('content-type'), /text\/html/)
    const csp = r.headers.get('content-security-policy') ?? ''
    t.match(csp, /default-src 'none'/)
    t.notMatch(csp, /unsafe-inline/, 'inline code is allowed by nonce, not wholesale')
    t.equal(r.headers.get('referrer-policy'), 'no-referrer')
    const html = await r.text()
    t.notMatch(html, /<(script|link|img)[^>]+(src|href)=/i, 'no external scripts, styles or images')
  })

  t.test('a wrong PIN is refused on the page; a member without kds is told so', async (t) => {
    const { page, problems } = await screen(t)
    await signIn(page, '0000')
    await page.waitForSelector('#err:not(:empty)')
    t.match(await page.textContent('#err'), /wrong pin/i)
    t.equal(await page.isVisible('#login'), true, 'still on the sign-in form')
    await page.fill('#pin', cashier.pin)
    await page.click('#login button[type=submit]')
    await page.locator('#err', { hasText: /kitchen/i }).waitFor()
    t.equal(await page.isVisible('#login'), true, 'a cashier does not get a kitchen screen')
    t.equal(db.prepare("SELECT COUNT(*) FROM staff_tokens WHERE staff_id = ? AND method = 'pin' AND revoked_at IS NULL").pluck().get(cashier.id), 0, 'and its token was given back')
    t.same(problems.filter((p) => !/401|403/.test(p)), [], 'no script errors')
  })

  t.test('sign in with a PIN, see new orders, tap to bump, see bumps made elsewhere live', async (t) => {
    const existing = await order()
    const a = await screen(t)
    const b = await screen(t)
    await signIn(a.page, cook.pin)
    await a.page.waitForSelector('#conn.live')
    t.equal(await a.page.isVisible('#login'), false, 'the form is gone once signed in')
    await a.page.waitForSelector(`[data-ticket="${existing.id}"]`)
    t.pass('tickets open before sign-in are in the first snapshot')
    await signIn(b.page, chef.pin)
    await b.page.waitForSelector('#conn.live')

    // A new order appears on both screens as a card with its items.
    const o = await order()
    const [burger, fries] = o.items as unknown as [{ id: number }, { id: number }]
    for (const { page } of [a, b]) await page.waitForSelector(`[data-ticket="${o.id}"]`)
    const card = await a.page.textContent(`[data-ticket="${o.id}"]`)
    t.match(card, /table 7/)
    t.match(card, /2× Burger/)
    t.match(card, /Cheese/)
    t.match(card, /1× Fries/)
    t.equal(await a.page.getAttribute(`[data-ticket="${o.id}"]`, 'data-status'), 'new')

    // A tap on screen A bumps the item: it is durable, and screen B shows it.
    const mark = `document.querySelector('[data-ticket="${existing.id}"]')`
    await a.page.evaluate(`${mark}.marked = true`)
    await a.page.click(`[data-bump="${burger.id}"]`)
    await a.page.waitForSelector(item(burger.id, 'preparing'))
    await b.page.waitForSelector(item(burger.id, 'preparing'))
    t.equal(stateOf(burger.id), 'preparing', 'the tap was stored')
    await b.page.waitForSelector(`[data-ticket="${o.id}"][data-status="preparing"]`)
    t.pass('the other screen saw the tap and the order status')
    t.equal(await a.page.evaluate(`${mark}.marked`), true, 'other cards are left alone (no re-render under a cook\'s finger)')

    // A bump over HTTP (a cook's phone) reaches both screens.
    const r = await s.req('PUT', `/staff/kds/items/${burger.id}/bump`, { token: manager.token })
    t.equal(r.status, 200)
    for (const { page } of [a, b]) await page.waitForSelector(item(burger.id, 'ready'))
    t.pass('a bump made over HTTP showed up on both screens')

    // Recall on screen B steps back; A follows.
    await b.page.click(`[data-recall="${burger.id}"]`)
    for (const { page } of [a, b]) await page.waitForSelector(item(burger.id, 'preparing'))
    t.equal(stateOf(burger.id), 'preparing', 'the recall was stored')

    // Bump everything to served: items leave, then the card.
    for (const line of [burger, fries]) {
      for (const next of line === burger ? ['ready', 'served'] : ['preparing', 'ready', 'served']) {
        await a.page.click(`[data-bump="${line.id}"]`)
        if (next !== 'served') await a.page.waitForSelector(item(line.id, next))
        else await a.page.waitForSelector(`[data-item="${line.id}"]`, { state: 'detached' })
      }
    }
    for (const { page } of [a, b]) await page.waitForSelector(`[data-ticket="${o.id}"]`, { state: 'detached' })
    t.equal((db.prepare('SELECT status FROM orders WHERE id = ?').get(o.id) as { status: string }).status, 'delivered', 'all served at the table: delivered')

    // A cancellation from the owner's dashboard clears the card on every screen.
    await s.req('PUT', `/restaurants/${acct.storeId}/orders/${existing.id}/status`, { token: acct.token, body: { status: 'cancelled' } })
    for (const { page } of [a, b]) await page.waitForSelector(`[data-ticket="${existing.id}"]`, { state: 'detached' })
    t.pass('a cancelled order left every screen')

    for (const x of [a, b]) {
      t.same(x.outside(), [], 'no request leaves the server')
      t.same(x.problems, [], 'no script errors and no CSP violations')
    }
  })

  t.test('a station screen shows only its station; reload keeps the session; sign out revokes it', async (t) => {
    const { page, problems } = await screen(t)
    await signIn(page, cook.pin, 'nowhere')
    await page.waitForSelector('#conn.live')
    t.match(await page.textContent('#station'), /nowhere/)
    const o = await order()
    // The screen of station `grill` would show it; this one has no items of that station.
    await page.waitForTimeout(300)
    t.equal(await page.$(`[data-ticket="${o.id}"]`), null, 'another station\'s items are not shown')

    await page.reload()
    await page.waitForSelector('#conn.live')
    t.equal(await page.isVisible('#login'), false, 'still signed in after a reload')

    const token = await page.evaluate<string | null>("localStorage.getItem('kds.token')")
    t.ok(token, 'the token is kept on this device')
    await page.click('#logout')
    await page.waitForSelector('#login', { state: 'visible' })
    t.equal(await page.evaluate<string | null>("localStorage.getItem('kds.token')"), null)
    t.equal((await s.req('GET', '/staff/me', { token: token! })).status, 401, 'the token was revoked on the server')
    t.same(problems, [])
  })

  t.test('signed out elsewhere: the screen goes back to the PIN form', async (t) => {
    const { page } = await screen(t)
    await signIn(page, chef.pin)
    await page.waitForSelector('#conn.live')
    const token = await page.evaluate<string | null>("localStorage.getItem('kds.token')")
    await s.req('POST', '/staff/logout', { token: token! })
    await page.waitForSelector('#login', { state: 'visible' })
    t.match(await page.textContent('#err'), /sign in again/i)
  })

  t.test('a manager enrolls the screen with email and password; the manager\'s session is given back', async (t) => {
    const { page, problems } = await screen(t)
    await page.goto(`${s.site}/kds?store=${acct.storeId}`)
    await page.waitForSelector('#enroll', { state: 'visible' })
    t.equal(await page.isVisible('#login'), false, 'no PIN pad before the screen is enrolled')
    await page.fill('#deviceName', 'Pass screen')
    await page.fill('#email', cook.email)
    await page.fill('#password', cook.password)
    await page.click('#enroll button[type=submit]')
    await page.locator('#enrollErr', { hasText: /manager/i }).waitFor()
    t.pass('a cook cannot enroll a screen')
    await page.fill('#email', manager.email)
    await page.fill('#password', 'wrong-password')
    await page.click('#enroll button[type=submit]')
    await page.locator('#enrollErr', { hasText: /wrong/i }).waitFor()
    await page.fill('#password', manager.password)
    await page.click('#enroll button[type=submit]')
    await page.waitForSelector('#login', { state: 'visible' })
    t.match(await page.textContent('#where'), /Pass screen/)
    const device = db.prepare("SELECT id, enrolled_by, enrolled_by_staff_id FROM staff_pin_devices WHERE name = 'Pass screen'").get() as { id: number; enrolled_by: string; enrolled_by_staff_id: number }
    t.match(device, { enrolled_by: 'staff', enrolled_by_staff_id: manager.id }, 'enrolled by the manager')
    t.equal(db.prepare("SELECT COUNT(*) FROM staff_tokens WHERE staff_id IN (?, ?) AND device = 'kds-enrollment' AND revoked_at IS NULL").pluck().get(manager.id, cook.id), 0, 'no sign-in left behind on the screen')
    t.equal(await page.inputValue('#password'), '', 'the password is not left in the form')
    await page.fill('#pin', cook.pin)
    await page.click('#login button[type=submit]')
    await page.waitForSelector('#conn.live')
    const token = await page.evaluate<string | null>("localStorage.getItem('kds.token')")
    t.equal(db.prepare('SELECT pin_device_id FROM staff_tokens WHERE staff_id = ? AND revoked_at IS NULL ORDER BY id DESC').pluck().get(cook.id), device.id, 'the cook signed in through this screen')
    t.ok(token)
    t.same(problems.filter((p) => !/40[13]/.test(p)), [], 'no script errors')
  })

  t.test('a revoked screen closes and goes back to enrollment; its key no longer signs in', async (t) => {
    const { page } = await screen(t)
    const dev = enrollDevice(db, acct.storeId, 'Doomed screen')
    await enroll(page, dev.key)
    await signIn(page, chef.pin)
    await page.waitForSelector('#conn.live')
    t.equal((await s.req('DELETE', `/restaurants/${acct.storeId}/pin-devices/${dev.id}`, { token: acct.token })).status, 204)
    await page.waitForSelector('#login', { state: 'visible' })
    t.pass('the socket closed and the screen asks for a PIN')
    await page.fill('#pin', chef.pin)
    await page.click('#login button[type=submit]')
    await page.waitForSelector('#enroll', { state: 'visible' })
    t.match(await page.textContent('#enrollErr'), /not enrolled/i)
    t.equal(await page.evaluate<string | null>("localStorage.getItem('kds.deviceKey')"), null, 'the dead key is forgotten')
  })

  t.test('new tickets sound an alert a cook can switch off (remembered); a header tap bumps the whole ticket; an order the owner marks ready leaves the screen', async (t) => {
    const { page, problems } = await screen(t)
    await signIn(page, cook.pin)
    await page.waitForSelector('#conn.live')
    const alerts = () => page.evaluate<number>('Number(document.body.dataset.alerts || 0)')
    t.equal(await alerts(), 0, 'no alert for the tickets of the first snapshot')
    const o1 = await order()
    await page.waitForSelector(`[data-ticket="${o1.id}"]`)
    t.equal(await alerts(), 1, 'a new ticket sounds the alert')

    // Switched off: the next ticket is silent, and the choice survives a reload.
    t.equal(await page.textContent('#sound'), 'Sound on')
    await page.click('#sound')
    t.equal(await page.textContent('#sound'), 'Sound off')
    await page.reload()
    await page.waitForSelector('#conn.live')
    t.equal(await page.textContent('#sound'), 'Sound off', 'remembered in this browser')
    const o2 = await order()
    await page.waitForSelector(`[data-ticket="${o2.id}"]`)
    t.equal(await alerts(), 0, 'no alert while switched off')
    await page.click('#sound')
    const o3 = await order()
    await page.waitForSelector(`[data-ticket="${o3.id}"]`)
    t.equal(await alerts(), 1, 'on again')

    // A tap on the header bumps every line of the card one step.
    await page.click(`[data-ticket="${o1.id}"] .head`)
    for (const l of o1.items) await page.waitForSelector(item(l.id, 'preparing'))
    t.same(o1.items.map((l) => stateOf(l.id)), ['preparing', 'preparing'], 'every line was bumped and stored')

    // Marked ready by the owner with a line still queued: the card leaves at once, lines resolved.
    t.equal((await s.req('PUT', `/restaurants/${acct.storeId}/orders/${o2.id}/status`, { token: acct.token, body: { status: 'ready' } })).status, 200)
    await page.waitForSelector(`[data-ticket="${o2.id}"]`, { state: 'detached' })
    t.same(o2.items.map((l) => stateOf(l.id)), ['served', 'served'])
    t.same(problems, [], 'no script errors and no CSP violations')
  })
}
