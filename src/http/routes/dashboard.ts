/**
 * The owner dashboard under `{site_url}/dashboard` (issue 14, docs/dashboard.md): one page per
 * section, each the same shell signed in by the web session (`auth: 'session'`: signed out, a visit
 * goes to /login and back), and the two static files the shell loads. The pages hold no data of
 * their own: the script calls the owner API with a short-lived token of the session, so every rule
 * stays in the operations the API runs.
 */
import { route, Reply } from '../route.ts'
import { API_PREFIX } from '../server.ts'
import { DASHBOARD_PAGES, dashboardHeaders, dashboardShell, previewHeaders } from '../pages/dashboard/shell.ts'
import { ASSET_TAG, DASHBOARD_ASSETS } from '../pages/dashboard/assets.ts'
import { STORE_TYPES } from '../../domain/verticals.ts'
import { tileOrigin } from '../../domain/map-tiles.ts'
import { LEAFLET_BASE } from './leaflet-assets.ts'
import { form } from '../form.ts'
import { esc } from '../html.ts'
import { previewStoreTheme } from '../../ops/web/theme-preview.ts'
import { jsonShapeProblem } from '../../net/request-limits.ts'

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
      // The Website page shows its preview in a frame of this site (below).
      dashboardHeaders(headers.host, null, tiles ? tileOrigin(tiles) : null, page.path === 'website'), HTML)
  },
}))

const assetRoutes = Object.entries(DASHBOARD_ASSETS).map(([name, asset]) => route({
  method: 'GET', path: `/dashboard/assets/${name}`, site: true, tag, auth: 'none', produces: asset.type,
  summary: `The dashboard's ${name.endsWith('.js') ? 'script' : 'stylesheet'} (no secrets; the same for everyone)`,
  // Addressed with `?v=<content tag>` by the pages: a new release is a new address.
  handler: () => new Reply(200, asset.body, { 'Cache-Control': 'public, max-age=31536000, immutable', 'X-Content-Type-Options': 'nosniff' }, asset.type),
}))

/** The preview form's `values` field: `{settings?, sections?}` as JSON, shape-checked like a JSON body before it is parsed. */
function previewValues(text: string | null): Record<string, unknown> {
  if (!text) return {}
  if (jsonShapeProblem(Buffer.from(text))) return { settings: 'too complex' }
  try {
    const parsed: unknown = JSON.parse(text)
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) {
      const { settings, sections } = parsed as Record<string, unknown>
      return { ...(settings !== undefined ? { settings } : {}), ...(sections !== undefined ? { sections } : {}) }
    }
  } catch { /* refused below, as a value that is not an object */ }
  return { settings: 'not JSON' }
}

const previewRefused = (status: number, messages: string[]) => new Reply(status, `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="robots" content="noindex, nofollow"><title>Preview</title></head>
<body><main><h1>Nothing to preview</h1><ul>${messages.map((m) => `<li>${esc(m)}</li>`).join('')}</ul></main></body></html>`, previewHeaders(null), HTML)

/**
 * The Website page's preview (issue 34 item 12; docs/themes.md "Editing from the dashboard"): the
 * page's form posts the unsaved theme and values into its frame, and this answers the store's page
 * drawn with them by the preview operation (the API's `POST …/theme/preview`), run as the session's
 * account. A refusal is a short page naming what to fix; the page shows the same messages by the
 * fields from the API.
 */
const previewForm = form(previewStoreTheme, {
  path: '/dashboard/stores/{id}/theme-preview', auth: 'session', ids: { store: 'id' }, tag,
  summary: 'Dashboard: preview the store\'s website with unsaved theme values (into the Website page\'s frame)',
  description: 'An HTML form post of the dashboard (session cookie, `csrf` field): `template`, `page`, `item_id` and `values` (`{settings, sections}` as JSON), the body of `POST /api/v1/restaurants/{id}/theme/preview`. Answers the page as HTML for a frame of this site only: never cached (`no-store`), not indexed (`X-Robots-Tag: noindex`), sandboxed (no scripts, no forms). Another account\'s store: 404; a refused value: 422; both as a short page.',
  pageErrors: { 404: 'Not a store of the session\'s account: a short page.', 422: 'A value the theme refuses: a short page naming it.' },
  fields: (req) => {
    const f = req.form
    const item = f.get('item_id')
    return {
      ...previewValues(f.get('values')),
      ...(f.get('template') ? { template: f.get('template') } : {}),
      ...(f.get('page') ? { page: f.get('page') } : {}),
      ...(item ? { item_id: /^[1-9]\d{0,15}$/.test(item) ? Number(item) : item } : {}),
    }
  },
  // Not indexed; its links open the published site in a tab of its own (the frame is no place for it).
  success: (out) => new Reply(200, out.html.replace(/<head(\s[^>]*)?>/i, (_m, attrs: string | undefined) => `<head${attrs ?? ''}><meta name="robots" content="noindex, nofollow"><base target="_blank">`), previewHeaders(out.style_nonce), HTML),
  failure: (errors, _req, err) => previewRefused(err.status, errors.map((e) => (e.field ? `${e.field}: ${e.message}` : e.message))),
})

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
  previewForm,
]
