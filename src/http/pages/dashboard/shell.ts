/**
 * The owner dashboard's page shell (docs/dashboard.md): one small HTML document per page, the same
 * for every page but for its name. What a page shows is drawn by the dashboard script
 * (`{site_url}/dashboard/assets/app.js`) from the owner API, with a short-lived token of the session
 * (docs/dashboard.md "Signing in"); nothing is loaded from anywhere but this server.
 */
import { csrfField, csrfMeta } from '../../session-gate.ts'
import { esc } from '../../html.ts'

export interface NavPage { path: string; title: string }

/** The navigation, in order; `apps` is the slot the app platform (api-v1 §4.10) fills. */
export const DASHBOARD_PAGES: readonly NavPage[] = [
  { path: 'orders', title: 'Orders' },
  { path: 'stores', title: 'Stores' },
  { path: 'dispatch', title: 'Dispatch' },
  { path: 'menu', title: 'Menu' },
  // The store's website: its theme and section settings, with a live preview (issue 34 item 12).
  { path: 'website', title: 'Website' },
  // Store operations (issue 17; docs/operations.md): the day's bookings, the cash drawer, who the guests are.
  { path: 'reservations', title: 'Reservations' },
  { path: 'shifts', title: 'Shifts' },
  { path: 'guests', title: 'Guests' },
  { path: 'tokens', title: 'API tokens' },
  { path: 'webhooks', title: 'Webhooks' },
  { path: 'analytics', title: 'Analytics' },
  { path: 'staff', title: 'Staff' },
  { path: 'drivers', title: 'Drivers' },
  { path: 'coupons', title: 'Coupons' },
  { path: 'apps', title: 'Apps' },
]

export interface ShellInput {
  page: NavPage
  /** The session's CSRF token, echoed by the script as `X-CSRF-Token` and by the sign-out form. */
  csrf: string
  /** `{site_url}` and `{base_url}` as paths the browser can use on this origin (or full URLs). */
  site: string
  api: string
  /** A version tag on the asset addresses, so a new release is fetched, never a stale cached one. */
  assetTag: string
  /** The store types `POST /restaurants` accepts (src/domain/verticals.ts), for the Stores page's select. */
  storeTypes?: readonly string[]
  /**
   * The Dispatch page's map over the operator's tiles (MAP_TILE_URL): Leaflet from this server and
   * the tile template; without it the page draws its map in SVG (docs/dashboard.md "Dispatch").
   */
  map?: { tileUrl: string; attribution: string; leaflet: string } | null
}

/** The page: header with the store picker and sign-out, navigation, and the page's `<main>`. */
export function dashboardShell({ page, csrf, site, api, assetTag, storeTypes = [], map = null }: ShellInput): string {
  const nav = DASHBOARD_PAGES.map((p) =>
    `<li><a href="${esc(site)}/dashboard/${p.path}" data-nav="${p.path}"${p.path === page.path ? ' aria-current="page"' : ''}>${esc(p.title)}</a></li>`).join('')
  return `<!doctype html><html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width,initial-scale=1">
${csrfMeta({ csrf })}
<title>${esc(page.title)} · Dashboard</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="${esc(site)}/dashboard/assets/app.css?v=${esc(assetTag)}">
${map ? `<link rel="stylesheet" href="${esc(site)}${esc(map.leaflet)}/leaflet.css">\n<script src="${esc(site)}${esc(map.leaflet)}/leaflet.js"></script>\n` : ''}<script type="module" src="${esc(site)}/dashboard/assets/app.js?v=${esc(assetTag)}"></script>
</head><body data-page="${esc(page.path)}" data-site="${esc(site)}" data-api="${esc(api)}" data-store-types="${esc(storeTypes.join(' '))}"${map ? ` data-tile-url="${esc(map.tileUrl)}" data-tile-attribution="${esc(map.attribution)}"` : ''}>
<a class="skip" href="#main">Skip to content</a>
<header class="top"><span class="brand">Dashboard</span>
<label class="store-pick">Store <select id="store" aria-label="Store"></select></label>
<form method="post" action="${esc(site)}/logout" class="signout">${csrfField({ csrf })}<button type="submit">Sign out</button></form>
</header>
<nav aria-label="Dashboard"><ul>${nav}</ul></nav>
<main id="main" tabindex="-1"><h1>${esc(page.title)}</h1><div id="view" aria-busy="true"><p class="muted">Loading…</p></div>
<p id="notice" role="status" class="notice"></p><p id="problem" role="alert" class="problem"></p></main>
<noscript><p class="problem">The dashboard needs JavaScript.</p></noscript>
</body></html>`
}

/**
 * The dashboard's headers: its own script and style files and nothing inline; the API and its
 * sockets on this server (`'self'` does not cover `ws:` in every browser, so the host is named).
 */
const HOST = /^[\w.-]+(:\d{1,5})?$|^\[[\d:a-fA-F]+\](:\d{1,5})?$/
export function dashboardHeaders(host: string | undefined, apiOrigin: string | null, tileOrigin: string | null = null, frames = false): Record<string, string> {
  const sockets = host && HOST.test(host) ? ` ws://${host} wss://${host}` : ''
  const api = apiOrigin ? ` ${apiOrigin} ${apiOrigin.replace(/^http/, 'ws')}` : ''
  return {
    'Content-Security-Policy': `default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'${sockets}${api}; img-src 'self' data:${tileOrigin ? ` ${tileOrigin}` : ''};${frames ? " frame-src 'self';" : ''} form-action 'self'; base-uri 'none'; frame-ancestors 'none'`,
    'Referrer-Policy': 'same-origin',
    'Cache-Control': 'no-store',
    'X-Content-Type-Options': 'nosniff',
    'X-Frame-Options': 'DENY',
  }
}

/**
 * The theme preview's headers (the Website page's frame): framed by this site only; sandboxed, so the
 * page (any owner's theme) runs no script, posts no form and has no origin of its own — its links
 * may only open a tab of their own (the published site, outside the sandbox); never stored by a
 * cache, never indexed. Its styles are the theme's, by the nonce of this response.
 */
export function previewHeaders(styleNonce: string | null): Record<string, string> {
  return {
    'Content-Security-Policy': `sandbox allow-popups allow-popups-to-escape-sandbox; default-src 'none'; style-src ${styleNonce ? `'nonce-${styleNonce}'` : "'none'"}; img-src 'self' data:; form-action 'none'; base-uri 'none'; frame-ancestors 'self'`,
    'Cache-Control': 'no-store',
    'X-Robots-Tag': 'noindex, nofollow',
    'Referrer-Policy': 'same-origin',
    'X-Content-Type-Options': 'nosniff',
    'X-Frame-Options': 'SAMEORIGIN',
  }
}
