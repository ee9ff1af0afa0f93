/**
 * The on-shift drivers' live positions in a spatial index (issue 37 item 5; docs/dispatch.md
 * "Fast enough for a city"): a uniform grid of cells 0.01° on a side (~1.1 km north–south), each a
 * set of driver ids. A position update moves an id between two cells (a few hundred nanoseconds);
 * `nearest` walks rings of cells outward from a point and stops once no unvisited cell can hold a
 * closer driver than the k-th found. Pure data structure, no I/O.
 */
import { haversineMeters } from './eta.ts'

export interface FleetEntry { id: number; ownerId: number; restaurantId: number | null; lat: number; lng: number; atMs: number; cell: number }

/** Cell size in degrees. */
export const GRID_CELL_DEG = 0.01
/** Rings searched at most (~55 km at the cell size): farther drivers are not candidates. */
export const GRID_MAX_RINGS = 50

const ROW = 100_000 // cells per latitude row key span: lng index offset so every (row, col) is one number
const cellOf = (lat: number, lng: number): number => Math.floor((lat + 90) / GRID_CELL_DEG) * ROW + Math.floor((lng + 180) / GRID_CELL_DEG)

export class FleetGrid {
  private readonly cells = new Map<number, Set<number>>()
  private readonly byId = new Map<number, FleetEntry>()

  get size(): number { return this.byId.size }
  get(id: number): FleetEntry | undefined { return this.byId.get(id) }

  /** Insert or move a driver (on shift, with a position). */
  upsert(id: number, ownerId: number, restaurantId: number | null, lat: number, lng: number, atMs: number): void {
    const cell = cellOf(lat, lng)
    const e = this.byId.get(id)
    if (e) {
      if (e.cell !== cell) {
        this.leave(e)
        e.cell = cell
        this.enter(e)
      }
      e.lat = lat; e.lng = lng; e.atMs = atMs; e.ownerId = ownerId; e.restaurantId = restaurantId
      return
    }
    const n: FleetEntry = { id, ownerId, restaurantId, lat, lng, atMs, cell }
    this.byId.set(id, n)
    this.enter(n)
  }

  /** A driver that is already indexed: new binding (profile change). */
  rebind(id: number, restaurantId: number | null): void {
    const e = this.byId.get(id)
    if (e) e.restaurantId = restaurantId
  }

  remove(id: number): void {
    const e = this.byId.get(id)
    if (!e) return
    this.leave(e)
    this.byId.delete(id)
  }

  /**
   * Up to `k` entries passing `accept`, nearest first by great-circle distance from (`lat`, `lng`),
   * each with its distance in metres.
   */
  nearest(lat: number, lng: number, k: number, accept: (e: FleetEntry) => boolean): Array<{ e: FleetEntry; m: number }> {
    const found: Array<{ e: FleetEntry; m: number }> = []
    const r0 = Math.floor((lat + 90) / GRID_CELL_DEG)
    const c0 = Math.floor((lng + 180) / GRID_CELL_DEG)
    // Metres per cell, conservatively the smaller of the north–south and east–west spans here.
    const cellM = Math.min(111_195 * GRID_CELL_DEG, 111_195 * GRID_CELL_DEG * Math.max(0.05, Math.cos((lat * Math.PI) / 180)))
    for (let ring = 0; ring <= GRID_MAX_RINGS; ring++) {
      // Everything in ring `ring` is at least (ring - 1) cells away: stop once that beats the k-th.
      if (found.length >= k && (ring - 1) * cellM > found[k - 1]!.m) break
      for (let dr = -ring; dr <= ring; dr++) {
        const edge = dr === -ring || dr === ring
        for (let dc = -ring; dc <= ring; dc += edge ? 1 : 2 * ring) {
          const set = this.cells.get((r0 + dr) * ROW + (c0 + dc))
          if (set) for (const id of set) {
            const e = this.byId.get(id)!
            if (!accept(e)) continue
            found.push({ e, m: haversineMeters(e, { lat, lng }) })
          }
          if (ring === 0) break
        }
      }
      found.sort((a, b) => a.m - b.m)
      if (found.length > k * 4) found.length = k * 4
    }
    return found.slice(0, k)
  }

  private enter(e: FleetEntry): void {
    let s = this.cells.get(e.cell)
    if (!s) this.cells.set(e.cell, (s = new Set()))
    s.add(e.id)
  }

  private leave(e: FleetEntry): void {
    const s = this.cells.get(e.cell)
    if (!s) return
    s.delete(e.id)
    if (s.size === 0) this.cells.delete(e.cell)
  }
}
