/**
 * The signed-in pages walked in headless Chromium with axe-core (issue 34 item 9): every dashboard
 * page on a desktop and on a phone (wide tables scroll in their box there), the order detail, the
 * security page, the OAuth consent and an app's embed page. Each: no serious or critical
 * accessibility violation. The pages anyone can open: test/pages-accessibility-browser.test.ts.
 */
import t from 'tap'
import type { Page } from 'playwright-core'
import type { Test } from 'tap'
import { axeCheck, axePage, browserAndServer } from './helpers/browser.ts'
import { READY, firstItem } from './helpers/dashboard.ts'
import { postOrder } from './helpers/fixtures.ts'
import { createTestApp } from './helpers/apps.ts'
import { DASHBOARD_PAGES } from '../src/http/pages/dashboard/shell.ts'

const world = await browserAndServer(t)
if (world) {
  const { browser, s } = world
  const demo = s.seed()
  const db = s.app.svc.db
  const open = (t: Test) => axePage(t, browser)
  /** Signed out, `next` sends the browser to sign in; the demo owner's credentials bring it back. */
  async function signIn(page: Page, next: string): Promise<void> {
    await page.goto(`${s.site}/login?next=${encodeURIComponent(next)}`)
    await page.locator('input[type=email]').fill(demo.owner.email)
    await page.locator('input[type=password]').fill(demo.owner.password)
    await page.getByRole('button', { name: 'Sign in' }).click()
    await page.waitForURL((u) => u.pathname === next.split('?')[0])
  }
  const item = () => firstItem(db, demo.store.id)

  t.test('the dashboard, every page, the order detail, the security page', async (t) => {
    const page = await open(t)
    await signIn(page, '/dashboard/orders')
    const placed = await postOrder(s, demo.owner.token, demo.store.id, { type: 'takeaway', customer_name: 'Bo', items: [{ item_id: item(), quantity: 1 }] })
    t.equal(placed.status, 200)
    for (const p of DASHBOARD_PAGES) {
      await page.goto(`${s.site}/dashboard/${p.path}?store=${demo.store.id}`)
      await page.waitForSelector(READY)
      if (p.path === 'guests') await page.locator('#view table').first().waitFor()
      await axeCheck(t, page, `dashboard ${p.path}`)
    }
    await page.goto(`${s.site}/dashboard/orders?store=${demo.store.id}`)
    await page.waitForSelector(READY)
    await page.locator(`[data-order-id="${placed.body.id}"]`).getByRole('button', { name: /Details/ }).click()
    await page.locator('dialog[open] #payments').waitFor()
    await axeCheck(t, page, 'dashboard order detail')
    await page.goto(`${s.site}/account/security`)
    await axeCheck(t, page, '/account/security')
    // On a phone, wide tables scroll sideways in their box: the box must be reachable by keyboard.
    await page.setViewportSize({ width: 390, height: 844 })
    for (const p of DASHBOARD_PAGES) {
      await page.goto(`${s.site}/dashboard/${p.path}?store=${demo.store.id}`)
      await page.waitForSelector(READY)
      if (p.path === 'guests') await page.locator('#view table').first().waitFor()
      await axeCheck(t, page, `dashboard ${p.path} (phone)`)
    }
  })

  t.test('the OAuth consent and an app\'s embed page', async (t) => {
    const app = createTestApp(db, demo.owner.id, { name: 'Label Printer', redirectUris: ['https://printer.example/cb'], scopes: ['orders:read'], embedUrl: 'https://printer.example/embed' })
    const page = await open(t)
    const consent = `/oauth/authorize?${new URLSearchParams({ response_type: 'code', client_id: app.client_id, redirect_uri: 'https://printer.example/cb', state: 's' })}`
    await signIn(page, consent)
    await page.getByRole('button', { name: 'Approve' }).waitFor()
    await axeCheck(t, page, 'OAuth consent')
    await page.getByRole('button', { name: 'Approve' }).click()
    await page.waitForURL((u) => !u.pathname.startsWith('/oauth'))
    await page.goto(`${s.site}/apps/${app.id}/embed?store=${demo.store.id}`)
    await axeCheck(t, page, 'app embed page')
  })
}
