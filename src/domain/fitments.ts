/**
 * Vehicle fitments (issue 18 item 3; docs/verticals.md "Fitments"): pure rules. A fitment is a
 * vehicle — make, model, an inclusive model-year range, optionally an engine — and a part fits the
 * vehicles it is linked to. The repository (src/storage/fitments.ts) runs the same match in SQL
 * over an index; `fits` is the definition both are tested against.
 */

/** Model years a fitment may name: the first production car to a few years ahead. */
export const YEAR_MIN = 1886
export const YEAR_MAX = 2100

export interface Vehicle { make: string; model: string; year_from: number; year_to: number; engine: string | null }

/** What a customer's "my car" filter says; every part optional (an absent part matches anything). */
export interface VehicleQuery { make?: string | undefined; model?: string | undefined; year?: number | undefined; engine?: string | undefined }

/** Make, model and engine compare case-insensitively and without surrounding blanks ("VW" = " vw"). */
export const sameName = (a: string, b: string): boolean => a.trim().toLowerCase() === b.trim().toLowerCase()

/**
 * Does vehicle `f` match the query? Year: inside `year_from..year_to`, both ends included. Engine:
 * a fitment without one fits every engine of its model; a query without one accepts any fitment.
 */
export function fits(f: Vehicle, q: VehicleQuery): boolean {
  if (q.make !== undefined && !sameName(f.make, q.make)) return false
  if (q.model !== undefined && !sameName(f.model, q.model)) return false
  if (q.year !== undefined && (q.year < f.year_from || q.year > f.year_to)) return false
  if (q.engine !== undefined && f.engine !== null && !sameName(f.engine, q.engine)) return false
  return true
}

/** True when the query names at least one part of a vehicle (otherwise it filters nothing). */
export const isVehicleQuery = (q: VehicleQuery): boolean =>
  q.make !== undefined || q.model !== undefined || q.year !== undefined || q.engine !== undefined

/** The year range's problem, if any (field errors keyed like the input). */
export function yearRangeErrors(from: number, to: number): Record<string, string[]> | null {
  return from > to ? { year_to: [`year_to (${to}) is before year_from (${from}).`] } : null
}

/** "VW Golf 2013–2020 1.6 TDI": how a fitment reads in lists and the seeded catalogue. */
export function vehicleLabel(f: Vehicle): string {
  const years = f.year_from === f.year_to ? String(f.year_from) : `${f.year_from}–${f.year_to}`
  return [f.make, f.model, years, f.engine].filter((x) => x !== null && x !== '').join(' ')
}
