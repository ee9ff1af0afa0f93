/**
 * The theme pool (issue 31 item 1; docs/themes.md "Budgets: the theme pool"): a few worker threads (THEME_WORKERS,
 * one by default) that parse and render every theme that is not built in (src/themes/jobs.ts), so
 * no upload, `validate_theme` call or custom-themed page can hold the event loop that serves every
 * tenant. Built-in themes are the server's own code and render inline.
 *
 * Bounded in every direction:
 * - **time**: each job has a budget by who asked (THEME_BUDGETS_MS), in the thread's CPU time (Linux;
 *   wall time elsewhere), so a job the machine kept waiting is not failed for it: its renders stop
 *   when it is spent (liquidjs' render limit), and a job that has used GRACE_MS more — a parse that no
 *   render limit reaches — or been in flight WALL_FACTOR times as long has its thread ended; the job
 *   answers `over_budget`.
 * - **memory**: each thread has a heap cap (WORKER_HEAP_MB) and runs one job at a time; a job that
 *   exceeds it ends the thread and answers `over_budget`.
 * - **queue**: at most THEME_QUEUE_CAPS jobs of each class at once (running or waiting); one more is
 *   refused at once with 503 `unavailable` and `Retry-After`, never queued without bound. Waiting jobs
 *   start by class (pages, then owners, then anonymous callers), in arrival order within a class.
 *
 * A thread that ended is replaced when the next job needs one; threads start on the first job and
 * say `ready` once loaded, so a budget never pays for starting one.
 */
import type { Worker } from 'node:worker_threads'
import { ApiError } from '../errors.ts'
import type { Logger } from '../log.ts'
import { spawnWorker } from '../threads/spawn.ts'
import { threadCpuMs } from '../threads/cpu-time.ts'
import type { ThemeJob, ThemeJobResults } from './jobs.ts'
import type { Problem } from './problems.ts'
import type { FromWorker, ToWorker } from './worker.ts'

/** Who a job is for: a store website page, an owner (uploads, the settings editor), or an unauthenticated caller. */
export type ThemeCaller = 'page' | 'owner' | 'public'

/** Time a job of each class may take, start to end (compile and every render), in ms. */
export const THEME_BUDGETS_MS: Readonly<Record<ThemeCaller, number>> = { page: 500, owner: 2000, public: 500 }
/** Jobs of each class in the pool at once, running or waiting. */
export const THEME_QUEUE_CAPS: Readonly<Record<ThemeCaller, number>> = { page: 64, owner: 8, public: 4 }
/** Order in which waiting jobs start. */
const PRIORITY: readonly ThemeCaller[] = ['page', 'owner', 'public']
/** Heap of one thread (old generation), in MiB. */
export const WORKER_HEAP_MB = 128
/** How much CPU time past its budget a job may use before its thread is ended. */
export const GRACE_MS = 250
/** How often the watchdog reads a busy thread's CPU time, in ms. */
const WATCH_EVERY_MS = 50
/** A job in flight this many times its budget and grace in wall time ends too, however little CPU it got. */
const WALL_FACTOR = 4
export const RETRY_AFTER_S = 1

/** Why a job has no result: it ran out of time or memory, or its thread failed. */
export type JobFailure = 'time' | 'memory' | 'failed'
export type JobOutcome<T> = { ok: true; value: T } | { ok: false; reason: JobFailure }

/** A job as callers give it: the pool sets its budget from the caller's class. */
type Job = ThemeJob extends infer J ? (J extends ThemeJob ? Omit<J, 'budgetMs'> : never) : never

export interface ThemePool {
  /** Each class's time budget in ms (THEME_BUDGETS_MS unless a test set others). */
  readonly budgets: Readonly<Record<ThemeCaller, number>>
  /** Run a job for a caller of `cls`; rejects with 503 `unavailable` when that class's share is full. */
  run<J extends Job>(cls: ThemeCaller, job: J): Promise<JobOutcome<ThemeJobResults[J['kind']]>>
  /** Jobs in the pool now (running or waiting), by class. */
  load(): Record<ThemeCaller, number>
  /** Ends the threads; jobs still in the pool answer 503. */
  close(): Promise<void>
}

interface Pending {
  id: number
  cls: ThemeCaller
  job: ThemeJob
  settle(outcome: JobOutcome<unknown>): void
  refuse(err: ApiError): void
}

interface Slot {
  worker: Worker
  ready: boolean
  job: Pending | null
  timer: NodeJS.Timeout | null
  /** The thread's kernel id, for its CPU time (null: not Linux, the watchdog counts wall time). */
  tid: number | null
  /** Why the thread is ending, when the pool ended it or it ran out of memory. */
  ending: JobFailure | null
}

const busy = (why: string) => new ApiError('unavailable', why, undefined, { 'Retry-After': String(RETRY_AFTER_S) })

export interface ThemePoolOptions {
  workers: number
  log: Logger
  /** Tests: other budgets, caps, grace and heap than the documented ones. */
  budgets?: Partial<Record<ThemeCaller, number>>
  caps?: Partial<Record<ThemeCaller, number>>
  graceMs?: number
  heapMb?: number
}

export function createThemePool(opts: ThemePoolOptions): ThemePool {
  const budgets = { ...THEME_BUDGETS_MS, ...opts.budgets }
  const caps = { ...THEME_QUEUE_CAPS, ...opts.caps }
  const waiting: Record<ThemeCaller, Pending[]> = { page: [], owner: [], public: [] }
  const inPool: Record<ThemeCaller, number> = { page: 0, owner: 0, public: 0 }
  const slots = new Set<Slot>()
  let seq = 0
  let closed = false

  const finish = (p: Pending) => { inPool[p.cls]-- }

  function next(): Pending | undefined {
    for (const cls of PRIORITY) if (waiting[cls].length) return waiting[cls].shift()
    return undefined
  }

  function start(slot: Slot, p: Pending): void {
    slot.job = p
    slot.worker.ref() // a job in flight keeps the process alive until it is answered
    // The watchdog: a job its own render limit could not stop ends with its thread once it has used
    // its budget and the grace in CPU time (as the thread counts it, src/themes/worker.ts), or has
    // been in flight WALL_FACTOR times that long whatever it did.
    const limit = p.job.budgetMs + (opts.graceMs ?? GRACE_MS)
    const startedAt = performance.now()
    const cpuAtStart = slot.tid === null ? null : threadCpuMs(slot.tid)
    slot.timer = setInterval(() => {
      const wall = performance.now() - startedAt
      const cpu = cpuAtStart === null ? wall : (threadCpuMs(slot.tid!) ?? cpuAtStart + wall) - cpuAtStart
      if (cpu < limit && wall < limit * WALL_FACTOR) return
      clearInterval(slot.timer!)
      slot.ending = 'time'
      void slot.worker.terminate()
    }, Math.min(WATCH_EVERY_MS, limit)).unref()
    slot.worker.postMessage({ id: p.id, job: p.job } satisfies ToWorker)
  }

  function pump(): void {
    if (closed) return
    for (const slot of slots) {
      if (!slot.ready || slot.job) continue
      const p = next()
      if (!p) return
      start(slot, p)
    }
    // Jobs still waiting: start threads for them, each taking one when ready, up to THEME_WORKERS.
    const queued = PRIORITY.reduce((n, cls) => n + waiting[cls].length, 0)
    let starting = [...slots].filter((s) => !s.ready).length
    for (let room = opts.workers - slots.size; room > 0 && starting < queued; room--, starting++) spawn()
  }

  function spawn(): void {
    const worker = spawnWorker(new URL('./worker.ts', import.meta.url), {
      resourceLimits: { maxOldGenerationSizeMb: opts.heapMb ?? WORKER_HEAP_MB, maxYoungGenerationSizeMb: Math.min(32, opts.heapMb ?? 32) },
    })
    const slot: Slot = { worker, ready: false, job: null, timer: null, tid: null, ending: null }
    slots.add(slot)
    worker.on('message', (m: FromWorker) => {
      if ('ready' in m) {
        slot.ready = true
        slot.tid = m.tid
        pump()
        if (!slot.job) worker.unref()
        return
      }
      const p = slot.job
      if (!p || p.id !== m.id) return
      clearInterval(slot.timer!)
      slot.job = null
      finish(p)
      if (m.ok) p.settle({ ok: true, value: m.value })
      else {
        opts.log.error({ error: m.error, kind: p.job.kind }, 'theme job failed')
        p.settle({ ok: false, reason: 'failed' })
      }
      pump()
      // An idle thread must not keep the process alive; a thread starting or busy does (start() refs it).
      if (!slot.job) worker.unref()
    })
    worker.on('error', (err: Error & { code?: string }) => {
      if (err.code === 'ERR_WORKER_OUT_OF_MEMORY') slot.ending = 'memory'
      else opts.log.error({ err }, 'theme worker failed')
    })
    worker.once('exit', () => {
      slots.delete(slot)
      if (slot.timer) clearInterval(slot.timer)
      const p = slot.job
      if (p) {
        finish(p)
        p.settle({ ok: false, reason: slot.ending ?? 'failed' })
      }
      if (closed) return
      if (!slot.ready) {
        // It never started: another would most likely fail the same way, so the jobs waiting now are
        // refused rather than retried in a loop; the next job tries a new thread.
        opts.log.error('theme worker ended before it was ready; refusing the theme jobs waiting for it')
        for (const cls of PRIORITY) for (const w of waiting[cls].splice(0)) { finish(w); w.refuse(busy('Theme checks are unavailable; retry shortly.')) }
        return
      }
      if (slot.ending === null) opts.log.warn('theme worker exited; the next theme job starts another')
      pump()
    })
  }

  return {
    budgets,
    run<J extends Job>(cls: ThemeCaller, job: J): Promise<JobOutcome<ThemeJobResults[J['kind']]>> {
      if (closed) return Promise.reject(busy('The server is shutting down.'))
      if (inPool[cls] >= caps[cls]) return Promise.reject(busy('Too many themes are being checked or rendered; retry shortly.'))
      inPool[cls]++
      return new Promise((settle, refuse) => {
        waiting[cls].push({ id: ++seq, cls, job: { ...job, budgetMs: budgets[cls] } as ThemeJob, settle: settle as Pending['settle'], refuse })
        pump()
      })
    },
    load: () => ({ ...inPool }),
    async close() {
      closed = true
      for (const cls of PRIORITY) for (const w of waiting[cls].splice(0)) { finish(w); w.refuse(busy('The server is shutting down.')) }
      await Promise.all([...slots].map(async (s) => {
        const p = s.job
        s.job = null
        if (p) { finish(p); p.refuse(busy('The server is shutting down.')) }
        await s.worker.terminate()
      }))
    },
  }
}

/** The problem a job answers when it ran out of time or memory (docs/themes.md "Budgets: the theme pool"). */
export function overBudget(reason: 'time' | 'memory', cls: ThemeCaller, budgetMs: number): Problem {
  const message = reason === 'time'
    ? `checking or rendering the theme used more than its ${budgetMs} ms of CPU time${cls === 'public' ? ' for callers without a credential (an owner token gets a larger one)' : ''}`
    : `checking or rendering the theme needed more than its ${WORKER_HEAP_MB} MiB of memory`
  return { file: '', line: 0, code: 'over_budget', message }
}

/**
 * Run a validate or outline job: a job out of time or memory answers the `over_budget` problem; a
 * thread that failed otherwise answers 503 (nothing about the theme is known).
 */
export async function checkTheme<J extends Extract<Job, { kind: 'validate' | 'outline' }>>(pool: ThemePool, cls: ThemeCaller, job: J): Promise<ThemeJobResults[J['kind']]> {
  const r = await pool.run(cls, job)
  if (r.ok) return r.value
  if (r.reason === 'failed') throw busy('The theme could not be checked; retry shortly.')
  return { problems: [overBudget(r.reason, cls, pool.budgets[cls])] }
}
