/**
 * The billing schedule (ARCHITECTURE "Scheduled work"): node-cron runs the billing run on
 * BILLING_CRON (every minute by default) and once at start, so a server that was down catches up at
 * once. Runs never overlap inside the process (a tick during a run is skipped: the next one does
 * what is due); across processes the billing_runs claims make overlap harmless.
 */
import { schedule, type ScheduledTask } from 'node-cron'
import type { Config } from '../config.ts'
import type { Db } from '../storage/db.ts'
import type { Logger } from '../log.ts'
import type { OutboxEvent } from '../storage/outbox.ts'
import { runBillingDurable, type BillingReport, type Write } from './run.ts'
import { billingNow } from './clock.ts'
import { policyOf } from './policy.ts'

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
  let running: Promise<BillingReport | null> | null = null
  let closed = false
  const runNow = (): Promise<BillingReport | null> => {
    if (running || closed) return Promise.resolve(null)
    const at = billingNow(config)
    running = runBillingDurable(deps.write, deps.db, at, policy, deps.publish).then(
      (report) => {
        if (report.actions.length) log.info({ at: report.at, actions: report.actions.length }, 'billing run')
        return report
      },
      (err: unknown) => {
        log.error({ err }, 'billing run failed; the next tick retries')
        return null
      },
    ).finally(() => { running = null })
    return running
  }
  const task: ScheduledTask | null = config.billingCron === 'off' ? null : schedule(config.billingCron, () => runNow(), { name: 'billing', noOverlap: true })
  const started = runNow()
  return {
    started,
    runNow,
    async close() {
      closed = true
      await task?.destroy()
      await running
    },
  }
}
