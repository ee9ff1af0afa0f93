/**
 * The site root (issue 32 item 5): `GET /` answers a page for a person, pointing to the dashboard,
 * the docs and the status, each of which answers; programs find the discovery index at
 * `{base_url}` (api-v1 §4.1) and, from the root, in its `Link` header (RFC 8631).
 */
import t from 'tap'
import { startServer } from './helpers/server.ts'

const s = await startServer({ RATE_LIMIT_PER_MINUTE: '100000' })
t.teardown(() => s.close())

t.test('GET / is a page that points to the dashboard, the docs and the status', async (t) => {
  const r = await fetch(`${s.site}/`)
  t.equal(r.status, 200)
  t.match(r.headers.get('content-type'), /^text\/html/)
  const csp = r.headers.get('content-security-policy') ?? ''
  t.match(csp, /default-src 'none'/)
  t.notMatch(csp, /unsafe-inline|unsafe-eval/)
  const html = await r.text()
  t.notMatch(html, /<script|style=/, 'no script, no inline style')
  const links = new Set([...html.matchAll(/href="([^"]+)"/g)].map((m) => m[1]!))
  for (const href of ['/dashboard', '/docs', '/readyz']) t.ok(links.has(href), `links ${href}`)
  t.ok(links.has(s.base), 'and names the discovery index for programs')
  for (const href of links) {
    const target = await fetch(new URL(href, s.site), { redirect: 'manual' })
    t.ok([200, 303].includes(target.status), `${href} answers (${target.status})`)
    await target.arrayBuffer()
  }
  t.match(r.headers.get('link'), new RegExp(`<${s.base}/openapi\\.json>; rel="service-desc".*</docs>; rel="service-doc".*</readyz>; rel="status"`))
  const head = await fetch(`${s.site}/`, { method: 'HEAD' })
  t.equal(head.status, 200, 'HEAD too')
})

t.test('the discovery index is still JSON at {base_url}', async (t) => {
  for (const path of ['', '/']) {
    const r = await s.req('GET', path)
    t.equal(r.status, 200)
    t.match(r.body, { name: 'Dispatch API', version: 'v1', base_url: s.base, docs: `${s.site}/docs` }, `GET /api/v1${path}`)
  }
})
