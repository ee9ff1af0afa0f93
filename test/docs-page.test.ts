/**
 * `/docs` is a real API reference (issue 20 item 7): Swagger UI served by this server renders the
 * live OpenAPI document in Chromium with nothing fetched from another host and no CSP violation;
 * the guides under docs/ render; static files carry their types and cache headers; nothing
 * outside the listed files can be reached.
 */
import t from 'tap'
import { startServer } from './helpers/server.ts'
import { browserFor } from './helpers/browser.ts'

const s = await startServer({ RATE_LIMIT_PER_MINUTE: '100000' })
t.teardown(() => s.close())

t.test('the pages and their files over HTTP', async (t) => {
  const docs = await fetch(`${s.site}/docs`)
  t.equal(docs.status, 200)
  t.match(docs.headers.get('content-type'), /^text\/html/)
  const csp = docs.headers.get('content-security-policy') ?? ''
  t.match(csp, /default-src 'none'/)
  t.match(csp, /script-src 'self'(;|$)/, 'scripts from this origin only, no inline script')
  t.notMatch(csp, /unsafe-inline|unsafe-eval|https?:/, 'no inline, no eval, no other host')
  const html = await docs.text()
  t.notMatch(html, /<script>|<script [^>]*>[^<]/, 'no inline script in the page')
  const absolute = [...html.matchAll(/\s(?:src|href)="(https?:[^"]+)"/g)].map((m) => m[1]!)
  t.same(absolute.filter((u) => !u.startsWith(`${s.site}/`)), [], 'no link or asset on another host')
  const assets = [...html.matchAll(/(?:src|href)="(\/docs\/assets\/[^"]+)"/g)].map((m) => m[1]!.replace(/&amp;/g, '&'))
  t.ok(assets.some((a) => a.startsWith('/docs/assets/swagger-ui-bundle.js?v=')), 'Swagger UI from npm, addressed with a content hash')
  for (const a of assets) {
    const r = await fetch(s.site + a)
    t.equal(r.status, 200, a)
    t.match(r.headers.get('content-type'), a.includes('.js') ? /^text\/javascript/ : a.includes('.css') ? /^text\/css/ : /^image\/png/, `${a} content type`)
    t.match(r.headers.get('cache-control'), /max-age=31536000, immutable/, `${a} cached`)
    t.equal(r.headers.get('x-content-type-options'), 'nosniff')
    await r.arrayBuffer()
  }
  // Only listed names: a path never reaches the file system.
  for (const bad of ['/docs/assets/package.json', '/docs/assets/..%2Fpackage.json', '/docs/assets/%2e%2e%2f%2e%2e%2fpackage.json', '/docs/assets/index.html',
    '/docs/guides/..%2F..%2Fpackage.json', '/docs/guides/..%2FREADME', '/docs/guides/.env', '/docs/guides/README', '/docs/guides/no-such-guide', '/docs/guides/screenshots/..%2F..%2Fpackage.json']) {
    const r = await fetch(s.site + bad)
    t.equal(r.status, 404, `${bad}: 404`)
    t.notMatch(await r.text(), /"dependencies"|dispatch-server/, `${bad}: nothing of the file leaks`)
  }
  const guide = await fetch(`${s.site}/docs/guides/webhooks`)
  t.equal(guide.status, 200)
  t.match(await guide.text(), /<h1>Webhooks<\/h1>/, 'a guide rendered from markdown')
  t.equal((await fetch(`${s.site}/docs/guides/webhooks.md`)).status, 200, 'the guides\' own `x.md` links resolve')
  const shot = await fetch(`${s.site}/docs/guides/screenshots/dashboard-orders.png`)
  t.equal(shot.status, 200, 'a screenshot a guide shows')
  t.match(shot.headers.get('content-type'), /^image\/png/)
  await shot.arrayBuffer()
  const routes = await (await fetch(`${s.site}/docs/routes`)).text()
  t.match(routes, /\/api\/v1\/restaurants\/\{id\}\/orders/, 'the plain route list is still there')
})

t.test('the reference renders in Chromium from this server alone', async (t) => {
  const browser = await browserFor(t)
  if (!browser) return
  const page = await browser.newPage()
  const origin = new URL(s.site).origin
  const foreign: string[] = []
  const problems: string[] = []
  await page.route('**/*', (route) => {
    const url = route.request().url()
    if (url.startsWith(`${origin}/`) || url.startsWith('data:')) return route.continue()
    foreign.push(url)
    return route.abort()
  })
  page.on('console', (m) => { if (m.type() === 'error') problems.push(m.text()) })
  page.on('pageerror', (e) => problems.push(String(e)))

  // The list is rendered virtually (only what is on screen): the filter and deep links reach the rest.
  await page.goto(`${s.site}/docs`)
  await page.locator('.operation-filter-input').fill('Orders')
  const summary = page.locator('.opblock-post:has(.opblock-summary-path[data-path="/restaurants/{id}/orders"]) .opblock-summary-description').first()
  await summary.waitFor({ timeout: 30_000 })
  t.match(await summary.textContent(), /order/i, 'POST /restaurants/{id}/orders is listed with its summary')
  // A deep link opens the operation: its errors and response headers are shown.
  await page.goto(`${s.site}/docs#/Orders/postRestaurantsByIdOrders`)
  await page.reload()
  const opened = page.locator('.opblock-post.is-open:has(.opblock-summary-path[data-path="/restaurants/{id}/orders"])').first()
  await opened.locator('.responses-table').first().waitFor({ timeout: 30_000 })
  const text = await opened.innerText()
  t.match(text, /422/, 'error statuses are listed')
  t.match(text, /Idempotent-Replayed/, 'response headers are listed')
  t.match(await page.locator('body').innerText(), /Webhooks/, 'the webhook events are in the reference')

  await page.goto(`${s.site}/docs/guides/realtime`)
  t.match(await page.locator('article h1').first().textContent(), /Real-time/, 'the sockets guide renders')
  t.ok(await page.locator('nav.side a[href="/docs/guides/mcp"]').count(), 'MCP servers are in the side bar')
  t.ok(await page.locator('nav.side a[href="/docs/guides/kds"]').count(), 'the kitchen display socket is in the side bar')
  t.same(foreign, [], 'no request left for another host')
  t.same(problems, [], 'no console errors (no CSP violation)')
})
