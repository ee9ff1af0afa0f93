/**
 * The customer tracking page served at `{site_url}/t/{track_token}` (docs/realtime.md "Tracking
 * page"). One self-contained document: inline CSS and script (allowed by a per-response CSP nonce),
 * no external assets, no map tiles. It renders the tracking view it was served with, then follows
 * the tracking socket: status frames redraw the timeline, location frames move the driver along a
 * trail drawn in SVG, scaled to fit the points seen so far.
 */
import { esc } from './html.ts'


/** JSON safe inside a <script> element (no `</script>`, no HTML comment openers). */
const scriptJson = (x: unknown): string => JSON.stringify(x).replace(/</g, '\\u003c').replace(/>/g, '\\u003e').replace(/&/g, '\\u0026')

export function trackPage(opts: { token: string; wsPath: string; nonce: string; view: Record<string, unknown> }): string {
  const { nonce } = opts
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width,initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>Order #${esc(opts.view.id)} · live tracking</title>
<style nonce="${nonce}">
:root{--ok:#1a7f37;--muted:#6b7280;--line:#e5e7eb;--accent:#2563eb}
body{font:15px/1.45 system-ui,-apple-system,sans-serif;margin:0;color:#111;background:#f8fafc}
main{max-width:40rem;margin:0 auto;padding:1rem}
h1{font-size:1.3rem;margin:.2rem 0}
.card{background:#fff;border:1px solid var(--line);border-radius:10px;padding:.9rem 1rem;margin:.8rem 0}
.muted{color:var(--muted)}.row{display:flex;justify-content:space-between;gap:1rem;align-items:center}
#conn{font-size:.8rem;padding:.1rem .5rem;border-radius:99px;background:#fee2e2;color:#991b1b}
#conn.live{background:#dcfce7;color:#166534}
ol#timeline{list-style:none;padding:0;margin:0}
#timeline li{display:flex;gap:.6rem;align-items:baseline;padding:.25rem 0;color:var(--muted)}
#timeline li::before{content:"";flex:none;width:.7rem;height:.7rem;border-radius:50%;border:2px solid var(--line);transform:translateY(.1rem)}
#timeline li.done{color:#111}#timeline li.done::before{background:var(--ok);border-color:var(--ok)}
#timeline li.bad::before{background:#b91c1c;border-color:#b91c1c}
#timeline time{margin-left:auto;font-size:.85rem;color:var(--muted)}
#map{width:100%;height:auto;background:#eef2f7;border-radius:8px;display:block}
#code{font:700 1.6rem/1 ui-monospace,monospace;letter-spacing:.3rem}
ul#items{padding-left:1.1rem;margin:.3rem 0}
</style></head>
<body><main>
<div class="row"><h1>Order #<span id="order-id">${esc(opts.view.id)}</span></h1><span id="conn">connecting…</span></div>
<p class="muted" id="status-line"></p>
<section class="card"><ol id="timeline"></ol></section>
<section class="card" id="code-card" hidden><div class="muted">Your delivery code — tell it to the driver at the door</div><div id="code"></div></section>
<section class="card" id="driver-card" hidden>
  <div class="row"><strong id="driver-name"></strong><span class="muted" id="driver-updated"></span></div>
  <svg id="map" viewBox="0 0 400 260" role="img" aria-label="Driver route">
    <polyline id="trail" fill="none" stroke="#2563eb" stroke-width="3" stroke-linejoin="round" stroke-linecap="round" points=""></polyline>
    <circle id="driver-pos" r="7" fill="#2563eb" stroke="#fff" stroke-width="3" cx="-20" cy="-20"></circle>
  </svg>
  <div class="muted" id="driver-coords"></div>
</section>
<section class="card"><div class="row"><strong>Items</strong><span id="total"></span></div><ul id="items"></ul><div class="muted" id="paid"></div></section>
</main>
<script type="application/json" id="initial" nonce="${nonce}">${scriptJson(opts.view)}</script>
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
  const trail = []
  let view = JSON.parse($('initial').textContent)
  const time = (iso) => iso ? new Date(iso).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit', second: '2-digit' }) : ''

  function render(v) {
    view = v
    $('order-id').textContent = v.id
    $('status-line').textContent = LABEL[v.delivery_status || v.status] || v.status
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
    const items = $('items'); items.textContent = ''
    for (const it of v.items || []) { const li = document.createElement('li'); li.textContent = it.quantity + ' × ' + it.name; items.append(li) }
    $('total').textContent = typeof v.total === 'number' ? v.total.toFixed(2) : ''
    $('paid').textContent = v.is_paid ? 'Paid' : 'To pay on delivery'
    if (v.driver) { if (v.driver.lat != null) addPoint(v.driver); else showDriver(v.driver) }
    else { $('driver-card').hidden = true; trail.length = 0 }
  }

  function showDriver(d) {
    $('driver-card').hidden = false
    $('driver-name').textContent = d.name || 'Your driver'
    $('driver-updated').textContent = d.location_updated_at ? 'updated ' + time(d.location_updated_at) : ''
  }

  function addPoint(d) {
    showDriver(d)
    const last = trail[trail.length - 1]
    if (!last || last.lat !== d.lat || last.lng !== d.lng) trail.push({ lat: d.lat, lng: d.lng })
    if (trail.length > 500) trail.shift()
    draw()
  }

  // Equirectangular projection fitted to the trail's bounding box: enough for a few kilometres.
  function draw() {
    const W = 400, H = 260, PAD = 24
    let minLat = Infinity, maxLat = -Infinity, minLng = Infinity, maxLng = -Infinity
    for (const p of trail) { minLat = Math.min(minLat, p.lat); maxLat = Math.max(maxLat, p.lat); minLng = Math.min(minLng, p.lng); maxLng = Math.max(maxLng, p.lng) }
    const k = Math.cos(((minLat + maxLat) / 2) * Math.PI / 180)
    const spanX = Math.max((maxLng - minLng) * k, 1e-4), spanY = Math.max(maxLat - minLat, 1e-4)
    const scale = Math.min((W - 2 * PAD) / spanX, (H - 2 * PAD) / spanY)
    const ox = (W - spanX * scale) / 2, oy = (H - spanY * scale) / 2
    const xy = (p) => [ox + (p.lng - minLng) * k * scale, H - (oy + (p.lat - minLat) * scale)]
    $('trail').setAttribute('points', trail.map((p) => xy(p).map((n) => n.toFixed(1)).join(',')).join(' '))
    const cur = trail[trail.length - 1]
    const [cx, cy] = xy(cur)
    const dot = $('driver-pos')
    dot.setAttribute('cx', cx.toFixed(1)); dot.setAttribute('cy', cy.toFixed(1))
    dot.dataset.lat = cur.lat; dot.dataset.lng = cur.lng
    $('driver-coords').textContent = cur.lat.toFixed(5) + ', ' + cur.lng.toFixed(5)
  }

  let retry = 500
  function connect() {
    const ws = new WebSocket(wsUrl)
    ws.onopen = () => { retry = 500; $('conn').textContent = 'live'; $('conn').className = 'live' }
    ws.onmessage = (e) => {
      let f; try { f = JSON.parse(e.data) } catch { return }
      if (f.type === 'snapshot' || f.type === 'status') { const { type, ...v } = f; render(v) }
      else if (f.type === 'location' && f.driver) addPoint(f.driver)
    }
    ws.onclose = () => {
      $('conn').textContent = 'reconnecting…'; $('conn').className = ''
      setTimeout(connect, retry); retry = Math.min(retry * 2, 30000)
    }
  }
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
