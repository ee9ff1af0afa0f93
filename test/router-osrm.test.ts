/**
 * Travel times through OSRM (issue 37 item 4; docs/dispatch.md "Router"), against a local fake OSRM
 * server: quotes and delivery orders time the ride with its `route` service, answers are cached, a
 * failing or unreachable OSRM falls back to the straight line and says so; the `table` service times
 * many drivers to one store in one request; OSRM_URL is held to the webhook SSRF rules at start and
 * at request time.
 */
import t from 'tap'
import { startServer } from './helpers/server.ts'
import { createAccount } from './helpers/fixtures.ts'
import { startFake, type Recorded } from './helpers/fake-service.ts'
import { providersConfig } from '../src/providers/config.ts'
import { OsrmRouter } from '../src/providers/router.ts'
import { straightSeconds } from '../src/domain/eta.ts'

const STORE = { lat: 38.71, lng: -9.13 }
/** The fake: every route takes 100 s per 0.01° of latitude between its two points; tables likewise (+7 s). */
const pointsOf = (path: string) => {
  const pts = /driving\/([^?]+)/.exec(path)![1]!.split(';').map((p) => p.split(',').map(Number) as [number, number])
  return pts
}
const osrm = await startFake((req: Recorded) => {
  const pts = pointsOf(req.path)
  if (req.path.startsWith('/route/v1/driving/')) return { status: 200, body: { code: 'Ok', routes: [{ duration: Math.abs(pts[1]![1] - pts[0]![1]) * 10_000, distance: 1 }] } }
  const dest = pts[pts.length - 1]!
  return { status: 200, body: { code: 'Ok', durations: pts.slice(0, -1).map((p) => [Math.abs(dest[1] - p[1]) * 10_000 + 7]) } }
})
t.teardown(() => osrm.close())

t.test('configuration: osrm needs OSRM_URL, held to the webhook SSRF rules', async (t) => {
  t.same(providersConfig({}).router, { kind: 'straight' }, 'straight by default')
  t.throws(() => providersConfig({ ROUTER: 'osrm' }), /ROUTER=osrm needs OSRM_URL/)
  t.throws(() => providersConfig({ ROUTER: 'osrm', OSRM_URL: 'http://127.0.0.1:5000' }), /OSRM_URL: Use an https URL/, 'plain http only to loopback, and only when allowed')
  t.throws(() => providersConfig({ ROUTER: 'osrm', OSRM_URL: 'https://10.0.0.7' }), /not a public address/, 'a private address')
  t.throws(() => providersConfig({ ROUTER: 'osrm', OSRM_URL: 'https://169.254.169.254' }), /not a public address/, 'the metadata address')
  t.throws(() => providersConfig({ OSRM_URL: 'https://osrm.example.com' }), /ROUTER is straight/, 'a URL without ROUTER=osrm is a mistake, said at start')
  t.throws(() => providersConfig({ ROUTER: 'bike' }), /must be straight or osrm/)
  t.match(providersConfig({ ROUTER: 'osrm', OSRM_URL: 'https://osrm.example.com/', ROUTER_TIMEOUT_MS: '800' }).router, { kind: 'osrm', url: 'https://osrm.example.com', timeoutMs: 800, allowLoopback: false })
})

t.test('quotes and orders time the ride with OSRM, cached; a failure falls back to the straight line and says so', async (t) => {
  const s = await startServer({ RATE_LIMIT_PER_MINUTE: '100000', ROUTER: 'osrm', OSRM_URL: osrm.url, ROUTER_ALLOW_LOOPBACK: '1' })
  t.teardown(() => s.close())
  const a = createAccount(s.app.svc.db)
  t.equal((await s.req('PUT', `/restaurants/${a.storeId}/settings`, { token: a.token, body: { location: STORE } })).status, 200)
  const quote = (lat: number) => s.req('POST', `/restaurants/${a.storeId}/delivery-quote`, { token: a.token, body: { lat, lng: -9.13 } })
  const ride = (eta: { pickup_at: string; dropoff_at: string }) => (Date.parse(eta.dropoff_at) - Date.parse(eta.pickup_at)) / 1000

  const n0 = osrm.requests.length
  const q = await quote(38.73)
  t.match(q.body, { deliverable: true, router: { source: 'osrm', fallback: null } })
  t.equal(ride(q.body.eta), 200, 'the ride is OSRM\'s 200 s, not the straight line\'s')
  t.equal(osrm.requests.length, n0 + 1)
  t.equal(osrm.requests.at(-1)!.path, '/route/v1/driving/-9.13000,38.71000;-9.13000,38.73000?overview=false', 'the route service, [lng,lat] pairs')
  t.equal(ride((await quote(38.73)).body.eta), 200)
  t.equal(osrm.requests.length, n0 + 1, 'the second quote is answered from the cache')

  const order = await s.req('POST', `/restaurants/${a.storeId}/orders`, { token: a.token, body: { type: 'delivery', address: 'x', lat: 38.74, lng: -9.13, items: [{ item_id: a.menu.fries, quantity: 1 }] } })
  t.equal(order.status, 200)
  t.equal(ride(order.body.eta), 300, 'a delivery order is promised OSRM\'s ride')

  osrm.plan({ status: 500, body: 'boom' })
  const failed = await quote(38.75)
  t.match(failed.body.router, { source: 'straight', fallback: 'osrm answered 500' })
  t.equal(ride(failed.body.eta), straightSeconds(STORE, { lat: 38.75, lng: -9.13 }), 'the straight line answered')
  osrm.plan({ status: 200, body: { code: 'NoRoute', message: 'Impossible route between points' } })
  t.match((await quote(38.76)).body.router, { source: 'straight', fallback: 'osrm answered code NoRoute' })
  t.equal(ride((await quote(38.75)).body.eta), 400, 'a failure is not cached: the next quote asks again')
})

t.test('the table service: many origins to one place in one request, cached per pair', async (t) => {
  const router = new OsrmRouter({ kind: 'osrm', url: osrm.url, timeoutMs: 1000, allowLoopback: true })
  t.teardown(() => router.close())
  const drivers = [{ lat: 38.70, lng: -9.1 }, { lat: 38.72, lng: -9.2 }, { lat: 38.711, lng: -9.13 }]
  const n0 = osrm.requests.length
  const r = await router.toOne(drivers, STORE)
  t.same(r, { seconds: [107, 107, 17], source: 'osrm', fallback: null })
  t.equal(osrm.requests.at(-1)!.path, '/table/v1/driving/-9.10000,38.70000;-9.20000,38.72000;-9.13000,38.71100;-9.13000,38.71000?sources=0;1;2&destinations=3&annotations=duration')
  const again = await router.toOne([drivers[1]!, { lat: 38.69, lng: -9.13 }], STORE)
  t.same(again.seconds, [107, 207])
  t.equal(osrm.requests.length, n0 + 2)
  t.equal(osrm.requests.at(-1)!.path, '/table/v1/driving/-9.13000,38.69000;-9.13000,38.71000?sources=0&destinations=1&annotations=duration', 'only the pair not cached is asked')
})

t.test('an unreachable or forbidden OSRM answers the straight line with the reason', async (t) => {
  const gone = await startFake(() => ({ status: 200 }))
  const url = gone.url
  await gone.close()
  const down = new OsrmRouter({ kind: 'osrm', url, timeoutMs: 1000, allowLoopback: true })
  t.teardown(() => down.close())
  const r = await down.ride(STORE, { lat: 38.73, lng: -9.13 })
  t.match(r, { source: 'straight', fallback: /^osrm unreachable/ })
  t.equal(r.seconds[0], straightSeconds(STORE, { lat: 38.73, lng: -9.13 }))
  const forbidden = new OsrmRouter({ kind: 'osrm', url: osrm.url, timeoutMs: 1000, allowLoopback: false })
  const n0 = osrm.requests.length
  t.match(await forbidden.toOne([STORE], { lat: 38.73, lng: -9.13 }), { source: 'straight', fallback: 'osrm refused: its URL is not an allowed address' })
  t.equal(osrm.requests.length, n0, 'nothing was sent to a loopback address without ROUTER_ALLOW_LOOPBACK')
})
