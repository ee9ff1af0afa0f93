/**
 * The customer tracking page served at `{site_url}/t/{track_token}` (docs/tracking-page.md). One
 * document with inline CSS and script (allowed by a per-response CSP nonce). It renders the
 * tracking view it was served with, then follows the tracking socket: status frames redraw the
 * timeline, location frames move the driver, extend the route so far and carry the ETA.
 *
 * The map: with `MAP_TILE_URL` set, Leaflet (served by this server, src/http/routes/leaflet-assets.ts)
 * over those tiles, with store, destination and driver markers and the route as a polyline;
 * without it, or when Leaflet or the tiles do not load (a tile error before the first tile, or no
 * tile within TILE_TIMEOUT_MS), the same points drawn in SVG with no external request at all.
 */
import { esc } from './html.ts'

/** No tile within this long: the tile host is unreachable or too slow, draw offline instead. */
export const TILE_TIMEOUT_MS = 8000

/** JSON safe inside a <script> element (no `</script>`, no HTML comment openers). */
const scriptJson = (x: unknown): string => JSON.stringify(x).replace(/</g, '\\u003c').replace(/>/g, '\\u003e').replace(/&/g, '\\u0026')

/** The map of the page: Leaflet's address on this server, the tile template and its credit (plain text). */
export interface TrackMap { leaflet: string; tileUrl: string; attribution: string }

export function trackPage(opts: { token: string; wsPath: string; nonce: string; view: Record<string, unknown>; map: TrackMap | null }): string {
  const { nonce, map } = opts
  const store = opts.view.store as { name?: string } | undefined
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
  <div class="muted" id="driver-coords"></div>
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
<section class="card"><div class="row"><strong>Items</strong><span id="total"></span></div><ul id="items"></ul><div class="muted" id="paid"></div></section>
</main>
<script type="application/json" id="initial" nonce="${nonce}">${scriptJson(opts.view)}</script>
<script type="application/json" id="map-config" nonce="${nonce}">${scriptJson(mapConfig)}</script>
<script nonce="${nonce}">
(() => {
  'use strict'
  const STAGES = [
    ['created', 'Order placed'], ['preparing', 'Being prepared'], ['ready', 'Ready'], ['assigned', 'Driver assigned'],
    ['picked_up', 'Picked up'], ['out_for_delivery', 'On the way'], ['delivered', 'Delivered'],
  ]
  const LABEL = { new: 'Order received', preparing: 'Being prepared', ready: 'Ready', delivered: 'Delivered', completed: 'Completed', cancelled: 'Cancelled',
    pending: 'Waiting for a driver', assigned: 'Driver assigned', picked_up: 'Picked up by the driver', out_for_delivery: 'On the way to you', failed: 'Delivery failed' }
  const $ = (id) => document.getElementById(id)
  const wsUrl = (location.protocol === 'https:' ? 'wss://' : 'ws://') + location.host + ${scriptJson(opts.wsPath)}
  const MAP = JSON.parse($('map-config').textContent)
  const time = (iso) => iso ? new Date(iso).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit', second: '2-digit' }) : ''
  const has = (p) => !!p && typeof p.lat === 'number' && typeof p.lng === 'number'

  // What the map shows: the store, the destination, the route so far (its last point is the driver), the estimate.
  let view = JSON.parse($('initial').textContent)
  let store = null, dest = null, eta = null
  const trail = []

  function render(v) {
    view = v
    $('order-id').textContent = v.id
    $('status-line').textContent = LABEL[v.delivery_status || v.status] || v.status
    if (v.store && v.store.name) { $('store-name').textContent = v.store.name; $('store-line').hidden = false }
    const tl = v.timeline || {}
    const ol = $('timeline'); ol.textContent = ''
    const stages = v.delivery_status ? STAGES : STAGES.filter(([s]) => ['created', 'preparing', 'ready', 'delivered'].includes(s))
    for (const [stage, label] of stages) {
      const li = document.createElement('li'); li.dataset.stage = stage
      const at = tl[stage + '_at']
      if (at) li.className = 'done'
      li.append(label)
      if (at) { const t = document.createElement('time'); t.dateTime = at; t.textContent = time(at); li.append(t) }
      ol.append(li)
    }
    for (const bad of ['failed', 'cancelled']) {
      const at = tl[bad + '_at']
      if (at && (v.delivery_status === bad || v.status === bad)) { const li = document.createElement('li'); li.className = 'bad'; li.dataset.stage = bad; li.textContent = LABEL[bad]; ol.append(li) }
    }
    $('code-card').hidden = !v.delivery_code
    $('code').textContent = v.delivery_code || ''
    // The order's fulfillment mode in a fitting form (docs/verticals.md): room, slot, appointment, parcel.
    const mode = v.room_number ? ['Room service', 'Room ' + v.room_number, '']
      : v.slot ? [v.slot.kind === 'dropoff' ? 'Drop-off slot' : 'Pickup slot', time(v.slot.start) + (v.slot.end ? ' – ' + time(v.slot.end) : ''), new Date(v.slot.start).toLocaleDateString()]
      : v.appointment ? ['Appointment', time(v.appointment.start) + (v.appointment.end ? ' – ' + time(v.appointment.end) : ''), new Date(v.appointment.start).toLocaleDateString()]
      : v.shipment ? ['Shipment', v.shipment.status.replace(/_/g, ' '), [v.shipment.carrier, v.shipment.tracking_number].filter(Boolean).join(' · ')]
      : null
    $('mode-card').hidden = !mode
    if (mode) { $('mode-label').textContent = mode[0]; $('mode-text').textContent = mode[1]; $('mode-detail').textContent = mode[2] }
    if (v.shipment) $('mode-card').dataset.status = v.shipment.status
    const items = $('items'); items.textContent = ''
    for (const it of v.items || []) { const li = document.createElement('li'); li.textContent = it.quantity + ' × ' + it.name; items.append(li) }
    $('total').textContent = typeof v.total === 'number' ? v.total.toFixed(2) : ''
    $('paid').textContent = v.is_paid ? 'Paid' : 'To pay on delivery'
    store = has(v.store) ? v.store : null
    dest = has(v.destination) ? v.destination : null
    if (v.driver) {
      showDriver(v.driver)
      // The stored position may be older than the last location frame: it only starts a route.
      if (has(v.driver) && trail.length === 0) trail.push({ lat: v.driver.lat, lng: v.driver.lng })
    } else { $('driver-card').hidden = true; trail.length = 0; eta = null }
    draw()
  }

  function showDriver(d) {
    $('driver-card').hidden = false
    $('driver-name').textContent = d.name || 'Your driver'
    $('driver-updated').textContent = d.location_updated_at ? 'updated ' + time(d.location_updated_at) : ''
  }

  function onLocation(f) {
    if (!view.driver) return // a late frame after the driver went out of view
    if (Array.isArray(f.trail) && f.trail.length > 0) { trail.length = 0; for (const [lat, lng] of f.trail) trail.push({ lat, lng }) }
    if (f.driver) {
      showDriver(f.driver)
      const last = trail[trail.length - 1]
      if (!last || last.lat !== f.driver.lat || last.lng !== f.driver.lng) trail.push({ lat: f.driver.lat, lng: f.driver.lng })
    }
    if (trail.length > 500) trail.splice(0, trail.length - 500)
    if ('eta' in f) eta = f.eta
    draw()
  }

  // ---- the text alternative: what the map shows, in words ----
  function etaText() {
    // The estimate promised when the order was placed (docs/dispatch.md), until the live ETA replaces it.
    const open = view.eta && !['delivered', 'failed'].includes(view.delivery_status) && view.status !== 'cancelled'
    const promised = open ? 'Estimated delivery around ' + new Date(view.eta.dropoff_at).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' }) + '.' : ''
    if (!view.driver) return promised
    if (eta && eta.arriving) return 'Your driver is arriving now.'
    if (!eta) return [trail.length ? 'Your driver is on the way.' : '', promised].filter(Boolean).join(' ')
    const m = eta.distance_m
    const away = (m >= 1000 ? (m / 1000).toFixed(1) + ' km' : Math.max(10, Math.round(m / 10) * 10) + ' m') + ' away'
    if (eta.seconds == null) return 'Your driver is ' + away + '.'
    return 'Arriving in about ' + Math.max(1, Math.round(eta.seconds / 60)) + ' min · ' + away + '.'
  }

  // ---- drawing: Leaflet when configured and working, else SVG ----
  let mode = MAP && window.L ? 'leaflet' : 'svg'
  let lmap = null, layers = null, tilesOk = false, fitted = ''

  function draw() {
    const cur = trail[trail.length - 1]
    const any = store || dest || cur
    $('map-card').hidden = !any
    $('legend-store').hidden = !store; $('legend-dest').hidden = !dest; $('legend-driver').hidden = !cur
    $('driver-coords').textContent = cur ? cur.lat.toFixed(5) + ', ' + cur.lng.toFixed(5) : ''
    $('eta').textContent = etaText()
    const card = $('map-card')
    card.dataset.points = String(trail.length)
    card.dataset.driver = cur ? cur.lat + ',' + cur.lng : ''
    if (!any) return
    if (mode === 'leaflet') drawLeaflet(cur)
    else drawSvg(cur)
  }

  function fallback(reason) {
    if (mode !== 'leaflet') return
    mode = 'svg'
    if (lmap) { lmap.remove(); lmap = null }
    $('leaflet').remove() // with every class and child Leaflet gave it; the page never goes back

    $('map-card').dataset.mode = 'svg'
    $('map-card').dataset.fallback = reason
    draw()
  }

  function startLeaflet() {
    const el = $('leaflet')
    el.hidden = false
    lmap = L.map(el, { zoomControl: true, attributionControl: true })
    const tiles = L.tileLayer(MAP.tileUrl, { attribution: MAP.attribution, maxZoom: 19, referrerPolicy: 'strict-origin' })
    // The tile host is reachable once one tile arrives; an error before that, or silence, means offline drawing.
    tiles.on('tileload', () => { tilesOk = true; $('map-card').dataset.tiles = 'ok' })
    tiles.on('tileerror', () => { if (!tilesOk) fallback('tile-error') })
    setTimeout(() => { if (!tilesOk) fallback('timeout') }, MAP.timeoutMs)
    tiles.addTo(lmap)
    const dot = (cls, fill) => L.circleMarker([0, 0], { radius: 8, color: '#fff', weight: 3, fillColor: fill, fillOpacity: 1, className: cls })
    layers = {
      route: L.polyline([], { color: '#2563eb', weight: 4, opacity: 0.8, className: 'route-line', interactive: false }),
      store: dot('mk-store', '#b45309'), dest: dot('mk-dest', '#15803d'), driver: dot('mk-driver', '#2563eb'),
    }
    layers.store.bindTooltip('Store'); layers.dest.bindTooltip('Destination'); layers.driver.bindTooltip('Driver')
  }

  function place(layer, p, label) {
    if (!p) { layer.remove(); return }
    layer.setLatLng([p.lat, p.lng]).addTo(lmap)
    if (label) layer.setTooltipContent(label)
  }

  function drawLeaflet(cur) {
    if (!lmap) {
      try { startLeaflet() } catch (err) { return fallback('leaflet') }
    }
    place(layers.store, store, store && store.name)
    place(layers.dest, dest)
    place(layers.driver, cur, view.driver && view.driver.name)
    if (trail.length > 1) layers.route.setLatLngs(trail.map((p) => [p.lat, p.lng])).addTo(lmap)
    else layers.route.remove()
    // Frame every marker once each appears; afterwards follow the driver only when it leaves the view.
    const pts = [store, dest, cur].filter(Boolean).map((p) => [p.lat, p.lng])
    const key = [!!store, !!dest, !!cur].join()
    if (key !== fitted) { fitted = key; pts.length > 1 ? lmap.fitBounds(pts, { padding: [30, 30], maxZoom: 17 }) : lmap.setView(pts[0], 15) }
    else if (cur && !lmap.getBounds().contains([cur.lat, cur.lng])) lmap.panTo([cur.lat, cur.lng])
  }

  // Equirectangular projection fitted to every known point: enough for a few kilometres.
  function drawSvg(cur) {
    $('map').removeAttribute('hidden') // an SVG element has no \`hidden\` property
    const W = 400, H = 260, PAD = 24
    const pts = [...trail, store, dest].filter(Boolean)
    let minLat = Infinity, maxLat = -Infinity, minLng = Infinity, maxLng = -Infinity
    for (const p of pts) { minLat = Math.min(minLat, p.lat); maxLat = Math.max(maxLat, p.lat); minLng = Math.min(minLng, p.lng); maxLng = Math.max(maxLng, p.lng) }
    const k = Math.cos(((minLat + maxLat) / 2) * Math.PI / 180)
    const spanX = Math.max((maxLng - minLng) * k, 1e-4), spanY = Math.max(maxLat - minLat, 1e-4)
    const scale = Math.min((W - 2 * PAD) / spanX, (H - 2 * PAD) / spanY)
    const ox = (W - spanX * scale) / 2, oy = (H - spanY * scale) / 2
    const xy = (p) => [ox + (p.lng - minLng) * k * scale, H - (oy + (p.lat - minLat) * scale)]
    $('trail').setAttribute('points', trail.length > 1 ? trail.map((p) => xy(p).map((n) => n.toFixed(1)).join(',')).join(' ') : '')
    const mark = (id, p) => {
      const c = $(id)
      c.setAttribute('visibility', p ? 'visible' : 'hidden')
      if (!p) { delete c.dataset.lat; delete c.dataset.lng; return }
      const [x, y] = xy(p)
      c.setAttribute('cx', x.toFixed(1)); c.setAttribute('cy', y.toFixed(1))
      c.dataset.lat = p.lat; c.dataset.lng = p.lng
    }
    mark('store-pos', store); mark('dest-pos', dest); mark('driver-pos', cur)
  }

  let retry = 500
  function connect() {
    const ws = new WebSocket(wsUrl)
    ws.onopen = () => { retry = 500; $('conn').textContent = 'live'; $('conn').className = 'live' }
    ws.onmessage = (e) => {
      let f; try { f = JSON.parse(e.data) } catch { return }
      if (f.type === 'snapshot' || f.type === 'status') { const { type, ...v } = f; render(v) }
      else if (f.type === 'location') onLocation(f)
    }
    ws.onclose = () => {
      $('conn').textContent = 'reconnecting…'; $('conn').className = ''
      setTimeout(connect, retry); retry = Math.min(retry * 2, 30000)
    }
  }
  if (MAP && !window.L) $('map-card').dataset.fallback = 'leaflet'
  $('map-card').dataset.mode = mode
  render(view)
  connect()
})()
</script>
</body></html>`
}

export function trackNotFoundPage(): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>Order not found</title></head><body style="font:15px/1.5 system-ui,sans-serif;max-width:40rem;margin:3rem auto;padding:0 1rem">
<h1>Order not found</h1><p>This tracking link is not valid. Check the link you received with your order.</p></body></html>`
}

/** The tracking link of an order whose store's account is suspended (docs/billing.md "Suspension"). */
export function storeUnavailablePage(): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>Store unavailable</title></head><body style="font:15px/1.5 system-ui,sans-serif;max-width:40rem;margin:3rem auto;padding:0 1rem">
<h1>This store is unavailable</h1><p>This store is not taking visitors or orders at the moment. Please try again later.</p></body></html>`
}
