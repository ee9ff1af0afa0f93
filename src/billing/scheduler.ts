/**
 * The billing schedule (ARCHITECTURE "Scheduled work"): node-cron runs the billing run on
 * BILLING_CRON (every minute by default) and once at start, so a server that was down catches up at
 * once. Runs never overlap inside the process (src/maintenance/cron-job.ts: a tick during a run is
 * skipped, the next one does what is due); across processes the billing_runs claims make overlap harmless.
 */
import type { Config } from '../config.ts'
import type { Db } from '../storage/db.ts'
import type { Logger } from '../log.ts'
import type { OutboxEvent } from '../storage/outbox.ts'
import { runBillingDurable, type BillingReport, type Write } from './run.ts'
import { billingNow } from './clock.ts'
import { policyOf } from './policy.ts'
import { startCronJob } from '../maintenance/cron-job.ts'

export interface BillingScheduler {
  /** The run at start; resolves when it is done (null if it failed: logged, retried on the next tick). */
  readonly started: Promise<BillingReport | null>
  /** Run now (skipped, null, while another run of this process is under way). */
  runNow(): Promise<BillingReport | null>
  close(): Promise<void>
}

export interface SchedulerDeps { config: Config; db: Db; write: Write; log: Logger; publish(events: OutboxEvent[]): void }

export function startBillingScheduler(deps: SchedulerDeps): BillingScheduler {
  const { config, log } = deps
  const policy = policyOf(config)
  const job = startCronJob({
    name: 'billing', what: 'billing run', cron: config.billingCron, catchUpMs: 0, log,
    run: async (at = billingNow(config)) => {
      const report = await runBillingDurable(deps.write, deps.db, at, policy, deps.publish)
      if (report.actions.length) log.info({ at: report.at, actions: report.actions.length }, 'billing run')
      return report
    },
  })
  return { started: job.started, runNow: () => job.runNow(), close: () => job.close() }
}
