/**
 * Travel times behind one interface (issue 37 item 4; docs/dispatch.md "Router"). `straight` (the
 * default) is the great-circle distance × a detour factor at a city speed (src/domain/eta.ts);
 * `osrm` asks an OSRM server's `table` and `route` services. OSRM requests get the webhook SSRF
 * checks (the URL at start, every connection's address at connect time: src/webhooks/ssrf.ts), a
 * time limit, and a cache; any failure answers the straight-line time and says so (`fallback`), so
 * a quote or a dispatch decision never waits on a router that is down.
 */
import type { Agent } from 'undici'
import { straightSeconds, type LatLng } from '../domain/eta.ts'
import { checkUrl, guardedLookup } from '../webhooks/ssrf.ts'
import { cachedLookup } from '../webhooks/dns-cache.ts'

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

/** A bounded map of pair → seconds with an age limit (oldest out first). */
class PairCache {
  private readonly m = new Map<string, { s: number; at: number }>()
  get(k: string, now: number): number | undefined {
    const e = this.m.get(k)
    if (!e) return undefined
    if (now - e.at > ROUTER_CACHE.ttlMs) { this.m.delete(k); return undefined }
    return e.s
  }
  set(k: string, s: number, now: number): void {
    this.m.delete(k)
    this.m.set(k, { s, at: now })
    if (this.m.size > ROUTER_CACHE.entries) this.m.delete(this.m.keys().next().value!)
  }
}

/** undici is loaded by the first OSRM request, not at start (as the push sender does). */
let undiciLoading: Promise<typeof import('undici')> | null = null

export class OsrmRouter implements Router {
  readonly kind = 'osrm' as const
  private agent: Agent | null = null
  private readonly cache = new PairCache()
  /** Requests sent (not answered from the cache), for tests and metrics. */
  requests = 0

  constructor(private readonly cfg: Extract<RouterConfig, { kind: 'osrm' }>) {}

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
    this.requests++
    // IP-literal hosts never reach the connect-time lookup: checked here, as webhooks do (src/webhooks/client.ts).
    const checked = checkUrl(this.cfg.url, this.cfg.allowLoopback)
    if (!checked.ok) return 'osrm refused: its URL is not an allowed address'
    try {
      const undici = await (undiciLoading ??= import('undici'))
      this.agent ??= new undici.Agent({
        connect: undici.buildConnector({ lookup: guardedLookup(this.cfg.allowLoopback, cachedLookup()), timeout: this.cfg.timeoutMs }),
        headersTimeout: this.cfg.timeoutMs, bodyTimeout: this.cfg.timeoutMs, connections: 8,
      })
      // No redirects are followed (undici's request never does without its redirect interceptor).
      const res = await undici.request(this.cfg.url + path, { method: 'GET', dispatcher: this.agent, signal: AbortSignal.timeout(this.cfg.timeoutMs) })
      const text = await res.body.text()
      if (res.statusCode !== 200) return `osrm answered ${res.statusCode}`
      let body: { code?: unknown }
      try { body = JSON.parse(text) as { code?: unknown } } catch { return 'osrm answered something that is not JSON' }
      if (body.code !== 'Ok') return `osrm answered code ${typeof body.code === 'string' ? body.code.slice(0, 40) : 'none'}`
      return read(body) ?? 'osrm answered without durations'
    } catch (err) {
      const e = err as { name?: string; code?: string; cause?: { code?: string } }
      const code = e.code ?? e.cause?.code
      if (code === 'EWEBHOOKBLOCKED') return 'osrm refused: its host does not resolve to an allowed address'
      if (e.name === 'TimeoutError' || e.name === 'AbortError' || code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT' || code === 'UND_ERR_CONNECT_TIMEOUT') return `osrm timed out after ${this.cfg.timeoutMs} ms`
      return `osrm unreachable${code ? ` (${code})` : ''}`
    }
  }

  close(): Promise<void> {
    return this.agent ? this.agent.close().catch(() => {}) : Promise.resolve()
  }
}

export const createRouter = (cfg: RouterConfig): Router => (cfg.kind === 'osrm' ? new OsrmRouter(cfg) : straightRouter)
