/**
 * Phone screenshots (390 × 844) of the pages issue 34 is about — the sign-up, the dashboard's order
 * board, the tracking page and the kitchen screen — taken in headless Chromium against a real server
 * with the demo account and a few orders in different states. Run from a checkout's root:
 *
 *   node --import tsx tools/phone-screenshots.ts <directory>
 *
 * It uses only what the test helpers of earlier commits also have, so the same file, copied into a
 * checkout of an older commit, takes that commit's "before" pictures (docs/screenshots/phone/README.md).
 */
import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import type { Page } from 'playwright-core'
import { launchChromium } from '../test/helpers/browser.ts'
import { startServer } from '../test/helpers/server.ts'
import { createStaff } from '../test/helpers/fixtures.ts'
import { enrollDevice } from '../test/helpers/pin-devices.ts'

const out = process.argv[2]
if (!out) throw new Error('usage: tools/phone-screenshots.ts <directory>')
mkdirSync(out, { recursive: true })
const PHONE = { width: 390, height: 844 }

const browser = await launchChromium()
if (!browser) throw new Error('no Chromium at /usr/bin/chromium')
const s = await startServer({ RATE_LIMIT_PER_MINUTE: '100000' })
try {
  const demo = s.seed()
  const owner = demo.owner.token
  const items = s.app.svc.db.prepare('SELECT id FROM menu_items WHERE store_id = ? AND is_sold_out = 0 ORDER BY id LIMIT 2').pluck().all(demo.store.id) as number[]
  if (items.length < 2) throw new Error('the demo menu has fewer than two items')
  const order = async (body: Record<string, unknown>) => {
    const r = await s.req('POST', `/restaurants/${demo.store.id}/orders`, { token: owner, body: { customer_name: 'Ada', phone: '+15550100', items: [{ item_id: items[0], quantity: 2 }, { item_id: items[1], quantity: 1 }], ...body } })
    if (r.status !== 200) throw new Error(`order: ${r.status} ${r.text}`)
    return r.body as { id: number; track_token: string }
  }
  const status = async (id: number, to: string) => {
    const r = await s.req('PUT', `/restaurants/${demo.store.id}/orders/${id}/status`, { token: owner, body: { status: to } })
    if (r.status !== 200) throw new Error(`status ${to}: ${r.status} ${r.text}`)
  }
  // The board: a new order, one being prepared, one ready, and a delivery out with the demo driver.
  await order({ type: 'takeaway', note: 'no onions' })
  const preparing = await order({ type: 'takeaway', customer_name: 'Kim' })
  await status(preparing.id, 'preparing')
  const ready = await order({ type: 'on-table', table_number: '4', customer_name: 'Lee' })
  for (const to of ['preparing', 'ready']) await status(ready.id, to)
  // With the customer's position where the server takes one (earlier commits may refuse the fields: then without).
  const deliveryOrder = { type: 'delivery', address: '12 Harbour Street', customer_name: 'Sam' }
  const delivery = await order({ ...deliveryOrder, lat: 38.7189, lng: -9.1352 }).catch(() => order(deliveryOrder))
  const driver = demo.driver.token
  await s.req('POST', '/driver/shift', { token: driver, body: { action: 'start' } })
  const assigned = await s.req('POST', `/restaurants/${demo.store.id}/orders/${delivery.id}/assign`, { token: owner, body: { driver_id: demo.driver.id } })
  if (assigned.status !== 200) throw new Error(`assign: ${assigned.status} ${assigned.text}`)
  for (const to of ['preparing', 'ready']) await status(delivery.id, to)
  await s.req('PUT', `/driver/deliveries/${delivery.id}/status`, { token: driver, body: { delivery_status: 'picked_up' } })

  const shot = async (name: string, go: (page: Page) => Promise<void>) => {
    const ctx = await browser.newContext({ viewport: PHONE, deviceScaleFactor: 1, isMobile: true, hasTouch: true })
    const page = await ctx.newPage()
    try {
      await go(page)
      await page.screenshot({ path: join(out, `${name}.png`), fullPage: true })
      console.log(`${name}.png`)
    } finally {
      await ctx.close()
    }
  }

  await shot('signup', async (page) => { await page.goto(`${s.site}/signup`) })

  await shot('board', async (page) => {
    await page.goto(`${s.site}/dashboard/orders`)
    await page.waitForURL(/\/login/)
    await page.locator('input[type=email]').fill(demo.owner.email)
    await page.locator('input[type=password]').fill(demo.owner.password)
    await page.locator('form button[type=submit], form input[type=submit]').first().click()
    await page.waitForURL((u) => u.pathname === '/dashboard/orders')
    await page.waitForSelector('body[data-ready="1"]')
    await page.waitForTimeout(500)
  })

  await shot('tracking', async (page) => {
    await page.goto(`${s.site}/t/${delivery.track_token}`)
    await page.waitForSelector('#conn.live')
    // The driver moves twice while the page watches.
    for (const [lat, lng] of [[38.7151, -9.1402], [38.7165, -9.1385]]) {
      await s.req('PUT', '/driver/location', { token: driver, body: { lat, lng } })
      await page.waitForTimeout(400)
    }
  })

  await shot('kds', async (page) => {
    const cook = createStaff(s.app.svc.db, demo.store.id, { role: 'kitchen', pin: '2468' })
    await page.goto(`${s.site}/kds?store=${demo.store.id}`)
    await page.waitForSelector('#enroll', { state: 'visible' })
    await page.fill('#deviceKey', enrollDevice(s.app.svc.db, demo.store.id, 'Pass').key)
    await page.click('#enroll button[type=submit]')
    await page.waitForSelector('#login', { state: 'visible' })
    await page.fill('#pin', cook.pin)
    await page.click('#login button[type=submit]')
    await page.locator('.item').first().waitFor()
    await page.waitForTimeout(300)
  })
} finally {
  await s.close()
  await browser.close()
}
