/**
 * Every page the server serves, walked in headless Chromium with axe-core (issue 34 item 9): the
 * start page, the sign-in pages and their 404s, the API reference, the guides and the route list
 * (also on a phone), the store website, the tracking page live and its 404, the kitchen screen
 * (enrollment, PIN pad, tickets in every state). The signed-in pages (dashboard, security, OAuth
 * consent, app embed): test/dashboard-accessibility-browser.test.ts. Each: no serious or critical
 * accessibility violation. Pages are opened
 * in contexts that let the injected axe script past their CSP; the CSP itself is checked on the
 * tracking 404 in a context that keeps it (no inline style refused there).
 */
import t from 'tap'
import type { Test } from 'tap'
import { axeCheck, axePage, browserAndServer } from './helpers/browser.ts'
import { firstItem } from './helpers/dashboard.ts'
import { createStaff, postOrder } from './helpers/fixtures.ts'
import { enrollDevice } from './helpers/pin-devices.ts'

const world = await browserAndServer(t)
if (world) {
  const { browser, s } = world
  const db = s.app.svc.db
  const demo = s.seed()

  const open = (t: Test) => axePage(t, browser)
  const item = () => firstItem(db, demo.store.id)

  t.test('pages anyone can open: start, sign-in pages, docs, their 404s', async (t) => {
    const page = await open(t)
    for (const path of ['/', '/login', '/signup', '/forgot-password', '/reset-password/rst_nope', '/verify-email/nope', '/docs/routes', '/docs/guides/dashboard']) {
      await page.goto(`${s.site}${path}`)
      await axeCheck(t, page, path)
    }
    // The API reference draws itself (Swagger UI): checked once its operations are on the page.
    await page.goto(`${s.site}/docs`)
    await page.locator('.opblock').first().waitFor()
    await page.locator('select#servers[aria-label]').waitFor()
    await axeCheck(t, page, '/docs')
    await page.locator('.opblock-summary-control').first().click()
    await page.locator('.opblock-body').first().waitFor()
    await page.waitForFunction("!document.querySelector('.opblock-summary-control a[href]')")
    await axeCheck(t, page, '/docs (an operation opened)')
  })

  t.test('the guides and the route list on a phone', async (t) => {
    const page = await open(t)
    await page.setViewportSize({ width: 390, height: 844 })
    for (const path of ['/docs/routes', '/docs/guides/dashboard', '/docs/guides/webhooks']) {
      await page.goto(`${s.site}${path}`)
      await axeCheck(t, page, `${path} (phone)`)
    }
  })

  t.test('the store website', async (t) => {
    const page = await open(t)
    for (const path of ['', '/menu', '/cart', '/checkout', '/account/login']) {
      await page.goto(`${s.site}/s/${demo.store.slug}${path}`)
      await axeCheck(t, page, `website ${path || '/'}`)
    }
  })

  t.test('the tracking page, live and unknown', async (t) => {
    const placed = await postOrder(s, demo.owner.token, demo.store.id, { type: 'takeaway', customer_name: 'Ada', items: [{ item_id: item(), quantity: 1 }] })
    t.equal(placed.status, 200)
    const page = await open(t)
    await page.goto(`${s.site}/t/${placed.body.track_token}`)
    await page.waitForSelector('#conn.live')
    await axeCheck(t, page, 'tracking page')
    await page.goto(`${s.site}/t/trk_nope`)
    await axeCheck(t, page, 'tracking 404')
    // With its CSP in force, the 404 page needs nothing the CSP refuses.
    const strict = await browser.newContext()
    t.teardown(() => strict.close())
    const plain = await strict.newPage()
    const refused: string[] = []
    plain.on('console', (m) => { if (m.type() === 'error' && !/status of 404/.test(m.text())) refused.push(m.text()) })
    const r = await plain.goto(`${s.site}/t/trk_nope`)
    t.equal(r?.status(), 404)
    t.same(refused, [], 'the tracking 404 page: no CSP violation')
  })

  t.test('the kitchen screen: enrollment, PIN pad, tickets in every state', async (t) => {
    const cook = createStaff(db, demo.store.id, { role: 'kitchen', pin: '2468' })
    const page = await open(t)
    await page.goto(`${s.site}/kds?store=${demo.store.id}`)
    await page.waitForSelector('#enroll', { state: 'visible' })
    await axeCheck(t, page, 'kds enrollment')
    await page.fill('#deviceKey', enrollDevice(db, demo.store.id, 'Pass').key)
    await page.click('#enroll button[type=submit]')
    await page.waitForSelector('#login', { state: 'visible' })
    await axeCheck(t, page, 'kds PIN pad')
    const placed = await postOrder(s, demo.owner.token, demo.store.id, { type: 'takeaway', customer_name: 'Kim', note: 'no onions', items: [{ item_id: item(), quantity: 1 }, { item_id: item(), quantity: 2 }, { item_id: item(), quantity: 3 }] })
    t.equal(placed.status, 200)
    await page.fill('#pin', cook.pin)
    await page.click('#login button[type=submit]')
    const lines = (placed.body.items as Array<{ id: number }>).map((l) => l.id)
    const line = (id: number, state: string) => page.locator(`.item[data-item="${id}"][data-state="${state}"]`)
    await line(lines[0]!, 'queued').waitFor()
    // One line preparing, one ready, one still queued: every state label is on the screen.
    await line(lines[1]!, 'queued').locator('.bump').click()
    await line(lines[1]!, 'preparing').waitFor()
    await line(lines[2]!, 'queued').locator('.bump').click()
    await line(lines[2]!, 'preparing').locator('.bump').click()
    await line(lines[2]!, 'ready').waitFor()
    await axeCheck(t, page, 'kds tickets (queued, preparing, ready)')
  })
}
