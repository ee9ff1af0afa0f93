/**
 * The billing run (docs/billing.md "The billing run"): every renewal, retry, expiry and reminder due
 * by `at`, then the other billing tasks (BILLING_TASKS: reseller invoicing, …).
 *
 * Idempotent and catch-up safe: each step is one transaction that claims its `billing_runs` row
 * (UNIQUE(subscription_id, kind, period_key)) together with the work, and charges the wallet with a
 * reference unique per subscription and period. A repeated or overlapping run (a second process, the
 * CLI next to the server) finds the claim and does nothing. A server that was down across several
 * period ends does them one by one, in order, each charged once (missed periods are charged, not
 * skipped: the anchor of the billing calendar never moves).
 */
import type { Db } from '../storage/db.ts'
import { nowIso } from '../storage/db.ts'
import type { OutboxEvent } from '../storage/outbox.ts'
import { walletBalance } from '../storage/wallet.ts'
import { planById } from '../storage/plans.ts'
import {
  appendReminder, applyTransition, claimRun, doneKinds, InsufficientFunds, subscriptionById, subscriptionsWithWork,
} from '../storage/subscriptions.ts'
import {
  DEFAULT_POLICY, LIVE_STATUSES, endedAtPeriodEnd, expired, isoAt, nextDue, renewalFailed, renewed, retryFailed,
  type BillingPolicy, type DueKind, type Transition,
} from '../domain/subscription.ts'
import { resellerInvoicingTask } from './reseller-invoices.ts'
import { appChargesTask } from './app-charges.ts'

/** Work a billing run does besides subscriptions; reseller invoicing (src/billing/reseller-invoices.ts) is one. Runs in its own transaction. */
export interface BillingTask { name: string; run(db: Db, at: Date): unknown[] }

/** Tasks run after the subscription work, in order (append with one line). */
export const BILLING_TASKS: BillingTask[] = [resellerInvoicingTask, appChargesTask]

/** One thing a run did (the CLI prints these; docs/billing.md documents them). */
export interface BillingAction {
  subscription_id: number
  owner_id: number
  /** The `billing_runs.kind`: renewal, retry:N, expiry, end, reminder:expiring, reminder:trial_ending. */
  kind: DueKind
  /** The period boundary the work belongs to (the period end it is about). */
  period_key: string
  result: 'renewed' | 'past_due' | 'retry_failed' | 'expired' | 'cancelled' | 'reminded'
  plan_key: string
  /** Minor units taken from the wallet (0 when nothing was charged). */
  charged: number
  /** The `subscription.*` events of the step (the `entitlement.changed` ones it causes are published, not listed here). */
  events: string[]
}

export interface BillingReport { at: string; actions: BillingAction[]; tasks: Record<string, unknown[]> }

/** Per subscription, at most this many steps per run (a guard; a normal catch-up needs a few per missed period). */
const MAX_STEPS = 500

/** Days before a period end at which a reminder can be due: the look-ahead of the due query. */
const horizon = (p: BillingPolicy): number => Math.max(p.expiringDays, p.trialReminderDays, 0)

/**
 * Do the earliest work due for one subscription, inside the caller's transaction; null when nothing
 * is due (or another run has just done it).
 */
export function billingStep(db: Db, subscriptionId: number, at: Date, policy: BillingPolicy = DEFAULT_POLICY): { action: BillingAction; events: OutboxEvent[] } | null {
  const s = subscriptionById(db, subscriptionId)
  if (!s || !LIVE_STATUSES.includes(s.status)) return null
  const plan = planById(db, s.plan_id)!
  const next = (s.pending_plan_id !== null ? planById(db, s.pending_plan_id) : undefined) ?? plan
  const canPayRenewal = next.price === 0 || walletBalance(db, s.owner_id) >= next.price
  const work = nextDue(s, at, policy, { done: doneKinds(db, s.id, s.current_period_end), canPayRenewal })
  if (!work || !claimRun(db, s.id, work.kind, work.period_key, nowIso())) return null
  const atIso = isoAt(at.getTime())
  const apply = (t: Transition) => applyTransition(db, s.id, t, atIso, `subscription:${s.id}:${work.period_key}`)
  const done = (result: BillingAction['result'], r: { events: OutboxEvent[] }, charged = 0, planKey = plan.key) => ({
    action: { subscription_id: s.id, owner_id: s.owner_id, kind: work.kind, period_key: work.period_key, result, plan_key: planKey, charged,
      events: r.events.filter((e) => e.event !== 'entitlement.changed').map((e) => e.event) },
    events: r.events,
  })
  if (work.kind === 'reminder:expiring' || work.kind === 'reminder:trial_ending') {
    return done('reminded', { events: appendReminder(db, s, work.kind === 'reminder:expiring' ? 'expiring' : 'trial_ending', atIso) })
  }
  if (work.kind === 'end') return done('cancelled', apply(endedAtPeriodEnd(s)))
  if (work.kind === 'expiry') return done('expired', apply(expired(work.due_at)))
  // A renewal or a retry of it: the pending plan (a downgrade) takes effect when the period is paid.
  const t = renewed(s, next, next.id !== plan.id ? plan.key : null)
  if (next.price > 0) t.charge = { amount: next.price, reason: 'subscription_renewal' }
  try {
    return done('renewed', apply(t), next.price, next.key)
  } catch (err) {
    if (!(err instanceof InsufficientFunds)) throw err
  }
  if (work.kind === 'renewal') return done('past_due', apply(renewalFailed(s, policy)))
  return done('retry_failed', apply(retryFailed(s, Number(work.kind.slice('retry:'.length)), policy)))
}

/** Run `fn` as its own transaction (IMMEDIATE: the CLI and the server may write at once), or nested. */
const inTx = <T>(db: Db, fn: () => T): T => (db.inTransaction ? db.transaction(fn)() : db.transaction(fn).immediate())

/** Every piece of billing work due by `at`, each step in its own transaction (the CLI; tests). */
export function runBilling(db: Db, at: Date, policy: BillingPolicy = DEFAULT_POLICY): BillingReport {
  const actions: BillingAction[] = []
  for (const id of subscriptionsWithWork(db, isoAt(at.getTime()), horizon(policy))) {
    for (let i = 0; i < MAX_STEPS; i++) {
      const r = inTx(db, () => billingStep(db, id, at, policy))
      if (!r) break
      actions.push(r.action)
    }
  }
  const tasks: Record<string, unknown[]> = {}
  for (const task of BILLING_TASKS) tasks[task.name] = inTx(db, () => task.run(db, at))
  return { at: isoAt(at.getTime()), actions, tasks }
}

/** A durable writer: the server's committer (`svc.committer.write`). */
export type Write = <T>(fn: (db: Db) => T) => Promise<T>

/**
 * runBilling inside the server: each step through the committer (durable before the events are
 * published), and the committed events handed to `publish` (the event router: webhooks).
 */
export async function runBillingDurable(write: Write, db: Db, at: Date, policy: BillingPolicy, publish: (events: OutboxEvent[]) => void): Promise<BillingReport> {
  const actions: BillingAction[] = []
  for (const id of subscriptionsWithWork(db, isoAt(at.getTime()), horizon(policy))) {
    for (let i = 0; i < MAX_STEPS; i++) {
      const r = await write((tx) => billingStep(tx, id, at, policy))
      if (!r) break
      actions.push(r.action)
      publish(r.events)
    }
  }
  const tasks: Record<string, unknown[]> = {}
  for (const task of BILLING_TASKS) tasks[task.name] = await write((tx) => task.run(tx, at))
  return { at: isoAt(at.getTime()), actions, tasks }
}
