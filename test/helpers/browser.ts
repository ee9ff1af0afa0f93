/**
 * Headless Chromium for page tests: Debian's `chromium` driven by playwright-core (never a
 * downloaded browser; DEPENDENCIES.md "browser tests"). `null` when it is not installed.
 */
import { existsSync, readFileSync } from 'node:fs'
import { chromium, type Browser, type Page } from 'playwright-core'
import type { Test } from 'tap'
import { startServer, type TestServer } from './server.ts'

export const CHROMIUM = '/usr/bin/chromium'

export async function launchChromium(): Promise<Browser | null> {
  if (!existsSync(CHROMIUM)) return null
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  })
}

/**
 * The browser of a page test file, closed when `t` ends; when Chromium is not installed, a failed
 * assertion saying how to install it, and null (the file then runs nothing else).
 */
export async function browserFor(t: Test): Promise<Browser | null> {
  const browser = await launchChromium()
  if (!browser) {
    t.fail(`${CHROMIUM} is missing: apt-get install -y chromium (.ci/run does this)`)
    return null
  }
  t.teardown(() => browser.close())
  return browser
}

const AXE = readFileSync(new URL('../../node_modules/axe-core/axe.min.js', import.meta.url), 'utf8')

/**
 * axe-core on the page as it is now: asserts no serious or critical accessibility violation (each
 * reported with up to three of its elements). The page's CSP must let the injected script run
 * (a context with `bypassCSP`, or a page with no script-src restriction).
 */
export async function axeCheck(t: Test, page: Page, label: string): Promise<void> {
  await page.evaluate(AXE)
  const result = await page.evaluate(`axe.run(document, { resultTypes: ['violations'] }).then((r) =>
    r.violations.map((v) => ({ id: v.id, impact: v.impact, nodes: v.nodes.map((n) => n.target.join(' ')).slice(0, 3) })))`) as Array<{ id: string; impact: string; nodes: string[] }>
  t.same(result.filter((v) => v.impact === 'serious' || v.impact === 'critical'), [], `${label}: no serious or critical accessibility violations`)
}

/** A page in a fresh context (closed when `t` ends) that lets the injected axe script past the page's CSP. */
export async function axePage(t: Test, browser: Browser, viewport = { width: 1280, height: 800 }): Promise<Page> {
  const ctx = await browser.newContext({ bypassCSP: true, viewport })
  t.teardown(() => ctx.close())
  return ctx.newPage()
}

/** Records every request a page makes and every error it reports (uncaught, or console.error). */
export function watchPage(page: Page): { requests: string[]; problems: string[] } {
  const seen = { requests: [] as string[], problems: [] as string[] }
  page.on('request', (r) => seen.requests.push(r.url()))
  page.on('pageerror', (e) => seen.problems.push(String(e)))
  page.on('console', (m) => { if (m.type() === 'error') seen.problems.push(m.text()) })
  return seen
}

/**
 * Chromium and a fresh server with a generous request budget (a page test makes many requests),
 * both closed when `t` ends; null when Chromium is missing (browserFor has then failed `t`).
 */
export async function browserAndServer(t: Test, env: Record<string, string> = {}): Promise<{ browser: Browser; s: TestServer } | null> {
  const browser = await browserFor(t)
  if (!browser) return null
  const s = await startServer({ RATE_LIMIT_PER_MINUTE: '100000', ...env })
  t.teardown(() => s.close())
  return { browser, s }
}

/** Sign a customer in on a store website (`storeUrl` = `{site}/s/{slug}`) with the sign-in page's password form, as a person does. */
export async function websiteSignIn(page: Page, storeUrl: string, customer: { email: string; password: string }): Promise<void> {
  await page.goto(`${storeUrl}/account/login`)
  await page.getByLabel('Email', { exact: true }).fill(customer.email)
  await page.getByLabel('Password', { exact: true }).fill(customer.password)
  await page.getByRole('button', { name: 'Sign in' }).last().click()
  await page.waitForURL(/\/checkout$/)
}
