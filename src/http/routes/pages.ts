/** Small server-rendered pages: the API docs index and each store's public page (its `url`). */
import { Reply, route, type Route } from '../route.ts'
import { fullPath } from '../server.ts'
import { menuView } from '../../storage/stores.ts'
import { verticalOf } from '../../domain/verticals.ts'

const HTML = 'text/html; charset=utf-8'

const esc = (s: unknown): string =>
  String(s ?? '').replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!)

const page = (title: string, body: string) => `<!doctype html><html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width,initial-scale=1"><title>${esc(title)}</title>
<style>body{font:15px/1.5 system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;color:#222}
h1{margin-bottom:.2rem}table{border-collapse:collapse;width:100%;margin:.5rem 0 1.5rem}td,th{text-align:left;padding:.25rem .5rem;border-bottom:1px solid #eee}
code{background:#f4f4f4;padding:0 .25rem;border-radius:3px}.muted{color:#777}.price{text-align:right;white-space:nowrap}</style></head>
<body>${body}</body></html>`

export function pageRoutes(all: () => readonly Route[]) {
  return [
    route({
      method: 'GET', path: '/docs', site: true, tag: 'Discovery', summary: 'Human-readable API index', auth: 'none', produces: HTML,
      handler: ({ svc }) => {
        const byTag = new Map<string, Route[]>()
        for (const r of all()) byTag.set(r.tag, [...(byTag.get(r.tag) ?? []), r])
        const sections = [...byTag].sort(([a], [b]) => a.localeCompare(b)).map(([tag, rs]) =>
          `<h2>${esc(tag)}</h2><table>${rs.map((r) => `<tr><td><code>${r.method}</code></td><td><code>${esc(r.site ? r.path : fullPath(r))}</code></td><td>${esc(r.summary)}</td><td class="muted">${esc(r.auth)}${r.capability ? ` · ${esc(r.capability)}` : ''}</td></tr>`).join('')}</table>`).join('')
        return page('Dispatch API', `<h1>Dispatch API v1</h1><p class="muted">Base URL <code>${esc(svc.config.baseUrl)}</code> ·
          <a href="${esc(svc.config.baseUrl)}/openapi.json">OpenAPI 3.1</a> · errors are <code>{message, code, errors?}</code></p>${sections}`)
      },
    }),
    route({
      method: 'GET', path: '/s/{slug}', site: true, tag: 'Public', summary: 'A store\'s public page (its `url`)', auth: 'none', produces: HTML,
      // A browser follows this link: an unknown store gets a page saying so, not the JSON envelope.
      pageErrors: { 404: 'No store has this address: a page saying so.', 403: 'The store\'s account is suspended: a page saying the store is unavailable.' },
      handler: ({ svc, params }) => {
        const store = svc.stores.bySlug(params.slug ?? '')
        if (!store) return new Reply(404, page('Store not found', '<h1>Store not found</h1><p>No store has this address. Check the link you were given.</p>'), {}, HTML)
        // A suspended account's store (docs/billing.md "Suspension"): its data is kept, the page says it is unavailable.
        if (svc.accounts.suspended(store.owner_id)) return new Reply(403, page('Store unavailable', '<h1>This store is unavailable</h1><p>This store is not taking visitors or orders at the moment. Please try again later.</p>'), {}, HTML)
        const menu = menuView(svc.stores.menu(store.id), verticalOf(store.store_type), false)
        const money = (n: number) => `${n.toFixed(2)} ${esc(store.currency)}`
        const body = menu.filter((c) => c.items.length > 0).map((c) =>
          `<h2>${esc(c.name)}</h2><table>${c.items.map((i) => `<tr><td><strong>${esc(i.name)}</strong>${i.description ? `<br><span class="muted">${esc(i.description)}</span>` : ''}</td><td class="price">${money(i.price)}</td></tr>`).join('')}</table>`).join('')
        return page(store.title, `<h1>${esc(store.title)}</h1><p class="muted">${esc(verticalOf(store.store_type).label)}</p>${body || '<p>The menu is empty.</p>'}`)
      },
    }),
  ]
}
