/**
 * Safer money actions on the dashboard (issue 34 item 13), walked in Chromium: a euro store's
 * amounts show its currency on the board, the order detail, the payments panel and analytics; the
 * refund form starts with nothing chosen (refunding nothing is refused by the page, nothing is
 * written), refunds by line, and says before sending what the chosen units give back — the cents
 * the API then refunds (item 13). The analytics chart says what it shows (item 14): a legend, orders
 * on the left axis, paid revenue net of refunds on its own axis on the right, and the same figures
 * as the API's summary.
 */
import t from 'tap'
import { READY, answerTo, dashboardForms } from './helpers/dashboard.ts'
import { createMenu, createStore } from './helpers/fixtures.ts'

const world = await dashboardForms(t)
if (world) {
  const { s, db, demo, api, open, count } = world

  t.test('a euro store: amounts in euros, a refund of one unit chosen by line', async (t) => {
    const store = createStore(db, demo.owner.id, { title: 'Café Euro' }).id
    const menu = createMenu(db, store)
    t.equal((await api('PUT', `/restaurants/${store}`, { currency: 'EUR' })).status, 200, 'the store takes euros')
    const placed = await api('POST', `/restaurants/${store}/orders`, { type: 'takeaway', customer_name: 'Eva', phone: '+15550107', items: [{ item_id: menu.burger.id, quantity: 2 }, { item_id: menu.fries, quantity: 1 }] })
    t.equal(placed.status, 200, placed.text.slice(0, 200))
    const order = placed.body as { id: number; total: number; items: Array<{ id: number; item_id: number }> }
    const path = `/restaurants/${store}/orders/${order.id}`
    t.equal((await api('POST', `${path}/payments`, { amount: order.total, method: 'card' })).status, 200, 'paid in full')

    const { page, clean } = await open(t, `/dashboard/orders?store=${store}`)
    const card = page.locator(`[data-order-id="${order.id}"]`)
    await card.waitFor()
    t.match(await card.locator('.head').textContent(), /€\s?\d+\.\d\d/, 'the board card: the total in euros')
    await card.getByRole('button', { name: /Details/ }).click()
    const dialog = page.locator('dialog[open]')
    await dialog.locator('#payments').waitFor()
    t.match(await dialog.locator('#order-paid').textContent(), /Total €/, 'the order detail: euros')
    t.match(await dialog.locator('#balance').textContent(), /Total €[\d.]+ · paid €/, 'the payments panel: euros')
    t.notMatch(await dialog.textContent(), /\$/, 'no dollar sign anywhere on the detail')

    // The refund form: nothing chosen.
    const refund = dialog.locator('#refund')
    const burgerLine = order.items.find((l) => l.item_id === menu.burger.id)!.id
    const units = refund.getByRole('spinbutton', { name: /Units of Burger to refund/ })
    t.equal(await units.inputValue(), '0', 'no unit chosen at first')
    t.same(await refund.getByRole('spinbutton', { name: /to refund/ }).evaluateAll((els) => els.map((e) => (e as unknown as { value: string }).value)), ['0', '0'], 'on any line')
    t.equal(await refund.locator('#refund-amount').inputValue(), '', 'and no amount')
    t.equal(await refund.locator('#refund-total').textContent(), 'Nothing chosen to refund')
    t.match(await answerTo(page, refund.getByRole('button', { name: 'Refund' }), 'refused'), /Choose the units to refund/, 'refunding nothing is refused')
    t.equal(count('SELECT COUNT(*) FROM refunds WHERE order_id = ?', order.id), 0, 'nothing refunded')

    // One burger: the page says what it gives back before sending, the API refunds exactly that.
    const before = (await api('GET', `${path}/refunds`)).body as { lines: Array<{ line_id: number; refundable_quantity: number; unit_amounts: number[] }> }
    const line = before.lines.find((l) => l.line_id === burgerLine)!
    t.equal(line.refundable_quantity, 2, 'the API: both burgers refundable')
    await units.fill('1')
    t.match(await refund.locator('#refund-total').textContent(), `Refund €${line.unit_amounts[0]!.toFixed(2)} for 1 unit(s)`, 'the sum shown as chosen')
    await refund.getByLabel('Reason').fill('burnt')
    t.match(await answerTo(page, refund.getByRole('button', { name: 'Refund' }), 'accepted'), `Refunded €${line.unit_amounts[0]!.toFixed(2)}`, 'refunded, said in euros')
    const after = (await api('GET', `${path}/refunds`)).body as { data: Array<{ amount: number; lines: unknown; reason: string }>; lines: Array<{ line_id: number; refundable_quantity: number }> }
    t.match(after.data, [{ amount: line.unit_amounts[0], lines: [{ line_id: burgerLine, quantity: 1 }], reason: 'burnt' }], 'by line through the API')
    t.equal(after.lines.find((l) => l.line_id === burgerLine)!.refundable_quantity, 1, 'one burger left to refund')
    t.match(await dialog.locator('[data-refund-id]').first().textContent(), /€/, 'the refund is listed in euros')
    t.equal(await dialog.getByRole('spinbutton', { name: /Units of Burger to refund/ }).inputValue(), '0', 'and the form is back to nothing chosen')

    // Analytics: the figures in euros.
    await page.goto(`${s.site}/dashboard/analytics?store=${store}`)
    await page.waitForSelector(READY)
    await page.locator('.kpi').first().waitFor()
    t.match(await page.locator('.kpis').textContent(), /Revenue€[\d.]+/, 'analytics: euros')
    clean()
  })

  t.test('the analytics chart: a legend, revenue on its own axis, refunds taken off paid revenue as the API does', async (t) => {
    const store = createStore(db, demo.owner.id, { title: 'Chart Shop' }).id
    const menu = createMenu(db, store)
    const order = async (quantity: number) => {
      const r = await api('POST', `/restaurants/${store}/orders`, { type: 'takeaway', customer_name: 'Cy', phone: '+15550108', items: [{ item_id: menu.fries, quantity }] })
      t.equal(r.status, 200)
      return r.body as { id: number; total: number }
    }
    const paid = await order(4)
    await order(1)
    t.equal((await api('POST', `/restaurants/${store}/orders/${paid.id}/payments`, { amount: paid.total, method: 'card' })).status, 200)
    t.equal((await api('POST', `/restaurants/${store}/orders/${paid.id}/refunds`, { amount: 2 })).status, 200)
    const { page, clean } = await open(t, `/dashboard/analytics?store=${store}`)
    await page.locator('svg.chart').waitFor()
    const today = new Date().toISOString().slice(0, 10)
    const from = new Date(Date.now() - 29 * 86_400_000).toISOString().slice(0, 10)
    const summary = (await api('GET', `/restaurants/${store}/analytics?from=${from}&to=${today}`)).body.revenue as { net: number; refunded: number; paid: number }
    t.equal(summary.net, paid.total - 2, 'the API: paid minus the refund')

    t.same(await page.locator('.legend li').allTextContents(), ['Orders per day (bars, left axis)', 'Paid revenue net of refunds per day (line, right axis)'], 'a legend names both series and their axes')
    t.match(await page.locator('[data-kpi="net"]').textContent(), `Paid, net of refunds$${summary.net.toFixed(2)}`, 'the paid figure is net of refunds, as the API\'s')
    t.match(await page.locator('[data-kpi="refunded"]').textContent(), `Refunded$${summary.refunded.toFixed(2)}`, 'and the refunds are shown')
    t.same(await page.locator('svg.chart .orders-tick').allTextContents(), ['0', '1', '2'], 'orders on the left axis: counts (two orders today)')
    const revenueTicks = await page.locator('svg.chart .revenue-tick').allTextContents()
    t.equal(revenueTicks.at(-1), `$${summary.net.toFixed(2)}`, 'revenue on its own axis, up to today\'s net in the store\'s currency')
    // The line's point for today sits at the top of the revenue axis: it draws net, not gross.
    const [lastPoint, topTick] = await page.evaluate(`[document.querySelector('svg.chart .net-line').getAttribute('points').trim().split(' ').at(-1).split(',')[1], [...document.querySelectorAll('svg.chart .revenue-tick')].at(-1).getAttribute('y')]`) as [string, string]
    t.equal(Number(lastPoint), Number(topTick), 'today\'s point is at the net figure')
    t.equal(await page.locator('svg.chart rect.bar').count(), 30, 'a bar per day')
    clean()
  })
}
