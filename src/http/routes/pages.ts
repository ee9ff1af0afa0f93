/** Small server-rendered pages: the API docs index (a store's website: routes/website.ts). */
import { route, type Route } from '../route.ts'
import { fullPath } from '../server.ts'
import { esc } from '../pages/html.ts'

const HTML = 'text/html; charset=utf-8'


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
  ]
}
