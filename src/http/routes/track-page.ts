/** The customer tracking page `{site_url}/t/{track_token}` (docs/realtime.md "Tracking page"). */
import { randomBytes } from 'node:crypto'
import { route, Reply } from '../route.ts'
import { trackPage, trackNotFoundPage, storeUnavailablePage } from '../pages/track.html.ts'
import { trackedOrder, trackingView } from '../../ops/web/public.ts'
import { ApiError } from '../../errors.ts'
import { pageHeaders } from '../pages/page-headers.ts'
import { tileOrigin } from '../../domain/map-tiles.ts'
import { LEAFLET_BASE, leafletAssetRoutes } from './leaflet-assets.ts'
import type { Config } from '../../config.ts'

const HTML = 'text/html; charset=utf-8'

/**
 * The token in the address is the capability: keep it out of Referer headers, caches and indexes.
 * With map tiles configured, images may come from this server and the tile host — no other host,
 * and none at all without MAP_TILE_URL (docs/tracking-page.md "Security").
 */
const headers = (nonce: string, host: string | undefined, config?: Config) =>
  pageHeaders(nonce, host, { 'X-Robots-Tag': 'noindex' }, config?.mapTileUrl ? ["'self'", tileOrigin(config.mapTileUrl)] : [])

/** The page's map: Leaflet over the operator's tiles, or null for the offline drawing. */
const mapOf = (config: Config) => config.mapTileUrl ? { tileUrl: config.mapTileUrl, attribution: config.mapTileAttribution, leaflet: LEAFLET_BASE } : null

export const trackPageRoutes = [
  route({
    method: 'GET', path: '/t/{token}', site: true, tag: 'Public', summary: 'Live tracking page of an order (status timeline, driver on a map)',
    auth: 'none', produces: HTML,
    // A browser follows this link: an unknown token gets a page saying so, not the JSON envelope.
    pageErrors: { 404: 'No order has this token: a page saying the tracking link is not valid.', 403: 'The store\'s account is suspended: a page saying the store is unavailable.' },
    description: 'Self-contained HTML (no external assets; with `MAP_TILE_URL`, Leaflet from this server and map tiles from that host). Follows `{base_url}/ws/track/{token}`: the timeline updates on every status change and the driver moves live while the order is picked up or out for delivery.',
    handler: ({ svc, params, headers: h }) => {
      const nonce = randomBytes(16).toString('base64')
      let row
      try {
        row = trackedOrder(svc, params.token)
      } catch (err) {
        if (!(err instanceof ApiError) || err.code !== 'account_suspended') return new Reply(404, trackNotFoundPage(nonce), headers(nonce, h.host), HTML)
        return new Reply(403, storeUnavailablePage(nonce), headers(nonce, h.host), HTML)
      }
      const wsPath = `${new URL(svc.config.baseUrl).pathname.replace(/\/+$/, '')}/ws/track/${encodeURIComponent(row.track_token)}`
      return new Reply(200, trackPage({ token: row.track_token, wsPath, nonce, view: trackingView(svc, row), map: mapOf(svc.config) }), headers(nonce, h.host, svc.config), HTML)
    },
  }),
  ...leafletAssetRoutes,
]
