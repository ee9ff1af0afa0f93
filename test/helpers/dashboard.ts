/**
 * The owner dashboard in a browser window (test/dashboard-*-browser.test.ts): a window that records
 * what must never happen on a page, and the sign-in through /login that every such test starts with.
 */
import type { Browser, BrowserContext, Locator, Page } from 'playwright-core'
import type { Test } from 'tap'
import type { Db } from '../../src/storage/db.ts'
import { browserAndServer } from './browser.ts'

/** The script sets `data-ready` once the page is drawn (a selector: string predicates would need eval, which the CSP refuses). */
export const READY = 'body[data-ready="1"]'

export const DESKTOP = { width: 1280, height: 800 }

export interface DashboardWindow {
  ctx: BrowserContext
  page: Page
  /** Asserts no script error, failed request, CSP violation or outside request so far. */
  clean: () => void
  /** A refusal the test provokes on purpose (e.g. a 409 shown on the page): not a problem. */
  expect: (status: number, url: string) => void
}

/** A new browser context on `site` (closed when `t` ends) whose page records script errors, CSP reports, failed and outside requests. */
export async function dashboardWindow(t: Test, browser: Browser, site: string, viewport = DESKTOP): Promise<DashboardWindow> {
  const ctx = await browser.newContext({ viewport })
  const page = await ctx.newPage()
  t.teardown(() => ctx.close())
  const problems: string[] = []
  const expected = new Set<string>()
  const wanted = (status: number, url: string) => expected.has(`${status} ${url}`)
  page.on('pageerror', (e) => problems.push(String(e)))
  // The browser's own favicon probe after the sign-in pages (which name no icon) is not the dashboard's doing.
  page.on('console', (m) => {
    if (m.type() !== 'error' || m.location().url.endsWith('/favicon.ico')) return
    // Chromium logs every 4xx fetch as "Failed to load resource … status of N"; an expected one is not a problem.
    const status = Number(/status of (\d{3})/.exec(m.text())?.[1])
    if (!wanted(status, m.location().url)) problems.push(`${m.text()} ${m.location().url}`)
  })
  page.on('response', (r) => { if (r.status() >= 400 && !wanted(r.status(), r.url())) problems.push(`${r.status()} ${r.url()}`) })
  page.on('request', (r) => { if (!r.url().startsWith(site) && !r.url().startsWith(site.replace('http', 'ws'))) problems.push(`outside request ${r.url()}`) })
  return {
    ctx,
    page,
    clean: () => t.same(problems, [], 'no script errors, failed requests, CSP violations or outside requests'),
    expect: (status, url) => expected.add(`${status} ${url}`),
  }
}

/** Signed out, the dashboard sends the browser to /login; the credentials bring it back to `path`, drawn. */
export async function signIn(page: Page, site: string, who: { email: string; password: string }, path = '/dashboard/orders'): Promise<void> {
  await page.goto(`${site}${path}`)
  await page.waitForURL(/\/login\?next=/)
  await page.locator('input[type=email]').fill(who.email)
  await page.locator('input[type=password]').fill(who.password)
  await page.locator('form button[type=submit], form input[type=submit]').first().click()
  await page.waitForURL((u) => u.pathname === path.split('?')[0])
  await page.waitForSelector(READY)
}

/** An available item of a store's menu (the lowest id). */
export function firstItem(db: Db, storeId: number): number {
  return db.prepare('SELECT id FROM menu_items WHERE store_id = ? AND is_sold_out = 0 ORDER BY id LIMIT 1').pluck().get(storeId) as number
}

/**
 * A signed-in dashboard page on `path` in its own context (closed when `t` ends) for the form tests
 * (test/dashboard-forms*-browser.test.ts): confirmations accepted; `clean()` asserts no script error
 * or CSP violation (the 4xx answers of refusals provoked on purpose are expected there).
 */
export async function formsPage(t: Test, browser: Browser, site: string, who: { email: string; password: string }, path: string): Promise<{ page: Page; clean: () => void }> {
  const ctx = await browser.newContext({ viewport: { width: 1280, height: 900 } })
  t.teardown(() => ctx.close())
  const page = await ctx.newPage()
  page.on('dialog', (d) => void d.accept())
  const problems: string[] = []
  page.on('pageerror', (e) => problems.push(String(e)))
  page.on('console', (m) => { if (m.type() === 'error' && !/status of 4\d\d/.test(m.text())) problems.push(m.text()) })
  await signIn(page, site, who, path)
  return { page, clean: () => t.same(problems, [], 'no script errors or CSP violations') }
}

/**
 * Clicks `button` and waits for the dashboard's answer: the alert line (`#problem`) when `expect` is
 * 'refused', the notice line (`#notice`) when 'accepted'; returns its text.
 */
export async function answerTo(page: Page, button: Locator, expect: 'refused' | 'accepted'): Promise<string> {
  await page.evaluate("document.getElementById('problem').textContent = ''; document.getElementById('notice').textContent = ''")
  await button.click()
  const line = page.locator(expect === 'refused' ? '#problem' : '#notice')
  await line.filter({ hasText: /\S/ }).waitFor()
  return (await line.textContent()) ?? ''
}

/**
 * The world of the dashboard form tests: Chromium, a server with its demo account, the owner API
 * as the demo owner (`api`), a signed-in page on a path (`open`) and a count from the database
 * (`count`, for what the page cannot show). Null when Chromium is missing.
 */
export async function dashboardForms(t: Test, env: Record<string, string> = {}) {
  const world = await browserAndServer(t, env)
  if (!world) return null
  const { browser, s } = world
  const db = s.app.svc.db
  const demo = s.seed()
  return {
    s, db, demo,
    store: demo.store.id,
    api: (method: string, path: string, body?: unknown) => s.req(method, path, { token: demo.owner.token, body }),
    open: (t: Test, path: string) => formsPage(t, browser, s.site, demo.owner, path),
    count: (sql: string, ...args: unknown[]) => db.prepare(sql).pluck().get(...args) as number,
  }
}
