/**
 * The tracking page `{site_url}/t/{track_token}` end to end in headless Chromium (Debian's
 * `chromium`, driven by playwright-core), offline (no MAP_TILE_URL, docs/tracking-page.md): the
 * page loads nothing from outside and its CSP names no other host, shows the status timeline, the
 * store's name, and draws store, destination, driver and the route so far in SVG, with the ETA as
 * text. The Leaflet map over tiles: test/track-page-map.test.ts.
 */
import t from 'tap'
import { setTimeout as delay } from 'node:timers/promises'
import { startServer } from './helpers/server.ts'
import { CHROMIUM, axeCheck, launchChromium, watchPage } from './helpers/browser.ts'
import { assign, createFleet, deliveryOrder, driverStatus } from './helpers/delivery.ts'
import { WsClient, wsBase } from './helpers/ws-client.ts'
import { DEST_AT, STORE_AT, mapFleet, mappedDelivery } from './helpers/tracking-map.ts'
import { ETA_RULES, haversineMeters } from '../src/domain/eta.ts'

const launched = await launchChromium()
if (!launched) {
  t.fail(`${CHROMIUM} is missing: apt-get install -y chromium (.ci/run does this)`)
} else {
  const browser = launched
  t.teardown(() => browser.close())
  const s = await startServer({ RATE_LIMIT_PER_MINUTE: '100000' })
  t.teardown(() => s.close())
  const f = createFleet(s.app.svc.db)
  const d = f.drivers[0]!

  t.test('unknown tokens get a 404 page (text/html, as OpenAPI documents it), kept out of referrers and indexes', async (t) => {
    const r = await fetch(`${s.site}/t/trk_nope`)
    t.equal(r.status, 404)
    t.match(r.headers.get('content-type'), /text\/html/)
    t.equal(r.headers.get('referrer-policy'), 'no-referrer')
    t.equal(r.headers.get('cache-control'), 'no-store')
    t.equal(r.headers.get('x-robots-tag'), 'noindex')
    const doc = await (await fetch(`${s.base}/openapi.json`)).json() as { paths: Record<string, any> }
    t.ok(doc.paths['/t/{token}'].get.responses['404']?.content?.['text/html; charset=utf-8'], 'documented as a page')
  })

  t.test('a takeaway order\'s page says what is true for takeaway: no delivery steps, paid when collected', async (t) => {
    const o = await deliveryOrder(s, f, { type: 'takeaway', address: undefined })
    t.equal(o.type, 'takeaway', JSON.stringify(o).slice(0, 200))
    const page = await browser.newPage()
    t.teardown(() => page.close())
    await page.goto(`${s.site}/t/${o.track_token}`)
    await page.waitForSelector('#conn.live')
    const steps = await page.locator('#timeline li').allTextContents()
    t.same(steps.map((x) => x.replace(/\d.*$/, '').trim()), ['Order placed', 'Being prepared', 'Ready', 'Collected'], 'its steps end with Collected, not Delivered')
    t.equal(await page.textContent('#paid'), 'To pay when you collect it', 'not "to pay on delivery"')
    await s.req('PUT', `/restaurants/${f.storeId}/orders/${o.id}/status`, { token: f.ownerToken, body: { status: 'delivered' } })
    await page.waitForSelector('#timeline li[data-stage="delivered"].done')
    t.equal(await page.textContent('#status-line'), 'Collected', 'handed over: Collected')
  })

  t.test('the page follows the order live: timeline, code, driver moving on the map', async (t) => {
    const o = await deliveryOrder(s, f)
    await assign(s, f, o.id, d.id)
    const res = await fetch(`${s.site}/t/${o.track_token}`)
    t.equal(res.status, 200)
    const csp = res.headers.get('content-security-policy')!
    t.match(csp, /default-src 'none'/)
    t.match(csp, /img-src data:;/, 'without MAP_TILE_URL images are inline data only')
    t.notMatch(csp, /https?:\/\//, 'and the CSP names no other host at all')
    t.equal(res.headers.get('referrer-policy'), 'no-referrer')

    const page = await browser.newPage()
    t.teardown(() => page.close())
    const { requests, problems } = watchPage(page)

    await page.goto(`${s.site}/t/${o.track_token}`)
    await page.waitForSelector('#conn.live')
    t.equal(await page.textContent('#order-id'), String(o.id))
    t.equal(await page.getAttribute('#timeline li[data-stage="assigned"]', 'class'), 'done', 'the timeline shows the assignment')
    t.match(await page.textContent('#code'), /^\d{4}$/, 'the delivery code is shown to the customer')
    t.equal(await page.isVisible('#driver-card'), false, 'no driver before pickup')
    t.match(await page.textContent('#eta'), /^Estimated delivery around \S*\d{2}:\d{2}\S*( [AP]M)?\.$/, 'the estimate promised at ordering (docs/dispatch.md), before any live ETA')
    t.equal(await page.isVisible('#map-card'), false, 'no map: nothing has a position yet (the store has none)')

    const driver = await WsClient.open(`${wsBase(s)}/ws/driver`, { token: d.token })
    await driver.next((x) => x.type === 'hello')
    await driverStatus(s, d, o.id, 'picked_up')
    await page.waitForSelector('#timeline li[data-stage="picked_up"].done')
    await page.waitForSelector('#driver-card', { state: 'visible' })
    t.equal(await page.textContent('#driver-name'), d.name)

    const path = [[52.5200, 13.4050], [52.5210, 13.4065], [52.5222, 13.4080], [52.5235, 13.4101]] as const
    for (const [i, [lat, lng]] of path.entries()) {
      driver.send({ type: 'location', lat, lng, seq: i })
      await page.waitForSelector(`#driver-pos[data-lat="${lat}"][data-lng="${lng}"]`, { timeout: 5000 })
    }
    t.pass('the driver dot followed every position')
    const points = (await page.getAttribute('#trail', 'points'))!.trim().split(/\s+/)
    t.equal(points.length, path.length, 'the route is drawn through every position')
    const [cx, cy] = [Number(await page.getAttribute('#driver-pos', 'cx')), Number(await page.getAttribute('#driver-pos', 'cy'))]
    t.ok(cx > 0 && cx < 400 && cy > 0 && cy < 260, `the dot is inside the map (${cx}, ${cy})`)
    t.equal(await page.textContent('#driver-to'), 'On the way to 1 Main St', 'where the driver goes, as the street address')
    t.notMatch(await page.textContent('body'), /52\.52|13\.41/, 'no raw coordinates on the page')

    await driverStatus(s, d, o.id, 'out_for_delivery')
    await page.waitForSelector('#timeline li[data-stage="out_for_delivery"].done')
    await driverStatus(s, d, o.id, 'delivered')
    await page.waitForSelector('#timeline li[data-stage="delivered"].done')
    await page.waitForSelector('#driver-card', { state: 'hidden' })
    t.equal(await page.isVisible('#code-card'), false, 'the code goes away once delivered')
    t.equal(await page.isVisible('#map-card'), false, 'and the map with it')
    t.equal(await page.textContent('#eta'), '', 'no promise once delivered')

    const origin = new URL(s.site)
    const outside = requests.filter((u) => new URL(u).host !== origin.host)
    t.same(outside, [], 'no request leaves the server (no external assets, no map tiles)')
    t.same(problems, [], 'no script errors and no CSP violations')
    await driver.close()
  })

  t.test('offline map: store, destination, route so far and the ETA in words', async (t) => {
    const mf = await mapFleet(s)
    const md = mf.drivers[0]!
    const o = await mappedDelivery(s, mf, md)
    const storeName = (s.app.svc.db.prepare('SELECT title FROM stores WHERE id = ?').get(mf.storeId) as { title: string }).title

    const page = await browser.newPage()
    t.teardown(() => page.close())
    const { requests, problems } = watchPage(page)
    await page.goto(`${s.site}/t/${o.track_token}`)
    await page.waitForSelector('#conn.live')
    t.equal(await page.textContent('#store-name'), storeName, 'the store\'s name is on the page')
    t.equal(await page.getAttribute('#map-card', 'data-mode'), 'svg')
    t.equal(await page.getAttribute('#store-pos', 'data-lat'), String(STORE_AT.lat), 'the store is on the map before pickup')
    t.equal(await page.getAttribute('#dest-pos', 'visibility'), 'hidden', 'the destination only once the driver is visible')

    const driver = await WsClient.open(`${wsBase(s)}/ws/driver`, { token: md.token })
    await driver.next((x) => x.type === 'hello')
    await driverStatus(s, md, o.id, 'picked_up')
    await page.waitForSelector(`#dest-pos[data-lat="${DEST_AT.lat}"][visibility="visible"]`)

    const p0 = { lat: 52.5205, lng: 13.406 }
    driver.send({ type: 'location', ...p0, seq: 1 })
    await page.waitForSelector(`#driver-pos[data-lat="${p0.lat}"]`)
    const km = (p: { lat: number; lng: number }) => (haversineMeters(p, DEST_AT) / 1000).toFixed(1)
    t.equal(await page.textContent('#eta'), `Your driver is ${km(p0)} km away.`, 'one position: the distance, no speed yet')

    // The speed needs positions at least ETA_RULES.minSpanMs apart in real (server) time; ~900 m in
    // about two seconds is far above the ceiling, so the estimate uses maxSpeed whatever the machine load.
    await delay(ETA_RULES.minSpanMs + 100)
    const p1 = { lat: 52.5245, lng: 13.4155 }
    driver.send({ type: 'location', ...p1, seq: 2 })
    await page.waitForSelector(`#driver-pos[data-lat="${p1.lat}"]`)
    const minutes = Math.max(1, Math.round(Math.round((haversineMeters(p1, DEST_AT) * ETA_RULES.detour) / ETA_RULES.maxSpeed) / 60))
    t.equal(await page.textContent('#eta'), `Arriving in about ${minutes} min · ${km(p1)} km away.`, 'remaining distance and recent speed')
    t.equal((await page.getAttribute('#trail', 'points'))!.trim().split(/\s+/).length, 2, 'the route so far')
    t.equal(await page.getAttribute('#map', 'aria-describedby'), 'eta', 'the map\'s text alternative is the ETA line')

    const late = await browser.newPage()
    t.teardown(() => late.close())
    await late.goto(`${s.site}/t/${o.track_token}`)
    await late.waitForSelector('#map-card[data-points="2"]')
    t.equal(await late.getAttribute('#driver-pos', 'data-lat'), String(p1.lat), 'a page opened mid-delivery gets the route so far from the server')

    driver.send({ type: 'location', lat: DEST_AT.lat - 0.0005, lng: DEST_AT.lng, seq: 3 })
    await page.waitForSelector(`#driver-pos[data-lat="${DEST_AT.lat - 0.0005}"]`)
    t.equal(await page.textContent('#eta'), 'Your driver is arriving now.')

    await driverStatus(s, md, o.id, 'delivered')
    await page.waitForSelector('#map-card', { state: 'hidden' })
    t.pass('the map is gone once delivered: no empty box')
    t.equal(await page.textContent('#eta'), '', 'no estimate once delivered')

    const origin = new URL(s.site)
    t.same(requests.filter((u) => new URL(u).host !== origin.host), [], 'no request leaves the server')
    t.same(problems, [], 'no script errors and no CSP violations')
    await driver.close()
  })

  t.test('the map holds still while the driver moves inside it, refits when the driver leaves it, destination always in view', async (t) => {
    const mf = await mapFleet(s)
    const md = mf.drivers[0]!
    const o = await mappedDelivery(s, mf, md)
    const page = await browser.newPage()
    t.teardown(() => page.close())
    const { problems } = watchPage(page)
    await page.goto(`${s.site}/t/${o.track_token}`)
    await page.waitForSelector('#conn.live')
    const driver = await WsClient.open(`${wsBase(s)}/ws/driver`, { token: md.token })
    t.teardown(() => driver.close())
    await driver.next((x) => x.type === 'hello')
    await driverStatus(s, md, o.id, 'picked_up')
    await page.waitForSelector('#dest-pos[visibility="visible"]')
    t.equal(await page.textContent('#driver-to'), 'On the way to 5 Elm Road', 'the street address, not coordinates')
    t.equal(await page.textContent('#dest-pos title'), 'Destination: 5 Elm Road', 'the destination marker names it too')
    const at = async (id: string) => [Number(await page.getAttribute(id, 'cx')), Number(await page.getAttribute(id, 'cy'))]
    const refits = async () => Number(await page.getAttribute('#map-card', 'data-refits'))
    const move = async (lat: number, lng: number, seq: number) => {
      driver.send({ type: 'location', lat, lng, seq })
      await page.waitForSelector(`#driver-pos[data-lat="${lat}"][data-lng="${lng}"]`)
    }

    await move(STORE_AT.lat + 0.001, STORE_AT.lng + 0.001, 1)
    const first = await refits()
    const store0 = await at('#store-pos'), dest0 = await at('#dest-pos'), driver0 = await at('#driver-pos')
    // Inside the frame (between the store and the destination): the map holds still, the dot moves.
    await move(52.522, 13.41, 2)
    await move(52.526, 13.42, 3)
    t.equal(await refits(), first, 'no refit while the driver is inside the frame')
    t.same(await at('#store-pos'), store0, 'the store stays where it was drawn')
    t.same(await at('#dest-pos'), dest0, 'so does the destination')
    t.notSame(await at('#driver-pos'), driver0, 'the driver moves over the still map')
    // Out of the frame (well south-west of the store): one refit, with everyone in view.
    await move(52.50, 13.37, 4)
    t.equal(await refits(), first + 1, 'the driver left the frame: refitted once')
    for (const id of ['#store-pos', '#dest-pos', '#driver-pos']) {
      const [x, y] = await at(id)
      t.ok(x! >= 0 && x! <= 400 && y! >= 0 && y! <= 260, `${id} in view after the refit (${x}, ${y})`)
    }
    t.notSame(await at('#dest-pos'), dest0, 'the destination moved on the screen with the new frame')
    t.same(problems, [], 'no script errors and no CSP violations')
  })

  t.test('the page passes the accessibility check', async (t) => {
    const mf = await mapFleet(s)
    const o = await mappedDelivery(s, mf, mf.drivers[0]!)
    const ctx = await browser.newContext({ bypassCSP: true }) // axe is injected as a script
    t.teardown(() => ctx.close())
    const page = await ctx.newPage()
    await page.goto(`${s.site}/t/${o.track_token}`)
    await page.waitForSelector('#conn.live')
    await axeCheck(t, page, 'tracking page with its SVG map')
  })
}
