/**
 * The soak's growth detector (issue 21 item 6): does a series sampled over a long run (RSS, heap,
 * open fds, event-loop delay) keep growing? Pure, so it is unit-tested (test/unit/growth.test.ts).
 *
 * After a warm-up (the first quarter by default: caches fill, the JIT settles, the heap finds its
 * size) the rest is cut in thirds. The series is growing when the median (or the `level` quantile)
 * of the last third exceeds that of the middle third by more than `tolerance` (relative) plus
 * `slack` (absolute) AND the least-squares slope over the whole post-warm-up window is positive.
 * Medians make one spike harmless; the slope makes a step that came back down harmless; the slack
 * keeps tiny series (a few fds, a 2 ms delay) from tripping on noise. For memory a low quantile
 * (level 0.1) compares the floors the garbage collector leaves: a GC sawtooth whose period is long
 * next to a third of the run moves the medians, while a leak raises the floor.
 */

export interface GrowthOptions {
  /** Share of the samples at the start that are ignored (0..1). */
  warmup: number
  /** Allowed relative rise of the last third's median over the middle third's. */
  tolerance: number
  /** Allowed absolute rise on top of that, in the series' unit. */
  slack: number
  /** Which quantile of each third is compared: 0.5 the median, 0.1 the floor. */
  level: number
}

export interface GrowthVerdict {
  growing: boolean
  /** Median of the middle third and of the last third (post-warm-up). */
  middle: number
  last: number
  /** Least-squares slope per sample over the post-warm-up window. */
  slope: number
  /** The highest `last` that would still pass. */
  limit: number
  reason: string
}

export const DEFAULT_GROWTH: GrowthOptions = { warmup: 0.25, tolerance: 0.1, slack: 0, level: 0.5 }

/** Fewest post-warm-up samples that allow a verdict (two per third). */
export const MIN_SAMPLES = 6

/** The `q` quantile of `xs` (0..1), interpolating between neighbours; NaN for an empty list. */
export function quantile(xs: readonly number[], q: number): number {
  if (xs.length === 0) return NaN
  const s = [...xs].sort((a, b) => a - b)
  const pos = (s.length - 1) * q
  const lo = Math.floor(pos)
  return s[lo]! + (s[Math.min(lo + 1, s.length - 1)]! - s[lo]!) * (pos - lo)
}

export const median = (xs: readonly number[]): number => quantile(xs, 0.5)

/** Least-squares slope of `ys` against their index. */
export function slope(ys: readonly number[]): number {
  const n = ys.length
  if (n < 2) return 0
  const mx = (n - 1) / 2
  const my = ys.reduce((a, b) => a + b, 0) / n
  let num = 0
  let den = 0
  for (let i = 0; i < n; i++) { num += (i - mx) * (ys[i]! - my); den += (i - mx) ** 2 }
  return num / den
}

export function detectGrowth(samples: readonly number[], options: Partial<GrowthOptions> = {}): GrowthVerdict {
  const o = { ...DEFAULT_GROWTH, ...options }
  const xs = samples.slice(Math.floor(samples.length * o.warmup))
  if (xs.length < MIN_SAMPLES) return { growing: false, middle: NaN, last: NaN, slope: 0, limit: NaN, reason: `too few samples after the warm-up (${xs.length} < ${MIN_SAMPLES})` }
  const third = Math.floor(xs.length / 3)
  const middle = quantile(xs.slice(third, 2 * third), o.level)
  const last = quantile(xs.slice(xs.length - third), o.level)
  const s = slope(xs)
  const limit = middle * (1 + o.tolerance) + o.slack
  const growing = last > limit && s > 0
  const at = o.level === 0.5 ? 'median' : `p${Math.round(o.level * 100)}`
  const reason = growing
    ? `last third's ${at} ${fmt(last)} > ${fmt(limit)} (middle ${fmt(middle)} + ${Math.round(o.tolerance * 100)}% + ${fmt(o.slack)}) and still rising (slope ${fmt(s)}/sample)`
    : last > limit ? `last third's ${at} ${fmt(last)} above ${fmt(limit)} but the trend is flat or falling (slope ${fmt(s)}/sample)` : `last third's ${at} ${fmt(last)} within ${fmt(limit)} (middle ${fmt(middle)})`
  return { growing, middle, last, slope: s, limit, reason }
}

const fmt = (n: number): string => (Math.abs(n) >= 100 ? n.toFixed(0) : n.toPrecision(3))
