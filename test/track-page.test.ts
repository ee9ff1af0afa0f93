/**
 * The tracking page `{site_url}/t/{track_token}` end to end in headless Chromium (Debian's
 * `chromium`, driven by playwright-core): the page loads nothing from outside, shows the status
 * timeline, and the driver moves live as it sends positions over the driver socket.
 */
import t from 'tap'
import { startServer } from './helpers/server.ts'
import { CHROMIUM, launchChromium } from './helpers/browser.ts'
import { assign, createFleet, deliveryOrder, driverStatus } from './helpers/delivery.ts'
import { WsClient, wsBase } from './helpers/ws-client.ts'

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

  t.test('the page follows the order live: timeline, code, driver moving on the map', async (t) => {
    const o = await deliveryOrder(s, f)
    await assign(s, f, o.id, d.id)
    const res = await fetch(`${s.site}/t/${o.track_token}`)
    t.equal(res.status, 200)
    t.match(res.headers.get('content-security-policy'), /default-src 'none'/)
    t.equal(res.headers.get('referrer-policy'), 'no-referrer')

    const page = await browser.newPage()
    t.teardown(() => page.close())
    const requests: string[] = []
    const problems: string[] = []
    page.on('request', (r) => requests.push(r.url()))
    page.on('pageerror', (e) => problems.push(String(e)))
    page.on('console', (m) => { if (m.type() === 'error') problems.push(m.text()) })

    await page.goto(`${s.site}/t/${o.track_token}`)
    await page.waitForSelector('#conn.live')
    t.equal(await page.textContent('#order-id'), String(o.id))
    t.equal(await page.getAttribute('#timeline li[data-stage="assigned"]', 'class'), 'done', 'the timeline shows the assignment')
    t.match(await page.textContent('#code'), /^\d{4}$/, 'the delivery code is shown to the customer')
    t.equal(await page.isVisible('#driver-card'), false, 'no driver before pickup')

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
    t.equal(await page.textContent('#driver-coords'), '52.52350, 13.41010')

    await driverStatus(s, d, o.id, 'out_for_delivery')
    await page.waitForSelector('#timeline li[data-stage="out_for_delivery"].done')
    await driverStatus(s, d, o.id, 'delivered')
    await page.waitForSelector('#timeline li[data-stage="delivered"].done')
    await page.waitForSelector('#driver-card', { state: 'hidden' })
    t.equal(await page.isVisible('#code-card'), false, 'the code goes away once delivered')

    const origin = new URL(s.site)
    const outside = requests.filter((u) => new URL(u).host !== origin.host)
    t.same(outside, [], 'no request leaves the server (no external assets, no map tiles)')
    t.same(problems, [], 'no script errors and no CSP violations')
    await driver.close()
  })
}
