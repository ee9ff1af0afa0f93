/**
 * The customer tracking page served at `{site_url}/t/{track_token}` (docs/tracking-page.md). One
 * document with inline CSS and script (allowed by a per-response CSP nonce; the script is
 * src/browser/track.ts). It renders the tracking view it was served with, then follows the tracking
 * socket: status frames redraw the timeline, location frames move the driver, extend the route so
 * far and carry the ETA.
 *
 * The map: with `MAP_TILE_URL` set, Leaflet (served by this server, src/http/routes/leaflet-assets.ts)
 * over those tiles, with store, destination and driver markers and the route as a polyline;
 * without it, or when Leaflet or the tiles do not load (a tile error before the first tile, or no
 * tile within TILE_TIMEOUT_MS), the same points drawn in SVG with no external request at all.
 */
import { esc, scriptJson } from '../html.ts'
import { inlineScript } from './browser-code.ts'
import type { TrackingView } from '../../storage/tracking.ts'

/** The page's script (src/browser/track.ts, compiled: browser-code.ts); what it needs comes in the JSON elements beside it. */
const SCRIPT = inlineScript('track.js')

/** No tile within this long: the tile host is unreachable or too slow, draw offline instead. */
export const TILE_TIMEOUT_MS = 8000


/** The map of the page: Leaflet's address on this server, the tile template and its credit (plain text). */
export interface TrackMap { leaflet: string; tileUrl: string; attribution: string }

export function trackPage(opts: { token: string; wsPath: string; nonce: string; view: TrackingView; map: TrackMap | null }): string {
  const { nonce, map } = opts
  const store = opts.view.store
  // Leaflet inserts the attribution as HTML: it is the operator's plain text, escaped here.
  const mapConfig = map && { tileUrl: map.tileUrl, attribution: esc(map.attribution), timeoutMs: TILE_TIMEOUT_MS }
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width,initial-scale=1">
<meta name="referrer" content="no-referrer">
<link rel="icon" href="data:,">
<title>Order #${esc(opts.view.id)}${store?.name ? ` from ${esc(store.name)}` : ''} · live tracking</title>
${map ? `<link rel="stylesheet" href="${esc(map.leaflet)}/leaflet.css" nonce="${nonce}">
<script src="${esc(map.leaflet)}/leaflet.js" nonce="${nonce}"></script>
` : ''}<style nonce="${nonce}">
[hidden]{display:none!important}
:root{--ok:#1a7f37;--muted:#595f69;--line:#e5e7eb;--accent:#2563eb}
body{font:15px/1.45 system-ui,-apple-system,sans-serif;margin:0;color:#111;background:#f8fafc}
main{max-width:40rem;margin:0 auto;padding:1rem}
h1{font-size:1.3rem;margin:.2rem 0}
p{margin:.3rem 0}
.card{background:#fff;border:1px solid var(--line);border-radius:10px;padding:.9rem 1rem;margin:.8rem 0}
.muted{color:var(--muted)}.row{display:flex;justify-content:space-between;gap:1rem;align-items:center}
#conn{font-size:.8rem;padding:.1rem .5rem;border-radius:99px;background:#fee2e2;color:#991b1b}
#conn.live{background:#dcfce7;color:#166534}
#eta{font-weight:600}
ol#timeline{list-style:none;padding:0;margin:0}
#timeline li{display:flex;gap:.6rem;align-items:baseline;padding:.25rem 0;color:var(--muted)}
#timeline li::before{content:"";flex:none;width:.7rem;height:.7rem;border-radius:50%;border:2px solid var(--line);transform:translateY(.1rem)}
#timeline li.done{color:#111}#timeline li.done::before{background:var(--ok);border-color:var(--ok)}
#timeline li.bad::before{background:#b91c1c;border-color:#b91c1c}
#timeline time{margin-left:auto;font-size:.85rem;color:var(--muted)}
#map{width:100%;height:auto;background:#eef2f7;border-radius:8px;display:block}
#leaflet{width:100%;height:18rem;border-radius:8px}
.legend{display:flex;gap:1rem;flex-wrap:wrap;font-size:.85rem;margin:.5rem 0 0;padding:0;list-style:none}
.legend li::before{content:"";display:inline-block;width:.7rem;height:.7rem;border-radius:50%;margin-right:.35rem;vertical-align:-.05rem;border:2px solid #fff;box-shadow:0 0 0 1px #9ca3af}
.legend .store::before{background:#b45309}.legend .driver::before{background:#2563eb}.legend .dest::before{background:#15803d}
#code{font:700 1.6rem/1 ui-monospace,monospace;letter-spacing:.3rem}
ul#items{padding-left:1.1rem;margin:.3rem 0}
ul#items .extras{display:block;font-size:.85rem}
dl#totals{margin:.3rem 0;display:grid;grid-template-columns:1fr auto;gap:.15rem 1rem}
dl#totals dt,dl#totals dd{margin:0}dl#totals dd{text-align:right;font-variant-numeric:tabular-nums}
dl#totals .sum{font-weight:700}
</style></head>
<body><main>
<div class="row"><h1>Order #<span id="order-id">${esc(opts.view.id)}</span></h1><span id="conn">connecting…</span></div>
<p class="muted" id="store-line"${store?.name ? '' : ' hidden'}>from <strong id="store-name">${esc(store?.name)}</strong></p>
<p class="muted" id="status-line"></p>
<p id="eta" role="status" aria-live="polite"></p>
<section class="card"><ol id="timeline"></ol></section>
<section class="card" id="mode-card" hidden><div class="muted" id="mode-label"></div><div id="mode-text"></div><div class="muted" id="mode-detail"></div></section>
<section class="card" id="code-card" hidden><div class="muted">Your delivery code — tell it to the driver at the door</div><div id="code"></div></section>
<section class="card" id="driver-card" hidden>
  <div class="row"><strong id="driver-name"></strong><span class="muted" id="driver-updated"></span></div>
  <div class="muted" id="driver-to"></div>
</section>
<section class="card" id="map-card" aria-label="Map" hidden data-mode="${map ? 'leaflet' : 'svg'}">
  <div id="leaflet" role="region" aria-label="Map of the delivery: store, driver and destination" aria-describedby="eta" hidden></div>
  <svg id="map" viewBox="0 0 400 260" role="img" aria-label="Map of the delivery: store, driver and destination" aria-describedby="eta" hidden>
    <polyline id="trail" fill="none" stroke="#2563eb" stroke-width="3" stroke-linejoin="round" stroke-linecap="round" points=""></polyline>
    <circle id="store-pos" r="7" fill="#b45309" stroke="#fff" stroke-width="3" cx="-20" cy="-20" visibility="hidden"><title>Store</title></circle>
    <circle id="dest-pos" r="7" fill="#15803d" stroke="#fff" stroke-width="3" cx="-20" cy="-20" visibility="hidden"><title>Destination</title></circle>
    <circle id="driver-pos" r="7" fill="#2563eb" stroke="#fff" stroke-width="3" cx="-20" cy="-20" visibility="hidden"><title>Driver</title></circle>
  </svg>
  <ul class="legend"><li class="store" id="legend-store" hidden>Store</li><li class="driver" id="legend-driver" hidden>Driver</li><li class="dest" id="legend-dest" hidden>Destination</li></ul>
</section>
<section class="card"><div class="row"><strong>Items</strong><span id="total"></span></div><ul id="items"></ul>
  <dl id="totals"></dl><div class="muted" id="paid"></div></section>
</main>
<script type="application/json" id="initial" nonce="${nonce}">${scriptJson(opts.view)}</script>
<script type="application/json" id="map-config" nonce="${nonce}">${scriptJson(mapConfig)}</script>
<script type="application/json" id="socket-path" nonce="${nonce}">${scriptJson(opts.wsPath)}</script>
<script nonce="${nonce}">${SCRIPT}</script>
</body></html>`
}

/** The style of the two short pages below, under the page's nonce (a `style` attribute is refused by its CSP). */
const plainStyle = (nonce: string): string => `<style nonce="${nonce}">body{font:15px/1.5 system-ui,sans-serif;max-width:40rem;margin:3rem auto;padding:0 1rem}</style>`

export function trackNotFoundPage(nonce: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>Order not found</title>${plainStyle(nonce)}</head><body>
<h1>Order not found</h1><p>This tracking link is not valid. Check the link you received with your order.</p></body></html>`
}

/** The tracking link of an order whose store's account is suspended (docs/billing.md "Suspension"). */
export function storeUnavailablePage(nonce: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>Store unavailable</title>${plainStyle(nonce)}</head><body>
<h1>This store is unavailable</h1><p>This store is not taking visitors or orders at the moment. Please try again later.</p></body></html>`
}
