/**
 * The retry of online refunds left pending (docs/operations.md "Refunds"): node-cron runs it on
 * REFUND_RETRY_CRON (every 5 minutes by default) and once shortly after start, so a refund reserved
 * just before a crash is asked for again without anyone noticing. The provider is asked under the
 * refund's own key, so a refund that did go through before the crash is settled, not repeated.
 */
import type { Config } from '../config.ts'
import type { Logger } from '../log.ts'
import type { Services } from '../services.ts'
import { retryPendingRefunds } from '../ops/money/refunds.ts'
import { startCronJob } from './cron-job.ts'

export interface RefundRetryScheduler {
  /** Retry now, as if at `at` (null while another pass is under way, or after close). */
  runNow(at?: Date): Promise<{ asked: number; settled: number } | null>
  close(): Promise<void>
}

export function startRefundRetry(deps: { svc: Services; config: Pick<Config, 'refundRetryCron'>; log: Logger }): RefundRetryScheduler {
  const { svc, config, log } = deps
  const job = startCronJob({
    name: 'refund-retry', what: 'online refund retry', cron: config.refundRetryCron, log,
    catchUpMs: config.refundRetryCron === 'off' ? undefined : 10_000,
    run: async (at) => {
      const r = await retryPendingRefunds(svc, at ?? new Date())
      if (r.asked > 0) log.info(r, 'pending online refunds asked again')
      return r
    },
  })
  return { runNow: job.runNow, close: job.close }
}
