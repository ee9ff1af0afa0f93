// The Dispatch view (docs/dashboard.md "Dispatch"; issue 37 item 3): the store's delivery zones, its
// location and the on-shift drivers on a map — Leaflet over the operator's tiles when MAP_TILE_URL is
// set (the shell then loads Leaflet from this server), else, or when the tiles do not load, drawn
// here in SVG with nothing fetched from elsewhere, as the tracking page does — the orders waiting for a driver with the dispatcher's decision for each (candidates with
// their scores, batching detours, drivers left out and why, every offer's fate: the same operation as
// GET …/orders/{id}/dispatch, for all waiting orders at once: GET …/dispatch/waiting), the orders on
// the way and the drivers on shift. Live from the dispatch socket (/ws/dispatch/{store}); the
// decisions are read again on every frame about a waiting order and every few seconds (offers
// answered and expiring send no frame).

import type * as Leaflet from 'leaflet'
import { S, act, api, body, h, liveSocket, say, table, theStore, time, view, type Json } from './core.js'

interface LatLng { lat: number; lng: number }
/** How often the decisions of waiting orders are read again while any is waiting (one request each time). */
const EXPLAIN_EVERY_MS = 4000
const W = 600
const H = 400
const PAD = 20
/** No tile within this long: the SVG drawing instead (the tracking page's limit). */
const TILE_TIMEOUT_MS = 8000
const L = (window as unknown as { L?: typeof Leaflet }).L
const TILES = body.dataset.tileUrl ? { url: body.dataset.tileUrl, attribution: body.dataset.tileAttribution ?? '' } : null
/** Leaflet shows the attribution as HTML: the operator's text is text. */
const htmlText = (s: string): string => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`)

/** A circle zone as a polygon of 48 points (the map projects plain longitude/latitude). */
function circleRing(c: LatLng, radiusM: number): Array<[number, number]> {
  const dLat = radiusM / 111_195
  const dLng = dLat / Math.max(0.01, Math.cos((c.lat * Math.PI) / 180))
  return Array.from({ length: 48 }, (_, i) => {
    const a = (i / 48) * 2 * Math.PI
    return [c.lng + dLng * Math.cos(a), c.lat + dLat * Math.sin(a)]
  })
}

/** A zone's outer ring as [lng, lat] points. */
const ringOf = (z: Json): Array<[number, number]> => (z.polygon ? (z.polygon[0] as Array<[number, number]>) : circleRing(z.center, z.radius_m))

/** Seconds as "3 min" or "45 s". */
const dur = (s: number | null | undefined): string => (s == null ? '' : s >= 90 ? `${Math.round(s / 60)} min` : `${s} s`)
const words = (x: string): string => x.replace(/_/g, ' ')
/** A table wider than its column scrolls: reachable by keyboard, and named. */
function scrollable(label: string, wrap: HTMLElement): HTMLElement {
  wrap.setAttribute('tabindex', '0')
  wrap.setAttribute('role', 'region')
  wrap.setAttribute('aria-label', label)
  return wrap
}

export async function dispatchPage(): Promise<void> {
  const storeId = theStore().id
  const drivers = new Map<number, Json>()
  const deliveries = new Map<number, Json>()
  const explained = new Map<number, Json>()
  const [zonesBody, settings] = await Promise.all([api('GET', `${S()}/delivery-zones`), api('GET', `${S()}/settings`)])
  const zones: Json[] = zonesBody.zones || []
  const home: LatLng | null = settings.location || null
  const mode: string = (settings.dispatch && settings.dispatch.mode) || 'manual'

  const map = h('svg', { class: 'map', viewBox: `0 0 ${W} ${H}`, role: 'img', 'aria-labelledby': 'map-title' })
  const mapBox = h('div', { id: 'dispatch-map', data: { mode: 'svg' } }, map)
  const mapDesc = h('p', { id: 'map-desc', class: 'muted' })
  const legend = h('ul', { class: 'legend muted', 'aria-label': 'Map legend' },
    h('li', {}, h('span', { class: 'swatch zone' }), 'delivery zone'), h('li', {}, h('span', { class: 'swatch store' }), 'the store'), h('li', {}, h('span', { class: 'swatch driver' }), 'driver on shift'))
  const waitingBox = h('section', { id: 'waiting', 'aria-labelledby': 'waiting-title' })
  const rest = h('div', {})
  const live = h('span', { class: 'live-dot pill warn', text: 'connecting…' })
  view.replaceChildren(
    h('p', {}, `Dispatch mode: `, h('b', { id: 'dispatch-mode', text: mode }), mode === 'manual' ? ' (people assign and offer; the dispatcher decides nothing).' : ' (the dispatcher decides; its decisions are shown per order).', ' ', live),
    h('div', { class: 'split' }, h('div', {}, mapBox, legend, mapDesc), h('div', {}, waitingBox, rest)))

  // ---- the map over tiles (Leaflet), until the tiles fail ----
  let lmap: Leaflet.Map | null = null
  let driverLayer: Leaflet.LayerGroup | null = null
  let fitted = false
  function fallback(reason: string): void {
    if (!lmap) return
    lmap.remove()
    lmap = null
    mapBox.replaceChildren(map)
    mapBox.dataset.mode = 'svg'
    mapBox.dataset.fallback = reason
    drawMap()
  }
  if (TILES && L) {
    try {
      const el = h('div', { class: 'leaflet-box', role: 'region', 'aria-label': 'Dispatch map over map tiles' })
      mapBox.replaceChildren(el)
      mapBox.dataset.mode = 'leaflet'
      lmap = L.map(el, { zoomControl: true, attributionControl: true })
      let tilesOk = false
      const tiles = L.tileLayer(TILES.url, { attribution: htmlText(TILES.attribution), maxZoom: 19, referrerPolicy: 'strict-origin' })
      tiles.on('tileload', () => { tilesOk = true; mapBox.dataset.tiles = 'ok' })
      tiles.on('tileerror', () => { if (!tilesOk) fallback('tile-error') })
      setTimeout(() => { if (!tilesOk) fallback('timeout') }, TILE_TIMEOUT_MS)
      tiles.addTo(lmap)
      for (const z of zones) {
        const shape = z.polygon
          ? L.polygon((z.polygon as Array<Array<[number, number]>>).map((ring) => ring.map(([lng, lat]): [number, number] => [lat, lng])), { color: '#0b5cad', weight: 2, fillOpacity: 0.08, className: 'zone' })
          : L.circle([z.center.lat, z.center.lng], { radius: z.radius_m, color: '#0b5cad', weight: 2, fillOpacity: 0.08, className: 'zone' })
        shape.bindTooltip(`${z.name} · fee ${Number(z.fee).toFixed(2)}`).addTo(lmap)
      }
      if (home) L.circleMarker([home.lat, home.lng], { radius: 8, color: '#fff', weight: 3, fillColor: '#8a5300', fillOpacity: 1, className: 'mk-store' }).bindTooltip(theStore().title).addTo(lmap)
      driverLayer = L.layerGroup().addTo(lmap)
      lmap.setView(home ? [home.lat, home.lng] : [0, 0], home ? 13 : 2)
    } catch {
      fallback('leaflet')
    }
  }

  function drawLeaflet(pts: Json[], all: Array<[number, number]>, desc: string): void {
    const m = lmap!
    mapBox.dataset.desc = desc
    driverLayer!.clearLayers()
    for (const d of pts) {
      L!.circleMarker([d.location.lat, d.location.lng], { radius: 7, color: '#fff', weight: 2, fillColor: '#0b5cad', fillOpacity: 1, className: `mk-driver driver-${d.id}` })
        .bindTooltip(d.name).addTo(driverLayer!)
    }
    // Frame the zones, the store and the drivers once; afterwards the owner moves the map.
    if (!fitted && all.length > 1) { fitted = true; m.fitBounds(all.map(([lng, lat]): [number, number] => [lat, lng]), { padding: [20, 20], maxZoom: 16 }) }
  }

  function drawMap(): void {
    const pts = [...drivers.values()].filter((d) => d.on_shift && d.location)
    const all: Array<[number, number]> = [...zones.flatMap(ringOf), ...pts.map((d): [number, number] => [d.location.lng, d.location.lat])]
    if (home) all.push([home.lng, home.lat])
    // Longitude shrinks with latitude: scale it so the zones keep their shape, then fit the box.
    const desc = `${zones.length} delivery zone(s)${zones.length ? ': ' + zones.map((z) => `${z.name} (fee ${Number(z.fee).toFixed(2)})`).join(', ') : ''}; ` +
      `${home ? 'the store' : 'the store has no location'}; ${pts.length} driver(s) on shift with a position${pts.length ? ': ' + pts.map((d) => d.name).join(', ') : ''}.`
    mapDesc.textContent = desc
    if (lmap) return drawLeaflet(pts, all, desc)
    const lat0 = all.length ? all.reduce((s, p) => s + p[1], 0) / all.length : 0
    const k = Math.cos((lat0 * Math.PI) / 180)
    const xs = all.map((p) => p[0] * k)
    const ys = all.map((p) => p[1])
    const pad = 0.002
    const [x0, x1] = xs.length ? [Math.min(...xs) - pad, Math.max(...xs) + pad] : [0, 1]
    const [y0, y1] = ys.length ? [Math.min(...ys) - pad, Math.max(...ys) + pad] : [0, 1]
    const scale = Math.min((W - 2 * PAD) / (x1 - x0 || 1), (H - 2 * PAD) / (y1 - y0 || 1))
    const ox = (W - (x1 - x0) * scale) / 2
    const oy = (H - (y1 - y0) * scale) / 2
    const X = (lng: number): number => ox + (lng * k - x0) * scale
    const Y = (lat: number): number => H - oy - (lat - y0) * scale
    const path = (ring: Array<[number, number]>) => ring.map(([lng, lat], i) => `${i ? 'L' : 'M'}${X(lng).toFixed(1)},${Y(lat).toFixed(1)}`).join('') + 'Z'
    map.replaceChildren(
      h('title', { id: 'map-title', text: `Dispatch map: ${desc}` }),
      ...zones.map((z) => h('g', { data: { zone: z.name } },
        h('path', { d: path(ringOf(z)), fill: '#0b5cad', 'fill-opacity': 0.08, stroke: '#0b5cad', 'stroke-width': 1.5 }),
        h('text', { x: X(ringOf(z)[0]![0]), y: Y(ringOf(z)[0]![1]) - 4, 'font-size': 12, fill: '#0b3d73', text: z.name }))),
      home ? h('g', { data: { store: storeId } },
        h('rect', { x: X(home.lng) - 7, y: Y(home.lat) - 7, width: 14, height: 14, fill: '#8a5300', stroke: '#fff', 'stroke-width': 2 }),
        h('text', { x: X(home.lng) + 10, y: Y(home.lat) + 4, 'font-size': 13, fill: '#1d232b', text: theStore().title })) : '',
      ...pts.map((d) => h('g', { data: { driverId: d.id } },
        h('circle', { cx: X(d.location.lng), cy: Y(d.location.lat), r: 8, fill: '#0b5cad', stroke: '#fff', 'stroke-width': 2 }),
        h('text', { x: X(d.location.lng) + 11, y: Y(d.location.lat) + 4, 'font-size': 13, fill: '#1d232b', text: d.name }))),
      all.length ? '' : h('text', { x: W / 2, y: H / 2, 'text-anchor': 'middle', fill: '#5b6570', text: 'No zones, store location or driver positions yet' }))
  }

  const driverName = (id: number | null | undefined): string => (id == null ? '' : (drivers.get(id) || {}).name || `driver #${id}`)

  /** One waiting order: where it stands, each offer, the last decision's candidates and exclusions, and the manual controls. */
  function waitingCard(d: Json): HTMLElement {
    const e = explained.get(d.id)
    const last = e && e.decisions.length ? e.decisions[e.decisions.length - 1] : null
    const state = !e ? 'loading…' : e.mode === 'manual' ? 'manual: waiting for someone to assign or offer it' : `${e.state}${e.state === 'waiting' && e.due_at ? `, due ${time(e.due_at)}` : ''}`
    const offers = e && e.offers.length
      ? h('ul', { class: 'offers', 'aria-label': `Offers of order ${d.id}` }, e.offers.map((o: Json) => h('li', { data: { offerDriver: o.driver_id, offerStatus: o.status } },
        `${driverName(o.driver_id)}: `, h('b', { text: o.status }), o.status === 'pending' ? ` until ${time(o.expires_at)}` : o.responded_at ? ` at ${time(o.responded_at)}` : '')))
      : h('p', { class: 'muted', text: 'No offer yet.' })
    const decision = last ? h('div', { class: 'decision', data: { decision: last.action } },
      h('p', {}, 'Last decision ', h('b', { text: words(last.action) }), last.driver_id ? ` → ${driverName(last.driver_id)}` : '', ` at ${time(last.at)}`,
        last.router && last.router.fallback ? h('span', { class: 'pill warn', text: `router fell back: ${last.router.fallback}` }) : ''),
      last.candidates.length ? scrollable(`Candidates for order ${d.id}`, table(['Rank', 'Driver', 'Travel', 'Arrives', 'Late', 'Load', 'Batch detour'], last.candidates.map((c: Json) => h('tr', { data: { candidate: c.driver_id } },
        h('td', { class: 'num', text: c.rank }), h('td', { text: driverName(c.driver_id) }), h('td', { class: 'num', text: dur(c.travel_s) }), h('td', { text: time(c.arrival_at) }),
        h('td', { class: 'num', text: c.late_s ? dur(c.late_s) : 'on time' }), h('td', { class: 'num', text: c.load }),
        h('td', { text: c.batch ? `+${dur(c.batch.detour_s)} of ${dur(c.batch.limit_s)}` : '' })))))
        : h('p', { class: 'muted', text: 'No candidate.' }),
      last.excluded.length ? h('p', { class: 'muted' }, 'Left out: ', last.excluded.map((x: Json, i: number) => h('span', { data: { excluded: x.driver_id, reason: x.reason } },
        i ? ', ' : '', `${driverName(x.driver_id)} (${words(x.reason)}${x.detour_s != null ? `: +${dur(x.detour_s)} of ${dur(x.limit_s)}` : ''})`))) : '')
      : h('p', { class: 'muted', text: e && e.mode !== 'manual' ? 'No decision yet.' : '' })
    return h('article', { class: 'card waiting', data: { waitingOrder: d.id }, 'aria-labelledby': `waiting-${d.id}` },
      h('h3', { id: `waiting-${d.id}`, text: `#${d.id} ${d.customer_name || ''}` }),
      h('p', {}, d.address || '', ' · ', h('span', { class: 'pill', data: { state: e ? e.state ?? 'manual' : '' }, text: state })),
      offers, decision, assignForm(d))
  }

  /** After an action the focus leaves the waiting list and it is redrawn (its frame may have come while the form had the focus). */
  const settle = (): void => {
    if (waitingBox.contains(document.activeElement)) (document.activeElement as HTMLElement).blur()
    drawLists()
  }

  function assignForm(d: Json): HTMLElement {
    const onShift = [...drivers.values()].filter((x) => x.on_shift)
    const pick = h('select', { 'aria-label': `Driver for order ${d.id}` }, onShift.map((x) => h('option', { value: x.id, text: x.name })))
    return h('form', { class: 'row', on: { submit: act(async () => {
      await api('POST', `${S()}/orders/${d.id}/assign`, { driver_id: Number(pick.value) })
      say(`Order #${d.id} assigned.`)
      settle()
    }) } }, pick, h('button', { type: 'submit', disabled: onShift.length === 0, text: 'Assign' }),
    h('button', { type: 'button', on: { click: act(async () => { await api('POST', `${S()}/orders/${d.id}/offers`, {}); say(`Order #${d.id} offered.`); settle(); refresh() }) }, text: 'Offer' }))
  }

  function drawLists(): void {
    const onShift = [...drivers.values()].filter((d) => d.on_shift)
    const waiting = [...deliveries.values()].filter((d) => d.delivery_status === 'pending')
    const moving = [...deliveries.values()].filter((d) => d.delivery_status !== 'pending')
    // A form being used is not redrawn under the cursor.
    if (!waitingBox.contains(document.activeElement)) {
      waitingBox.replaceChildren(h('h2', { id: 'waiting-title', text: `Waiting for a driver (${waiting.length})` }),
        ...(waiting.length ? waiting.map(waitingCard) : [h('p', { class: 'muted', text: 'None.' })]))
    }
    rest.replaceChildren(
      h('h2', { text: `On the way (${moving.length})` }),
      moving.length ? table(['Order', 'Status', 'Driver'], moving.map((d) => h('tr', { data: { movingOrder: d.id } }, h('td', { text: `#${d.id}` }), h('td', { text: words(d.delivery_status) }), h('td', { text: driverName(d.driver_id) })))) : h('p', { class: 'muted', text: 'None.' }),
      h('h2', { text: `Drivers on shift (${onShift.length})` }),
      onShift.length ? h('ul', {}, onShift.map((d) => h('li', { data: { shiftDriver: d.id } }, d.name,
        d.location ? ` · position ${time(d.location.location_updated_at)}` : ' · no position yet', d.connected ? ' · app open' : ''))) : h('p', { class: 'muted', text: 'Nobody.' }))
  }
  const draw = (): void => { drawMap(); drawLists() }

  /**
   * Read the decisions of the waiting orders again (one request: GET …/dispatch/waiting, the explain
   * operation's view of each), then redraw; a call while one is in flight runs once after it.
   */
  let reading: Promise<void> | null = null
  let again = false
  function refresh(): void {
    if (reading) { again = true; return }
    reading = (async () => {
      try {
        const list = await api('GET', `${S()}/dispatch/waiting`)
        explained.clear()
        for (const e of list.data as Json[]) explained.set(e.order_id, e)
        drawLists()
      } catch {
        // The next frame or round tries again; the page keeps what it showed.
      } finally {
        reading = null
        if (again) { again = false; refresh() }
      }
    })()
  }
  setInterval(() => { if ([...deliveries.values()].some((d) => d.delivery_status === 'pending')) refresh() }, EXPLAIN_EVERY_MS)

  liveSocket<Json>(`/ws/dispatch/${storeId}`, (f) => {
    if (f.type === 'snapshot') {
      drivers.clear(); deliveries.clear()
      for (const d of f.drivers) drivers.set(d.id, d)
      for (const d of f.deliveries) deliveries.set(d.id, d)
      refresh()
    } else if (f.type === 'location') {
      const d = drivers.get(f.driver_id)
      if (d) d.location = { lat: f.lat, lng: f.lng, location_updated_at: f.location_updated_at }
    } else if (f.type === 'driver') {
      drivers.set(f.driver_id, { ...(drivers.get(f.driver_id) || { id: f.driver_id, location: null }), name: f.name, on_shift: f.on_shift, connected: f.connected })
    } else if (f.type === 'delivery') {
      const d = f.delivery
      if (['delivered', 'failed'].includes(d.delivery_status) || d.status === 'cancelled') deliveries.delete(d.id)
      else deliveries.set(d.id, d)
      if (d.delivery_status === 'pending') refresh()
      else explained.delete(d.id)
    }
    draw()
  }, (up) => { live.textContent = up ? 'live' : 'reconnecting…'; live.className = up ? 'live-dot pill live' : 'live-dot pill warn' })
  draw()
}
