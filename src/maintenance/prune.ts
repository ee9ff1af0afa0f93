/**
 * The retention schedule (ARCHITECTURE "Scheduled work"; docs/running.md "Backups and
 * retention"): node-cron runs the prune (src/storage/prune.ts) on PRUNE_CRON, hourly by default,
 * and once shortly after start so a server that was down catches up. Idempotent: a second pass at
 * the same time deletes nothing. Runs never overlap in a process; each step of a pass (at most
 * PRUNE_CHUNK rows per grown table) goes through the group committer like every other write, so it
 * is durable before it is reported and a backlog never holds the writer for long.
 */
import type { Config } from '../config.ts'
import type { Logger } from '../log.ts'
import type { Db } from '../storage/db.ts'
import { clockNow } from '../billing/clock.ts'
import { addReport, pruneStep, type PruneReport } from '../storage/prune.ts'
import { startCronJob } from './cron-job.ts'

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
  /** Set by close: a pass stops after the step under way (the next pass goes on where it stopped). */
  let closing = false
  const job = startCronJob({
    name: 'prune', what: 'retention prune', cron: config.pruneCron, log,
    // The catch-up pass waits for the start to settle (it is never urgent).
    catchUpMs: config.pruneCron === 'off' ? undefined : 5_000,
    run: async (at) => {
      // Step after step, each its own write (storage/prune.ts PRUNE_CHUNK): a backlog never holds the
      // committer for long. The same `now` for every step: the pass deletes what was due when it began.
      const now = at ?? clockNow(config.pruneClock)
      const report: PruneReport = {}
      for (let more = true; more && !closing;) {
        const step = await deps.write((db) => pruneStep(db, now, config.retention))
        addReport(report, step.report)
        more = step.more
      }
      const total = Object.values(report).reduce((a, b) => a + b, 0)
      if (total > 0) log.info({ pruned: report }, 'retention prune')
      return report
    },
  })
  return {
    runNow: job.runNow,
    close() {
      closing = true
      return job.close()
    },
  }
}
