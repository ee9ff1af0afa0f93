/**
 * Every form of the owner dashboard submitted by Chromium, each refused once and accepted once
 * (issue 33 item 5), second part: staff, drivers and coupons (add and edit), reservations, shifts,
 * the order's payments, and the refusal every form meets once the account is suspended (the forms
 * whose input the API never refuses). First part: test/dashboard-forms-browser.test.ts.
 * A refusal is the API's, met as a person meets it — a value the API does not take, or a change made
 * meanwhile elsewhere — and shown in the page's alert line with nothing changed; an acceptance shows
 * in the page and on the server. The journeys stay in test/dashboard-browser.test.ts and
 * test/dashboard-operations-browser.test.ts; the inventory of every form is docs/forms.md.
 */
import t from 'tap'
import type { Test } from 'tap'
import { READY, answerTo, dashboardForms, firstItem } from './helpers/dashboard.ts'

const world = await dashboardForms(t)
if (world) {
  const { s, db, demo, store, api, open, count } = world
  const send = answerTo

  // Each: the fields of a new one, a value the API refuses (a taken email or code, a phone that is not one), and the fix.
  for (const [noun, path, fill, bad, good] of [
    ['staff member', 'staff', { Name: 'Sam Sous', 'Password (8+)': 'long enough pw' }, { Email: demo.staff[0]!.email }, { Email: 'sam-sous@staff.test' }],
    ['driver', 'drivers', { Name: 'Dana Drive' }, { Phone: 'not a phone' }, { Phone: '+15550108888' }],
    ['coupon', 'coupons', { Value: '10' }, { Code: demo.coupon.code }, { Code: 'SPRING10' }],
  ] as const) {
    t.test(`${path}: add and edit a ${noun}, refused and accepted`, async (t) => {
      const { page, clean } = await open(t, `/dashboard/${path}?store=${store}`)
      const add = page.locator('form', { has: page.getByRole('heading', { name: `Add a ${noun}` }) })
      for (const [label, value] of Object.entries({ ...fill, ...bad })) await add.getByLabel(label, { exact: true }).fill(value)
      t.match(await send(page, add.getByRole('button', { name: `Add a ${noun}` }), 'refused'), /\S/, `refused (${Object.keys(bad).join()})`)
      for (const [label, value] of Object.entries(good)) await add.getByLabel(label, { exact: true }).fill(value)
      const added = await send(page, add.getByRole('button', { name: `Add a ${noun}` }), 'accepted')
      t.match(added, /saved/i, 'accepted')
      const row = page.locator('tr[data-row-id]', { hasText: Object.values(good)[0] }).first()
      await row.getByRole('button', { name: 'Edit' }).click()
      const edit = row.locator('form')
      for (const [label, value] of Object.entries(bad)) await edit.getByLabel(label, { exact: true }).fill(value)
      t.match(await send(page, edit.getByRole('button', { name: `Save ${noun}` }), 'refused'), /\S/, 'edit refused')
      for (const [label, value] of Object.entries(good)) await edit.getByLabel(label, { exact: true }).fill(value)
      t.match(await send(page, edit.getByRole('button', { name: `Save ${noun}` }), 'accepted'), /saved/i, 'edit accepted')
      clean()
    })
  }

  t.test('reservations: add a table and book, refused and accepted', async (t) => {
    const { page, clean } = await open(t, `/dashboard/reservations?store=${store}`)
    const tables = page.locator('#table-add')
    await tables.getByLabel('Table name').fill('Patio 1')
    await tables.getByLabel('Seats').fill('2')
    t.match(await send(page, tables.getByRole('button', { name: 'Add table' }), 'accepted'), /Patio 1 added/, 'a table: accepted')
    await page.locator('#table-add').getByLabel('Table name').fill('Patio 1')
    await page.locator('#table-add').getByLabel('Seats').fill('2')
    t.match(await send(page, page.locator('#table-add').getByRole('button', { name: 'Add table' }), 'refused'), /\S/, 'a second table of the same name: refused')
    t.equal(count("SELECT COUNT(*) FROM dining_tables WHERE store_id = ? AND name = 'Patio 1'", store), 1, 'one table of that name')

    // A party no table seats is refused at a free time; a party of two is booked there.
    const day = new Date(Date.now() + 3 * 86_400_000).toISOString().slice(0, 10)
    const form = page.locator('#booking')
    await form.getByLabel('Name').fill('Big Party')
    await form.getByLabel('Party size').fill('2')
    await form.getByLabel('Date').fill(day)
    await form.getByRole('button', { name: 'Check availability' }).click()
    const slot = page.locator('#slots [data-slot]').nth(2)
    await slot.waitFor()
    await slot.click()
    await form.getByLabel('Party size').fill('900')
    t.match(await send(page, form.getByRole('button', { name: 'Book', exact: true }), 'refused'), /\S/, 'a party of 900: refused')
    t.equal(count("SELECT COUNT(*) FROM reservations WHERE store_id = ? AND name = 'Big Party'", store), 0, 'nothing booked')
    await form.getByLabel('Party size').fill('2')
    t.match(await send(page, form.getByRole('button', { name: 'Book', exact: true }), 'accepted'), /Booked Big Party for 2/, 'a party of two: accepted')
    // The day form: another day shows that day's bookings (its refusal: the suspended account, below).
    const dayForm = page.locator('#reservation-day')
    await dayForm.getByLabel('Day').fill(day)
    await dayForm.getByRole('button', { name: 'Show' }).click()
    await page.getByRole('heading', { name: `Bookings on ${day}` }).waitFor()
    t.equal(await page.locator('#reservation-list tr[data-reservation-id]', { hasText: 'Big Party' }).count(), 1, 'the day: accepted, its booking listed')
    clean()
  })

  t.test('shifts: open and close, refused and accepted', async (t) => {
    const { page, clean } = await open(t, `/dashboard/shifts?store=${store}`)
    const openForm = () => page.locator('#shift-open')
    await openForm().getByLabel('Opening float').fill('50.00')
    await openForm().getByLabel('Register').fill('bar')
    t.match(await send(page, openForm().getByRole('button', { name: 'Open shift' }), 'accepted'), /Shift opened on register bar/, 'open: accepted')
    await openForm().getByLabel('Opening float').fill('20.00')
    await openForm().getByLabel('Register').fill('bar')
    t.match(await send(page, openForm().getByRole('button', { name: 'Open shift' }), 'refused'), /\S/, 'a second open shift on the same register: refused')
    t.equal(count("SELECT COUNT(*) FROM shifts WHERE store_id = ? AND register = 'bar' AND closed_at IS NULL", store), 1, 'one open shift there')

    // Closed elsewhere (another till) after the page was drawn: this page's close is refused; a fresh one is accepted.
    const shift = db.prepare("SELECT id FROM shifts WHERE store_id = ? AND register = 'bar' AND closed_at IS NULL").pluck().get(store) as number
    const card = page.locator(`[data-open-shift="${shift}"]`)
    await card.getByLabel('Counted cash').fill('50.00')
    t.ok((await api('POST', `/restaurants/${store}/shifts/${shift}/close`, { counted_cash: 50 })).status < 300, 'closed elsewhere meanwhile')
    t.match(await send(page, card.getByRole('button', { name: 'Close shift' }), 'refused'), /\S/, 'close: refused')
    await openForm().getByLabel('Opening float').fill('10.00')
    await openForm().getByLabel('Register').fill('bar')
    await send(page, openForm().getByRole('button', { name: 'Open shift' }), 'accepted')
    const again = page.locator('[data-open-shift]', { hasText: 'register bar' })
    await again.getByLabel('Counted cash').fill('12.00')
    t.match(await send(page, again.getByRole('button', { name: 'Close shift' }), 'accepted'), /Shift closed: \+\$2\.00 over/, 'close: accepted, over/short said')
    clean()
  })

  t.test('the order\'s payments: take, split, pay lines, refund — refused and accepted', async (t) => {
    const order = async () => (await api('POST', `/restaurants/${store}/orders`, { type: 'takeaway', customer_name: 'Pia', phone: '+15550103', items: [{ item_id: firstItem(db, store), quantity: 2 }] })).body as { id: number; total: number }
    const { page, clean } = await open(t, `/dashboard/orders?store=${store}`)
    const detail = async (id: number) => {
      await page.locator(`[data-order-id="${id}"]`).getByRole('button', { name: /Details/ }).click()
      const panel = page.locator('dialog[open] #payments')
      await panel.waitFor()
      return panel
    }
    // Take a payment: an order cancelled meanwhile is refused; a live one is paid.
    const gone = await order()
    let panel = await detail(gone.id)
    await api('PUT', `/restaurants/${store}/orders/${gone.id}/status`, { status: 'cancelled' })
    t.match(await send(page, panel.getByRole('button', { name: 'Take payment' }), 'refused'), /cancel/i, 'take: refused on a cancelled order')
    t.equal(count('SELECT COUNT(*) FROM payments WHERE order_id = ?', gone.id), 0, 'no payment')
    await page.keyboard.press('Escape')

    const live = await order()
    panel = await detail(live.id)
    // Pay lines: no unit chosen is refused by the page; one unit is paid.
    await panel.getByRole('button', { name: 'Split by lines' }).click()
    const lines = panel.locator('#pay-lines')
    t.match(await send(page, lines.getByRole('button', { name: 'Pay these lines' }), 'refused'), /Choose at least one unit/, 'pay lines: nothing chosen, refused')
    await lines.getByRole('spinbutton', { name: /Units of/ }).first().fill('1')
    t.match(await send(page, lines.getByRole('button', { name: 'Pay these lines' }), 'accepted'), /Payment for the chosen lines/, 'pay lines: accepted')
    panel = page.locator('dialog[open] #payments')
    // Split evenly (its refusal: the suspended account, below).
    await panel.getByLabel('People').fill('2')
    await panel.getByRole('button', { name: 'Split evenly' }).click()
    await panel.locator('#split-parts [data-part]').first().waitFor()
    t.equal(await panel.locator('#split-parts [data-part]').count(), 2, 'split: two parts shown')
    // Take the rest: accepted.
    t.match(await send(page, panel.getByRole('button', { name: 'Take payment' }), 'accepted'), /payment of .* taken: the order is paid/, 'take: accepted')
    // Refund: nothing chosen is refused by the page; every unit, after a refund made elsewhere, is
    // refused by the API; one unit is refunded.
    panel = page.locator('dialog[open] #payments')
    const refund = panel.locator('#refund')
    const units = refund.getByRole('spinbutton', { name: /Units of .* to refund/ }).first()
    await units.waitFor()
    t.match(await send(page, refund.getByRole('button', { name: 'Refund' }), 'refused'), /Choose the units to refund/, 'refund: nothing chosen, refused')
    t.equal(count('SELECT COUNT(*) FROM refunds WHERE order_id = ?', live.id), 0, 'no refund')
    t.ok((await api('POST', `/restaurants/${store}/orders/${live.id}/refunds`, { amount: 1 })).status < 300, 'a refund of 1.00 elsewhere meanwhile')
    await units.fill('2')
    t.match(await send(page, refund.getByRole('button', { name: 'Refund' }), 'refused'), /At most/, 'refund of every unit: refused')
    await units.fill('1')
    t.match(await send(page, refund.getByRole('button', { name: 'Refund' }), 'accepted'), /Refunded \$\d+\.\d\d/, 'refund of one unit: accepted')
    clean()
  })

  t.test('a suspended account: the forms the API otherwise never refuses are refused, with the reason', async (t) => {
    const placed = await api('POST', `/restaurants/${store}/orders`, { type: 'delivery', address: '4 Main St', customer_name: 'Sue', phone: '+15550104', items: [{ item_id: firstItem(db, store), quantity: 1 }] })
    const id = placed.body.id as number
    await s.req('POST', '/driver/shift', { token: demo.driver.token, body: { action: 'start' } })
    // One signed-in browser (sign-ins are rate limited per address), a tab per page.
    const first = await open(t, `/dashboard/orders?store=${store}`)
    const tab = async (path: string) => {
      const page = await first.page.context().newPage()
      await page.goto(`${s.site}${path}`)
      await page.waitForSelector(READY)
      return { page, clean: () => {} }
    }
    const pages = {
      orders: first,
      dispatch: await tab(`/dashboard/dispatch?store=${store}`),
      stores: await tab(`/dashboard/stores?store=${store}`),
      guests: await tab(`/dashboard/guests?store=${store}`),
      reservations: await tab(`/dashboard/reservations?store=${store}`),
    }
    const orders = pages.orders.page
    await orders.locator(`[data-order-id="${id}"]`).getByRole('button', { name: /Details/ }).click()
    const dialog = orders.locator('dialog[open]')
    await dialog.locator('#payments').waitFor()
    await pages.dispatch.page.locator(`[data-waiting-order="${id}"]`).waitFor()
    await pages.stores.page.locator('#store-create').getByLabel('Title').fill('Suspended Store')

    db.prepare('UPDATE owners SET suspended_at = ?, suspended_reason = ? WHERE id = ?').run(new Date().toISOString(), 'test', demo.owner.id)
    t.teardown(() => { db.prepare('UPDATE owners SET suspended_at = NULL, suspended_reason = NULL WHERE id = ?').run(demo.owner.id) })
    const suspended = /suspended/i
    // The dialog stays open on these refusals; a refused status closes it (as an accepted one does): last.
    t.match(await send(orders, dialog.getByRole('button', { name: 'Split evenly' }), 'refused'), suspended, 'payments: split evenly')
    t.match(await send(orders, dialog.getByRole('button', { name: 'Assign' }), 'refused'), suspended, 'order detail: assign')
    await dialog.getByLabel('Kitchen status').selectOption('ready')
    t.match(await send(orders, dialog.getByRole('button', { name: 'Set status' }), 'refused'), suspended, 'order detail: set status')
    t.match(await send(pages.dispatch.page, pages.dispatch.page.locator(`[data-waiting-order="${id}"]`).getByRole('button', { name: 'Assign' }), 'refused'), suspended, 'dispatch: assign')
    t.match(await send(pages.stores.page, pages.stores.page.getByRole('button', { name: 'Create store' }), 'refused'), suspended, 'stores: create')
    t.match(await send(pages.guests.page, pages.guests.page.getByRole('button', { name: 'Search' }), 'refused'), suspended, 'guests: search')
    t.match(await send(pages.reservations.page, pages.reservations.page.locator('#reservation-day').getByRole('button', { name: 'Show' }), 'refused'), suspended, 'reservations: the day')
    t.equal((await api('GET', `/restaurants/${store}/orders/${id}`)).status, 403, 'the API refuses the account too')
    t.equal(count("SELECT COUNT(*) FROM stores WHERE title = 'Suspended Store'"), 0, 'nothing was written')
    first.clean()
  })
}
