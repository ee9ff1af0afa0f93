/**
 * Progress on long bench steps (issue 19 item 5): warm-up and measured load runs, database cache
 * builds. A bar on a terminal; on a pipe or in CI (`noTTYOutput`) a plain line every few seconds.
 * Everything goes to stderr, so the tables on stdout stay clean.
 *
 * The bar never touches the measured path: it is redrawn from a slow unref'd timer reading a
 * counter the caller already keeps, so a load run costs the same with or without it.
 * BENCH_PROGRESS=0 turns it off.
 */
import cliProgress from 'cli-progress'

export interface Progress {
  /** Advance by n (default 1). */
  tick(n?: number): void
  /** Set the absolute value. */
  set(value: number): void
  /** Stop the bar (idempotent); the last state stays on screen. */
  done(): void
}

const NOOP: Progress = { tick() {}, set() {}, done() {} }

export const progressEnabled = (): boolean => process.env.BENCH_PROGRESS !== '0'

/**
 * The phase the runner last announced (a scenario's `opts.log` line such as `[orders] …: warm-up 2 s`),
 * used as the label of load bars that were not given one, so scenarios get labelled bars for free.
 */
let phase = ''
export function setPhase(line: string): void {
  phase = line.trim()
}
export const currentPhase = (): string => phase

const short = (s: string, n = 60): string => (s.length > n ? `${s.slice(0, n - 1)}…` : s)

/**
 * A counted bar: `label [████░░] 40% 40000/100000 items`. Scenarios building caches call `tick()`
 * (or `set()`) as rows go in and `done()` at the end.
 */
export function progress(label: string, total: number, unit = ''): Progress {
  if (!progressEnabled() || !(total > 0)) return NOOP
  const bar = new cliProgress.SingleBar({
    format: `${short(label)} [{bar}] {percentage}% {value}/{total}${unit ? ` ${unit}` : ''} {duration_formatted}`,
    stream: process.stderr,
    noTTYOutput: true,
    notTTYSchedule: 5000,
    fps: 4,
    barsize: 24,
    hideCursor: false,
    etaBuffer: 50,
  }, cliProgress.Presets.shades_classic)
  let value = 0
  let stopped = false
  bar.start(total, 0)
  return {
    tick(n = 1) {
      value += n
      if (!stopped) bar.update(Math.min(value, total))
    },
    set(v: number) {
      value = v
      if (!stopped) bar.update(Math.min(value, total))
    },
    done() {
      if (stopped) return
      stopped = true
      bar.update(Math.min(value, total))
      bar.stop()
    },
  }
}

/**
 * A bar for a step of known length in seconds (a warm-up or a measured run), redrawn twice a
 * second from `count()` (e.g. responses so far) without the caller doing anything per request.
 * Returns the function that stops it.
 */
export function timedProgress(label: string, seconds: number, count?: () => number, unit = 'responses'): () => void {
  if (!progressEnabled() || !(seconds > 0)) return () => {}
  const total = Math.ceil(seconds)
  const bar = new cliProgress.SingleBar({
    format: `${short(label)} [{bar}] {value}/{total} s${count ? ` {count} ${unit}` : ''}`,
    stream: process.stderr,
    noTTYOutput: true,
    notTTYSchedule: 5000,
    fps: 2,
    barsize: 24,
    hideCursor: false,
  }, cliProgress.Presets.shades_classic)
  const t0 = performance.now()
  const payload = () => ({ count: count ? count() : 0 })
  bar.start(total, 0, payload())
  const timer = setInterval(() => bar.update(Math.min(total, Math.floor((performance.now() - t0) / 1000)), payload()), 500)
  timer.unref()
  let stopped = false
  return () => {
    if (stopped) return
    stopped = true
    clearInterval(timer)
    bar.update(Math.min(total, Math.round((performance.now() - t0) / 1000)), payload())
    bar.stop()
  }
}
