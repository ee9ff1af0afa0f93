/**
 * `GET /`, the site root (issue 32 item 5): a page for a person who typed the server's address,
 * pointing to the owners' dashboard, the docs and the status. Machines start at `{base_url}`, the
 * discovery index (api-v1 §4.1); the answer's `Link` header names the machine addresses too
 * (RFC 8631). Styled by the docs' stylesheet, under the docs' CSP: no inline script or style.
 */
import { esc } from '../html.ts'
import { assetUrl } from './docs-assets.ts'
import { DOCS_HEADERS } from './docs-page.ts'

/** RFC 8631 relations: the OpenAPI document, the docs for people, the readiness check. */
export const homeHeaders = (baseUrl: string): Record<string, string> => ({
  ...DOCS_HEADERS,
  Link: `<${baseUrl}/openapi.json>; rel="service-desc", </docs>; rel="service-doc", </readyz>; rel="status"`,
})

export function homePage(baseUrl: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width,initial-scale=1"><title>Dispatch</title>
<link rel="icon" href="${assetUrl('favicon-32x32.png')}"><link rel="stylesheet" href="${assetUrl('docs.css')}"></head>
<body><header class="top"><strong>Dispatch</strong><a href="/dashboard">Dashboard</a><a href="/docs">Docs</a><a href="/readyz">Status</a></header>
<main><article class="guide"><h1>Dispatch</h1>
<p>This server runs ordering and dispatch for its stores: the owners' dashboard, the API, live tracking, kitchen screens and MCP servers.</p>
<ul>
<li><a href="/dashboard"><strong>Dashboard</strong></a>: store owners manage orders, menus, drivers and staff (<a href="/login">sign in</a>).</li>
<li><a href="/docs"><strong>Docs</strong></a>: the API reference and the guides. Programs start at the index <a href="${esc(baseUrl)}"><code>${esc(baseUrl)}</code></a>.</li>
<li><a href="/readyz"><strong>Status</strong></a>: whether this server is ready to serve (database, migrations); <a href="/healthz"><code>/healthz</code></a> says whether it is up.</li>
</ul></article></main></body></html>`
}
