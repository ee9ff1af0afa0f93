/**
 * Address search behind one interface (issue 34 item 4; docs/providers.md "Geocoder"): text → places
 * with a position. `none` (the default) knows no places: the store website's address form still
 * takes a position from the browser's location or the map pin. `nominatim` asks a Nominatim-
 * compatible `/search` API (OpenStreetMap's, Photon's Nominatim mode, a self-hosted one) with the
 * webhook SSRF checks, a time limit and a cache (src/providers/guarded-get.ts); a failure answers no
 * places and says why, never an error the customer cannot fix.
 */
import type { LatLng } from '../domain/eta.ts'
import { validLatLng } from '../domain/delivery.ts'
import { AgedCache, GuardedGetter } from './guarded-get.ts'

export type GeocoderConfig =
  | { kind: 'none' }
  | { kind: 'nominatim'; url: string; timeoutMs: number; allowLoopback: boolean; userAgent: string }

/** A place found for a text: its full label and where it is. */
export interface Place { label: string; lat: number; lng: number }
/** What a search found; `failure` says why the geocoder did not answer (none configured, timed out, …). */
export interface Found { places: Place[]; source: 'none' | 'nominatim'; failure: string | null }

export interface Geocoder {
  readonly kind: 'none' | 'nominatim'
  /** Places for `text`, at most `GEOCODER_LIMITS.places`, nearest the store first where the service ranks so (`near` biases). */
  search(text: string, near: LatLng | null): Promise<Found>
  close(): Promise<void>
}

/**
 * Bounds: 5 places an answer; answers kept a day (addresses do not move), 5,000 texts at most;
 * `near` rounded to 2 decimals (~1 km) in the key; the bias box ±0.25° (~25 km) around the store.
 */
export const GEOCODER_LIMITS = { places: 5, ttlMs: 86_400_000, entries: 5_000, nearDecimals: 2, biasDeg: 0.25, labelChars: 300 } as const

export const noGeocoder: Geocoder = {
  kind: 'none',
  search: () => Promise.resolve({ places: [], source: 'none', failure: 'no geocoder is configured' }),
  close: () => Promise.resolve(),
}

/** One place of a Nominatim `jsonv2` answer (`lat`/`lon` are strings there), or null. */
function placeOf(r: unknown): Place | null {
  const o = r as { lat?: unknown; lon?: unknown; display_name?: unknown } | null
  const lat = Number(o?.lat), lng = Number(o?.lon)
  if (typeof o?.lat !== 'string' && typeof o?.lat !== 'number') return null
  if (!validLatLng(lat, lng) || typeof o?.display_name !== 'string' || !o.display_name.trim()) return null
  return { label: o.display_name.trim().slice(0, GEOCODER_LIMITS.labelChars), lat, lng }
}

export class NominatimGeocoder implements Geocoder {
  readonly kind = 'nominatim' as const
  private readonly http: GuardedGetter
  private readonly cache = new AgedCache<Place[]>(GEOCODER_LIMITS.ttlMs, GEOCODER_LIMITS.entries)

  constructor(cfg: Extract<GeocoderConfig, { kind: 'nominatim' }>) {
    // Nominatim's usage policy asks every client to name itself.
    this.http = new GuardedGetter({ name: 'nominatim', url: cfg.url, timeoutMs: cfg.timeoutMs, allowLoopback: cfg.allowLoopback }, { 'user-agent': cfg.userAgent, accept: 'application/json' })
  }

  /** Requests sent (not answered from the cache), for tests. */
  get requests(): number { return this.http.requests }

  async search(text: string, near: LatLng | null): Promise<Found> {
    const q = text.trim().replace(/\s+/g, ' ')
    const now = Date.now()
    const key = `${q.toLowerCase()}|${near ? `${near.lat.toFixed(GEOCODER_LIMITS.nearDecimals)},${near.lng.toFixed(GEOCODER_LIMITS.nearDecimals)}` : ''}`
    const hit = this.cache.get(key, now)
    if (hit) return { places: hit, source: 'nominatim', failure: null }
    const params = new URLSearchParams({ q, format: 'jsonv2', limit: String(GEOCODER_LIMITS.places) })
    if (near) {
      const d = GEOCODER_LIMITS.biasDeg
      // A preference, not a bound: a place outside the box is still found.
      params.set('viewbox', [near.lng - d, near.lat + d, near.lng + d, near.lat - d].map((x) => x.toFixed(4)).join(','))
    }
    const got = await this.http.json(`/search?${params.toString()}`)
    if (typeof got === 'string') return { places: [], source: 'nominatim', failure: got }
    if (!Array.isArray(got.body)) return { places: [], source: 'nominatim', failure: 'nominatim answered something that is not a list of places' }
    const places = got.body.map(placeOf).filter((p): p is Place => p !== null).slice(0, GEOCODER_LIMITS.places)
    this.cache.set(key, places, now)
    return { places, source: 'nominatim', failure: null }
  }

  close(): Promise<void> {
    return this.http.close()
  }
}

export const createGeocoder = (cfg: GeocoderConfig): Geocoder => (cfg.kind === 'nominatim' ? new NominatimGeocoder(cfg) : noGeocoder)
