/**
 * Batching (issue 37 item 3; docs/dispatch.md "Batching"), through the real API: with a store's
 * `dispatch.batch` on, a driver carrying an order of the same store takes another when it adds at
 * most 10 minutes to their route, and not when it adds more; never an order of another store; never
 * above `max_active_per_driver`. The explain view shows the detour figures, and the driver's
 * deliveries list their stops in visiting order. `batch: true` needs `max_active_per_driver` ≥ 2.
 */
import t from 'tap'
import { startServer } from './helpers/server.ts'
import { createFleet, deliveryOrder, driverStatus, type Fleet, type TestDriver } from './helpers/delivery.ts'
import { startFake, type Recorded } from './helpers/fake-service.ts'
import { BATCH_RULES } from '../src/domain/route.ts'
import { straightSeconds } from '../src/domain/eta.ts'

const STORE = { lat: 38.71, lng: -9.13 }
/** A point `km` kilometres north of the store (south when negative). */
const north = (km: number) => ({ lat: STORE.lat + km / 111.195, lng: STORE.lng })

const s = await startServer({ RATE_LIMIT_PER_MINUTE: '1000000' })
t.teardown(() => s.close())
const db = s.app.svc.db

async function until(cond: () => Promise<boolean>, what: string, timeoutMs = 15_000): Promise<void> {
  const end = Date.now() + timeoutMs
  while (!(await cond())) {
    if (Date.now() > end) throw new Error(`${what}: not in time`)
    await new Promise((r) => setTimeout(r, 50))
  }
}

async function dispatching(f: Fleet, dispatch: Record<string, unknown>, storeId = f.storeId) {
  const r = await s.req('PUT', `/restaurants/${storeId}/settings`, { token: f.ownerToken, body: { location: STORE, prep_minutes: 1, dispatch } })
  if (r.status !== 200) throw new Error(r.text)
}
/** On shift at `km` north of the store: over a minute away at 25 km/h from 0.4 km, so due at once with a one-minute prep. */
async function onShift(d: TestDriver, km: number) {
  if ((await s.req('POST', '/driver/shift', { token: d.token, body: { action: 'start' } })).status !== 200) throw new Error('shift')
  const r = await s.req('PUT', '/driver/location', { token: d.token, body: north(km) })
  if (r.status !== 200) throw new Error(r.text)
}
const explain = async (f: Fleet, orderId: number, storeId = f.storeId) => (await s.req('GET', `/restaurants/${storeId}/orders/${orderId}/dispatch`, { token: f.ownerToken })).body
/** The order's last decision, once there is one of `action`. */
async function decided(f: Fleet, orderId: number, action: string, storeId = f.storeId) {
  let last: Record<string, any> | undefined
  await until(async () => { last = (await explain(f, orderId, storeId)).decisions.at(-1); return last?.action === action }, `order ${orderId} ${action}`)
  return last!
}
const driverOf = async (f: Fleet, orderId: number) => (await s.req('GET', `/restaurants/${f.storeId}/orders/${orderId}`, { token: f.ownerToken })).body.driver?.id ?? null
const stopsOf = async (d: TestDriver) => {
  const r = await s.req('GET', '/driver/deliveries?active=1', { token: d.token })
  if (r.status !== 200) throw new Error(r.text)
  return (r.body.stops as Array<{ type: string; order_id: number; travel_s: number | null; lat: number | null }>)
}
const stopNames = (stops: Array<{ type: string; order_id: number }>, names: Record<number, string>) => stops.map((x) => `${x.type} ${names[x.order_id]}`)

t.test('settings: batch needs max_active_per_driver of at least 2', async (t) => {
  const f = createFleet(db)
  const put = (dispatch: unknown) => s.req('PUT', `/restaurants/${f.storeId}/settings`, { token: f.ownerToken, body: { dispatch } })
  const r = await put({ mode: 'auto', batch: true })
  t.equal(r.status, 422)
  t.match(r.body, { code: 'validation_failed', errors: { 'dispatch.batch': [/max_active_per_driver of at least 2/] } })
  t.same((await s.req('GET', `/restaurants/${f.storeId}/settings`, { token: f.ownerToken })).body.dispatch.batch, false, 'nothing written')
  t.match((await put({ mode: 'auto', batch: true, max_active_per_driver: 2 })).body, { dispatch: { mode: 'auto', batch: true, max_active_per_driver: 2 } })
  t.equal((await put({ mode: 'auto', batch: 'yes', max_active_per_driver: 2 })).status, 422)
})

t.test('a carrying driver takes a second order of the store on the way; stops in visiting order; the cap holds', async (t) => {
  const f = createFleet(db)
  await dispatching(f, { mode: 'auto', batch: true, max_active_per_driver: 2 })
  const d = f.drivers[0]!
  await onShift(d, 0.5)
  const far = await deliveryOrder(s, f, north(3))
  await decided(f, far.id, 'assigned')
  t.equal(await driverOf(f, far.id), d.id, 'the only driver takes the first order')

  // A second order whose customer is on the way to the first: almost no detour.
  const near = await deliveryOrder(s, f, north(1.5))
  const dec = await decided(f, near.id, 'assigned')
  t.equal(await driverOf(f, near.id), d.id, 'batched onto the carrying driver')
  const c = dec.candidates[0]
  t.match(c, { driver_id: d.id, load: 1, batch: { orders: [far.id], limit_s: BATCH_RULES.maxDetourS } })
  t.ok(c.batch.detour_s >= 0 && c.batch.detour_s <= 5, `the detour is next to nothing (${c.batch.detour_s} s)`)
  t.equal(c.batch.route_after_s - c.batch.route_before_s, c.batch.detour_s, 'detour = after − before')
  t.ok(c.batch.direct_s > 0, 'the direct ride is shown')

  // The route: both pickups at the store, then the nearer customer, then the farther one (not in order id order).
  const names = { [far.id]: 'far', [near.id]: 'near' }
  const stops = await stopsOf(d)
  t.same(stopNames(stops, names), ['pickup far', 'pickup near', 'dropoff near', 'dropoff far'])
  t.ok(stops.every((x, i) => x.travel_s !== null && (i === 0 || x.travel_s >= stops[i - 1]!.travel_s!)), 'times grow along the route')
  t.equal(stops[3]!.lat, north(3).lat, 'a drop-off is the order\'s position')

  // A third order right at the store: the driver is full at max_active_per_driver 2.
  const third = await deliveryOrder(s, f, north(1))
  const dec3 = await decided(f, third.id, 'nobody_available')
  t.same(dec3.candidates, [])
  t.match(dec3.excluded, [{ driver_id: d.id, reason: 'full' }])
  t.equal(await driverOf(f, third.id), null, 'never above max_active_per_driver')

  // Once picked up, only the drop-offs are left, nearest first.
  await driverStatus(s, d, far.id, 'picked_up')
  await driverStatus(s, d, near.id, 'picked_up')
  t.same(stopNames(await stopsOf(d), names), ['dropoff near', 'dropoff far'])
  // Delivering one frees a place: the waiting order is batched in.
  await driverStatus(s, d, near.id, 'delivered')
  await until(async () => (await driverOf(f, third.id)) === d.id, 'the third order batched after a delivery')
  const names3 = { ...names, [third.id]: 'third' }
  t.same(stopNames(await stopsOf(d), names3), ['pickup third', 'dropoff third', 'dropoff far'], 'back to the store for the new one, its customer on the way')
})

/** A fleet dispatching with `dispatch`, its first driver on shift 0.5 km out and carrying an order to `km` north. */
async function carrying(dispatch: Record<string, unknown>, km: number) {
  const f = createFleet(db)
  await dispatching(f, { mode: 'auto', ...dispatch })
  const d = f.drivers[0]!
  await onShift(d, 0.5)
  const first = await deliveryOrder(s, f, north(km))
  await decided(f, first.id, 'assigned')
  return { f, d, first }
}

t.test('over the detour limit the carrying driver is left out, with the figures', async (t) => {
  const { f, d, first } = await carrying({ batch: true, max_active_per_driver: 3 }, 4)
  // The opposite direction: 8 km south and back adds far more than 10 minutes.
  const other = await deliveryOrder(s, f, north(-8))
  const dec = await decided(f, other.id, 'nobody_available')
  const x = dec.excluded.find((e: { driver_id: number }) => e.driver_id === d.id)
  t.match(x, { reason: 'detour_over_limit', limit_s: BATCH_RULES.maxDetourS })
  t.ok(x.detour_s > BATCH_RULES.maxDetourS, `detour ${x.detour_s} s over the limit`)
  t.equal(await driverOf(f, other.id), null)
  t.same((await stopsOf(d)).map((st) => st.order_id), [first.id, first.id], 'the route is unchanged')

  // Without batching the same carrying driver would be a plain candidate under the cap: batching is what refuses it.
  const plain = await carrying({ batch: false, max_active_per_driver: 3 }, 4)
  const b = await deliveryOrder(s, plain.f, north(-8))
  const decB = await decided(plain.f, b.id, 'assigned')
  t.equal(decB.driver_id, plain.d.id)
  t.notOk(decB.candidates[0].batch, 'no batch figures without batching')
})

t.test('never across stores: a driver carrying another store\'s order is left out', async (t) => {
  const f = createFleet(db)
  const other = f.addStore()
  await dispatching(f, { mode: 'auto', batch: true, max_active_per_driver: 2 })
  await dispatching(f, { mode: 'auto', batch: true, max_active_per_driver: 2 }, other.storeId)
  const d = f.addDriver({ restaurantId: null }) // may serve both stores
  await onShift(d, 0.5)
  const mine = await deliveryOrder(s, { ...f, ...other }, north(2))
  await decided(f, mine.id, 'assigned', other.storeId)
  const o = await deliveryOrder(s, f, north(2))
  const dec = await decided(f, o.id, 'nobody_available')
  t.match(dec.excluded.find((e: { driver_id: number }) => e.driver_id === d.id), { reason: 'other_store' })
  t.equal(await driverOf(f, o.id), null)
})

t.test('stops: another driver sees none of these; a driver with nothing active has an empty route', async (t) => {
  const f = createFleet(db)
  const r = await s.req('GET', '/driver/deliveries', { token: f.drivers[1]!.token })
  t.equal(r.status, 200)
  t.same(r.body.stops, [])
})

t.test('the waiting list: every delivery without a driver with its decision, one request; another owner\'s store is 404', async (t) => {
  const f = createFleet(db)
  await dispatching(f, { mode: 'offer', offer_seconds: 600 })
  const d = f.drivers[0]!
  await onShift(d, 0.5)
  const offered = await deliveryOrder(s, f, north(2))
  await decided(f, offered.id, 'offered')
  await dispatching(f, { mode: 'manual' })
  const manual = await deliveryOrder(s, f, north(1))
  const cancelled = await deliveryOrder(s, f, north(1))
  t.equal((await s.req('PUT', `/restaurants/${f.storeId}/orders/${cancelled.id}/status`, { token: f.ownerToken, body: { status: 'cancelled' } })).status, 200)
  const list = async (token = f.ownerToken) => s.req('GET', `/restaurants/${f.storeId}/dispatch/waiting`, { token })
  const r = await list()
  t.equal(r.status, 200)
  t.same(r.body.data.map((e: { order_id: number }) => e.order_id), [offered.id, manual.id], 'oldest first; the cancelled one is not waiting')
  t.same(r.body.data[0], await explain(f, offered.id), 'each as the explain view shows it')
  t.match(r.body.data[1], { mode: 'manual', state: null, decisions: [], offers: [] })
  t.equal((await s.req('POST', `/restaurants/${f.storeId}/orders/${manual.id}/assign`, { token: f.ownerToken, body: { driver_id: f.drivers[1]!.id } })).status, 200)
  t.same((await list()).body.data.map((e: { order_id: number }) => e.order_id), [offered.id], 'an assigned order is no longer waiting')
  const stranger = createFleet(db)
  t.equal((await list(stranger.ownerToken)).status, 404, 'another owner\'s store')
})

t.test('with ROUTER=osrm the route is timed by OSRM; when OSRM fails the straight line decides and the decision says so', async (t) => {
  // The fake: a table answers 100 s per 0.01° of latitude (+7 s), whatever the longitude.
  const osrm = await startFake((req: Recorded) => {
    const pts = /driving\/([^?]+)/.exec(req.path)![1]!.split(';').map((p) => p.split(',').map(Number) as [number, number])
    const dest = pts[pts.length - 1]!
    return { status: 200, body: { code: 'Ok', durations: pts.slice(0, -1).map((p) => [Math.abs(dest[1] - p[1]) * 10_000 + 7]), routes: [{ duration: Math.abs(pts[1]![1] - pts[0]![1]) * 10_000, distance: 1 }] } }
  })
  t.teardown(() => osrm.close())
  const o = await startServer({ RATE_LIMIT_PER_MINUTE: '1000000', ROUTER: 'osrm', OSRM_URL: osrm.url, ROUTER_ALLOW_LOOPBACK: '1' })
  t.teardown(() => o.close())
  const f = createFleet(o.app.svc.db)
  const r = await o.req('PUT', `/restaurants/${f.storeId}/settings`, { token: f.ownerToken, body: { location: STORE, prep_minutes: 1, dispatch: { mode: 'auto', batch: true, max_active_per_driver: 2 } } })
  t.equal(r.status, 200)
  const d = f.drivers[0]!
  await o.req('POST', '/driver/shift', { token: d.token, body: { action: 'start' } })
  await o.req('PUT', '/driver/location', { token: d.token, body: north(0.5) })
  const first = await deliveryOrder(o, f, north(3))
  await until(async () => (await o.req('GET', `/restaurants/${f.storeId}/orders/${first.id}`, { token: f.ownerToken })).body.driver?.id === d.id, 'assigned')
  const stops = (await o.req('GET', '/driver/deliveries?active=1', { token: d.token })).body.stops
  const toStore = Math.abs(north(0.5).lat - STORE.lat) * 10_000 + 7
  t.ok(Math.abs(stops[0].travel_s - toStore) <= 1, `OSRM's ${toStore.toFixed(1)} s to the store (${stops[0].travel_s} s), not the straight line's ${straightSeconds(north(0.5), STORE)} s`)

  // OSRM down from here on (pairs already asked stay cached; the new customer's are not).
  osrm.plan(...Array.from({ length: 100 }, () => ({ status: 500, body: 'boom' })))
  const second = await deliveryOrder(o, f, north(2))
  let last: Record<string, any> | undefined
  await until(async () => {
    last = (await o.req('GET', `/restaurants/${f.storeId}/orders/${second.id}/dispatch`, { token: f.ownerToken })).body.decisions.at(-1)
    return last?.action === 'assigned'
  }, 'the second order batched')
  t.match(last, { driver_id: d.id, router: { fallback: 'osrm answered 500' }, candidates: [{ driver_id: d.id, batch: { orders: [first.id] } }] })
})
