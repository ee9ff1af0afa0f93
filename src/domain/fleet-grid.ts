/**
 * The on-shift drivers' live positions in a spatial index (issue 37 item 5; docs/dispatch.md
 * "Fast enough for a city"): a uniform grid of cells 0.01° on a side (~1.1 km north–south), each a
 * set of driver ids. A position update moves an id between two cells (a few hundred nanoseconds);
 * `nearest` walks rings of cells outward from a point and stops once no unvisited cell can hold a
 * closer driver than the k-th found. Pure data structure, no I/O.
 *
 * Each cell keeps its drivers apart by **load level** (active deliveries plus open offers, the
 * dispatcher keeps it current: `setLevel`), so a search for drivers under a store's
 * `max_active_per_driver` never visits the busy ones: in a city where most drivers near a store are
 * out on deliveries the walk costs what the free drivers cost, not what everyone costs.
 */
import { haversineMeters } from './eta.ts'

export interface FleetEntry { id: number; ownerId: number; restaurantId: number | null; lat: number; lng: number; atMs: number; cell: number; level: number }

/** Load levels kept apart: 0…9 exactly, 10 for ten or more (`max_active_per_driver` is at most 10). */
export const GRID_LEVELS = 11

/** A cell: its drivers by load level, and how many there are in all (an empty cell is dropped). */
interface Cell { n: number; levels: Array<Set<FleetEntry> | undefined> }

/** Cell size in degrees. */
export const GRID_CELL_DEG = 0.01
/** Rings searched at most (~55 km at the cell size): farther drivers are not candidates. */
export const GRID_MAX_RINGS = 50

const ROW = 100_000 // cells per latitude row key span: lng index offset so every (row, col) is one number
const cellOf = (lat: number, lng: number): number => Math.floor((lat + 90) / GRID_CELL_DEG) * ROW + Math.floor((lng + 180) / GRID_CELL_DEG)

export class FleetGrid {
  private readonly cells = new Map<number, Cell>()
  private readonly byId = new Map<number, FleetEntry>()

  get size(): number { return this.byId.size }
  get(id: number): FleetEntry | undefined { return this.byId.get(id) }

  /** Insert or move a driver (on shift, with a position); a new one enters at `level` (its load). */
  upsert(id: number, ownerId: number, restaurantId: number | null, lat: number, lng: number, atMs: number, level = 0): void {
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
    const n: FleetEntry = { id, ownerId, restaurantId, lat, lng, atMs, cell, level: Math.min(GRID_LEVELS - 1, level) }
    this.byId.set(id, n)
    this.enter(n)
  }

  /** A driver that is already indexed: new binding (profile change). */
  rebind(id: number, restaurantId: number | null): void {
    const e = this.byId.get(id)
    if (e) e.restaurantId = restaurantId
  }

  /** A driver's load changed: it moves to that level of its cell. */
  setLevel(id: number, load: number): void {
    const e = this.byId.get(id)
    const level = Math.min(GRID_LEVELS - 1, Math.max(0, load))
    if (!e || e.level === level) return
    this.leave(e)
    e.level = level
    this.enter(e)
  }

  remove(id: number): void {
    const e = this.byId.get(id)
    if (!e) return
    this.leave(e)
    this.byId.delete(id)
  }

  /**
   * Up to `k` entries passing `accept`, nearest first, each with its great-circle distance in metres;
   * only entries whose load level is under `belowLevel` are looked at. The walk orders by planar
   * distance (degrees of latitude, longitude scaled by the cosine of the latitude here), which ranks
   * as the great-circle distance does at a city's scale (to a few metres) and costs no trigonometry; `accept` is asked
   * only about entries nearer than the k-th found so far. `skipped`, when given, hears about entries
   * at or above `belowLevel` nearer than the k-th found so far (to say why they were left out), until
   * it answers false. The walk ends early once it has seen every entry of the grid.
   */
  nearest(lat: number, lng: number, k: number, accept: (e: FleetEntry) => boolean, belowLevel = GRID_LEVELS, skipped?: (e: FleetEntry) => boolean): Array<{ e: FleetEntry; m: number }> {
    const levels = Math.min(GRID_LEVELS, belowLevel)
    let tellSkipped = skipped !== undefined
    let seen = 0
    const kx = Math.max(0.05, Math.cos((lat * Math.PI) / 180))
    // The k nearest so far, and their squared planar distances, ascending.
    const best: FleetEntry[] = []
    const d2: number[] = []
    const r0 = Math.floor((lat + 90) / GRID_CELL_DEG)
    const c0 = Math.floor((lng + 180) / GRID_CELL_DEG)
    // A cell's smaller side in the planar unit: everything in ring r is at least (r - 1) of them away.
    const cellSpan = GRID_CELL_DEG * kx
    for (let ring = 0; ring <= GRID_MAX_RINGS; ring++) {
      if (best.length >= k) {
        const gap = (ring - 1) * cellSpan
        if (gap > 0 && gap * gap > d2[k - 1]!) break
      }
      for (let dr = -ring; dr <= ring; dr++) {
        const edge = dr === -ring || dr === ring
        for (let dc = -ring; dc <= ring; dc += edge ? 1 : 2 * ring) {
          const cell = this.cells.get((r0 + dr) * ROW + (c0 + dc))
          if (cell) seen += cell.n
          if (cell) for (let l = 0; l < (tellSkipped ? GRID_LEVELS : levels); l++) {
            const set = cell.levels[l]
            if (set) for (const e of set) {
              const dy = e.lat - lat
              const dx = (e.lng - lng) * kx
              const q = dx * dx + dy * dy
              if (best.length >= k && q >= d2[k - 1]!) continue
              if (l >= levels) {
                if (tellSkipped && !skipped!(e)) tellSkipped = false
                continue
              }
              if (!accept(e)) continue
              // `accept` may have moved it up a level of this cell (its load just read): counted there, once.
              if (e.level > l) continue
              let i = Math.min(best.length, k - 1)
              while (i > 0 && d2[i - 1]! > q) { best[i] = best[i - 1]!; d2[i] = d2[i - 1]!; i-- }
              best[i] = e
              d2[i] = q
            }
          }
          if (ring === 0) break
        }
      }
      if (seen >= this.byId.size) break
    }
    const at = { lat, lng }
    return best.map((e) => ({ e, m: haversineMeters(e, at) }))
  }

  private enter(e: FleetEntry): void {
    let c = this.cells.get(e.cell)
    if (!c) this.cells.set(e.cell, (c = { n: 0, levels: [] }))
    const s = (c.levels[e.level] ??= new Set())
    if (!s.has(e)) { s.add(e); c.n++ }
  }

  private leave(e: FleetEntry): void {
    const c = this.cells.get(e.cell)
    if (!c || !c.levels[e.level]?.delete(e)) return
    if (--c.n === 0) this.cells.delete(e.cell)
  }
}
