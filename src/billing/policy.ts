/** The billing policy of a configuration (BILLING_RETRY_DAYS, BILLING_GRACE_DAYS, …). */
import type { Config } from '../config.ts'
import type { BillingPolicy } from '../domain/subscription.ts'

export const policyOf = (c: Pick<Config, 'billingRetryDays' | 'billingGraceDays' | 'billingTrialReminderDays' | 'billingExpiringDays'>): BillingPolicy => ({
  retryDays: c.billingRetryDays, graceDays: c.billingGraceDays, trialReminderDays: c.billingTrialReminderDays, expiringDays: c.billingExpiringDays,
})
