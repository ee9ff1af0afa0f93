/**
 * The dispatch simulation (issue 37 item 6; docs/dispatch.md "Simulation"), a stage of
 * `npm run bench -- dispatch`: a city of stores and drivers against the real server in its own
 * process, twice at once on the same server — two accounts with the same stores, the same drivers
 * at the same places and the same orders at the same moments:
 *
 * - **policy**: the stores dispatch in `offer` mode (the server's dispatcher decides);
 * - **baseline**: the stores dispatch by hand and this harness applies "nearest idle driver": each
 *   order, as soon as it is placed, goes to the idle driver nearest its store through
 *   `POST …/orders/{orderId}/assign` after the driver's reaction time (the same draws as its answers
 *   to offers); with nobody idle it queues, oldest first, for the next driver who delivers.
 *
 * Drivers are clients of the real driver socket (`/ws/driver`: positions every 400 ms, `offer` and
 * `assignment` frames) and of the driver API (accept or reject an offer after a reaction time,
 * `picked_up` and `delivered`); orders are placed through `POST /restaurants/{id}/orders`. A driver
 * rides straight to the store at the router's effective speed (25 km/h over 1.3 × the straight line),
 * waits for the order to be ready, rides to the customer, and stays there idle.
 *
 * **The clock is accelerated by shrinking the city**: distances are divided by SCALE (30), so every
 * ride takes 1/30 of its time, as judged by the server's router too, and the prep time is 1/30 of
 * the simulated one (written into the store settings, which accept fractions of a minute there). A
 * minute of the run is half an hour of the city. Times are reported in simulated seconds.
 *
 * Seeded (mulberry32): the city, the drivers' start, the orders' times, stores and addresses, the
 * reactions and rejections are the same in every run; what the server decides when is not.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import WebSocket from 'ws'
import { cpuSeconds, startApp } from './lib/proc.ts'
import { quantile } from './lib/load.ts'
import { rng } from './lib/rng.ts'
import { benchOwner } from './lib/bench-db.ts'
import { unlimitedPlan } from './lib/unlimited-plan.ts'
import { openDb, nowIso } from '../src/storage/db.ts'
import { newToken, sha256Hex } from '../src/auth/tokens.ts'
import { haversineMeters } from '../src/domain/eta.ts'

const ROOT = fileURLToPath(new URL('..', import.meta.url))

export interface SimConfig {
  seed: number
  /** Distances and times are divided by this (1 s of the run is `scale` s of the city). */
  scale: number
  stores: number
  drivers: number
  /** Orders per simulated hour, over the whole city. */
  ordersPerHour: number
  /** Simulated minutes of orders. */
  minutes: number
  /** Side of the (square) city, simulated km. */
  cityKm: number
  /** Customers live within this many simulated km of their store. */
  reachKm: number
  prepMinutes: number
  /** Share of offers a driver rejects (the policy's; the baseline assigns, which cannot be refused: 0 keeps them even). */
  rejectShare: number
  /** A driver answers an offer this many real ms after it arrives (uniform). */
  reactMs: [number, number]
  /** The policy's offer time (real seconds; 5 is the least the settings take). */
  offerSeconds: number
}

export const SIM_DEFAULTS: SimConfig = {
  seed: 37, scale: 30, stores: 8, drivers: 40, ordersPerHour: 160, minutes: 24, cityKm: 8, reachKm: 3, prepMinutes: 15,
  rejectShare: 0, reactMs: [300, 1500], offerSeconds: 5,
}

/** The router's effective speed over the straight line (src/domain/eta.ts: 25 km/h door to door, 1.3 detour), m/s. */
const SPEED_MPS = 25 / 3.6 / 1.3
const TICK_MS = 400

interface P { lat: number; lng: number }
interface PlannedOrder { atMs: number; store: number; to: P }
interface OrderRec {
  id: number; store: number; to: P; placedAt: number; readyAt: number
  firstOfferAt?: number; assignedAt?: number; arrivalAt?: number; pickupAt?: number; deliveredAt?: number; offers: number; rejects: number
}
type DriverState = 'idle' | 'reserved' | 'to_store' | 'to_customer'
interface Leg { from: P; to: P; t0: number; t1: number }
interface SimDriver { id: number; token: string; pos: P; state: DriverState; order: number | null; leg: Leg | null; idleSince: number | null; idleMs: number; ws: WebSocket | null; busy: boolean }

export interface WorldResult {
  name: string
  orders: OrderRec[]
  idleShare: number
  windowMs: number
}

/** Metres → degrees at latitude `lat`. */
const dLat = (m: number) => m / 111_195
const dLng = (m: number, lat: number) => m / (111_195 * Math.cos((lat * Math.PI) / 180))
const lerp = (l: Leg, t: number): P => {
  const f = l.t1 <= l.t0 ? 1 : Math.min(1, Math.max(0, (t - l.t0) / (l.t1 - l.t0)))
  return { lat: l.from.lat + (l.to.lat - l.from.lat) * f, lng: l.from.lng + (l.to.lng - l.from.lng) * f }
}
const rideMs = (a: P, b: P) => (haversineMeters(a, b) / SPEED_MPS) * 1000

/** The seeded city: stores, drivers' starting points, and the orders (time from the start in real ms, store, address). */
export function plan(cfg: SimConfig) {
  const rand = rng(cfg.seed)
  const center = { lat: 38.72, lng: -9.14 }
  const side = (cfg.cityKm * 1000) / cfg.scale
  const inCity = (): P => ({ lat: center.lat + dLat((rand() - 0.5) * side), lng: center.lng + dLng((rand() - 0.5) * side, center.lat) })
  const stores = Array.from({ length: cfg.stores }, inCity)
  const drivers = Array.from({ length: cfg.drivers }, inCity)
  const orders: PlannedOrder[] = []
  const ratePerRealMs = (cfg.ordersPerHour / 3_600_000) * cfg.scale
  const endMs = (cfg.minutes * 60_000) / cfg.scale
  const reach = (cfg.reachKm * 1000) / cfg.scale
  for (let t = -Math.log(1 - rand()) / ratePerRealMs; t < endMs; t += -Math.log(1 - rand()) / ratePerRealMs) {
    const store = Math.floor(rand() * stores.length)
    const s = stores[store]!
    // A point within `reach` of the store (uniform over the disc), kept in the city.
    const r = reach * Math.sqrt(rand())
    const a = rand() * 2 * Math.PI
    const clamp = (v: number, c: number, half: number) => Math.min(c + half, Math.max(c - half, v))
    const to = {
      lat: clamp(s.lat + dLat(r * Math.sin(a)), center.lat, dLat(side / 2)),
      lng: clamp(s.lng + dLng(r * Math.cos(a), s.lat), center.lng, dLng(side / 2, center.lat)),
    }
    orders.push({ atMs: t, store, to })
  }
  // Each driver's reactions to offers, in the order they come: delay and whether it rejects.
  const reactions = Array.from({ length: cfg.drivers }, (_, i) => rng(cfg.seed * 1000 + i))
  return { stores, drivers, orders, reactions, endMs }
}

export async function simulate(cfg: SimConfig, log: (s: string) => void): Promise<{ worlds: WorldResult[]; serverCpuSec: number | null; runSec: number }> {
  const city = plan(cfg)
  const dir = mkdtempSync(join(tmpdir(), 'bench-dispatch-sim-'))
  const dbPath = join(dir, 'sim.db')
  const worlds = ['policy', 'baseline'] as const
  const setup: Record<string, { owner: number; token: string; stores: Array<{ id: number; item: number }>; drivers: Array<{ id: number; token: string }> }> = {}
  {
    const db = openDb(dbPath)
    const now = nowIso()
    db.transaction(() => {
      for (const w of worlds) {
        const { ownerId, token } = benchOwner(db, `Sim ${w}`, `sim-${w}@example.test`, now)
        const dispatch = w === 'policy' ? { mode: 'offer', offer_seconds: cfg.offerSeconds, max_active_per_driver: 1 } : { mode: 'manual' }
        const stores = city.stores.map((p, i) => {
          const settings = { location: p, prep_minutes: cfg.prepMinutes / cfg.scale, dispatch }
          const id = Number(db.prepare("INSERT INTO stores (owner_id, title, slug, store_type, currency, settings, created_at) VALUES (?, ?, ?, 'restaurant', 'EUR', ?, ?)")
            .run(ownerId, `Store ${i}`, `sim-${w}-${i}`, JSON.stringify(settings), now).lastInsertRowid)
          const cat = Number(db.prepare("INSERT INTO menu_categories (store_id, name, created_at) VALUES (?, 'Mains', ?)").run(id, now).lastInsertRowid)
          const item = Number(db.prepare("INSERT INTO menu_items (store_id, category_id, name, price, created_at, updated_at) VALUES (?, ?, 'Dish', 1200, ?, ?)").run(id, cat, now, now).lastInsertRowid)
          return { id, item }
        })
        const drivers = city.drivers.map((_, i) => {
          const dt = newToken('driver')
          const id = Number(db.prepare('INSERT INTO drivers (owner_id, restaurant_id, name, phone, token_hash, on_shift, created_at) VALUES (?, NULL, ?, ?, ?, 1, ?)')
            .run(ownerId, `D${i}`, `+1555${w === 'policy' ? 1 : 2}${String(i).padStart(6, '0')}`, sha256Hex(dt), now).lastInsertRowid)
          db.prepare('INSERT INTO driver_shifts (driver_id, started_at) VALUES (?, ?)').run(id, now)
          return { id, token: dt }
        })
        setup[w] = { owner: ownerId, token, stores, drivers }
      }
    })()
    db.close()
    for (const w of worlds) unlimitedPlan(dbPath, setup[w]!.owner)
  }

  const server = await startApp(dbPath, ROOT)
  const base = `${server.url}/api/v1`
  const wsBase = base.replace(/^http/, 'ws')
  const failures: string[] = []
  const call = async (method: string, path: string, token: string, body?: unknown): Promise<{ status: number; json: any }> => {
    const r = await fetch(`${base}${path}`, { method, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) })
    const json = r.status === 204 ? null : await r.json().catch(() => null)
    if (r.status >= 400 && failures.length < 20) failures.push(`${method} ${path}: ${r.status} ${JSON.stringify(json)?.slice(0, 200)}`)
    return { status: r.status, json }
  }

  class World {
    readonly orders = new Map<number, OrderRec>()
    readonly drivers: SimDriver[]
    readonly byId = new Map<number, SimDriver>()
    private readonly queue: number[] = []
    windowStart = 0
    windowEnd = 0
    constructor(readonly name: (typeof worlds)[number]) {
      this.drivers = setup[name]!.drivers.map((d, i) => ({ id: d.id, token: d.token, pos: { ...city.drivers[i]! }, state: 'idle', order: null, leg: null, idleSince: null, idleMs: 0, ws: null, busy: false }))
      for (const d of this.drivers) this.byId.set(d.id, d)
    }

    async connect(): Promise<void> {
      await Promise.all(this.drivers.map((d, i) => new Promise<void>((resolve, reject) => {
        const ws = new WebSocket(`${wsBase}/ws/driver`, { headers: { authorization: `Bearer ${d.token}` } })
        d.ws = ws
        ws.once('open', () => { this.send(d, Date.now()); resolve() })
        ws.once('error', reject)
        ws.on('message', (raw) => this.frame(d, i, JSON.parse(String(raw)) as { type: string; [k: string]: any }))
      })))
    }

    send(d: SimDriver, now: number): void {
      const p = d.leg ? lerp(d.leg, now) : d.pos
      if (d.ws?.readyState === WebSocket.OPEN) d.ws.send(JSON.stringify({ type: 'location', lat: p.lat, lng: p.lng }))
    }

    private frame(d: SimDriver, i: number, f: { type: string; [k: string]: any }): void {
      const now = Date.now()
      if (f.type === 'offer') {
        const o = this.orders.get(Number(f.offer.order_id))
        if (o) { o.firstOfferAt ??= now; o.offers++ }
        const r = city.reactions[i]!
        const delay = cfg.reactMs[0] + r() * (cfg.reactMs[1] - cfg.reactMs[0])
        const reject = r() < cfg.rejectShare || d.state !== 'idle'
        setTimeout(() => {
          if (reject && o) o.rejects++
          void call('POST', `/driver/offers/${f.offer.id}/${reject ? 'reject' : 'accept'}`, d.token)
        }, delay)
      } else if (f.type === 'assignment') {
        const o = this.orders.get(Number(f.delivery.id))
        if (!o) return
        o.assignedAt ??= now
        o.firstOfferAt ??= now // the baseline assigns without offering: its first offer is the assignment
        this.startJob(d, o, now)
      }
    }

    private setState(d: SimDriver, s: DriverState, now: number): void {
      if (d.state === 'idle' && d.idleSince !== null) { d.idleMs += this.inWindow(d.idleSince, now); d.idleSince = null }
      d.state = s
      if (s === 'idle') d.idleSince = now
    }

    /** The part of [a, b] inside the window of orders (the drain after it would count everyone idle). */
    private inWindow(a: number, b: number): number {
      return Math.max(0, Math.min(b, this.windowEnd || Infinity) - Math.max(a, this.windowStart))
    }

    private startJob(d: SimDriver, o: OrderRec, now: number): void {
      const from = d.leg ? lerp(d.leg, now) : d.pos
      const store = city.stores[o.store]!
      d.order = o.id
      d.leg = { from, to: store, t0: now, t1: now + rideMs(from, store) }
      o.arrivalAt = d.leg.t1
      this.setState(d, 'to_store', now)
    }

    async place(p: PlannedOrder): Promise<void> {
      const s = setup[this.name]!
      const st = s.stores[p.store]!
      const r = await call('POST', `/restaurants/${st.id}/orders`, s.token, { type: 'delivery', address: 'Sim street', lat: p.to.lat, lng: p.to.lng, items: [{ item_id: st.item, quantity: 1 }] })
      if (r.status !== 200) return
      const id = Number(r.json.id)
      this.orders.set(id, { id, store: p.store, to: p.to, placedAt: Date.now(), readyAt: Date.parse(r.json.eta.ready_at), offers: 0, rejects: 0 })
      if (this.name === 'baseline') { this.queue.push(id); this.assignIdle() }
    }

    /** The baseline: the oldest waiting order to the idle driver nearest its store. */
    private assignIdle(): void {
      while (this.queue.length > 0) {
        const o = this.orders.get(this.queue[0]!)!
        const store = city.stores[o.store]!
        let best: SimDriver | null = null
        let bestM = Infinity
        for (const d of this.drivers) {
          if (d.state !== 'idle') continue
          const m = haversineMeters(d.pos, store)
          if (m < bestM) { best = d; bestM = m }
        }
        if (!best) return
        this.queue.shift()
        this.setState(best, 'reserved', Date.now())
        const s = setup[this.name]!
        // The driver takes the same time to react as to an offer of the policy's (the same draws).
        const r = city.reactions[this.drivers.indexOf(best)]!
        const delay = cfg.reactMs[0] + r() * (cfg.reactMs[1] - cfg.reactMs[0])
        r()
        setTimeout(() => void call('POST', `/restaurants/${s.stores[o.store]!.id}/orders/${o.id}/assign`, s.token, { driver_id: best.id }), delay)
      }
    }

    /** Move everyone along; pick-ups and drop-offs happen at their exact times, reported at the next tick. */
    tick(now: number): void {
      for (const d of this.drivers) {
        if (d.busy || !d.leg || d.order === null) { this.send(d, now); continue }
        const o = this.orders.get(d.order)!
        if (d.state === 'to_store' && now >= Math.max(d.leg.t1, o.readyAt)) {
          const t0 = Math.max(d.leg.t1, o.readyAt)
          o.pickupAt = t0
          d.leg = { from: city.stores[o.store]!, to: o.to, t0, t1: t0 + rideMs(city.stores[o.store]!, o.to) }
          this.setState(d, 'to_customer', now)
          d.busy = true
          void call('PUT', `/driver/deliveries/${o.id}/status`, d.token, { delivery_status: 'picked_up' }).finally(() => { d.busy = false })
        } else if (d.state === 'to_customer' && now >= d.leg.t1) {
          o.deliveredAt = d.leg.t1
          d.pos = o.to
          d.leg = null
          d.order = null
          d.busy = true
          void call('PUT', `/driver/deliveries/${o.id}/status`, d.token, { delivery_status: 'delivered' }).finally(() => {
            d.busy = false
            this.setState(d, 'idle', Date.now())
            if (this.name === 'baseline') this.assignIdle()
          })
        }
        this.send(d, now)
      }
    }

    result(): WorldResult {
      let idle = 0
      for (const d of this.drivers) idle += d.idleMs + (d.state === 'idle' && d.idleSince !== null ? this.inWindow(d.idleSince, this.windowEnd) : 0)
      const windowMs = this.windowEnd - this.windowStart
      return { name: this.name, orders: [...this.orders.values()], idleShare: idle / (windowMs * this.drivers.length), windowMs }
    }
  }

  const all = worlds.map((w) => new World(w))
  try {
    await Promise.all(all.map((w) => w.connect()))
    // Let the positions land (the dispatcher's index needs them fresh) before the first order.
    await new Promise((r) => setTimeout(r, 1000))
    const cpu0 = cpuSeconds(server.proc.pid)
    const t0 = Date.now()
    for (const w of all) { w.windowStart = t0; for (const d of w.drivers) d.idleSince = t0 }
    const ticker = setInterval(() => { const now = Date.now(); for (const w of all) w.tick(now) }, TICK_MS)
    log(`simulation: ${city.orders.length} orders over ${cfg.minutes} simulated min (${(city.endMs / 1000).toFixed(0)} s), ${cfg.stores} stores, ${cfg.drivers} drivers, ×${cfg.scale} clock, policy and baseline side by side`)
    try {
      for (const p of city.orders) {
        const wait = t0 + p.atMs - Date.now()
        if (wait > 0) await new Promise((r) => setTimeout(r, wait))
        await Promise.all(all.map((w) => w.place(p)))
      }
      const windowEnd = t0 + city.endMs
      if (windowEnd > Date.now()) await new Promise((r) => setTimeout(r, windowEnd - Date.now()))
      for (const w of all) w.windowEnd = Date.now()
      // Drain: until every order is picked up (what the comparison is about), or prep + two rides
      // across the city are over; deliveries still under way then are left out of `placed → delivered`.
      const drainUntil = Date.now() + ((cfg.prepMinutes * 60_000) / cfg.scale) + 2 * rideMs({ lat: 0, lng: 0 }, { lat: dLat((cfg.cityKm * 1000) / cfg.scale), lng: 0 })
      while (Date.now() < drainUntil && all.some((w) => [...w.orders.values()].some((o) => o.pickupAt === undefined))) await new Promise((r) => setTimeout(r, 200))
    } finally {
      clearInterval(ticker)
    }
    const cpu1 = cpuSeconds(server.proc.pid)
    if (failures.length > 0) log(`simulation: ${failures.length} refused calls, first: ${failures[0]}`)
    if (process.env.BENCH_SIM_DUMP === '1') for (const w of all) for (const o of w.orders.values()) log(`${w.name} ${o.id}: ` + ['placedAt', 'firstOfferAt', 'assignedAt', 'arrivalAt', 'pickupAt', 'deliveredAt'].map((k) => `${k.replace('At', '')} ${(((o as any)[k] ?? NaN) - o.readyAt) / 1000}`).join(' ') + ` offers ${o.offers} rejects ${o.rejects}`)
    return { worlds: all.map((w) => w.result()), serverCpuSec: cpu0 !== null && cpu1 !== null ? cpu1 - cpu0 : null, runSec: (Date.now() - t0) / 1000 }
  } finally {
    for (const w of all) for (const d of w.drivers) d.ws?.close()
    await server.stop()
    // BENCH_SIM_KEEP=1 keeps the database to look at the decisions (GET …/dispatch reads the same rows).
    if (process.env.BENCH_SIM_KEEP === '1') log(`simulation database kept: ${dbPath}`)
    else rmSync(dir, { recursive: true, force: true })
  }
}

/** p50/p90/p99/max of a world's orders for one measure (simulated seconds), and how many orders have it. */
export function stats(orders: readonly OrderRec[], pick: (o: OrderRec) => number | undefined, scale: number) {
  const xs = Float64Array.from(orders.map(pick).filter((x): x is number => x !== undefined).map((x) => (Math.max(0, x) * scale) / 1000)).sort()
  return { n: xs.length, p50: quantile(xs, 0.5), p90: quantile(xs, 0.9), p99: quantile(xs, 0.99), max: xs.length ? xs[xs.length - 1]! : NaN, mean: xs.reduce((a, b) => a + b, 0) / (xs.length || 1) }
}

export const MEASURES: Array<{ key: string; label: string; pick: (o: OrderRec) => number | undefined }> = [
  { key: 'pickup_wait', label: 'ready → pickup', pick: (o) => (o.pickupAt === undefined ? undefined : o.pickupAt - o.readyAt) },
  { key: 'first_offer', label: 'placed → first offer', pick: (o) => (o.firstOfferAt === undefined ? undefined : o.firstOfferAt - o.placedAt) },
  { key: 'accepted', label: 'placed → accepted', pick: (o) => (o.assignedAt === undefined ? undefined : o.assignedAt - o.placedAt) },
  { key: 'driver_wait', label: 'driver waits at store', pick: (o) => (o.arrivalAt === undefined || o.pickupAt === undefined ? undefined : Math.max(0, o.readyAt - o.arrivalAt)) },
  { key: 'delivered', label: 'placed → delivered', pick: (o) => (o.deliveredAt === undefined ? undefined : o.deliveredAt - o.placedAt) },
]
