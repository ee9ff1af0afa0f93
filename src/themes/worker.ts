/**
 * A theme pool thread (src/themes/pool.ts): answers `{id, job}` with `{id, ok, value}` or
 * `{id, ok: false, error}`, one job at a time. It says `ready` once the engine is loaded and warm,
 * so a job's time budget never pays for starting the thread.
 */
import { parentPort } from 'node:worker_threads'
import { engine } from './engine.ts'
import { builtinTheme, DEFAULT_THEME } from './builtin/index.ts'
import { runThemeJob, type ThemeJob } from './jobs.ts'
import { lowerThreadPriority } from '../threads/spawn.ts'
import { currentThreadId, threadCpuClock } from '../threads/cpu-time.ts'

export type ToWorker = { id: number; job: ThemeJob }
/** `tid`: the thread's id, so the pool's watchdog can read its CPU time (null where it cannot). */
export type FromWorker = { ready: true; tid: number | null } | { id: number; ok: true; value: unknown } | { id: number; ok: false; error: string }

const port = parentPort
if (!port) throw new Error('src/themes/worker.ts runs as a worker thread (src/themes/pool.ts starts it)')

// Theme work is what a busy machine may delay, never the requests of every other tenant.
lowerThreadPriority()
// Budgets are CPU time, not wall time: at the lowered priority a busy machine may keep this thread
// waiting, and a small theme must not fail for time it spent waiting. Only theme code runs in this
// thread, and liquidjs's render limit and runThemeJob's deadline read `performance.now()`.
const cpuClock = threadCpuClock(performance.now.bind(performance))
if (cpuClock) performance.now = cpuClock
// Warm up before saying ready: a cold engine takes several times longer on its first theme, which a
// small budget would count against the first caller's theme.
engine()
runThemeJob({ kind: 'validate', files: builtinTheme(DEFAULT_THEME)!.files, budgetMs: 60_000 })
port.on('message', ({ id, job }: ToWorker) => {
  let reply: FromWorker
  try {
    reply = { id, ok: true, value: runThemeJob(job) }
  } catch (err) {
    reply = { id, ok: false, error: err instanceof Error ? err.message : String(err) }
  }
  port.postMessage(reply)
})
port.postMessage({ ready: true, tid: cpuClock ? currentThreadId() : null } satisfies FromWorker)
