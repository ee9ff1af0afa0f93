/**
 * One scheduled job on node-cron (ARCHITECTURE "Scheduled work"), the shape the billing run and the
 * retention prune share: a catch-up run after start (a server that was down catches up), then the
 * cron expression; runs never overlap inside the process (a tick or call during a run gets null: the
 * next one does what is due); a failed run is logged and left to the next tick; `close` stops the
 * schedule and waits for the run under way.
 */
import { schedule, type ScheduledTask } from 'node-cron'
import type { Logger } from '../log.ts'

export interface CronJob<R> {
  /** The catch-up run; null when there is none, it failed (logged), or close came first. */
  readonly started: Promise<R | null>
  /** Run now (null while another run of this process is under way, or after close). */
  runNow(at?: Date): Promise<R | null>
  close(): Promise<void>
}

export interface CronJobSpec<R> {
  /** node-cron's task name. */
  name: string
  /** The job in log lines (`retention prune failed; …`). */
  what: string
  /** A node-cron expression, or `off`: no schedule (runNow and the catch-up still run). */
  cron: string
  /** When the catch-up run starts after start: 0 at once; absent, no catch-up run. */
  catchUpMs?: number | undefined
  log: Logger
  /** One run at `at` (absent: the job's own clock); whatever it throws is logged, not rethrown. */
  run(at?: Date): Promise<R>
}

export function startCronJob<R>(spec: CronJobSpec<R>): CronJob<R> {
  let running: Promise<R | null> | null = null
  let closed = false
  const runNow = (at?: Date): Promise<R | null> => {
    if (running || closed) return Promise.resolve(null)
    running = spec.run(at).then(
      (r) => r,
      (err: unknown) => {
        spec.log.error({ err }, `${spec.what} failed; the next tick retries`)
        return null
      },
    ).finally(() => { running = null })
    return running
  }
  const task: ScheduledTask | null = spec.cron === 'off' ? null : schedule(spec.cron, () => runNow(), { name: spec.name, noOverlap: true })

  let cancelCatchUp = () => {}
  let started: Promise<R | null> = Promise.resolve(null)
  if (spec.catchUpMs === 0) started = runNow()
  else if (spec.catchUpMs !== undefined) {
    const delay = spec.catchUpMs
    started = new Promise((resolve) => {
      // Unref'd: a pending catch-up keeps no process alive.
      const timer = setTimeout(() => resolve(runNow()), delay)
      timer.unref()
      cancelCatchUp = () => { clearTimeout(timer); resolve(null) }
    })
  }

  return {
    started,
    runNow,
    async close() {
      closed = true
      cancelCatchUp()
      await task?.destroy()
      await running
    },
  }
}
