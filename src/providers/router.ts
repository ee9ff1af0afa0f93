/**
 * Travel times behind one interface (issue 37 item 4; docs/dispatch.md "Router"). `straight` (the
 * default) is the great-circle distance × a detour factor at a city speed (src/domain/eta.ts);
 * `osrm` asks an OSRM server's `table` and `route` services. OSRM requests get the webhook SSRF
 * checks (the URL at start, every connection's address at connect time: src/webhooks/ssrf.ts), a
 * time limit, and a cache; any failure answers the straight-line time and says so (`fallback`), so
 * a quote or a dispatch decision never waits on a router that is down.
 */
import { straightSeconds, type LatLng } from '../domain/eta.ts'
import { AgedCache, GuardedGetter } from './guarded-get.ts'

export type RouterConfig = { kind: 'straight' } | { kind: 'osrm'; url: string; timeoutMs: number; allowLoopback: boolean }

/** Travel times and where they came from: `fallback` says why the straight line answered instead of OSRM. */
export interface Travel { seconds: number[]; source: 'straight' | 'osrm'; fallback: string | null }

export interface Router {
  readonly kind: 'straight' | 'osrm'
  /** Seconds from each of `from` to `to` (OSRM `table` with one destination). */
  toOne(from: readonly LatLng[], to: LatLng): Promise<Travel>
  /** Seconds of the ride `a` → `b` (OSRM `route`). */
  ride(a: LatLng, b: LatLng): Promise<Travel>
  close(): Promise<void>
}

export const straightRouter: Router = {
  kind: 'straight',
  toOne: (from, to) => Promise.resolve({ seconds: from.map((p) => straightSeconds(p, to)), source: 'straight', fallback: null }),
  ride: (a, b) => Promise.resolve({ seconds: [straightSeconds(a, b)], source: 'straight', fallback: null }),
  close: () => Promise.resolve(),
}

/** Cache bounds: a position rounded to 5 decimals (~1 m); answers kept 5 minutes (traffic changes), 20,000 pairs at most. */
export const ROUTER_CACHE = { ttlMs: 300_000, entries: 20_000, decimals: 5 } as const

const coord = (p: LatLng) => `${p.lng.toFixed(ROUTER_CACHE.decimals)},${p.lat.toFixed(ROUTER_CACHE.decimals)}`

export class OsrmRouter implements Router {
  readonly kind = 'osrm' as const
  private readonly http: GuardedGetter
  private readonly cache = new AgedCache<number>(ROUTER_CACHE.ttlMs, ROUTER_CACHE.entries)

  constructor(cfg: Extract<RouterConfig, { kind: 'osrm' }>) {
    this.http = new GuardedGetter({ name: 'osrm', url: cfg.url, timeoutMs: cfg.timeoutMs, allowLoopback: cfg.allowLoopback })
  }

  /** Requests sent (not answered from the cache), for tests and metrics. */
  get requests(): number { return this.http.requests }

  async toOne(from: readonly LatLng[], to: LatLng): Promise<Travel> {
    const now = Date.now()
    const seconds: number[] = new Array<number>(from.length)
    const missing: number[] = []
    from.forEach((p, i) => {
      const hit = this.cache.get(`${coord(p)};${coord(to)}`, now)
      if (hit === undefined) missing.push(i)
      else seconds[i] = hit
    })
    if (missing.length === 0) return { seconds, source: 'osrm', fallback: null }
    const points = [...missing.map((i) => from[i]!), to]
    const path = `/table/v1/driving/${points.map(coord).join(';')}?sources=${missing.map((_, k) => k).join(';')}&destinations=${missing.length}&annotations=duration`
    const got = await this.get(path, (body) => {
      const d = (body as { durations?: unknown }).durations
      if (!Array.isArray(d) || d.length !== missing.length) return null
      const out = d.map((row) => (Array.isArray(row) && typeof row[0] === 'number' ? row[0] : NaN))
      return out.every((x) => Number.isFinite(x)) ? out : null
    })
    if (typeof got === 'string') return { seconds: from.map((p) => straightSeconds(p, to)), source: 'straight', fallback: got }
    missing.forEach((i, k) => {
      seconds[i] = Math.round(got[k]!)
      this.cache.set(`${coord(from[i]!)};${coord(to)}`, seconds[i]!, now)
    })
    return { seconds, source: 'osrm', fallback: null }
  }

  async ride(a: LatLng, b: LatLng): Promise<Travel> {
    const now = Date.now()
    const key = `${coord(a)};${coord(b)}`
    const hit = this.cache.get(key, now)
    if (hit !== undefined) return { seconds: [hit], source: 'osrm', fallback: null }
    const got = await this.get(`/route/v1/driving/${key}?overview=false`, (body) => {
      const r = (body as { routes?: Array<{ duration?: unknown }> }).routes?.[0]?.duration
      return typeof r === 'number' && Number.isFinite(r) ? [r] : null
    })
    if (typeof got === 'string') return { seconds: [straightSeconds(a, b)], source: 'straight', fallback: got }
    const s = Math.round(got[0]!)
    this.cache.set(key, s, now)
    return { seconds: [s], source: 'osrm', fallback: null }
  }

  /** GET `path` and read it with `read`; a string is why it failed (no addresses, no response bodies in it). */
  private async get(path: string, read: (body: unknown) => number[] | null): Promise<number[] | string> {
    const got = await this.http.json(path)
    if (typeof got === 'string') return got
    const code = (got.body as { code?: unknown } | null)?.code
    if (code !== 'Ok') return `osrm answered code ${typeof code === 'string' ? code.slice(0, 40) : 'none'}`
    return read(got.body) ?? 'osrm answered without durations'
  }

  close(): Promise<void> {
    return this.http.close()
  }
}

export const createRouter = (cfg: RouterConfig): Router => (cfg.kind === 'osrm' ? new OsrmRouter(cfg) : straightRouter)
