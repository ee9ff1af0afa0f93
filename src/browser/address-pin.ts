/**
 * The store website's saved-address form, enhanced (issue 34 item 4; docs/website.md "Accounts"):
 * inlined into the account page (src/http/pages/website-account.ts) under the page's script nonce.
 * The form works without it (the address text, and with a geocoder "Find this address" and a choice
 * of places); with it the customer also gets:
 *
 * - "Use my location": the browser's position (navigator.geolocation) becomes the pin;
 * - a map whose pin they move: click or tap to place it, drag it, or — the map focused — arrow keys
 *   (Shift: farther), `+`/`-` to zoom; its position is the form's hidden `lat`/`lng`, posted by the
 *   browser's own form submit;
 * - "Find this address" answered in place (the same form post, asking for JSON) as a list of places.
 *
 * The map is Web Mercator: the operator's tiles (`MAP_TILE_URL`) as images when configured, else an
 * offline grid with the store's position and a scale, so nothing external is contacted.
 */

interface Point { lat: number; lng: number }
interface PinConfig { store: Point | null; tiles: string | null; attribution: string }
interface Place { label: string; lat: number; lng: number }

const form = document.querySelector<HTMLFormElement>('form[data-address-form]')
if (form) enhance(form)

function enhance(f: HTMLFormElement): void {
  const cfgEl = document.getElementById('pin-config')
  const cfg = JSON.parse(cfgEl?.textContent ?? 'null') as PinConfig | null ?? { store: null, tiles: null, attribution: '' }
  const q = <T extends Element>(sel: string): T => f.querySelector<T>(sel)!
  const lat = q<HTMLInputElement>('input[name=lat]'), lng = q<HTMLInputElement>('input[name=lng]')
  const box = q<HTMLElement>('[data-pin]'), map = q<HTMLElement>('[data-pin-map]'), status = q<HTMLElement>('[data-pin-status]')
  const locate = q<HTMLButtonElement>('[data-locate]'), clear = q<HTMLButtonElement>('[data-pin-clear]')
  const address = q<HTMLInputElement>('input[name=address]')
  box.hidden = false
  if (!('geolocation' in navigator)) locate.hidden = true

  const TILE = 256, H = 260, EDGE = 24
  let zoom = 16
  let pin: Point | null = null
  let center: Point | null = cfg.store

  // ---- Web Mercator: a point as world pixels at the zoom, and back ----
  const world = (p: Point): [number, number] => {
    // Web Mercator ends at ±85.05°: beyond it a point is drawn at the edge.
    const s = TILE * 2 ** zoom, r = Math.sin(Math.max(-85.05, Math.min(85.05, p.lat)) * Math.PI / 180)
    return [(p.lng + 180) / 360 * s, (0.5 - Math.log((1 + r) / (1 - r)) / (4 * Math.PI)) * s]
  }
  const unworld = (x: number, y: number): Point => {
    const s = TILE * 2 ** zoom
    return { lat: Math.atan(Math.sinh(Math.PI * (1 - 2 * y / s))) * 180 / Math.PI, lng: x / s * 360 - 180 }
  }
  const width = (): number => map.clientWidth || 320
  const screen = (p: Point): [number, number] => {
    const [cx, cy] = world(center!), [x, y] = world(p)
    return [x - cx + width() / 2, y - cy + H / 2]
  }
  const at = (sx: number, sy: number): Point => {
    const [cx, cy] = world(center!)
    return unworld(cx + sx - width() / 2, cy + sy - H / 2)
  }
  const metres = (a: Point, b: Point): number => {
    const k = Math.PI / 180, dLat = (b.lat - a.lat) * k, dLng = (b.lng - a.lng) * k
    const h = Math.sin(dLat / 2) ** 2 + Math.cos(a.lat * k) * Math.cos(b.lat * k) * Math.sin(dLng / 2) ** 2
    return 2 * 6371000 * Math.asin(Math.sqrt(h))
  }
  const distance = (m: number): string => (m < 1000 ? Math.round(m) + ' m' : (m / 1000).toFixed(1) + ' km')
  const round = (n: number): string => n.toFixed(6).replace(/0+$/, '').replace(/\.$/, '')

  /** Centre on `p` at the closest zoom (17 … 12) that still shows the store, so the customer sees where the pin is relative to it. */
  function frame(p: Point): void {
    center = p
    if (!cfg.store) { zoom = 16; return }
    for (zoom = 17; zoom > 12; zoom--) {
      const [x, y] = screen(cfg.store)
      if (x > EDGE && y > EDGE && x < width() - EDGE && y < H - EDGE) break
    }
  }

  // ---- the pin and the fields ----
  function setPin(p: Point | null, why: string): void {
    pin = p
    lat.value = p ? round(p.lat) : ''
    lng.value = p ? round(p.lng) : ''
    clear.hidden = !p
    if (p) {
      const [x, y] = center ? screen(p) : [0, 0]
      if (!center || x < EDGE || y < EDGE || x > width() - EDGE || y > H - EDGE) center = p
    }
    status.textContent = p
      ? `${why} Pin at ${round(p.lat)}, ${round(p.lng)}${cfg.store ? ` (${distance(metres(cfg.store, p))} from the store)` : ''}.`
      : why
    draw()
  }

  function draw(): void {
    map.hidden = !center
    map.dataset.lat = lat.value
    map.dataset.lng = lng.value
    if (!center) return
    const w = width()
    const parts: string[] = []
    const [cx, cy] = world(center)
    if (cfg.tiles) {
      // The tiles under the viewport, as plain images (the page's CSP names the tile host).
      const n = 2 ** zoom
      for (let tx = Math.floor((cx - w / 2) / TILE); tx <= Math.floor((cx + w / 2) / TILE); tx++) {
        for (let ty = Math.floor((cy - H / 2) / TILE); ty <= Math.floor((cy + H / 2) / TILE); ty++) {
          if (ty < 0 || ty >= n) continue
          const url = cfg.tiles.replace('{z}', String(zoom)).replace('{x}', String(((tx % n) + n) % n)).replace('{y}', String(ty))
            .replace('{s}', 'abc'[(Math.abs(tx + ty)) % 3]!).replace('{r}', '')
          parts.push(`<image href="${url.replace(/&/g, '&amp;').replace(/"/g, '&quot;')}" x="${(tx * TILE - cx + w / 2).toFixed(0)}" y="${(ty * TILE - cy + H / 2).toFixed(0)}" width="${TILE}" height="${TILE}"/>`)
        }
      }
    } else {
      // Offline: a grid of 100 m squares, so a move of the pin shows as a distance.
      // 100 m squares down to zoom 14; coarser zooms widen them (4× per two zooms), so lines stay apart.
      const metersPerSquare = 100 * 2 ** Math.max(0, 14 - zoom)
      const step = Math.max(8, metersPerSquare / (156543.03 * Math.cos(Math.min(85, Math.abs(center.lat)) * Math.PI / 180) / 2 ** zoom))
      for (let x = ((w / 2 - cx) % step + step) % step; x < w; x += step) parts.push(`<line stroke="#cfc8b8" x1="${x.toFixed(1)}" y1="0" x2="${x.toFixed(1)}" y2="${H}"/>`)
      for (let y = ((H / 2 - cy) % step + step) % step; y < H; y += step) parts.push(`<line stroke="#cfc8b8" x1="0" y1="${y.toFixed(1)}" x2="${w}" y2="${y.toFixed(1)}"/>`)
      parts.push(`<text x="8" y="${H - 8}" fill="#333" font-size="12">squares of ${metersPerSquare >= 1000 ? metersPerSquare / 1000 + ' km' : metersPerSquare + ' m'}</text>`)
    }
    if (cfg.store) {
      const [x, y] = screen(cfg.store)
      parts.push(`<g data-store-mark><circle cx="${x.toFixed(1)}" cy="${y.toFixed(1)}" r="7" fill="#b45309" stroke="#fff" stroke-width="3"/><text x="${(x + 11).toFixed(1)}" y="${(y + 4).toFixed(1)}" fill="#222" font-size="13" font-weight="bold">Store</text></g>`)
    }
    if (pin) {
      const [x, y] = screen(pin)
      parts.push(`<g data-pin-mark><path d="M${x.toFixed(1)} ${y.toFixed(1)} l-9 -16 a10 10 0 1 1 18 0 z" fill="#15803d" stroke="#fff" stroke-width="2"/><circle cx="${x.toFixed(1)}" cy="${(y - 20).toFixed(1)}" r="3.5" fill="#fff"/></g>`)
    }
    map.innerHTML = `<svg width="${w}" height="${H}" viewBox="0 0 ${w} ${H}" aria-hidden="true" focusable="false">${parts.join('')}</svg>` +
      (cfg.tiles && cfg.attribution ? `<span class="attribution"></span>` : '')
    const credit = map.querySelector('.attribution')
    if (credit) credit.textContent = cfg.attribution
  }

  // ---- placing the pin: click or tap, drag, keys ----
  const pointAt = (e: PointerEvent): Point => {
    const r = map.getBoundingClientRect()
    return at(e.clientX - r.left, e.clientY - r.top)
  }
  let dragging = false
  map.addEventListener('pointerdown', (e) => { dragging = true; map.setPointerCapture(e.pointerId); setPin(pointAt(e), 'Placed on the map.') })
  map.addEventListener('pointermove', (e) => { if (dragging) setPin(pointAt(e), 'Moved on the map.') })
  map.addEventListener('pointerup', () => { dragging = false })
  map.addEventListener('pointercancel', () => { dragging = false })
  map.addEventListener('keydown', (e) => {
    if (e.key === '+' || e.key === '=' || e.key === '-') {
      zoom = Math.min(19, Math.max(3, zoom + (e.key === '-' ? -1 : 1)))
      e.preventDefault(); draw(); return
    }
    const dir: Record<string, [number, number]> = { ArrowUp: [0, -1], ArrowDown: [0, 1], ArrowLeft: [-1, 0], ArrowRight: [1, 0] }
    const d = dir[e.key]
    if (!d || !center) return
    e.preventDefault()
    const from = pin ?? center
    const [x, y] = screen(from), step = e.shiftKey ? 50 : 10
    setPin(at(x + d[0] * step, y + d[1] * step), 'Moved with the keys.')
  })

  // ---- the browser's location ----
  locate.addEventListener('click', () => {
    status.textContent = 'Asking your browser for your location…'
    navigator.geolocation.getCurrentPosition(
      (p) => { frame({ lat: p.coords.latitude, lng: p.coords.longitude }); setPin({ lat: p.coords.latitude, lng: p.coords.longitude }, `Your location (within about ${Math.round(p.coords.accuracy)} m): move the pin if it is not quite right.`) },
      (err) => { status.textContent = (err.code === err.PERMISSION_DENIED ? 'Your browser did not share your location.' : 'Your location is not available right now.') + ' Place the pin on the map or find the address instead.' },
      { enableHighAccuracy: true, timeout: 15000, maximumAge: 60000 },
    )
  })
  clear.addEventListener('click', () => setPin(null, 'No position: the address is saved as text only.'))

  // ---- places: chosen from the list the server drew, or found in place ----
  const choose = (p: Place): void => { address.value = p.label; frame(p); setPin(p, 'The place you chose:') }
  f.addEventListener('change', (e) => {
    const r = e.target as HTMLInputElement
    if (r.name !== 'place' || !r.checked) return
    const m = /^(-?[\d.]+),(-?[\d.]+),([\s\S]*)$/.exec(r.value)
    if (m) choose({ lat: Number(m[1]), lng: Number(m[2]), label: m[3]! })
  })
  const find = f.querySelector<HTMLButtonElement>('[data-find]')
  const list = f.querySelector<HTMLElement>('[data-places]')
  if (find && list) {
    find.addEventListener('click', async (e) => {
      e.preventDefault()
      find.disabled = true
      list.textContent = 'Looking for the address…'
      try {
        const r = await fetch(find.formAction, { method: 'POST', body: new URLSearchParams(new FormData(f) as unknown as Record<string, string>), headers: { Accept: 'application/json' }, credentials: 'same-origin' })
        const j = await r.json() as { places: Place[]; message: string }
        list.textContent = ''
        const p = document.createElement('p')
        p.setAttribute('role', 'status')
        p.textContent = j.message
        list.append(p)
        for (const place of j.places) {
          const b = document.createElement('button')
          b.type = 'button'; b.className = 'btn place'; b.textContent = place.label
          b.addEventListener('click', () => choose(place))
          list.append(b)
        }
      } catch {
        f.requestSubmit(find)
      } finally {
        find.disabled = false
      }
    })
  }

  // A position posted back with the form (a refusal, a search) is the pin again, when it is one.
  const start = lat.value && lng.value ? { lat: Number(lat.value), lng: Number(lng.value) } : null
  if (start && Math.abs(start.lat) <= 85 && Math.abs(start.lng) <= 180) { frame(start); setPin(start, 'The position given.') } else draw()
  window.addEventListener('resize', draw)
}
