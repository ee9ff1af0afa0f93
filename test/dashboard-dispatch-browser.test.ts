/**
 * The dashboard's Dispatch page in headless Chromium (issue 37 item 3; docs/dashboard.md "Dispatch"),
 * walked as an owner: the store's delivery zone, the store and the on-shift driver on the map (drawn
 * without tiles); a new delivery order appears among the waiting orders, live, with the dispatcher's
 * decision (the candidate with its scores, the offer pending); assigning it from the page (the browser
 * submits the form) moves it to the orders on the way. No script error, CSP violation, failed or
 * outside request; axe-core finds no serious or critical problem. With MAP_TILE_URL the map is
 * Leaflet over those tiles (a local fake tile server; the CSP names its origin), and falls back to the
 * SVG drawing when the tiles fail.
 */
import t from 'tap'
import { startServer } from './helpers/server.ts'
import { axeCheck, browserAndServer } from './helpers/browser.ts'
import { dashboardWindow, firstItem, signIn } from './helpers/dashboard.ts'
import { fakeTileServer } from './helpers/tracking-map.ts'

const STORE = { lat: 38.71, lng: -9.13 }
const north = (km: number) => ({ lat: STORE.lat + km / 111.195, lng: STORE.lng })

const both = await browserAndServer(t)
if (both) {
  const { browser, s } = both
  const demo = s.seed()
  const owner = demo.owner.token
  const store = demo.store.id
  const driver = demo.driver

  t.test('waiting orders with their decision, zones and drivers on the map; an assignment moves the order on', async (t) => {
    const put = async (path: string, body: unknown) => {
      const r = await s.req('PUT', `/restaurants/${store}${path}`, { token: owner, body })
      t.equal(r.status, 200, `PUT ${path}`)
    }
    await put('/settings', { location: STORE, prep_minutes: 1, dispatch: { mode: 'offer', offer_seconds: 600 } })
    await put('/delivery-zones', { zones: [{ name: 'Centre', center: STORE, radius_m: 5000, fee: 2.5 }] })
    t.equal((await s.req('PUT', `/drivers/${driver.id}`, { token: owner, body: { restaurant_id: store } })).status, 200, 'the demo driver serves the store')
    t.equal((await s.req('POST', '/driver/shift', { token: driver.token, body: { action: 'start' } })).status, 200)
    t.equal((await s.req('PUT', '/driver/location', { token: driver.token, body: north(0.6) })).status, 200)

    const { page, clean } = await dashboardWindow(t, browser, s.site)
    await signIn(page, s.site, demo.owner, `/dashboard/dispatch?store=${store}`)
    await page.waitForSelector('#view .live-dot.live')
    t.equal(await page.locator('#dispatch-mode').textContent(), 'offer')
    t.equal(await page.locator('svg.map [data-zone="Centre"] path').count(), 1, 'the zone on the map')
    t.equal(await page.locator(`svg.map [data-store="${store}"]`).count(), 1, 'the store on the map')
    await page.locator(`svg.map [data-driver-id="${driver.id}"]`).waitFor()
    t.match(await page.locator('svg.map title').textContent(), /1 delivery zone\(s\): Centre \(fee 2\.50\).*1 driver\(s\) on shift with a position/, 'the map says what it shows')
    t.equal(await page.locator('[data-waiting-order]').count(), 0, 'nothing waiting yet')

    // A delivery order inside the zone: it appears, live, with the decision that offered it to the driver.
    const placed = await s.req('POST', `/restaurants/${store}/orders`, {
      token: owner, body: { type: 'delivery', address: '2 Rua Augusta', customer_name: 'Rita', phone: '+351910000000', ...north(2), items: [{ item_id: firstItem(s.app.svc.db, store), quantity: 1 }] },
    })
    t.equal(placed.status, 200, 'a delivery order placed inside the zone')
    const orderId = (placed.body as { id: number }).id
    const card = page.locator(`[data-waiting-order="${orderId}"]`)
    await card.waitFor()
    t.match(await card.textContent(), /Rita[\s\S]*2 Rua Augusta/)
    const candidate = card.locator(`[data-decision="offered"] tr[data-candidate="${driver.id}"]`)
    await candidate.waitFor()
    t.match(await candidate.textContent(), new RegExp(`^1${driver.name}`), 'the driver ranked first, by name')
    t.match(await candidate.locator('td').nth(4).textContent(), /on time|\d+ (s|min)/, 'lateness shown')
    await card.locator(`[data-offer-driver="${driver.id}"][data-offer-status="pending"]`).waitFor()
    t.match(await card.locator('[data-state]').textContent(), /^offered/, 'the order\'s dispatch state')
    const api = (await s.req('GET', `/restaurants/${store}/orders/${orderId}/dispatch`, { token: owner })).body
    t.match(api, { state: 'offered', decisions: [{ action: 'offered', driver_id: driver.id }] }, 'the page shows what the explain operation says')
    await axeCheck(t, page, 'dispatch with a waiting order')

    // Assign it from the page: it leaves the waiting orders and is on the way with its driver.
    await card.getByLabel(`Driver for order ${orderId}`).selectOption(String(driver.id))
    await card.getByRole('button', { name: 'Assign' }).click()
    await card.waitFor({ state: 'detached' })
    const moving = page.locator(`[data-moving-order="${orderId}"]`)
    await moving.waitFor()
    t.match(await moving.textContent(), new RegExp(`assigned${driver.name}`))
    t.match((await s.req('GET', `/restaurants/${store}/orders/${orderId}`, { token: owner })).body, { driver: { id: driver.id }, delivery_status: 'assigned' }, 'assigned through the API')
    t.match(await page.locator('#notice').textContent(), `Order #${orderId} assigned.`)
    await axeCheck(t, page, 'dispatch after the assignment')
    clean()
  })

  t.test('with MAP_TILE_URL: Leaflet over the tiles, zones and markers on it; failing tiles fall back to the SVG drawing', async (t) => {
    const tiles = await fakeTileServer()
    t.teardown(() => tiles.close())
    const m = await startServer({ RATE_LIMIT_PER_MINUTE: '100000', MAP_TILE_URL: tiles.template, MAP_TILE_ATTRIBUTION: '© Test <b>Tiles</b>' })
    t.teardown(() => m.close())
    const mdemo = m.seed()
    const mstore = mdemo.store.id
    t.equal((await m.req('PUT', `/restaurants/${mstore}/settings`, { token: mdemo.owner.token, body: { location: STORE } })).status, 200)
    t.equal((await m.req('PUT', `/restaurants/${mstore}/delivery-zones`, { token: mdemo.owner.token, body: { zones: [{ name: 'Centre', polygon: [[[-9.15, 38.70], [-9.11, 38.70], [-9.11, 38.73], [-9.15, 38.73], [-9.15, 38.70]]], fee: 2 }] } })).status, 200)
    await m.req('PUT', `/drivers/${mdemo.driver.id}`, { token: mdemo.owner.token, body: { restaurant_id: mstore } })
    await m.req('POST', '/driver/shift', { token: mdemo.driver.token, body: { action: 'start' } })
    await m.req('PUT', '/driver/location', { token: mdemo.driver.token, body: north(1) })

    const open = async () => {
      const ctx = await browser.newContext()
      t.teardown(() => ctx.close())
      const page = await ctx.newPage()
      const seen = { requests: [] as string[], problems: [] as string[], csp: '' }
      page.on('request', (r) => seen.requests.push(r.url()))
      page.on('pageerror', (e) => seen.problems.push(String(e)))
      page.on('response', (r) => { if (new URL(r.url()).pathname === '/dashboard/dispatch') seen.csp = r.headers()['content-security-policy'] ?? '' })
      await signIn(page, m.site, mdemo.owner, `/dashboard/dispatch?store=${mstore}`)
      await page.waitForSelector('#view .live-dot.live')
      return { page, ...seen }
    }

    const { page, requests, problems, csp } = await open()
    await page.waitForSelector('#dispatch-map[data-tiles="ok"]')
    t.equal(await page.getAttribute('#dispatch-map', 'data-mode'), 'leaflet')
    t.equal(await page.locator('#dispatch-map path.zone').count(), 1, 'the zone drawn over the tiles')
    t.equal(await page.locator('#dispatch-map path.mk-store').count(), 1, 'the store')
    await page.locator(`#dispatch-map path.driver-${mdemo.driver.id}`).waitFor()
    t.match(await page.locator('.leaflet-control-attribution').textContent(), '© Test <b>Tiles</b>', 'the attribution as text')
    t.match(csp, new RegExp(`img-src 'self' data: ${tiles.origin.replace(/[.]/g, '\\.')};`), 'the CSP names the tile host for images')
    t.ok(tiles.requests.length > 0, 'tiles were fetched')
    t.same(requests.filter((u) => !u.startsWith(m.site) && !u.startsWith(m.site.replace('http', 'ws')) && !u.startsWith(tiles.origin)), [], 'nothing but this server and the tile host')
    t.ok(requests.some((u) => u.includes('/assets/leaflet/') && u.endsWith('/leaflet.js')), 'Leaflet from this server')
    t.match(await page.locator('#map-desc').textContent(), /1 delivery zone\(s\): Centre/, 'the map described in words')
    await axeCheck(t, page, 'dispatch over tiles')
    t.same(problems, [], 'no script error')

    tiles.mode = 'fail'
    const failing = await open()
    await failing.page.waitForSelector('#dispatch-map[data-fallback="tile-error"] svg.map')
    t.equal(await failing.page.locator('svg.map [data-zone="Centre"] path').count(), 1, 'the zone drawn in SVG instead')
    t.equal(await failing.page.locator(`svg.map [data-driver-id="${mdemo.driver.id}"]`).count(), 1, 'the driver too')
    t.same(failing.problems, [], 'no script error')
  })
}
