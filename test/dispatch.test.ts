/**
 * Automatic dispatch (issue 37 item 3; docs/dispatch.md "Policy"), through the real API: `offer`
 * mode offers a new delivery to the nearest eligible driver, a rejection or an expiry moves it on
 * to the next, acceptance assigns it; off-shift, stale-position, bound-elsewhere and full drivers are
 * never chosen; the explain view shows the candidates, the exclusions and every offer; nobody
 * available waits and is offered once someone starts a shift; `auto` assigns exactly one driver and
 * two orders at once never double-book a driver at `max_active_per_driver: 1`; a restart in the
 * middle of a cascade resumes it without assigning anything twice; orders waiting for their due time
 * count on the next fastest driver when others wait for the nearest. Stores in `manual` mode are left alone.
 */
import t from 'tap'
import { findFreePort, startServer, request } from './helpers/server.ts'
import { assign, createFleet, deliveryOrder, driverStatus, type Fleet, type TestDriver } from './helpers/delivery.ts'
import { outbox } from './helpers/fixtures.ts'
import { buildApp } from '../src/app.ts'
import { loadConfig } from '../src/config.ts'
import { nowIso } from '../src/storage/db.ts'

/** Wait until `cond()` holds (polling the API): decisions follow the replies that cause them. */
async function until(cond: () => Promise<boolean>, timeoutMs = 15_000): Promise<void> {
  const end = Date.now() + timeoutMs
  while (!(await cond())) {
    if (Date.now() > end) throw new Error('condition not met in time')
    await new Promise((r) => setTimeout(r, 50))
  }
}

const STORE = { lat: 38.71, lng: -9.13 }
/** A point `km` kilometres north of the store. */
const north = (km: number) => ({ lat: STORE.lat + km / 111.195, lng: STORE.lng })

const s = await startServer({ RATE_LIMIT_PER_MINUTE: '1000000' })
t.teardown(() => s.close())
const db = s.app.svc.db

type Req = (method: string, path: string, opts?: { token?: string; body?: unknown }) => ReturnType<typeof s.req>

/** A store of the fleet set up to dispatch: location, a one-minute prep time, the dispatch settings. */
async function dispatching(req: Req, f: Fleet, dispatch: Record<string, unknown>, storeId = f.storeId) {
  const r = await req('PUT', `/restaurants/${storeId}/settings`, { token: f.ownerToken, body: { location: STORE, prep_minutes: 1, dispatch } })
  if (r.status !== 200) throw new Error(r.text)
  return r.body
}
/** The driver on shift at `km` north of the store. */
async function onShift(req: Req, d: TestDriver, km: number) {
  if ((await req('POST', '/driver/shift', { token: d.token, body: { action: 'start' } })).status !== 200) throw new Error('shift')
  const r = await req('PUT', '/driver/location', { token: d.token, body: north(km) })
  if (r.status !== 200) throw new Error(r.text)
}
const offersOf = async (req: Req, d: TestDriver) => ((await req('GET', '/driver/offers', { token: d.token })).body as { data: Array<{ id: number; order_id: number }> }).data
async function offerFor(req: Req, d: TestDriver, orderId: number) {
  let offer: { id: number } | undefined
  for (let i = 0; i < 300 && !offer; i++) {
    offer = (await offersOf(req, d)).find((o) => o.order_id === orderId)
    if (!offer) await new Promise((r) => setTimeout(r, 50))
  }
  if (!offer) throw new Error(`no offer of order ${orderId} reached driver ${d.id}`)
  return offer
}
const explain = async (req: Req, f: Fleet, orderId: number, storeId = f.storeId) => (await req('GET', `/restaurants/${storeId}/orders/${orderId}/dispatch`, { token: f.ownerToken })).body

t.test('settings: dispatch defaults to manual, takes offer and auto, refuses nonsense', async (t) => {
  const f = createFleet(db)
  t.same((await s.req('GET', `/restaurants/${f.storeId}/settings`, { token: f.ownerToken })).body.dispatch, { mode: 'manual', offer_seconds: 30, max_active_per_driver: 1, batch: false })
  t.match(await dispatching(s.req, f, { mode: 'offer', offer_seconds: 20 }), { dispatch: { mode: 'offer', offer_seconds: 20, max_active_per_driver: 1, batch: false } })
  for (const bad of [{ mode: 'round-robin' }, { offer_seconds: 1 }, { max_active_per_driver: 0 }, { batch: true }]) {
    const r = await s.req('PUT', `/restaurants/${f.storeId}/settings`, { token: f.ownerToken, body: { dispatch: bad } })
    t.equal(r.status, 422, JSON.stringify(bad))
  }
  // Manual: nobody is offered anything.
  const d = f.drivers[0]!
  await dispatching(s.req, f, { mode: 'manual' })
  await onShift(s.req, d, 0.5)
  const o = await deliveryOrder(s, f, STORE)
  t.match(await explain(s.req, f, o.id), { mode: 'manual', state: null, decisions: [], offers: [] })
})

t.test('offer mode: the nearest eligible driver first; reject and expiry move on; acceptance assigns', async (t) => {
  const f = createFleet(db)
  await dispatching(s.req, f, { mode: 'offer', offer_seconds: 5, max_active_per_driver: 1 })
  const [near, mid] = f.drivers as [TestDriver, TestDriver]
  const far = f.addDriver()
  const offShift = f.addDriver()
  const elsewhere = f.addDriver({ restaurantId: f.addStore().storeId })
  const busy = f.addDriver()
  const stale = f.addDriver()
  await onShift(s.req, near, 1)
  await onShift(s.req, mid, 2)
  await onShift(s.req, far, 3)
  // All at least 0.4 km out (over a minute away at 25 km/h): due at once, with the one-minute prep time.
  await onShift(s.req, elsewhere, 0.45)
  await onShift(s.req, busy, 0.5)
  await s.req('PUT', '/driver/location', { token: offShift.token, body: north(0.5) }) // a position, but never a shift
  // A position ten minutes old, stored before the driver's shift starts.
  db.prepare('INSERT INTO driver_positions (driver_id, lat, lng, location_updated_at) VALUES (?, ?, ?, ?)').run(stale.id, north(0.45).lat, STORE.lng, nowIso(Date.now() - 600_000))
  t.equal((await s.req('POST', '/driver/shift', { token: stale.token, body: { action: 'start' } })).status, 200)
  // The busy driver already carries a delivery (manual assignment).
  const first = await deliveryOrder(s, f, north(5))
  await until(async () => (await explain(s.req, f, first.id)).decisions.length > 0)
  const firstOffer = (await explain(s.req, f, first.id)).offers[0]
  t.equal(firstOffer.driver_id, busy.id, 'the very nearest free driver got the first order')
  await s.req('POST', `/driver/offers/${firstOffer.offer_id}/accept`, { token: busy.token })

  const o = await deliveryOrder(s, f, north(4))
  const offer1 = await offerFor(s.req, near, o.id)
  // The job is written just after the offer: the offer may reach the driver first.
  await until(async () => (await explain(s.req, f, o.id)).state === 'offered')
  const e1 = await explain(s.req, f, o.id)
  t.match(e1, { mode: 'offer', state: 'offered', driver_id: null })
  const d1 = e1.decisions.at(-1)
  t.match(d1, { action: 'offered', driver_id: near.id, router: { source: 'straight', fallback: null } })
  t.same(d1.candidates.map((c: { driver_id: number }) => c.driver_id), [near.id, mid.id, far.id], 'ranked nearest first; only eligible drivers')
  t.ok(d1.candidates[0].travel_s < d1.candidates[1].travel_s)
  const reasons = Object.fromEntries(d1.excluded.map((x: { driver_id: number; reason: string }) => [x.driver_id, x.reason]))
  t.equal(reasons[elsewhere.id], 'bound_elsewhere')
  t.equal(reasons[stale.id], 'stale_position')
  t.equal(reasons[busy.id], 'full')
  for (const never of [offShift, elsewhere, stale, busy]) t.same((await offersOf(s.req, never)).filter((x) => x.order_id === o.id), [], `driver ${never.id} is never offered it`)

  t.equal((await s.req('POST', `/driver/offers/${offer1.id}/reject`, { token: near.token })).status, 200)
  await offerFor(s.req, mid, o.id)
  t.pass('a rejection moves the order to the next candidate')
  const offer3 = await offerFor(s.req, far, o.id) // mid lets it expire (5 s)
  t.pass('an expiry moves it on too')
  t.equal((await s.req('POST', `/driver/offers/${offer3.id}/accept`, { token: far.token })).status, 200)
  await until(async () => (await explain(s.req, f, o.id)).state === 'assigned')
  const e2 = await explain(s.req, f, o.id)
  t.equal(e2.driver_id, far.id)
  t.same(e2.offers.map((x: { driver_id: number; status: string }) => [x.driver_id, x.status]), [[near.id, 'rejected'], [mid.id, 'expired'], [far.id, 'accepted']])
  t.equal(outbox(db, 'order.driver_assigned').filter((e) => e.data.order_id === o.id).length, 1, 'assigned once')
})

t.test('nobody available: the order waits, then goes to the first driver who starts a shift', async (t) => {
  const f = createFleet(db)
  await dispatching(s.req, f, { mode: 'offer' })
  const o = await deliveryOrder(s, f, north(1))
  await until(async () => (await explain(s.req, f, o.id)).decisions.some((d: { action: string }) => d.action === 'nobody_available'))
  t.match(await explain(s.req, f, o.id), { state: 'waiting' })
  await onShift(s.req, f.drivers[1]!, 2)
  await offerFor(s.req, f.drivers[1]!, o.id)
  t.pass('offered as soon as someone became available')
})

t.test('auto mode: exactly one driver each; two orders at once never double-book a driver', async (t) => {
  const f = createFleet(db)
  await dispatching(s.req, f, { mode: 'auto', max_active_per_driver: 1 })
  const [a, b] = f.drivers as [TestDriver, TestDriver]
  await onShift(s.req, a, 1)
  await onShift(s.req, b, 1.5)
  const [o1, o2, o3] = await Promise.all([deliveryOrder(s, f, north(3)), deliveryOrder(s, f, north(3)), deliveryOrder(s, f, north(3))])
  await until(async () => (await explain(s.req, f, o1!.id)).state === 'assigned' && (await explain(s.req, f, o2!.id)).state === 'assigned')
  const drivers = await Promise.all([o1!, o2!].map(async (o) => (await explain(s.req, f, o.id)).driver_id))
  t.same([...drivers].sort(), [a.id, b.id].sort(), 'two drivers, one order each')
  await until(async () => (await explain(s.req, f, o3!.id)).decisions.length > 0)
  t.match(await explain(s.req, f, o3!.id), { state: 'waiting', driver_id: null }, 'the third waits: both drivers are full')
  for (const o of [o1!, o2!]) t.equal(outbox(db, 'order.driver_assigned').filter((e) => e.data.order_id === o.id).length, 1)
})

t.test('a restart in the middle of a cascade resumes the offers and assigns once', async (t) => {
  const first = await startServer({ RATE_LIMIT_PER_MINUTE: '1000000' })
  const fdb = first.app.svc.db
  const f = createFleet(fdb)
  await dispatching(first.req, f, { mode: 'offer', offer_seconds: 5 })
  const [near, next] = f.drivers as [TestDriver, TestDriver]
  await onShift(first.req, near, 1)
  await onShift(first.req, next, 2)
  const o = await deliveryOrder(first, f, north(4))
  await offerFor(first.req, near, o.id)
  // Stop the server (the database stays), start another on the same file.
  await first.app.close()
  const config = loadConfig({ LOG_LEVEL: 'silent', HOST: '127.0.0.1', PORT: String(await findFreePort()), DB_PATH: first.dbPath, RATE_LIMIT_PER_MINUTE: '1000000' })
  const second = buildApp(config)
  const port = await second.listen()
  t.teardown(() => second.close())
  const base = `http://127.0.0.1:${port}/api/v1`
  const req: Req = (method, path, opts = {}) => request(base + path, method, opts)
  t.match(await explain(req, f, o.id), { state: 'offered' }, 'the job survived')
  // The first offer expires unanswered: the next candidate is offered after the restart.
  const offer2 = await offerFor(req, next, o.id)
  t.equal((await req('POST', `/driver/offers/${offer2.id}/accept`, { token: next.token })).status, 200)
  await until(async () => (await explain(req, f, o.id)).state === 'assigned')
  const e = await explain(req, f, o.id)
  t.equal(e.driver_id, next.id)
  t.same(e.offers.map((x: { driver_id: number }) => x.driver_id), [near.id, next.id], 'each driver offered once')
  t.equal(outbox(second.svc.db, 'order.driver_assigned').filter((x) => x.data.order_id === o.id).length, 1, 'assigned once')
})

t.test('a busy evening: when the nearest drivers are all full the search widens to the free ones', async (t) => {
  const f = createFleet(db)
  await dispatching(s.req, f, { mode: 'offer', max_active_per_driver: 1 })
  const now = nowIso()
  const drivers = Array.from({ length: 30 }, () => f.addDriver({ onShift: true }))
  // Positions stored, the index refilled from them (as at a start); the 27 nearest each carry a delivery.
  drivers.forEach((d, i) => db.prepare('INSERT INTO driver_positions (driver_id, lat, lng, location_updated_at) VALUES (?, ?, ?, ?)').run(d.id, north(0.5 + i * 0.1).lat, STORE.lng, now))
  const busy = drivers.slice(0, 27)
  for (const d of busy) {
    const o = await deliveryOrder(s, f, north(9))
    db.prepare("UPDATE orders SET driver_id = ?, delivery_status = 'assigned' WHERE id = ?").run(d.id, o.id)
  }
  s.app.dispatcher.start()
  const o = await deliveryOrder(s, f, north(4))
  await offerFor(s.req, drivers[27]!, o.id)
  await until(async () => (await explain(s.req, f, o.id)).state === 'offered')
  const d = (await explain(s.req, f, o.id)).decisions.at(-1)
  t.same(d.candidates.map((c: { driver_id: number }) => c.driver_id), drivers.slice(27).map((x) => x.id), 'the three free drivers, nearest first')
  const full = new Set(d.excluded.filter((x: { reason: string }) => x.reason === 'full').map((x: { driver_id: number }) => x.driver_id))
  const busyIds = new Set(busy.map((b) => b.id))
  t.equal(full.size, 20, 'the nearer ones were left out as full (the record keeps 20 exclusions)')
  t.ok([...full].every((id) => busyIds.has(id as number)), 'only busy drivers are full')
})

t.test('orders waiting for their due time compete for the nearest driver: the next one counts on the second fastest (found by the simulation)', async (t) => {
  const f = createFleet(db)
  const r = await s.req('PUT', `/restaurants/${f.storeId}/settings`, { token: f.ownerToken, body: { location: STORE, prep_minutes: 30, dispatch: { mode: 'auto' } } })
  t.equal(r.status, 200)
  const [a, b] = f.drivers as [TestDriver, TestDriver]
  await onShift(s.req, a, 1)
  await onShift(s.req, b, 3)
  const dueOf = async (orderId: number) => {
    await until(async () => (await explain(s.req, f, orderId)).decisions.length > 0)
    const d = (await explain(s.req, f, orderId)).decisions[0]
    return { action: d.action, due: Date.parse(d.due_at), travel: new Map<number, number>(d.candidates.map((c: { driver_id: number; travel_s: number }) => [c.driver_id, c.travel_s])) }
  }
  const o1 = await deliveryOrder(s, f, north(5))
  const d1 = await dueOf(o1.id)
  t.equal(d1.action, 'wait_until_due')
  t.equal(d1.due, Date.parse((o1.eta as { ready_at: string }).ready_at) - d1.travel.get(a.id)! * 1000, 'alone: due as the nearest driver would arrive when it is ready')
  const o2 = await deliveryOrder(s, f, north(5))
  const d2 = await dueOf(o2.id)
  t.equal(d2.action, 'wait_until_due')
  t.equal(d2.due, Date.parse((o2.eta as { ready_at: string }).ready_at) - d2.travel.get(b.id)! * 1000, 'the first order may take the nearest: due as the second would arrive')
  t.ok(d2.travel.get(b.id)! > d2.travel.get(a.id)!)
})

/**
 * A store in `offer` mode with two drivers on shift: one 500 m north of it carrying a picked-up order
 * to `km` north of the store, one free 8 km away (late for anything ready within the next 25 minutes).
 */
async function carryingAndFar(km: number) {
  const f = createFleet(db)
  await dispatching(s.req, f, { mode: 'manual' })
  const [carrying, far] = f.drivers as [TestDriver, TestDriver]
  await onShift(s.req, carrying, 0.5)
  await onShift(s.req, far, 8)
  const first = await deliveryOrder(s, f, north(km))
  await assign(s, f, first.id, carrying.id)
  if ((await driverStatus(s, carrying, first.id, 'picked_up')).status !== 200) throw new Error('picked_up')
  await dispatching(s.req, f, { mode: 'offer', offer_seconds: 5, max_active_per_driver: 1 })
  return { f, carrying, far, first }
}

t.test('a driver finishing a delivery near the store is waited for when the best free driver would be late (found by the simulation)', async (t) => {
  // The carrying driver has picked up an order going 300 m from the store, and is 500 m north of it.
  const { f, carrying, far, first } = await carryingAndFar(0.3)
  // Ready in a minute; the free driver is 8 km away (~25 minutes): late. The carrying one is minutes from done, next door.
  const o = await deliveryOrder(s, f, north(1))
  await until(async () => (await explain(s.req, f, o.id)).decisions.some((d: { action: string }) => d.action === 'wait_for_driver'))
  const e = await explain(s.req, f, o.id)
  const d = e.decisions.find((x: { action: string }) => x.action === 'wait_for_driver')
  t.match(e, { state: 'waiting', driver_id: null })
  t.equal(d.driver_id, carrying.id, 'waits for the carrying driver')
  t.ok(Date.parse(d.arrival_at) < Date.parse(d.best_free_arrival_at), 'because it reaches the store sooner than the free one would')
  t.same(d.candidates.map((c: { driver_id: number }) => c.driver_id), [far.id], 'the free driver was the candidate')
  t.ok(d.candidates[0].late_s > 0, 'and would have been late')
  t.same((await offersOf(s.req, far)).filter((x) => x.order_id === o.id), [], 'the far driver is not offered it')
  // The delivery ends: the order goes to the driver who just became free.
  t.equal((await driverStatus(s, carrying, first.id, 'delivered')).status, 200)
  await offerFor(s.req, carrying, o.id)
  t.same((await offersOf(s.req, far)).filter((x) => x.order_id === o.id), [], 'still nothing for the far driver')
})

t.test('nobody finishing sooner: the late free driver is offered the order at once', async (t) => {
  // This carrying driver's customer is 30 km away: it would come back later than the free driver arrives.
  const { f, far } = await carryingAndFar(30)
  const o = await deliveryOrder(s, f, north(1))
  await offerFor(s.req, far, o.id)
  t.notOk((await explain(s.req, f, o.id)).decisions.some((d: { action: string }) => d.action === 'wait_for_driver'), 'no wait for a driver who would come later')
})

t.test('waiting for a driver finishing nearby: never for one that could not take the order, one driver per order, and not past the bound', async (t) => {
  const wait = async (f: Fleet, orderId: number) => {
    await until(async () => (await explain(s.req, f, orderId)).decisions.some((d: { action: string }) => d.action === 'wait_for_driver'))
    return (await explain(s.req, f, orderId)).decisions.find((d: { action: string }) => d.action === 'wait_for_driver')
  }
  t.test('a carrying driver whose position is stale is not waited for: the free one is offered the order', async (t) => {
    const { f, carrying, far } = await carryingAndFar(0.3)
    db.prepare('UPDATE driver_positions SET location_updated_at = ? WHERE driver_id = ?').run(nowIso(Date.now() - 300_000), carrying.id)
    s.app.dispatcher.start() // the index refilled from the stored positions, as at a start
    const o = await deliveryOrder(s, f, north(1))
    await offerFor(s.req, far, o.id)
    const e = await explain(s.req, f, o.id)
    t.notOk(e.decisions.some((d: { action: string }) => d.action === 'wait_for_driver'))
    t.match(e.decisions.at(-1).excluded, [{ driver_id: carrying.id, reason: 'stale_position' }], 'named with its real reason')
  })
  t.test('two orders, one driver finishing nearby: only one waits for it', async (t) => {
    const { f, carrying, far } = await carryingAndFar(0.3)
    const o1 = await deliveryOrder(s, f, north(1))
    t.equal((await wait(f, o1.id)).driver_id, carrying.id)
    const o2 = await deliveryOrder(s, f, north(1))
    await offerFor(s.req, far, o2.id)
    t.notOk((await explain(s.req, f, o2.id)).decisions.some((d: { action: string }) => d.action === 'wait_for_driver'), 'the second does not wait for the same driver')
    t.match(await explain(s.req, f, o1.id), { state: 'waiting' }, 'the first still waits for it')
  })
  t.test('past the bound set at its first wait the order goes to the best free driver', async (t) => {
    const { f, far } = await carryingAndFar(0.3)
    const o = await deliveryOrder(s, f, north(1))
    await wait(f, o.id)
    t.ok(db.prepare('SELECT hold_until FROM dispatch_jobs WHERE order_id = ?').pluck().get(o.id), 'the bound is stored with the job')
    db.prepare('UPDATE dispatch_jobs SET hold_until = ? WHERE order_id = ?').run(nowIso(Date.now() - 1000), o.id)
    // Someone starting a shift has waiting orders looked at again.
    await onShift(s.req, f.addDriver({ onShift: false }), 12)
    await offerFor(s.req, far, o.id)
    t.pass('offered to the free driver after the bound')
  })
})
