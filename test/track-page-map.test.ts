/**
 * The tracking page's Leaflet map (issue 20 item 8, docs/tracking-page.md) in headless Chromium,
 * with MAP_TILE_URL pointing at a local fake tile server: Leaflet comes from this server (versioned,
 * immutable), tiles from the fake and nowhere else, the CSP names exactly that tile host, markers
 * for store, destination and driver and the route follow the socket; when the tiles fail (500, or
 * the host is down) the page falls back to the SVG drawing. MAP_TILE_URL is checked at start.
 */
import t, { type Test } from 'tap'
import { startServer } from './helpers/server.ts'
import { axeCheck, browserFor } from './helpers/browser.ts'
import { driverStatus } from './helpers/delivery.ts'
import { WsClient, wsBase } from './helpers/ws-client.ts'
import { DEST_AT, STORE_AT, closedPort, fakeTileServer, mapFleet, mappedDelivery } from './helpers/tracking-map.ts'
import { LEAFLET_BASE, LEAFLET_VERSION } from '../src/http/routes/leaflet-assets.ts'
import { loadConfig } from '../src/config.ts'
import type { Page } from 'playwright-core'

const browser = await browserFor(t)
if (browser) {
  const tiles = await fakeTileServer()
  t.teardown(() => tiles.close())
  const ATTRIBUTION = '© Test Tiles <b>contributors</b>'
  const s = await startServer({ RATE_LIMIT_PER_MINUTE: '100000', MAP_TILE_URL: tiles.template, MAP_TILE_ATTRIBUTION: ATTRIBUTION })
  t.teardown(() => s.close())
  const f = await mapFleet(s)

  /** A page on the tracking link, collecting its requests and its script errors / CSP violations. */
  const open = async (t: Test, url: string) => {
    const page = await browser.newPage()
    t.teardown(() => page.close())
    const seen = { requests: [] as string[], problems: [] as string[] }
    page.on('request', (r) => seen.requests.push(r.url()))
    page.on('pageerror', (e) => seen.problems.push(String(e)))
    page.on('console', (m) => { if (m.type() === 'error') seen.problems.push(`${m.text()} ${m.location().url}`) })
    await page.goto(url)
    await page.waitForSelector('#conn.live')
    return { page, ...seen }
  }
  const attr = (page: Page, sel: string, name: string) => page.getAttribute(sel, name)

  t.test('Leaflet is served by the server: versioned address, content types, immutable caching', async (t) => {
    for (const [file, type] of [['leaflet.js', /^text\/javascript/], ['leaflet.css', /^text\/css/]] as const) {
      const r = await fetch(`${s.site}${LEAFLET_BASE}/${file}`)
      t.equal(r.status, 200, file)
      t.match(r.headers.get('content-type'), type)
      t.equal(r.headers.get('cache-control'), 'public, max-age=31536000, immutable')
      t.equal(r.headers.get('x-content-type-options'), 'nosniff')
      t.match(await r.text(), file === 'leaflet.js' ? /Leaflet/ : /\.leaflet-container/)
    }
    t.match(LEAFLET_BASE, `/assets/leaflet/${LEAFLET_VERSION}`)
    t.equal((await fetch(`${s.site}/assets/leaflet/0.0.1/leaflet.js`)).status, 404, 'another version is not served')
  })

  t.test('MAP_TILE_URL is checked at start; unset means no map tiles', async (t) => {
    t.equal(loadConfig({}).mapTileUrl, null)
    t.equal(loadConfig({ MAP_TILE_URL: '' }).mapTileUrl, null)
    t.equal(loadConfig({ MAP_TILE_URL: 'https://tile.openstreetmap.org/{z}/{x}/{y}.png' }).mapTileUrl, 'https://tile.openstreetmap.org/{z}/{x}/{y}.png')
    for (const bad of ['https://tile.example.org/{z}/{x}.png', 'javascript:alert(1)//{z}/{x}/{y}', 'tiles/{z}/{x}/{y}.png']) {
      t.throws(() => loadConfig({ MAP_TILE_URL: bad }), /MAP_TILE_URL/, bad)
    }
  })

  t.test('the map: tiles from the tile host only, markers, the route and the ETA follow the socket', async (t) => {
    const d = f.drivers[0]!
    const o = await mappedDelivery(s, f, d)
    const res = await fetch(`${s.site}/t/${o.track_token}`)
    const csp = res.headers.get('content-security-policy')!
    t.match(csp, new RegExp(`img-src 'self' ${tiles.origin} data:;`), 'the CSP names the tile host for images')
    t.same([...csp.matchAll(/https?:\/\/[^\s;]+/g)].map((m) => m[0]), [tiles.origin], '…and no other host')
    t.match(csp, /script-src 'nonce-[^']+';/, 'scripts still by nonce only')

    const before = tiles.requests.length
    const { page, requests, problems } = await open(t, `${s.site}/t/${o.track_token}`)
    await page.waitForSelector('#map-card[data-tiles="ok"]')
    t.ok(tiles.requests.length > before, `tiles came from the fake tile server (${tiles.requests.length - before})`)
    t.equal(await attr(page, '#map-card', 'data-mode'), 'leaflet')
    t.ok(requests.includes(`${s.site}${LEAFLET_BASE}/leaflet.js`) && requests.includes(`${s.site}${LEAFLET_BASE}/leaflet.css`), 'Leaflet from this server')
    const referers = new Set(tiles.requests.slice(before).map((r) => r.headers.referer))
    t.same([...referers], [`${s.site}/`], 'tile requests carry the site\'s origin as Referer (provider policies), never the tracking token')
    t.ok(await page.isVisible('path.mk-store'), 'the store marker')
    t.equal(await page.isVisible('#map'), false, 'the SVG drawing is not used')
    t.match(await page.textContent('.leaflet-control-attribution'), ATTRIBUTION, 'the attribution, as plain text')

    const driver = await WsClient.open(`${wsBase(s)}/ws/driver`, { token: d.token })
    t.teardown(() => driver.close())
    await driver.next((x) => x.type === 'hello')
    await driverStatus(s, d, o.id, 'picked_up')
    await page.waitForSelector('path.mk-dest')
    const path = [[STORE_AT.lat, STORE_AT.lng], [52.522, 13.41], [52.524, 13.415]] as const
    let firstFix = 0
    for (const [i, [lat, lng]] of path.entries()) {
      driver.send({ type: 'location', lat, lng, seq: i })
      await page.waitForSelector(`#map-card[data-driver="${lat},${lng}"]`)
      if (i === 0) firstFix = Number(await attr(page, '#map-card', 'data-refits'))
    }
    t.equal(Number(await attr(page, '#map-card', 'data-refits')), firstFix, 'the map holds still while the driver moves inside it (no refit after the first fix)')
    t.equal(await page.textContent('#driver-to'), 'On the way to 5 Elm Road', 'the street address, not coordinates')
    t.ok(await page.isVisible('path.mk-driver'), 'the driver marker')
    t.ok(await page.isVisible('path.route-line'), 'the route so far as a line')
    t.equal(await attr(page, '#map-card', 'data-points'), String(path.length))
    // Positions sent this fast usually give no speed yet (ETA_RULES.minSpanMs); on a slow machine they may.
    t.match(await page.textContent('#eta'), /^(Your driver is [\d.]+ km away|Arriving in about \d+ min · [\d.]+ km away)\.$/, 'the text alternative says how far')
    driver.send({ type: 'location', lat: DEST_AT.lat, lng: DEST_AT.lng - 0.001, seq: 9 })
    await page.waitForSelector('#eta:text("Your driver is arriving now.")')
    await driverStatus(s, d, o.id, 'delivered')
    await page.waitForSelector('#map-card', { state: 'hidden' })
    t.pass('the map is gone once delivered (no empty box)')

    const outside = requests.filter((u) => !u.startsWith(`${s.site}/`) && !u.startsWith(`${tiles.origin}/`))
    t.same(outside, [], 'nothing but this server and the tile host')
    t.same(problems, [], 'no script errors and no CSP violations')
  })

  t.test('tiles failing (500): the page falls back to the SVG drawing', async (t) => {
    const o = await mappedDelivery(s, f, f.drivers[1]!)
    tiles.mode = 'fail'
    t.teardown(() => { tiles.mode = 'ok' })
    const { page } = await open(t, `${s.site}/t/${o.track_token}`)
    await page.waitForSelector('#map-card[data-mode="svg"]', { state: 'attached' })
    t.equal(await attr(page, '#map-card', 'data-fallback'), 'tile-error')
    await page.waitForSelector('#map', { state: 'visible' })
    t.equal(await attr(page, '#store-pos', 'data-lat'), String(STORE_AT.lat), 'the store is drawn offline')
    t.equal(await page.locator('.leaflet-container').count(), 0, 'the Leaflet map is gone')
  })

  t.test('the map passes the accessibility check', async (t) => {
    const o = await mappedDelivery(s, f, f.drivers[1]!)
    const ctx = await browser.newContext({ bypassCSP: true }) // axe is injected as a script
    t.teardown(() => ctx.close())
    const page = await ctx.newPage()
    await page.goto(`${s.site}/t/${o.track_token}`)
    await page.waitForSelector('#map-card[data-tiles="ok"]')
    await axeCheck(t, page, 'tracking page with the Leaflet map')
  })

  t.test('tile host down: the page falls back, and the CSP names that host only', async (t) => {
    const down = `http://127.0.0.1:${await closedPort()}`
    const s2 = await startServer({ RATE_LIMIT_PER_MINUTE: '100000', MAP_TILE_URL: `${down}/{z}/{x}/{y}.png` })
    t.teardown(() => s2.close())
    const f2 = await mapFleet(s2)
    const o = await mappedDelivery(s2, f2, f2.drivers[0]!)
    const csp = (await fetch(`${s2.site}/t/${o.track_token}`)).headers.get('content-security-policy')!
    t.match(csp, `img-src 'self' ${down} data:;`)
    const { page, problems } = await open(t, `${s2.site}/t/${o.track_token}`)
    await page.waitForSelector('#map-card[data-mode="svg"]', { state: 'attached' })
    t.equal(await attr(page, '#map-card', 'data-fallback'), 'tile-error')
    t.ok(await page.isVisible('#store-pos'), 'the store is drawn offline')
    t.same(problems.filter((p) => !/ERR_CONNECTION_REFUSED/.test(p)), [], 'no script errors (the refused tile is the only complaint)')
  })
}
