/**
 * Arrival estimates, pure (src/domain/eta.ts; docs/tracking-page.md "ETA"): haversine distance,
 * the recent speed over a window with a floor and a ceiling, "arriving" when close, unknown when
 * there is no speed; and the map tile template rules (src/domain/map-tiles.ts).
 */
import t from 'tap'
import { ETA_RULES, estimateArrival, haversineMeters, recentSpeed, type Fix } from '../../src/domain/eta.ts'
import { tileOrigin, tileTemplateProblem } from '../../src/domain/map-tiles.ts'

/** A point `m` metres north of `p` (one degree of latitude is 111,195 m on the haversine sphere). */
const north = (p: { lat: number; lng: number }, m: number) => ({ lat: p.lat + m / 111_195.08, lng: p.lng })
const origin = { lat: 52.52, lng: 13.405 }
/** Fixes `metersApart` metres apart, one every `everyMs`, starting at t = 0. */
const drive = (n: number, metersApart: number, everyMs: number): Fix[] =>
  Array.from({ length: n }, (_, i) => ({ ...north(origin, i * metersApart), at: i * everyMs }))

t.test('haversine: known distances', async (t) => {
  t.equal(haversineMeters(origin, origin), 0)
  t.ok(Math.abs(haversineMeters(origin, north(origin, 1000)) - 1000) < 0.5, 'a kilometre north')
  // Berlin Alexanderplatz → Paris Notre-Dame: about 878 km.
  const d = haversineMeters({ lat: 52.5219, lng: 13.4132 }, { lat: 48.853, lng: 2.3499 })
  t.ok(d > 876_000 && d < 880_000, `Berlin–Paris ${Math.round(d)} m`)
  t.equal(Math.round(haversineMeters({ lat: 0, lng: 179.9 }, { lat: 0, lng: -179.9 })), 22239, 'across the antimeridian, the short way')
})

t.test('speed: path length over time, within the window', async (t) => {
  t.equal(recentSpeed([]), null, 'no positions')
  t.equal(recentSpeed(drive(1, 0, 1000)), null, 'one position')
  t.equal(recentSpeed(drive(2, 50, ETA_RULES.minSpanMs - 1)), null, 'too short a span: unknown, not infinite')
  t.ok(Math.abs(recentSpeed(drive(5, 100, 10_000))! - 10) < 0.01, '100 m every 10 s is 10 m/s')
  // An old slow stretch outside the window does not drag the speed down.
  const fixes: Fix[] = [{ ...origin, at: 0 }, { ...north(origin, 10), at: 300_000 }, ...drive(7, 150, 10_000).map((f) => ({ ...north(f, 10), at: 600_000 + f.at }))]
  t.ok(Math.abs(recentSpeed(fixes)! - 15) < 0.01, 'only the last two minutes count')
})

t.test('speed: floor and ceiling', async (t) => {
  t.equal(recentSpeed(drive(3, 0, 30_000)), ETA_RULES.minSpeed, 'standing still: the floor, so the ETA stays finite')
  t.equal(recentSpeed(drive(2, 5000, 3_000)), ETA_RULES.maxSpeed, 'a GPS jump: the ceiling')
})

t.test('estimate: distance, seconds, arriving, unknown', async (t) => {
  const dest = north(origin, 3000)
  t.equal(estimateArrival([], dest), null, 'no driver position')
  t.equal(estimateArrival(drive(3, 100, 10_000), null), null, 'no destination')
  t.same(estimateArrival(drive(1, 0, 0), dest), { distance_m: 3000, seconds: null, arriving: false }, 'distance known, speed not yet')
  const e = estimateArrival(drive(3, 100, 10_000), dest)! // at 200 m, 10 m/s, 2800 m to go
  t.equal(e.distance_m, 2800)
  t.equal(e.seconds, Math.round((2800 * ETA_RULES.detour) / 10), 'remaining distance × detour ÷ speed')
  t.equal(e.arriving, false)
  const close = estimateArrival([{ ...north(dest, -ETA_RULES.arrivingWithinM + 1), at: 0 }], dest)!
  t.same(close, { distance_m: ETA_RULES.arrivingWithinM - 1, seconds: 0, arriving: true }, 'arriving when close, even without a speed')
})

t.test('tile templates: accepted, refused, and the CSP origin', async (t) => {
  t.equal(tileTemplateProblem('https://tile.openstreetmap.org/{z}/{x}/{y}.png'), null)
  t.equal(tileTemplateProblem('http://127.0.0.1:8111/tiles/{z}/{x}/{y}{r}.png?key=abc'), null)
  t.equal(tileTemplateProblem('https://{s}.tile.example.org/{z}/{x}/{y}.png'), null)
  t.match(tileTemplateProblem('https://tile.example.org/{z}/{x}.png'), /\{y\}/)
  t.match(tileTemplateProblem('ftp://tile.example.org/{z}/{x}/{y}.png'), /http/)
  t.match(tileTemplateProblem('tile.example.org/{z}/{x}/{y}.png'), /http/)
  t.match(tileTemplateProblem('https://u:p@tile.example.org/{z}/{x}/{y}.png'), /credentials/)
  t.match(tileTemplateProblem('https://tile.example.org/{z}/{x}/{y}.png{foo}'), /unknown placeholder/)
  t.match(tileTemplateProblem('https://a{s}.example.org/{z}/{x}/{y}.png'), /first label/)
  t.match(tileTemplateProblem('https://{z}.example.org/{z}/{x}/{y}.png'), /host/)
  t.equal(tileOrigin('https://tile.openstreetmap.org/{z}/{x}/{y}.png'), 'https://tile.openstreetmap.org')
  t.equal(tileOrigin('http://127.0.0.1:8111/t/{z}/{x}/{y}.png'), 'http://127.0.0.1:8111')
  t.equal(tileOrigin('https://{s}.Tile.Example.org/{z}/{x}/{y}.png'), 'https://*.tile.example.org')
})
