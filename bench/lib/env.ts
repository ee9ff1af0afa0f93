/** A positive integer from the environment (a bench size or count), `fallback` when unset; anything else throws. */
export function envInt(name: string, fallback: number): number {
  const raw = process.env[name]
  const n = raw === undefined ? fallback : Number(raw)
  if (!Number.isInteger(n) || n <= 0) throw new Error(`${name} must be a positive integer, got "${raw}"`)
  return n
}
