/**
 * The retention schedule (ARCHITECTURE "Scheduled work"; docs/operations.md "Backups and
 * retention"): node-cron runs the prune (src/storage/prune.ts) on PRUNE_CRON, hourly by default,
 * and once shortly after start so a server that was down catches up. Idempotent: a second pass at
 * the same time deletes nothing. Runs never overlap in a process; the delete goes through the
 * group committer like every other write, so it is durable before it is reported.
 */
import { schedule, type ScheduledTask } from 'node-cron'
import type { Config } from '../config.ts'
import type { Logger } from '../log.ts'
import type { Db } from '../storage/db.ts'
import { clockNow } from '../billing/clock.ts'
import { pruneExpired, type PruneReport } from '../storage/prune.ts'

export interface PruneScheduler {
  /** Prune now (null while another pass of this process is under way, or after close). */
  runNow(at?: Date): Promise<PruneReport | null>
  close(): Promise<void>
}

export interface PruneDeps {
  config: Pick<Config, 'pruneCron' | 'pruneClock' | 'retention'>
  write<T>(fn: (db: Db) => T): Promise<T>
  log: Logger
}

export function startPruneScheduler(deps: PruneDeps): PruneScheduler {
  const { config, log } = deps
  let running: Promise<PruneReport | null> | null = null
  let closed = false
  const runNow = (at?: Date): Promise<PruneReport | null> => {
    if (running || closed) return Promise.resolve(null)
    const now = at ?? clockNow(config.pruneClock)
    running = deps.write((db) => pruneExpired(db, now, config.retention)).then(
      (report) => {
        const total = Object.values(report).reduce((a, b) => a + b, 0)
        if (total > 0) log.info({ pruned: report }, 'retention prune')
        return report
      },
      (err: unknown) => {
        log.error({ err }, 'retention prune failed; the next tick retries')
        return null
      },
    ).finally(() => { running = null })
    return running
  }
  const task: ScheduledTask | null = config.pruneCron === 'off' ? null : schedule(config.pruneCron, () => runNow(), { name: 'prune', noOverlap: true })
  // The catch-up pass waits for the start to settle (it is never urgent); unref'd, so it keeps no process alive.
  const first = config.pruneCron === 'off' ? null : setTimeout(() => void runNow(), 5_000)
  first?.unref()
  return {
    runNow,
    async close() {
      closed = true
      if (first) clearTimeout(first)
      await task?.destroy()
      await running
    },
  }
}
