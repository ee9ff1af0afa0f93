/**
 * First steps on the dashboard (issue 34 item 16), walked in Chromium by a new owner: the setup
 * checklist ticks each step from the account's real data as the owner does it through the pages'
 * own forms, links to where each is done, can be dismissed (for every session) and is gone once
 * everything is done; every secret shown once has a Copy button that puts it on the clipboard;
 * a result message shows next to the form or row it is about, not at the foot of the page.
 */
import t from 'tap'
import type { Page } from 'playwright-core'
import { browserAndServer } from './helpers/browser.ts'
import { READY, signIn } from './helpers/dashboard.ts'
import { signedUp, PASSWORD } from './helpers/owner-site.ts'
import { sha256Hex } from '../src/auth/tokens.ts'
import { tokenFor } from './helpers/fixtures.ts'

const world = await browserAndServer(t, { WEBHOOK_ALLOW_LOOPBACK: '1', DEMO_SEED: '0' })
if (world) {
  const { browser, s } = world
  const { email, ownerId } = await signedUp(s)
  const ctx = await browser.newContext({ viewport: { width: 1280, height: 900 }, permissions: ['clipboard-read', 'clipboard-write'] })
  t.teardown(() => ctx.close())
  const page = await ctx.newPage()
  page.on('dialog', (d) => void d.accept())
  const problems: string[] = []
  page.on('pageerror', (e) => problems.push(String(e)))

  const step = (key: string) => page.locator(`#setup li[data-step="${key}"]`)
  const doneOf = async (key: string) => step(key).getAttribute('data-done')
  /** Waits for a step to be ticked (the checklist looks again after each action). */
  const ticked = async (key: string) => { await page.locator(`#setup li[data-step="${key}"][data-done="1"]`).waitFor(); return true }
  const go = async (p: Page, path: string) => { await p.goto(`${s.site}${path}`); await p.waitForSelector(READY) }
  /** The secret on the page, copied with its own button, as the clipboard then holds it. */
  const copied = async (box: ReturnType<Page['locator']>) => {
    await box.getByRole('button', { name: /^Copy/ }).click()
    await box.getByRole('button', { name: /^Copied/ }).waitFor()
    return { shown: (await box.locator('code').textContent()) ?? '', clip: await page.evaluate('navigator.clipboard.readText()') as string }
  }

  t.test('a new account: every step open, each linking to its page', async (t) => {
    await signIn(page, s.site, { email, password: PASSWORD }, '/dashboard/stores')
    await page.locator('#setup').waitFor()
    t.match(await page.locator('#setup-title').textContent(), /0 of 6 done/, 'nothing done yet')
    for (const [key, path] of [['store', '/dashboard/stores'], ['hours', '/dashboard/stores'], ['menu', '/dashboard/menu'], ['channel', '/dashboard/tokens'], ['driver', '/dashboard/drivers'], ['payment', '/dashboard/shifts']]) {
      t.equal(await doneOf(key!), '0', `${key}: open`)
      t.equal(new URL((await step(key!).getByRole('link').getAttribute('href'))!, s.site).pathname, path, `${key}: links to ${path}`)
    }
  })

  let storeId = 0
  t.test('store and hours: ticked as the Stores page\'s forms are sent; the message sits by its form or row', async (t) => {
    const create = page.locator('#store-create')
    await create.getByLabel('Title').fill('Olga\'s Kitchen')
    await create.getByLabel('Time zone').fill('Europe/Berlin')
    await create.getByRole('button', { name: 'Create store' }).click()
    t.ok(await ticked('store'), 'store ticked')
    t.match(await create.locator('#notice').textContent(), /Olga's Kitchen created/, 'the message is inside the create form, next to its button')
    storeId = s.app.svc.db.prepare('SELECT id FROM stores WHERE owner_id = ?').pluck().get(ownerId) as number
    t.equal(await doneOf('hours'), '0', 'hours still open (always open by default)')

    const row = page.locator(`tr[data-store-id="${storeId}"]`)
    await row.getByRole('button', { name: /^Edit/ }).click()
    const edit = page.locator('form[data-store-edit]')
    await edit.getByLabel('Always open').uncheck()
    await edit.getByLabel('Monday').fill('11:00-22:00')
    await edit.getByRole('button', { name: 'Save store' }).click()
    t.ok(await ticked('hours'), 'hours ticked')
    await row.locator('#notice', { hasText: /saved/ }).waitFor()
    t.pass('the saved message is in the store\'s row')
    // A refusal lands by its form too (the alert line), not at the foot of the page.
    await row.getByRole('button', { name: /^Edit/ }).click()
    await page.locator('form[data-store-edit]').getByLabel('Time zone').fill('Mars/Olympus_Mons')
    await page.locator('form[data-store-edit]').getByRole('button', { name: 'Save store' }).click()
    await page.locator('form[data-store-edit] #problem', { hasText: /time ?zone/i }).waitFor()
    t.pass('the refusal is inside the edit form')
  })

  t.test('menu: an item added on the Menu page ticks it on the Orders page', async (t) => {
    await go(page, `/dashboard/menu?store=${storeId}`)
    const addCat = page.locator('form', { has: page.getByLabel('New category') })
    await addCat.getByLabel('New category').fill('Mains')
    await addCat.getByRole('button', { name: 'Add category' }).click()
    const addItem = page.locator('form', { has: page.getByRole('heading', { name: 'Add an item' }) })
    await addItem.getByLabel('Name').waitFor()
    await page.locator('#notice', { hasText: /Mains added/ }).waitFor()
    await addItem.getByLabel('Name').fill('Soup')
    await addItem.getByLabel('Price').fill('4.50')
    await addItem.getByRole('button', { name: 'Add item' }).click()
    await page.locator('form', { has: page.getByRole('heading', { name: 'Add an item' }) }).locator('#notice', { hasText: /Soup added/ }).waitFor()
    t.pass('the message is in the add-item form')
    await go(page, `/dashboard/orders?store=${storeId}`)
    t.ok(await ticked('menu'), 'menu ticked')
    t.equal(await doneOf('channel'), '0', 'no storefront yet')
  })

  t.test('tokens: a storefront token ticks the channel; API token and storefront token copy to the clipboard', async (t) => {
    await go(page, `/dashboard/tokens?store=${storeId}`)
    await page.getByRole('button', { name: 'Create storefront token' }).click()
    const box = page.locator('[data-secret]')
    await box.waitFor()
    const sf = await copied(box)
    t.match(sf.shown, /\S{20,}/, 'a storefront token is shown')
    t.equal(sf.clip, sf.shown, 'Copy put the storefront token on the clipboard')
    t.equal(s.app.svc.db.prepare('SELECT COUNT(*) FROM storefront_tokens WHERE store_id = ? AND token_hash = ?').pluck().get(storeId, sha256Hex(sf.clip)), 1, 'it is the store\'s storefront token')

    const create = page.locator('form', { has: page.getByRole('heading', { name: 'Create an API token' }) })
    await create.getByLabel('Name').fill('POS')
    await create.getByRole('checkbox', { name: 'read', exact: true }).check()
    await create.getByRole('button', { name: 'Create token' }).click()
    await page.locator('[data-secret]', { hasText: 'POS' }).waitFor()
    const api = await copied(page.locator('[data-secret]'))
    t.equal(api.clip, api.shown, 'Copy put the API token on the clipboard')
    t.equal((await s.req('GET', '/account/setup', { token: api.clip })).status, 200, 'the copied token works')
    await page.locator('form', { has: page.getByRole('heading', { name: 'Create an API token' }) }).locator('#notice', { hasText: /Token created/ }).waitFor()
    t.pass('"Token created" is in the create form')
    await go(page, `/dashboard/stores?store=${storeId}`)
    t.ok(await ticked('channel'), 'storefront ticked')
  })

  t.test('webhooks: the signing secret copies', async (t) => {
    await go(page, '/dashboard/webhooks')
    await page.getByLabel('URL').fill('http://127.0.0.1:9/hook')
    await page.getByRole('button', { name: 'Add endpoint' }).click()
    const box = page.locator('[data-secret]')
    await box.waitFor()
    const w = await copied(box)
    t.match(w.clip, /^whsec_/, 'a signing secret on the clipboard')
    t.equal(w.clip, w.shown, 'the one shown')
  })

  t.test('drivers: adding one ticks the step; its device token copies', async (t) => {
    await go(page, `/dashboard/drivers?store=${storeId}`)
    const add = page.locator('form', { has: page.getByRole('heading', { name: 'Add a driver' }) })
    await add.getByLabel('Name').fill('Dan')
    await add.getByLabel('Phone').fill('+15550109999')
    await add.getByRole('button', { name: 'Add a driver' }).click()
    const box = page.locator('[data-secret]')
    await box.waitFor()
    const d = await copied(box)
    t.equal(d.clip, d.shown, 'the driver\'s token on the clipboard')
    t.equal((await s.req('GET', '/driver/me', { token: d.clip })).status, 200, 'it is the driver\'s token')
    await go(page, `/dashboard/orders?store=${storeId}`)
    t.ok(await ticked('driver'), 'driver ticked')
    t.match(await page.locator('#setup-title').textContent(), /5 of 6 done/, 'one step left')
  })

  t.test('dismiss: gone for every session of the account; back when asked again', async (t) => {
    await page.getByRole('button', { name: 'Dismiss the checklist' }).click()
    await page.locator('#setup').waitFor({ state: 'hidden' })
    const other = await browser.newContext()
    t.teardown(() => other.close())
    const p2 = await other.newPage()
    await signIn(p2, s.site, { email, password: PASSWORD }, `/dashboard/orders?store=${storeId}`)
    t.equal(await p2.locator('#setup').isVisible(), false, 'another session does not show it')
    t.equal(await p2.locator('#store').isVisible(), true, 'that page is drawn')
    const tok = tokenFor(s.app.svc.db, ownerId, ['*'])
    t.equal((await s.req('GET', '/account/setup', { token: tok })).body.dismissed, true, 'the account says dismissed')
    t.equal((await s.req('PUT', '/account/setup', { token: tok, body: { dismissed: false } })).body.dismissed, false, 'shown again through the API')
  })

  t.test('payment: opening a cash drawer completes the list, which is then gone', async (t) => {
    await go(page, `/dashboard/shifts?store=${storeId}`)
    await page.getByLabel('Opening float').fill('50')
    await page.getByRole('button', { name: 'Open shift' }).click()
    await page.locator('[data-open-shift]').waitFor()
    await go(page, `/dashboard/orders?store=${storeId}`)
    await page.locator('#store').waitFor()
    t.equal(await page.locator('#setup').isVisible(), false, 'every step done: no checklist')
    const tok = tokenFor(s.app.svc.db, ownerId, ['read'])
    t.match((await s.req('GET', `/account/setup?restaurant_id=${storeId}`, { token: tok })).body, { complete: true, dismissed: false, done: 6 }, 'complete, not dismissed')
    t.same(problems, [], 'no script errors')
  })
}
