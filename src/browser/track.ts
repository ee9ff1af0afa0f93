/**
 * The customer tracking page's script (docs/tracking-page.md), inlined into the page
 * (src/http/pages/track.html.ts) with its CSP nonce. It renders the tracking view the page was served
 * with, then follows the tracking socket: status frames redraw the timeline, location frames move the
 * driver, extend the route so far and carry the ETA. The view and the frames are the server's types.
 *
 * The map: Leaflet over the configured tiles when the page loaded it (window.L), else — or when the
 * tiles do not load — the same points drawn in SVG with no external request at all.
 */
import type * as Leaflet from 'leaflet'
import type { TrackingView, TrackViewFrame } from '../storage/tracking.ts'
import type { TrackLocationFrames } from '../ws/location-frames.ts'
import type { Eta } from '../domain/eta.ts'

/** The map settings the page carries (`#map-config`): null when the page draws offline only. */
interface MapConfig { tileUrl: string; attribution: string; timeoutMs: number }
interface Point { lat: number; lng: number }

const STAGES: ReadonlyArray<readonly [string, string]> = [
  ['created', 'Order placed'], ['preparing', 'Being prepared'], ['ready', 'Ready'], ['assigned', 'Driver assigned'],
  ['picked_up', 'Picked up'], ['out_for_delivery', 'On the way'], ['delivered', 'Delivered'],
]
/** The last step of an order that no driver brings, by its mode (`order_type`). */
const FINISH: Record<string, string> = { takeaway: 'Collected', 'on-table': 'Served', room_service: 'Brought to your room', in_store: 'Collected', pickup_slot: 'Collected', appointment: 'Done' }
const finishOf = (mode: string): string => FINISH[mode] ?? 'Done'
/** Where an unpaid order is paid, by its mode. */
const PAY_LATER: Record<string, string> = { delivery: 'To pay on delivery', takeaway: 'To pay when you collect it', pickup_slot: 'To pay when you collect it', in_store: 'To pay when you collect it', 'on-table': 'To pay at your table', room_service: 'To pay with your room', appointment: 'To pay at your appointment' }
const LABEL: Record<string, string> = { new: 'Order received', preparing: 'Being prepared', ready: 'Ready', delivered: 'Delivered', completed: 'Completed', cancelled: 'Cancelled',
  pending: 'Waiting for a driver', assigned: 'Driver assigned', picked_up: 'Picked up by the driver', out_for_delivery: 'On the way to you', failed: 'Delivery failed' }
const $ = (id: string): HTMLElement => document.getElementById(id)!
const json = <T>(id: string): T => JSON.parse($(id).textContent!) as T
const wsUrl = (location.protocol === 'https:' ? 'wss://' : 'ws://') + location.host + json<string>('socket-path')
const MAP = json<MapConfig | null>('map-config')
const L = (window as unknown as { L?: typeof Leaflet }).L
const time = (iso: string | null | undefined): string => iso ? new Date(iso).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit', second: '2-digit' }) : ''
const has = (p: { lat: number | null; lng: number | null } | null | undefined): p is Point => !!p && typeof p.lat === 'number' && typeof p.lng === 'number'
/** Amounts in the store's currency (`v.currency`), in the reader's own number format. */
function moneyIn(currency: string): (n: number) => string {
  let f: Intl.NumberFormat
  try { f = new Intl.NumberFormat(undefined, { style: 'currency', currency }) } catch { f = new Intl.NumberFormat(undefined, { minimumFractionDigits: 2, maximumFractionDigits: 2 }) }
  return (n: number) => f.format(n)
}
/** The order is over for the map once delivered, failed, handed over, completed or cancelled: nothing left to follow. */
const finished = (v: TrackingView): boolean =>
  v.delivery_status === 'delivered' || v.delivery_status === 'failed' || ['delivered', 'completed', 'cancelled'].includes(v.status)

// What the map shows: the store, the destination, the route so far (its last point is the driver), the estimate.
let view = json<TrackingView>('initial')
let store: (Point & { name: string }) | null = null, dest: Point | null = null, eta: Eta | null = null
const trail: Point[] = []

function render(v: TrackingView): void {
  view = v
  $('order-id').textContent = String(v.id)
  $('status-line').textContent = (!v.delivery_status && v.status === 'delivered' ? finishOf(v.order_type) : LABEL[v.delivery_status || v.status]) || v.status
  if (v.store && v.store.name) { $('store-name').textContent = v.store.name; $('store-line').hidden = false }
  const tl = v.timeline || {}
  const ol = $('timeline'); ol.textContent = ''
  // A delivery follows the driver; any other mode ends the way that mode ends (issue 34 item 6).
  const stages = v.delivery_status ? STAGES
    : STAGES.filter(([s]) => ['created', 'preparing', 'ready', 'delivered'].includes(s)).map(([s, label]) => [s, s === 'delivered' ? finishOf(v.order_type) : label] as const)
  // A step is passed when it or any later step was reached: a driver's pickup makes the kitchen
  // `ready` (docs/orders.md), but a step the kitchen never recorded (no one pressed Start) has no time.
  const reached = stages.map(([stage]) => !!tl[stage + '_at'])
  for (const [i, [stage, label]] of stages.entries()) {
    const li = document.createElement('li'); li.dataset.stage = stage
    const at = tl[stage + '_at']
    if (reached.indexOf(true, i) !== -1) li.className = 'done'
    li.append(label)
    if (at) { const t = document.createElement('time'); t.dateTime = at; t.textContent = time(at); li.append(t) }
    ol.append(li)
  }
  for (const bad of ['failed', 'cancelled']) {
    const at = tl[bad + '_at']
    if (at && (v.delivery_status === bad || v.status === bad)) { const li = document.createElement('li'); li.className = 'bad'; li.dataset.stage = bad; li.textContent = LABEL[bad]!; ol.append(li) }
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
  if (mode) { $('mode-label').textContent = mode[0]!; $('mode-text').textContent = mode[1]!; $('mode-detail').textContent = mode[2]! }
  if (v.shipment) $('mode-card').dataset.status = v.shipment.status
  // Each line as ordered, with its size and extras (issue 34 item 6).
  const items = $('items'); items.textContent = ''
  for (const it of v.items || []) {
    const li = document.createElement('li'); li.textContent = it.quantity + ' × ' + it.name + (it.variation ? ' (' + it.variation + ')' : '')
    if (it.extras && it.extras.length) { const x = document.createElement('span'); x.className = 'extras muted'; x.textContent = '+ ' + it.extras.join(', '); li.append(x) }
    items.append(li)
  }
  // The total in the store's currency, and what it is made of.
  const money = moneyIn(v.currency)
  $('total').textContent = typeof v.total === 'number' ? money(v.total) : ''
  const rows: Array<[string, string, string]> = [['subtotal', 'Subtotal', money(v.subtotal)]]
  if (v.discount > 0) rows.push(['discount', 'Discount', '−' + money(v.discount)])
  if (v.tip_amount > 0) rows.push(['tip', 'Tip', money(v.tip_amount)])
  if (v.delivery_fee > 0 || v.order_type === 'delivery') rows.push(['delivery_fee', 'Delivery fee', money(v.delivery_fee)])
  rows.push(['total', 'Total', money(v.total)])
  $('totals').replaceChildren(...rows.flatMap(([key, label, amount]) => {
    const dt = document.createElement('dt'), dd = document.createElement('dd')
    dt.textContent = label; dd.textContent = amount; dd.dataset.amount = key
    if (key === 'total') { dt.className = 'sum'; dd.className = 'sum' }
    return [dt, dd]
  }))
  $('paid').textContent = v.is_paid ? 'Paid' : PAY_LATER[v.order_type] ?? 'To pay'
  store = has(v.store) ? v.store as Point & { name: string } : null
  dest = has(v.destination) ? v.destination : null
  if (v.driver) {
    showDriver(v.driver)
    // The stored position may be older than the last location frame: it only starts a route.
    if (has(v.driver) && trail.length === 0) trail.push({ lat: v.driver.lat, lng: v.driver.lng })
  } else { $('driver-card').hidden = true; trail.length = 0; eta = null }
  draw()
}

function showDriver(d: { name: string | null; location_updated_at: string | null }): void {
  $('driver-card').hidden = false
  $('driver-name').textContent = d.name || 'Your driver'
  $('driver-updated').textContent = d.location_updated_at ? 'updated ' + time(d.location_updated_at) : ''
}

function onLocation(f: TrackLocationFrames): void {
  if (!view.driver) return // a late frame after the driver went out of view
  if ('trail' in f && Array.isArray(f.trail) && f.trail.length > 0) { trail.length = 0; for (const [lat, lng] of f.trail) trail.push({ lat, lng }) }
  if ('driver' in f && f.driver) {
    showDriver(f.driver)
    const last = trail[trail.length - 1]
    if (!last || last.lat !== f.driver.lat || last.lng !== f.driver.lng) trail.push({ lat: f.driver.lat, lng: f.driver.lng })
  }
  if (trail.length > 500) trail.splice(0, trail.length - 500)
  if ('eta' in f) eta = f.eta
  draw()
}

// ---- the text alternative: what the map shows, in words ----
function etaText(): string {
  // The estimate promised when the order was placed (docs/dispatch.md), until the live ETA replaces it.
  const open = view.eta && !['delivered', 'failed'].includes(view.delivery_status ?? '') && view.status !== 'cancelled'
  const promised = open && view.eta ? 'Estimated delivery around ' + new Date(view.eta.dropoff_at).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' }) + '.' : ''
  if (!view.driver) return promised
  if (eta && eta.arriving) return 'Your driver is arriving now.'
  if (!eta) return [trail.length ? 'Your driver is on the way.' : '', promised].filter(Boolean).join(' ')
  const m = eta.distance_m
  const away = (m >= 1000 ? (m / 1000).toFixed(1) + ' km' : Math.max(10, Math.round(m / 10) * 10) + ' m') + ' away'
  if (eta.seconds == null) return 'Your driver is ' + away + '.'
  return 'Arriving in about ' + Math.max(1, Math.round(eta.seconds / 60)) + ' min · ' + away + '.'
}

// ---- drawing: Leaflet when configured and working, else SVG ----
let mode: 'leaflet' | 'svg' = MAP && L ? 'leaflet' : 'svg'
let lmap: Leaflet.Map | null = null, tilesOk = false, fitted = '', refits = 0
let layers: { route: Leaflet.Polyline; store: Leaflet.CircleMarker; dest: Leaflet.CircleMarker; driver: Leaflet.CircleMarker } | null = null

function draw(): void {
  const cur = trail[trail.length - 1]
  // Once delivered the map is gone (issue 34 item 5): no empty box after the driver left it.
  const any = (store || dest || cur) && !finished(view)
  $('map-card').hidden = !any
  $('legend-store').hidden = !store; $('legend-dest').hidden = !dest; $('legend-driver').hidden = !cur
  // Where the driver is going, in words: the street address, never raw coordinates.
  $('driver-to').textContent = view.destination_address ? 'On the way to ' + view.destination_address : ''
  $('eta').textContent = etaText()
  const card = $('map-card')
  card.dataset.points = String(trail.length)
  card.dataset.driver = cur ? cur.lat + ',' + cur.lng : ''
  if (!any) return
  if (mode === 'leaflet') drawLeaflet(cur)
  else drawSvg(cur)
}

function fallback(reason: string): void {
  if (mode !== 'leaflet') return
  mode = 'svg'
  if (lmap) { lmap.remove(); lmap = null }
  $('leaflet').remove() // with every class and child Leaflet gave it; the page never goes back

  $('map-card').dataset.mode = 'svg'
  $('map-card').dataset.fallback = reason
  draw()
}

function startLeaflet(L: typeof Leaflet, MAP: MapConfig): void {
  const el = $('leaflet')
  el.hidden = false
  const map = lmap = L.map(el, { zoomControl: true, attributionControl: true })
  const tiles = L.tileLayer(MAP.tileUrl, { attribution: MAP.attribution, maxZoom: 19, referrerPolicy: 'strict-origin' })
  // The tile host is reachable once one tile arrives; an error before that, or silence, means offline drawing.
  tiles.on('tileload', () => { tilesOk = true; $('map-card').dataset.tiles = 'ok' })
  tiles.on('tileerror', () => { if (!tilesOk) fallback('tile-error') })
  setTimeout(() => { if (!tilesOk) fallback('timeout') }, MAP.timeoutMs)
  tiles.addTo(map)
  const dot = (cls: string, fill: string) => L.circleMarker([0, 0], { radius: 8, color: '#fff', weight: 3, fillColor: fill, fillOpacity: 1, className: cls })
  layers = {
    route: L.polyline([], { color: '#2563eb', weight: 4, opacity: 0.8, className: 'route-line', interactive: false }),
    store: dot('mk-store', '#b45309'), dest: dot('mk-dest', '#15803d'), driver: dot('mk-driver', '#2563eb'),
  }
  layers.store.bindTooltip('Store'); layers.dest.bindTooltip('Destination'); layers.driver.bindTooltip('Driver')
}

function place(map: Leaflet.Map, layer: Leaflet.CircleMarker, p: Point | null | undefined, label?: string | null): void {
  if (!p) { layer.remove(); return }
  layer.setLatLng([p.lat, p.lng]).addTo(map)
  if (label) layer.setTooltipContent(label)
}

function drawLeaflet(cur: Point | undefined): void {
  if (!lmap) {
    try { startLeaflet(L!, MAP!) } catch { return fallback('leaflet') }
  }
  const map = lmap!, l = layers!
  place(map, l.store, store, store && store.name)
  place(map, l.dest, dest, view.destination_address)
  place(map, l.driver, cur, view.driver && view.driver.name)
  if (trail.length > 1) l.route.setLatLngs(trail.map((p) => [p.lat, p.lng])).addTo(map)
  else l.route.remove()
  // The frame stays put while the driver moves inside it (issue 34 item 5): it is fitted when a
  // marker first appears (the driver's first fix) and again only when the driver or the destination
  // is out of view, always to every marker, so the destination never leaves the frame.
  const pts = [store, dest, cur].filter((p): p is Point => !!p).map((p): [number, number] => [p.lat, p.lng])
  const key = [!!store, !!dest, !!cur].join()
  const out = [cur, dest].some((p) => p && !map.getBounds().contains([p.lat, p.lng]))
  if (key !== fitted || out) {
    fitted = key; refits++
    if (pts.length > 1) map.fitBounds(pts, { padding: [30, 30], maxZoom: 17, animate: false }); else map.setView(pts[0]!, 15, { animate: false })
  }
  $('map-card').dataset.refits = String(refits)
}

/** The SVG map's frame (south, north, west, east), kept while the driver stays inside it. */
interface Box { s: number; n: number; w: number; e: number }
let frame: Box | null = null
const inside = (b: Box, p: Point): boolean => p.lat >= b.s && p.lat <= b.n && p.lng >= b.w && p.lng <= b.e
/** A frame around the points with room to move: a fifth of the span on each side, at least ~150 m. */
function frameAround(pts: readonly Point[]): Box {
  const lats = pts.map((p) => p.lat), lngs = pts.map((p) => p.lng)
  const s = Math.min(...lats), n = Math.max(...lats), w = Math.min(...lngs), e = Math.max(...lngs)
  const dLat = Math.max((n - s) * 0.2, 0.0015), dLng = Math.max((e - w) * 0.2, 0.0015)
  return { s: s - dLat, n: n + dLat, w: w - dLng, e: e + dLng }
}

// Equirectangular projection of a frame that moves only when it must (issue 34 item 5): fitted to
// the markers when one first appears (the driver's first fix), refitted only when the driver or the
// destination is outside it, so the driver is seen moving over a still map.
function drawSvg(cur: Point | undefined): void {
  $('map').removeAttribute('hidden') // an SVG element has no `hidden` property
  const W = 400, H = 260, PAD = 16
  const marks = [store, dest, cur].filter((p): p is Point => !!p)
  const key = [!!store, !!dest, !!cur].join()
  if (!frame || key !== fitted || [cur, dest].some((p) => p && !inside(frame!, p))) { frame = frameAround(marks); fitted = key; refits++ }
  $('map-card').dataset.refits = String(refits)
  const { s: minLat, n: maxLat, w: minLng, e: maxLng } = frame
  const k = Math.cos(((minLat + maxLat) / 2) * Math.PI / 180)
  const spanX = (maxLng - minLng) * k, spanY = maxLat - minLat
  const scale = Math.min((W - 2 * PAD) / spanX, (H - 2 * PAD) / spanY)
  const ox = (W - spanX * scale) / 2, oy = (H - spanY * scale) / 2
  const xy = (p: Point): [number, number] => [ox + (p.lng - minLng) * k * scale, H - (oy + (p.lat - minLat) * scale)]
  $('trail').setAttribute('points', trail.length > 1 ? trail.map((p) => xy(p).map((n) => n.toFixed(1)).join(',')).join(' ') : '')
  const mark = (id: string, p: Point | null | undefined): void => {
    const c = $(id)
    c.setAttribute('visibility', p ? 'visible' : 'hidden')
    if (!p) { delete c.dataset.lat; delete c.dataset.lng; return }
    const [x, y] = xy(p)
    c.setAttribute('cx', x.toFixed(1)); c.setAttribute('cy', y.toFixed(1))
    c.dataset.lat = String(p.lat); c.dataset.lng = String(p.lng)
  }
  mark('store-pos', store); mark('dest-pos', dest); mark('driver-pos', cur)
  $('dest-pos').querySelector('title')!.textContent = view.destination_address ? 'Destination: ' + view.destination_address : 'Destination'
}

let retry = 500
function connect(): void {
  const ws = new WebSocket(wsUrl)
  ws.onopen = () => { retry = 500; $('conn').textContent = 'live'; $('conn').className = 'live' }
  ws.onmessage = (e: MessageEvent<string>) => {
    let f: TrackViewFrame | TrackLocationFrames
    try { f = JSON.parse(e.data) as TrackViewFrame | TrackLocationFrames } catch { return }
    if (f.type === 'snapshot' || f.type === 'status') { const { type: _type, ...v } = f; render(v) }
    else if (f.type === 'location') onLocation(f)
  }
  ws.onclose = () => {
    $('conn').textContent = 'reconnecting…'; $('conn').className = ''
    setTimeout(connect, retry); retry = Math.min(retry * 2, 30000)
  }
}
if (MAP && !L) $('map-card').dataset.fallback = 'leaflet'
$('map-card').dataset.mode = mode
render(view)
connect()
