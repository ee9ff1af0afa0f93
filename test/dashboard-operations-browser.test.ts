/**
 * The dashboard's store-operation views in headless Chromium (issue 17 item 6; docs/dashboard.md
 * "Store operations"): on an order's detail a partial cash payment and then the rest (the order is
 * paid) and a refund; a cash shift opened with a float and closed with counted cash showing
 * over/short; a reservation booked from the day's free slots and cancelled; a guest found through a
 * segment filter. Each step is checked through the API too. Every page: no script error, CSP
 * violation, failed request or outside request, and axe-core finds no serious or critical problem.
 */
import t from 'tap'
import type { Browser } from 'playwright-core'
import type { Test } from 'tap'
import { startServer } from './helpers/server.ts'
import { axeCheck, browserFor } from './helpers/browser.ts'
import { READY, dashboardWindow, firstItem as availableItem, signIn, type DashboardWindow } from './helpers/dashboard.ts'
import { postOrder } from './helpers/fixtures.ts'
import { ASSET_TAG, DASHBOARD_ASSETS } from '../src/http/pages/dashboard/assets.ts'

const launched = await browserFor(t)
if (launched) {
  const browser: Browser = launched
  const s = await startServer({ RATE_LIMIT_PER_MINUTE: '100000' })
  t.teardown(() => s.close())
  const demo = s.seed()
  const owner = demo.owner.token
  const store = demo.store.id
  const firstItem = () => availableItem(s.app.svc.db, store)

  /** A signed-in window on `path` that accepts confirmations; `clean()` asserts no script error, failed or outside request. */
  async function open(t: Test, path: string): Promise<DashboardWindow> {
    const w = await dashboardWindow(t, browser, s.site)
    w.page.on('dialog', (d) => void d.accept())
    await signIn(w.page, s.site, demo.owner, path)
    return w
  }

  t.test('the view modules: served long-cached, each importing its siblings by the page\'s content tag', async (t) => {
    const names = Object.keys(DASHBOARD_ASSETS).filter((n) => n.endsWith('.js'))
    t.ok(names.length > 1, 'the script is split into modules')
    for (const name of names) {
      const r = await fetch(`${s.site}/dashboard/assets/${name}?v=${ASSET_TAG}`)
      t.equal(r.status, 200, name)
      t.match(r.headers.get('cache-control'), /immutable/, `${name}: cached for good`)
      const code = await r.text()
      const imports = [...code.matchAll(/from '([^']+)'/g)].map((m) => m[1]!)
      for (const spec of imports) {
        t.match(spec, new RegExp(`^\\./[\\w-]+\\.js\\?v=${ASSET_TAG}$`), `${name} imports ${spec} by the same tag (a release never mixes cached and new modules)`)
        t.ok(names.includes(spec.slice(2).split('?')[0]!), `${spec} is served`)
      }
      t.notMatch(code.replaceAll('http://www.w3.org/2000/svg', ''), /https?:\/\//, `${name}: no outside address`)
      t.notMatch(code, /\.style\b|innerHTML/, `${name}: no inline styles, no HTML from strings`)
    }
  })

  t.test('a shift around the day\'s payments: float, a partial cash payment then the rest, a refund, close over/short', async (t) => {
    const { page, clean } = await open(t, `/dashboard/shifts?store=${store}`)

    // Open the main register's shift with a float of 100.
    const form = page.locator('#shift-open')
    await form.getByLabel('Opening float').fill('100.00')
    await form.getByLabel('Register').fill('main')
    await form.getByRole('button', { name: 'Open shift' }).click()
    const shift = page.locator('[data-open-shift]')
    await shift.waitFor()
    const shiftId = Number(await shift.getAttribute('data-open-shift'))
    t.match(await shift.textContent(), /register main[\s\S]*Float\$100\.00/, 'the open shift with its float')
    t.match((await s.req('GET', `/restaurants/${store}/shifts/${shiftId}`, { token: owner })).body, { status: 'open', register: 'main', totals: { opening_float: 100, expected_cash: 100 } }, 'opened through the API')
    await axeCheck(t, page, 'shifts (open)')

    // An order of two units; its detail on the board.
    const placed = await postOrder(s, owner, store, { type: 'takeaway', customer_name: 'Pay Test', items: [{ item_id: firstItem(), quantity: 2 }] })
    t.equal(placed.status, 200)
    const order = placed.body as { id: number; total: number }
    const path = `/restaurants/${store}/orders/${order.id}`
    await page.getByRole('link', { name: 'Orders' }).click()
    await page.waitForSelector(READY)
    await page.locator(`[data-order-id="${order.id}"]`).getByRole('button', { name: /Details/ }).click()
    const panel = page.locator('dialog[open] #payments')
    await panel.waitFor()
    const balance = panel.locator('#balance')
    t.equal(await balance.getAttribute('data-balance-due'), order.total.toFixed(2), 'all of it is due')
    t.equal(await panel.getByLabel('Amount', { exact: true }).inputValue(), order.total.toFixed(2), 'the form offers the balance')

    // Split evenly in two: the parts add up to the balance.
    await panel.getByLabel('People').fill('2')
    await panel.getByRole('button', { name: 'Split evenly' }).click()
    const parts = panel.locator('[data-part]')
    await parts.first().waitFor()
    t.equal(await parts.count(), 2, 'two parts')
    const partText = await parts.allTextContents()
    const partSum = partText.reduce((sum, p) => sum + Math.round(Number(/([\d.]+)$/.exec(p)![1]) * 100), 0)
    t.equal(partSum, Math.round(order.total * 100), 'the parts add up to the balance')

    // A partial cash payment of 5.00: still not paid.
    await panel.getByLabel('Amount', { exact: true }).fill('5.00')
    await panel.locator('#pay-method').selectOption('cash')
    await panel.getByRole('button', { name: 'Take payment' }).click()
    const due = (order.total - 5).toFixed(2)
    await page.locator(`dialog[open] #balance[data-balance-due="${due}"]`).waitFor()
    t.equal(await page.locator('dialog[open] #balance').getAttribute('data-paid'), '0', 'partly paid: not paid yet')
    t.match((await s.req('GET', path, { token: owner })).body, { is_paid: false }, 'the API agrees')

    // The rest by card with a tip: paid.
    const rest = page.locator('dialog[open] #payments')
    t.equal(await rest.getByLabel('Amount', { exact: true }).inputValue(), due, 'the form offers what is left')
    await rest.locator('#pay-method').selectOption('card')
    await rest.getByLabel('Tip', { exact: true }).fill('1.00')
    await rest.getByRole('button', { name: 'Take payment' }).click()
    await page.locator('dialog[open] #balance[data-paid="1"]').waitFor()
    t.match(await page.locator('dialog[open] #order-paid').textContent(), /paid$/, 'the order detail says paid')
    t.equal(await page.locator('dialog[open] #payments [data-payment-id]').count(), 2, 'two payments listed')
    const paid = (await s.req('GET', `${path}/payments`, { token: owner })).body
    t.match(paid.balance, { is_paid: true, balance_due: 0, tips: 1 }, 'paid through the API, the tip on top')
    t.match((await s.req('GET', path, { token: owner })).body, { is_paid: true }, 'the order is paid')
    await axeCheck(t, page, 'order detail with payments')

    // A refund of 2.00 (nothing is chosen until the owner chooses: lines, or here an amount).
    const refund = page.locator('dialog[open] #refund')
    t.equal(await refund.locator('#refund-total').textContent(), 'Nothing chosen to refund', 'the refund starts with nothing chosen')
    await refund.getByLabel('Or an amount').fill('2.00')
    await refund.getByLabel('Reason').fill('cold fries')
    await refund.getByRole('button', { name: 'Refund' }).click()
    await page.locator('dialog[open] [data-refund-id]').waitFor()
    t.match(await page.locator('dialog[open] [data-refund-id]').textContent(), /\$2\.00[\s\S]*cold fries/, 'the refund is listed')
    const refunds = (await s.req('GET', `${path}/refunds`, { token: owner })).body
    t.match(refunds.data ?? refunds, [{ amount: 2, reason: 'cold fries' }], 'refunded through the API')
    await page.locator('dialog[open]').getByRole('button', { name: 'Close' }).click()

    // Back to the shift: the cash taken is there; count 1.50 less than expected.
    await page.getByRole('link', { name: 'Shifts' }).click()
    await page.waitForSelector(READY)
    const totals = (await s.req('GET', `/restaurants/${store}/shifts/${shiftId}`, { token: owner })).body.totals as { cash_taken: number; expected_cash: number }
    t.equal(totals.cash_taken, 5, 'the cash payment counts toward the open shift')
    t.equal(await page.locator('[data-open-shift] [data-figure="cash_taken"] b').textContent(), '$5.00', 'shown as cash taken, in the store\'s currency')
    t.equal(await page.locator('[data-open-shift] [data-figure="expected_cash"] b').textContent(), `$${totals.expected_cash.toFixed(2)}`, 'and the expected cash')
    await page.locator('[data-open-shift]').getByLabel('Counted cash').fill((totals.expected_cash - 1.5).toFixed(2))
    await page.locator('[data-open-shift]').getByRole('button', { name: 'Close shift' }).click()
    const result = page.locator('[data-closed-shift] [data-over-short]')
    await result.waitFor()
    t.equal(await result.getAttribute('data-over-short'), '-1.50')
    t.match(await result.textContent(), 'Over/short: -$1.50 short', 'short by 1.50, in words')
    t.match((await s.req('GET', `/restaurants/${store}/shifts/${shiftId}`, { token: owner })).body, { status: 'closed', totals: { over_short: -1.5 } }, 'closed through the API')
    t.match(await page.locator(`tr[data-shift-id="${shiftId}"]`).textContent(), /main[\s\S]*-\$1\.50 short/, 'in the history')
    t.equal(await page.locator('[data-open-shift]').count(), 0, 'no open shift left')
    await axeCheck(t, page, 'shifts (closed)')
    clean()
  })

  t.test('reservations: add a table, book a free slot, see it on its day, cancel it', async (t) => {
    const { page, clean } = await open(t, `/dashboard/reservations?store=${store}`)
    const tables = page.locator('#table-add')
    await tables.getByLabel('Table name').fill('Window 1')
    await tables.getByLabel('Seats').fill('4')
    await tables.getByRole('button', { name: 'Add table' }).click()
    await page.locator('#tables tr[data-table-id]', { hasText: 'Window 1' }).waitFor()
    t.match((await s.req('GET', `/restaurants/${store}/tables`, { token: owner })).body, [{ name: 'Window 1', capacity: 4 }], 'the table, through the API')

    // Two days ahead (the store's day), a free slot from the API fills the time.
    const day = new Date(Date.now() + 2 * 86_400_000).toISOString().slice(0, 10)
    const form = page.locator('#booking')
    await form.getByLabel('Name').fill('Rita Booker')
    await form.getByLabel('Phone').fill('+1 555 000 1234')
    await form.getByLabel('Party size').fill('3')
    await form.getByLabel('Date').fill(day)
    await form.getByRole('button', { name: 'Check availability' }).click()
    const slot = page.locator('#slots [data-slot]').nth(4)
    await slot.waitFor()
    const startsAt = (await slot.getAttribute('data-slot'))!
    await slot.click()
    t.equal(await form.getByLabel('Time').inputValue(), startsAt.slice(11, 16), 'the slot\'s time, in the store\'s zone, fills the form')
    await axeCheck(t, page, 'reservations (free slots shown)')
    await form.getByRole('button', { name: 'Book', exact: true }).click()
    const row = page.locator('#reservation-list tr[data-reservation-id]', { hasText: 'Rita Booker' })
    await row.waitFor()
    t.match(await row.textContent(), new RegExp(`^${startsAt.slice(11, 16)}Rita Booker3Window 1`), 'on its day, at its time, at the table')
    const listed = (await s.req('GET', `/restaurants/${store}/reservations?from=${day}&to=${day}`, { token: owner })).body.data as Array<{ id: number; name: string; starts_at: string; status: string; party_size: number }>
    const booked = listed.find((r) => r.name === 'Rita Booker')!
    t.match(booked, { party_size: 3, status: 'booked' }, 'booked through the API')
    t.equal(Date.parse(booked.starts_at), Date.parse(startsAt), 'at the slot chosen')

    await row.getByRole('button', { name: /^Cancel/ }).click()
    await page.locator(`tr[data-reservation-id="${booked.id}"][data-status="cancelled"]`).waitFor()
    t.equal((await s.req('GET', `/restaurants/${store}/reservations/${booked.id}`, { token: owner })).body.status, 'cancelled', 'cancelled through the API')
    t.equal(await page.locator(`tr[data-reservation-id="${booked.id}"] button`).count(), 0, 'a cancelled booking has no actions left')
    await axeCheck(t, page, 'reservations')
    clean()
  })

  t.test('guests: the segments with counts as filters, a guest found in hers and by search', async (t) => {
    const placed = await postOrder(s, owner, store, { type: 'takeaway', customer_name: 'Gina Guestworthy', phone: '+15550009876', items: [{ item_id: firstItem(), quantity: 1 }] })
    t.equal(placed.status, 200)
    const found = (await s.req('GET', `/restaurants/${store}/guests?search=Guestworthy`, { token: owner })).body.data as Array<{ id: string; segments: string[] }>
    t.equal(found.length, 1, 'one guest through the API')
    t.ok(found[0]!.segments.includes('new'), 'a first visit today: in the new segment')
    const counts = (await s.req('GET', `/restaurants/${store}/guests/segments`, { token: owner })).body as { guests: number; segments: Array<{ key: string; count: number }> }

    const { page, clean } = await open(t, `/dashboard/guests?store=${store}`)
    const chip = page.locator('#segments [data-segment="new"]')
    t.match(await chip.textContent(), new RegExp(`New${counts.segments.find((x) => x.key === 'new')!.count}$`), 'the segment with its count')
    t.match(await page.locator('#segments [data-segment=""]').textContent(), new RegExp(`All guests${counts.guests}$`), 'and all guests')
    await chip.click()
    await page.locator('#segments [data-segment="new"][aria-pressed="true"]').waitFor()
    await page.locator('#guest-count', { hasText: 'in New' }).waitFor()
    t.ok(await page.locator(`tr[data-guest-id="${found[0]!.id}"]`).count(), 'the guest is listed in the segment')
    const lapsed = counts.segments.find((x) => x.key === 'lapsed')!
    await page.locator('#segments [data-segment="lapsed"]').click()
    await page.locator('#guest-count', { hasText: 'in Lapsed' }).waitFor()
    t.equal(await page.locator('#guest-list tr[data-guest-id]').count(), Math.min(lapsed.count, 30), 'another segment lists its own guests')
    t.equal(await page.locator(`tr[data-guest-id="${found[0]!.id}"]`).count(), 0, 'not her')

    await page.locator('#segments [data-segment=""]').click()
    await page.getByLabel('Search name, phone or email').fill('Guestworthy')
    await page.getByRole('button', { name: 'Search' }).click()
    await page.locator('#guest-count', { hasText: 'matching' }).waitFor()
    const rows = page.locator('#guest-list tr[data-guest-id]')
    t.equal(await rows.count(), 1, 'the search finds her alone')
    t.match(await rows.first().textContent(), /Gina Guestworthy\+15550009876[\s\S]*New/, 'with her phone and segment')
    await axeCheck(t, page, 'guests')
    clean()
  })
}
