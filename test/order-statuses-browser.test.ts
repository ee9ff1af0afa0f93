/**
 * Orders move on the owner's board when the driver moves them (issue 34 item 2, docs/orders.md "How
 * the two statuses move together"), in headless Chromium: the owner watches the board while the
 * demo driver picks a delivery up (the card goes from New to Ready) and delivers it (to Done, with no
 * Start button); the analytics page counts it as delivered, not new; the customer's tracking page
 * ticks Being prepared and Ready along with Delivered.
 */
import t from 'tap'
import { startServer } from './helpers/server.ts'
import { browserFor } from './helpers/browser.ts'
import { dashboardWindow, firstItem, signIn } from './helpers/dashboard.ts'

const browser = await browserFor(t)
if (browser) {
  const s = await startServer({ RATE_LIMIT_PER_MINUTE: '100000' })
  t.teardown(() => s.close())
  const demo = s.seed()
  const db = s.app.svc.db

  t.test('the board, analytics and tracking follow the driver', async (t) => {
    const { page, clean } = await dashboardWindow(t, browser, s.site)
    await signIn(page, s.site, demo.owner)
    await page.waitForSelector('#live.live')
    const o = await s.req('POST', `/restaurants/${demo.store.id}/orders`, {
      token: demo.owner.token,
      body: { type: 'delivery', customer_name: 'Board Walk', phone: '+15550199', address: '9 Quay St', items: [{ item_id: firstItem(db, demo.store.id), quantity: 1 }] },
    })
    t.equal(o.status, 200)
    const card = (column: string) => page.locator(`[data-column="${column}"] [data-order-id="${o.body.id}"]`)
    await card('new').waitFor()
    t.equal(await card('new').locator('[data-move="preparing"]').count(), 1, 'a new order has its Start button')

    // The driver (their app speaks this API) takes the order and picks it up: the kitchen is done with it.
    t.equal((await s.req('POST', `/restaurants/${demo.store.id}/orders/${o.body.id}/assign`, { token: demo.owner.token, body: { driver_id: demo.driver.id } })).status, 200)
    const move = (delivery_status: string) => s.req('PUT', `/driver/deliveries/${o.body.id}/status`, { token: demo.driver.token, body: { delivery_status } })
    t.equal((await move('picked_up')).status, 200)
    await card('ready').waitFor()
    t.match(await card('ready').textContent(), /picked up/, 'under Ready, saying the driver has it')
    t.equal((await move('out_for_delivery')).status, 200)
    t.equal((await move('delivered')).status, 200)
    await card('done').waitFor()
    t.equal(await card('done').locator('[data-move]').count(), 0, 'delivered: under Done, no Start (or any move) button')
    t.equal(await page.locator(`[data-column="new"] [data-order-id="${o.body.id}"]`).count(), 0, 'not under New')

    // Analytics "by status": the same statuses as the board.
    await page.getByRole('link', { name: 'Analytics' }).click()
    await page.waitForURL(/\/dashboard\/analytics/)
    const row = page.locator('tr', { has: page.locator('td', { hasText: /^delivered$/ }) })
    await row.waitFor()
    t.equal(await row.locator('td.num').textContent(), '1', 'one delivered order')
    t.equal(await page.locator('tr', { has: page.locator('td', { hasText: /^new$/ }) }).count(), 0, 'and none counted as new')
    clean()

    // The customer's tracking page: every step up to Delivered is ticked.
    const track = await browser.newPage()
    t.teardown(() => track.close())
    await track.goto(o.body.track_url)
    await track.waitForSelector('#conn.live')
    const ticked = await track.locator('#timeline li.done').evaluateAll((els) => els.map((e) => e.getAttribute('data-stage')))
    t.same(ticked, ['created', 'preparing', 'ready', 'assigned', 'picked_up', 'out_for_delivery', 'delivered'], 'Being prepared and Ready are ticked with Delivered')
    t.equal(await track.locator('#timeline li[data-stage="preparing"] time').count(), 0, 'the kitchen never recorded preparing: no time is made up')
    t.equal(await track.locator('#timeline li[data-stage="ready"] time').count(), 1, 'ready: when the driver picked it up')
  })
}
