/**
 * The dispatch policy's pure parts (src/domain/dispatch.ts, src/domain/fleet-grid.ts; docs/dispatch.md
 * "Policy"): settings defaults, the ranking (lateness, then load, then idle time), the due time, and
 * the spatial index's nearest-neighbour answers checked against a brute-force scan.
 */
import t from 'tap'
import { answerLeadS, dispatchSettingsOf, dueAt, dueTravelS, rankCandidates, recheckAt } from '../../src/domain/dispatch.ts'
import { FleetGrid } from '../../src/domain/fleet-grid.ts'
import { FleetLoads } from '../../src/domain/fleet-loads.ts'
import { haversineMeters } from '../../src/domain/eta.ts'

t.test('settings: defaults for what is missing or wrong', async (t) => {
  t.same(dispatchSettingsOf({}), { mode: 'manual', offer_seconds: 30, max_active_per_driver: 1, batch: false })
  t.same(dispatchSettingsOf({ dispatch: { mode: 'auto', offer_seconds: 12 } }), { mode: 'auto', offer_seconds: 12, max_active_per_driver: 1, batch: false })
  t.equal(dispatchSettingsOf({ dispatch: { mode: 'chaos' } }).mode, 'manual')
})

t.test('ranking: on time first, then load, then who waited longest, then travel', async (t) => {
  const now = 0
  const ready = 600_000 // ten minutes
  const r = rankCandidates([
    { driver_id: 1, travel_s: 900, load: 0, idle_s: 10 }, // 5 min late
    { driver_id: 2, travel_s: 300, load: 1, idle_s: 10 }, // on time, loaded
    { driver_id: 3, travel_s: 500, load: 0, idle_s: 100 }, // on time, free, waited longer
    { driver_id: 4, travel_s: 100, load: 0, idle_s: 50 }, // on time, free
  ], now, ready)
  t.same(r.map((c) => c.driver_id), [3, 4, 2, 1])
  t.same(r.map((c) => c.late_s), [0, 0, 0, 300])
  t.same(r.map((c) => c.rank), [1, 2, 3, 4])
})

t.test('due time: ready minus the best travel, at once when past or unknown', async (t) => {
  t.equal(dueAt(600_000, 100, 0), 500_000)
  t.equal(dueAt(600_000, 900, 0), 0)
  t.equal(dueAt(600_000, null, 5), 5)
  t.equal(dueAt(600_000, 100, 0, 10), 490_000, 'the time to answer the offer comes off too')
})

t.test('due time under contention (found by the simulation): counts on the (n+1)-th fastest, a third of the offer time to answer, looked at again halfway', async (t) => {
  const c = [{ travel_s: 300 }, { travel_s: 60 }, { travel_s: 120 }]
  t.equal(dueTravelS(c, 0), 60, 'nobody else waiting: the nearest')
  t.equal(dueTravelS(c, 1), 120, 'one other order waiting: it may take the nearest')
  t.equal(dueTravelS(c, 9), 300, 'more waiting than timed: the slowest timed')
  t.equal(dueTravelS([], 0), null)
  t.equal(answerLeadS('offer', 30), 10)
  t.equal(answerLeadS('auto', 30), 0)
  t.equal(recheckAt(0, 60_000), 30_000)
  t.equal(recheckAt(0, 1_500), 1_000, 'at least a second ahead')
  t.equal(recheckAt(0, 500), 500, 'never after the due time')
})

t.test('the grid answers the k nearest accepted, as a brute-force scan does', async (t) => {
  const g = new FleetGrid()
  let seed = 7
  const rnd = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31)
  const all: Array<{ id: number; lat: number; lng: number }> = []
  for (let id = 1; id <= 3000; id++) {
    const p = { id, lat: 38.6 + rnd() * 0.3, lng: -9.3 + rnd() * 0.3 }
    all.push(p)
    g.upsert(id, id % 3, null, p.lat, p.lng, 0)
  }
  // Move some and remove some: the index follows.
  for (let id = 1; id <= 300; id++) { const p = all[id - 1]!; p.lat += 0.05; g.upsert(id, id % 3, null, p.lat, p.lng, 0) }
  for (let id = 301; id <= 400; id++) g.remove(id)
  const live = all.filter((p) => p.id <= 300 || p.id > 400)
  for (const q of [{ lat: 38.7, lng: -9.15 }, { lat: 38.61, lng: -9.29 }, { lat: 39.2, lng: -9.15 }, { lat: 40.2, lng: -9.15 }]) {
    const got = g.nearest(q.lat, q.lng, 10, (e) => e.ownerId === 1).map((n) => n.e.id)
    const want = live.filter((p) => p.id % 3 === 1).sort((a, b) => haversineMeters(a, q) - haversineMeters(b, q)).slice(0, 10).map((p) => p.id)
    t.same(got, q.lat > 40 ? [] : want, `near ${q.lat}, ${q.lng}${q.lat > 40 ? ' (beyond the ~55 km searched: nobody)' : ''}`)
  }
  t.equal(g.size, 2900)
  // With load levels: a search under a limit answers as a scan of the drivers under it does.
  const level = new Map(live.map((p) => [p.id, Math.floor(rnd() * 4)]))
  for (const [id, l] of level) g.setLevel(id, l)
  for (const q of [{ lat: 38.7, lng: -9.15 }, { lat: 38.61, lng: -9.29 }]) {
    const got = g.nearest(q.lat, q.lng, 10, (e) => e.ownerId === 1, 2).map((n) => n.e.id)
    const want = live.filter((p) => p.id % 3 === 1 && level.get(p.id)! < 2).sort((a, b) => haversineMeters(a, q) - haversineMeters(b, q)).slice(0, 10).map((p) => p.id)
    t.same(got, want, `under level 2 near ${q.lat}, ${q.lng}`)
  }
})

t.test('the grid keeps drivers apart by load level: a search under a limit skips the full ones and can name them', async (t) => {
  const g = new FleetGrid()
  // Ten drivers in a row going east from the store, 100 m apart; the three nearest carry an order.
  for (let id = 1; id <= 10; id++) g.upsert(id, 1, null, 38.7, -9.15 + id * 0.0012, 0, id <= 3 ? 1 : 0)
  const free = g.nearest(38.7, -9.15, 3, () => true, 1).map((n) => n.e.id)
  t.same(free, [4, 5, 6], 'under max_active_per_driver 1: the nearest free drivers, however many nearer are busy')
  t.same(g.nearest(38.7, -9.15, 3, () => true, 2).map((n) => n.e.id), [1, 2, 3], 'under 2: the carrying drivers count again')
  const named: number[] = []
  g.nearest(38.7, -9.15, 3, () => true, 1, (e) => { named.push(e.id); return named.length < 2 })
  t.same(named, [1, 2], 'full drivers nearer than the candidates are named, until the callback has enough')
  // Deliveries end and start: the levels follow.
  g.setLevel(2, 0)
  g.setLevel(5, 1)
  t.same(g.nearest(38.7, -9.15, 3, () => true, 1).map((n) => n.e.id), [2, 4, 6])
  t.same(g.nearest(38.7, -9.15, 3, () => true).map((n) => n.e.id), [1, 2, 3], 'no limit: every level')
  // Moving keeps the level; removing empties the cells.
  g.upsert(1, 1, null, 38.7, -9.15, 5)
  t.equal(g.get(1)!.level, 1)
  for (let id = 1; id <= 10; id++) g.remove(id)
  t.same(g.nearest(38.7, -9.15, 3, () => true), [])
  t.equal(g.size, 0)
})

t.test('loads in memory tell every change of a known driver\'s load (the index\'s levels follow them)', async (t) => {
  const heard: Array<[number, number]> = []
  const l = new FleetLoads((id, load) => heard.push([id, load]))
  l.seed(1, { active: [10], offers: [], lastEndMs: null })
  l.offerOpened(100, 1, 5_000)
  l.offerOpened(100, 1, 5_000) // the same change again: nothing new
  l.delivery(10, 1, false, true, 1000)
  l.delivery(12, 9, true, false, 0) // not known: not told
  l.expire(4_999)
  l.expire(5_000)
  t.same(heard, [[1, 1], [1, 2], [1, 1], [1, 0]], 'seeded at 1; an offer; the delivery ends; the offer expires')
})

t.test('loads in memory: deliveries, offers and the last delivery\'s end follow the order changes', async (t) => {
  const l = new FleetLoads()
  t.equal(l.load(1, 0), undefined, 'a driver not seeded is not known (the dispatcher reads SQLite)')
  // Changes of unknown drivers are ignored: their seed reads them.
  l.delivery(10, 1, true, false, 0)
  l.offerOpened(100, 1, 50_000)
  t.equal(l.load(1, 0), undefined)
  l.seed(1, { active: [10], offers: [{ id: 100, expiresAtMs: 50_000 }], lastEndMs: null })
  l.seed(2, { active: [], offers: [], lastEndMs: 5 })
  t.equal(l.load(1, 0), 2)
  // The same change reported again (a seed read after its commit) is not counted twice.
  l.delivery(10, 1, true, false, 0)
  l.offerOpened(100, 1, 50_000)
  t.equal(l.load(1, 0), 2)
  t.equal(l.load(1, 50_000), 1, 'an offer past its expiry no longer counts')
  // Reassigned from 1 to 2: 1 is free, 2 carries it.
  l.delivery(10, 2, true, false, 1000)
  t.same([l.load(1, 0), l.load(2, 0)], [0, 1])
  l.delivery(10, 2, false, true, 9000)
  t.same([l.load(2, 0), l.lastEndMs(2)], [0, 9000], 'delivered: free, and the end is remembered')
  l.offerOpened(101, 2, 60_000)
  t.equal(l.load(2, 0), 1)
  l.offerClosed(101)
  t.equal(l.load(2, 0), 0, 'an answered or withdrawn offer no longer counts')
  l.delivery(11, 2, true, false, 0)
  l.forget(2)
  t.equal(l.load(2, 0), undefined, 'forgotten (shift ended): read from SQLite again next time')
  l.delivery(11, null, false, false, 0)
  t.equal(l.size, 1)
})
