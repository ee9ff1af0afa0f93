/**
 * The owner dashboard under `{site_url}/dashboard` (issue 14, docs/dashboard.md): one page per
 * section, each the same shell signed in by the web session (`auth: 'session'`: signed out, a visit
 * goes to /login and back), and the two static files the shell loads. The pages hold no data of
 * their own: the script calls the owner API with a short-lived token of the session, so every rule
 * stays in the operations the API runs.
 */
import { route, Reply } from '../route.ts'
import { API_PREFIX } from '../server.ts'
import { DASHBOARD_PAGES, dashboardHeaders, dashboardShell } from '../pages/dashboard/shell.ts'
import { ASSET_TAG, DASHBOARD_ASSETS } from '../pages/dashboard/assets.ts'
import { STORE_TYPES } from '../../domain/verticals.ts'
import { tileOrigin } from '../../domain/map-tiles.ts'
import { LEAFLET_BASE } from './leaflet-assets.ts'

const HTML = 'text/html; charset=utf-8'
const tag = 'Dashboard'

const pageRoutes = DASHBOARD_PAGES.map((page) => route({
  method: 'GET', path: `/dashboard/${page.path}`, site: true, tag, auth: 'session', produces: HTML,
  summary: `Dashboard: ${page.title}`,
  description: 'Signed out: 303 to `/login?next=…`. The page loads `/dashboard/assets/app.js`, which draws it from the owner API (docs/dashboard.md).',
  handler: ({ principal, headers, svc }) => {
    // The Dispatch page's map over the operator's tiles, when configured (docs/dashboard.md "Dispatch").
    const tiles = page.path === 'dispatch' ? svc.config.mapTileUrl : null
    const map = tiles ? { tileUrl: tiles, attribution: svc.config.mapTileAttribution, leaflet: LEAFLET_BASE } : null
    return new Reply(200, dashboardShell({ page, csrf: principal.csrf, site: '', api: API_PREFIX, assetTag: ASSET_TAG, storeTypes: STORE_TYPES, map }),
      dashboardHeaders(headers.host, null, tiles ? tileOrigin(tiles) : null), HTML)
  },
}))

const assetRoutes = Object.entries(DASHBOARD_ASSETS).map(([name, asset]) => route({
  method: 'GET', path: `/dashboard/assets/${name}`, site: true, tag, auth: 'none', produces: asset.type,
  summary: `The dashboard's ${name.endsWith('.js') ? 'script' : 'stylesheet'} (no secrets; the same for everyone)`,
  // Addressed with `?v=<content tag>` by the pages: a new release is a new address.
  handler: () => new Reply(200, asset.body, { 'Cache-Control': 'public, max-age=31536000, immutable', 'X-Content-Type-Options': 'nosniff' }, asset.type),
}))

export const dashboardRoutes = [
  route({
    method: 'GET', path: '/dashboard', site: true, tag, auth: 'session', produces: HTML,
    summary: 'The dashboard\'s start: 303 to the orders board, or to the Stores page while the account has no store (signed out: to `/login?next=/dashboard`)',
    status: 303, redirect: 'To the orders board, or to the Stores page while the account has no store.',
    // A new owner has no store yet: lead them to create one rather than to a board that cannot draw (issue 14 item 2).
    handler: ({ principal, svc }) => new Reply(303, '', { Location: svc.stores.page(principal.ownerId, 1, 1).total > 0 ? '/dashboard/orders' : '/dashboard/stores', 'Cache-Control': 'no-store' }, HTML),
  }),
  ...pageRoutes,
  ...assetRoutes,
]
