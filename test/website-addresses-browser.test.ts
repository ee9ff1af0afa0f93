/**
 * Website addresses with a position (issue 34 item 4; docs/website.md "Accounts"), walked in
 * Chromium at phone width as a customer does it: "Use my location" (the browser's geolocation)
 * places the pin, the arrow keys move it, the browser's own form posts the hidden lat/lng with the
 * notes for the driver; a delivery ordered to that address carries both, and its tracking page shows
 * the destination and a distance/ETA once the driver's position arrives. The geocoder flow against a
 * fake Nominatim, with JavaScript (places found in place) and without (the page lists them). A
 * tampered position is refused with the field's message and nothing saved. axe on the form.
 * With MAP_TILE_URL the pin map draws those tiles (CSP names the host, nothing else is asked).
 * `UPDATE_SCREENSHOTS=1` writes docs/screenshots/address-phone.png and address-tracking-phone.png.
 */
import t from 'tap'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Browser, BrowserContextOptions, Page } from 'playwright-core'
import type { Test } from 'tap'
import { axeCheck, browserFor, watchPage, websiteSignIn } from './helpers/browser.ts'
import { startServer, type TestServer } from './helpers/server.ts'
import { createCustomer, type CustomerFixture } from './helpers/fixtures.ts'
import { assign, driverStatus } from './helpers/delivery.ts'
import { WsClient, wsBase } from './helpers/ws-client.ts'
import { DEST_AT, STORE_AT, fakeTileServer, mapFleet } from './helpers/tracking-map.ts'
import { startFake, type Recorded } from './helpers/fake-service.ts'

const PHONE = { width: 390, height: 844 }
const shots = process.env.UPDATE_SCREENSHOTS === '1' ? new URL('../docs/screenshots/', import.meta.url).pathname : mkdtempSync(join(tmpdir(), 'shots-'))

const browser = await browserFor(t)
if (browser) {
  const nominatim = await startFake((req: Recorded) => {
    const q = new URL(req.path, 'http://x').searchParams.get('q') ?? ''
    if (/elm/i.test(q)) {
      return { status: 200, body: [
        { lat: String(DEST_AT.lat), lon: String(DEST_AT.lng), display_name: '5 Elm Road, Prenzlauer Berg, Berlin' },
        { lat: '52.4', lon: '13.1', display_name: '5 Elm Road, Potsdam' },
      ] }
    }
    return { status: 200, body: [] }
  })
  t.teardown(() => nominatim.close())
  const s = await startServer({ RATE_LIMIT_PER_MINUTE: '100000', GEOCODER: 'nominatim', GEOCODER_URL: nominatim.url, GEOCODER_ALLOW_LOOPBACK: '1' })
  t.teardown(() => s.close())
  const db = s.app.svc.db
  const f = await mapFleet(s)
  const slug = (db.prepare('SELECT slug FROM stores WHERE id = ?').pluck().get(f.storeId) as string)
  const url = `${s.site}/s/${slug}`
  const saved = (customerId: number) => db.prepare('SELECT * FROM customer_addresses WHERE customer_id = ? ORDER BY id').all(customerId) as Array<{ address: string; lat: number | null; lng: number | null; notes: string | null }>

  /** A signed-in customer's page at phone width; fails the test on a script error or a CSP violation. */
  async function signedIn(t: Test, b: Browser, opts: BrowserContextOptions = {}): Promise<{ page: Page; customer: CustomerFixture; clean: () => void }> {
    const ctx = await b.newContext({ viewport: PHONE, ...opts })
    t.teardown(() => ctx.close())
    const page = await ctx.newPage()
    const seen = watchPage(page)
    const customer = createCustomer(db, f.storeId)
    await websiteSignIn(page, url, customer)
    await page.goto(`${url}/account`)
    const problems = () => seen.problems.filter((p) => !/^Failed to load resource: the server responded with a status of 4\d\d/.test(p))
    return { page, customer, clean: () => t.same(problems(), [], 'no script errors or CSP violations') }
  }

  t.test('use my location, move the pin with the keys, save with notes; the delivery is tracked to it with an ETA', async (t) => {
    const { page, customer, clean } = await signedIn(t, browser, { geolocation: { latitude: DEST_AT.lat, longitude: DEST_AT.lng, accuracy: 20 }, permissions: ['geolocation'] })
    await page.getByLabel('Name of the place (optional)').fill('Home')
    await page.getByLabel('Address', { exact: true }).fill('5 Elm Road')
    await page.getByLabel('Notes for the driver (optional)').fill('Blue door, ring twice')
    const map = page.getByRole('application', { name: 'Map of the address' })
    t.ok(await map.isVisible(), 'the map shows around the store before any position')
    await page.getByRole('button', { name: 'Use my location' }).click()
    await page.getByRole('status').filter({ hasText: /Your location \(within about 20 m\)/ }).waitFor()
    t.equal(await page.locator('input[name=lat]').inputValue(), String(DEST_AT.lat), 'the browser\'s position fills the hidden lat')
    t.equal(await page.locator('input[name=lng]').inputValue(), String(DEST_AT.lng), '…and lng')
    t.match(await page.getByRole('status').filter({ hasText: /Pin at/ }).textContent(), /from the store/, 'says how far it is from the store')

    // The keyboard moves the pin: right by 10 px, then back.
    await map.focus()
    await page.keyboard.press('ArrowRight')
    const moved = Number(await page.locator('input[name=lng]').inputValue())
    t.ok(moved > DEST_AT.lng, `ArrowRight moves the pin east (${moved})`)
    t.equal(Number(await page.locator('input[name=lat]').inputValue()), DEST_AT.lat, 'and not north or south')
    await page.keyboard.press('ArrowLeft')
    t.ok(Math.abs(Number(await page.locator('input[name=lng]').inputValue()) - DEST_AT.lng) < 1e-5, 'ArrowLeft moves it back')
    await page.screenshot({ path: join(shots, 'address-phone.png'), fullPage: true })
    await page.getByRole('button', { name: 'Save address' }).click()
    await page.getByText('On the map · For the driver: Blue door, ring twice').waitFor()
    const [addr] = saved(customer.id)
    t.match(addr, { address: '5 Elm Road', notes: 'Blue door, ring twice' })
    t.ok(Math.abs(addr!.lat! - DEST_AT.lat) < 1e-5 && Math.abs(addr!.lng! - DEST_AT.lng) < 1e-5, 'saved with the position')

    // Order delivery to it from the website.
    await page.goto(`${url}/items/${f.itemId}`)
    await page.getByRole('button', { name: 'Add to cart' }).click()
    await page.locator('[data-cart-count]', { hasText: /^1$/ }).first().waitFor()
    await page.goto(`${url}/checkout`)
    await page.getByRole('radio', { name: 'Delivery' }).check()
    await page.getByRole('button', { name: 'Place order' }).click()
    await page.waitForURL(/\/t\/[\w-]+$/)
    const token = /\/t\/([\w-]+)$/.exec(page.url())![1]!
    const order = db.prepare('SELECT id, address, dest_lat, dest_lng, delivery_notes FROM orders WHERE track_token = ?').get(token) as { id: number; address: string; dest_lat: number; dest_lng: number; delivery_notes: string }
    t.match(order, { address: '5 Elm Road', delivery_notes: 'Blue door, ring twice' }, 'the order carries the notes for the driver')
    t.ok(Math.abs(order.dest_lat - DEST_AT.lat) < 1e-5, 'and the destination')

    // The driver picks it up and moves: the page shows the destination and how far/how long.
    const d = f.drivers[0]!
    await assign(s, f, order.id, d.id)
    const driver = await WsClient.open(`${wsBase(s)}/ws/driver`, { token: d.token })
    t.teardown(() => driver.close())
    await driver.next((x) => x.type === 'hello')
    t.equal((await driverStatus(s, d, order.id, 'picked_up')).status, 200)
    driver.send({ type: 'location', lat: STORE_AT.lat, lng: STORE_AT.lng, seq: 1 })
    await page.waitForSelector(`#map-card[data-driver="${STORE_AT.lat},${STORE_AT.lng}"]`)
    await page.waitForSelector('#dest-pos[visibility="visible"]')
    t.equal(await page.getAttribute('#dest-pos', 'data-lat'), String(order.dest_lat), 'the destination marker at the saved position')
    t.equal(await page.textContent('#driver-to'), 'On the way to 5 Elm Road')
    t.match(await page.textContent('#eta'), /^(Your driver is [\d.]+ km away|Arriving in about \d+ min · [\d.]+ km away)\.$/, 'an estimate from the driver\'s position to the destination')
    await page.screenshot({ path: join(shots, 'address-tracking-phone.png'), fullPage: true })
    clean()
  })

  t.test('the geocoder: found in place with JavaScript, chosen from the page without; axe clean', async (t) => {
    const { page, customer, clean } = await signedIn(t, browser)
    await page.getByLabel('Address', { exact: true }).fill('5 elm road')
    await page.getByRole('button', { name: 'Find this address' }).click()
    await page.getByRole('button', { name: '5 Elm Road, Prenzlauer Berg, Berlin' }).click()
    t.equal(await page.getByLabel('Address', { exact: true }).inputValue(), '5 Elm Road, Prenzlauer Berg, Berlin', 'choosing a place fills the address…')
    t.equal(await page.locator('input[name=lat]').inputValue(), String(DEST_AT.lat), '…and the pin')
    await page.getByRole('button', { name: 'Save address' }).click()
    await page.getByText('5 Elm Road, Prenzlauer Berg, Berlin').first().waitFor()
    t.match(saved(customer.id), [{ address: '5 Elm Road, Prenzlauer Berg, Berlin', lat: DEST_AT.lat, lng: DEST_AT.lng }])
    clean()

    const off = await signedIn(t, browser, { javaScriptEnabled: false })
    await off.page.getByLabel('Address', { exact: true }).fill('Elm Road 5')
    await off.page.getByRole('button', { name: 'Find this address' }).click()
    await off.page.getByRole('group', { name: /Which place is it\? 2 found/ }).waitFor()
    await off.page.getByRole('radio', { name: '5 Elm Road, Potsdam' }).check()
    await off.page.getByLabel('Notes for the driver (optional)').fill('Back gate')
    await off.page.getByRole('button', { name: 'Save address' }).click()
    await off.page.getByText('On the map · For the driver: Back gate').waitFor()
    t.match(saved(off.customer.id), [{ address: '5 Elm Road, Potsdam', lat: 52.4, lng: 13.1, notes: 'Back gate' }], 'without JavaScript: the chosen place, its label as the address')

    const none = await signedIn(t, browser, { bypassCSP: true })
    await none.page.getByLabel('Address', { exact: true }).fill('Nowhere Lane')
    await none.page.getByRole('button', { name: 'Find this address' }).click()
    await none.page.getByText('No place found for this text. Check it, or place the pin on the map.').waitFor()
    await none.page.getByLabel('Address', { exact: true }).fill('5 Elm Road')
    await none.page.getByRole('button', { name: 'Find this address' }).click()
    await none.page.getByRole('button', { name: '5 Elm Road, Potsdam' }).waitFor()
    await axeCheck(t, none.page, 'the account page with places found and the pin map')
  })

  t.test('a position out of range or half a position: refused with the field\'s message, nothing saved, the form kept', async (t) => {
    const { page, customer, clean } = await signedIn(t, browser)
    await page.getByLabel('Address', { exact: true }).fill('1 Bad Pin St')
    await page.getByLabel('Notes for the driver (optional)').fill('Kept')
    await page.locator('input[name=lat]').evaluate((e) => { (e as unknown as { value: string }).value = '95' })
    await page.locator('input[name=lng]').evaluate((e) => { (e as unknown as { value: string }).value = '13.4' })
    await page.getByRole('button', { name: 'Save address' }).click()
    await page.getByRole('alert').waitFor()
    t.match(await page.getByRole('alert').textContent(), /A latitude is between -90 and 90\./)
    t.equal(await page.getByLabel('Address', { exact: true }).inputValue(), '1 Bad Pin St', 'the address is kept')
    t.equal(await page.getByLabel('Notes for the driver (optional)').inputValue(), 'Kept', 'the notes are kept')
    await page.locator('input[name=lat]').evaluate((e) => { (e as unknown as { value: string }).value = '' })
    await page.getByRole('button', { name: 'Save address' }).click()
    await page.getByRole('alert').filter({ hasText: /needs both/ }).waitFor()
    t.same(saved(customer.id), [], 'nothing saved')
    clean()
  })

  t.test('without a geocoder the form has no search, and the pin alone gives the position', async (t) => {
    const plain: TestServer = await startServer({ RATE_LIMIT_PER_MINUTE: '100000' })
    t.teardown(() => plain.close())
    const pf = await mapFleet(plain)
    const pslug = plain.app.svc.db.prepare('SELECT slug FROM stores WHERE id = ?').pluck().get(pf.storeId) as string
    const c = createCustomer(plain.app.svc.db, pf.storeId)
    const ctx = await browser.newContext({ viewport: PHONE })
    t.teardown(() => ctx.close())
    const page = await ctx.newPage()
    await websiteSignIn(page, `${plain.site}/s/${pslug}`, c)
    await page.goto(`${plain.site}/s/${pslug}/account`)
    t.equal(await page.getByRole('button', { name: 'Find this address' }).count(), 0, 'no search button')
    await page.getByLabel('Address', { exact: true }).fill('7 Keyboard Way')
    await page.getByRole('application', { name: 'Map of the address' }).focus()
    await page.keyboard.press('Shift+ArrowUp')
    await page.getByRole('button', { name: 'Save address' }).click()
    await page.getByText('On the map', { exact: true }).waitFor()
    const [a] = plain.app.svc.db.prepare('SELECT lat, lng FROM customer_addresses WHERE customer_id = ?').all(c.id) as Array<{ lat: number; lng: number }>
    t.ok(a!.lat > STORE_AT.lat && Math.abs(a!.lng - STORE_AT.lng) < 1e-6, 'the keys placed the pin north of the store')
  })
  t.test('with MAP_TILE_URL the pin map draws the operator\'s tiles, allowed by the page\'s CSP and nothing else', async (t) => {
    const tiles = await fakeTileServer()
    t.teardown(() => tiles.close())
    const ts: TestServer = await startServer({ RATE_LIMIT_PER_MINUTE: '100000', MAP_TILE_URL: tiles.template, MAP_TILE_ATTRIBUTION: '© Test Tiles' })
    t.teardown(() => ts.close())
    const tf = await mapFleet(ts)
    const tslug = ts.app.svc.db.prepare('SELECT slug FROM stores WHERE id = ?').pluck().get(tf.storeId) as string
    const c = createCustomer(ts.app.svc.db, tf.storeId)
    const ctx = await browser.newContext({ viewport: PHONE })
    t.teardown(() => ctx.close())
    const page = await ctx.newPage()
    const seen = watchPage(page)
    await websiteSignIn(page, `${ts.site}/s/${tslug}`, c)
    const res = await page.goto(`${ts.site}/s/${tslug}/account`)
    t.match(res!.headers()['content-security-policy'], new RegExp(`img-src 'self' data: ${tiles.origin};`), 'the CSP names the tile host for images')
    await page.getByRole('application', { name: 'Map of the address' }).focus()
    await page.keyboard.press('ArrowDown')
    await page.locator('[data-pin-map] image').first().waitFor({ state: 'attached' })
    t.ok(tiles.requests.some((r) => /^\/1[2-7]\/\d+\/\d+\.png$/.test(r.path)), 'tiles asked of the tile host')
    t.equal(await page.locator('[data-pin-map] .attribution').textContent(), '© Test Tiles', 'the credit, as text')
    t.same(seen.requests.filter((u) => !u.startsWith(`${ts.site}/`) && !u.startsWith(`${tiles.origin}/`)), [], 'nothing but this server and the tile host')
    t.same(seen.problems, [], 'no script errors and no CSP violations')
  })
}
