/**
 * Owner actions on a subscription (docs/billing.md "Subscriptions"), each one function to run inside
 * one write transaction (the committer's write fn): read the live row, ask the pure lifecycle what
 * changes, apply it with its charge and events. Returns the outbox events to publish after commit.
 * Refusals are API errors, thrown before anything is written.
 */
import type { Db } from '../storage/db.ts'
import type { OutboxEvent } from '../storage/outbox.ts'
import { walletBalance } from '../storage/wallet.ts'
import { defaultPlan, planById, planByKey, type PlanRow } from '../storage/plans.ts'
import {
  appendSubscriptionEvents, applyTransition, hadTrial, insertSubscription, resellerOf, InsufficientFunds, liveSubscription, type SubscriptionRow,
} from '../storage/subscriptions.ts'
import * as life from '../domain/subscription.ts'
import { ApiError, invalidField } from '../errors.ts'
import { centsToDecimalString, fromCents } from '../domain/money.ts'

export type SubscriptionAction = 'pause' | 'resume' | 'cancel' | 'resume_renewal'

const refuse = (err: unknown): never => {
  if (err instanceof life.LifecycleError) throw new ApiError('invalid_transition', err.message)
  throw err
}

function insufficient(db: Db, ownerId: number, err: InsufficientFunds): ApiError {
  const balance = walletBalance(db, ownerId)
  return new ApiError('insufficient_funds', `The wallet holds ${centsToDecimalString(balance)}; this needs ${centsToDecimalString(err.amount)}. Top the wallet up first.`,
    undefined, undefined, { required: fromCents(err.amount), balance: fromCents(balance) })
}

function live(db: Db, ownerId: number): SubscriptionRow {
  const s = liveSubscription(db, ownerId)
  if (!s) throw new ApiError('invalid_transition', 'The account has no live subscription (it was cancelled or expired); choose a plan to start one.')
  return s
}

/** Pause, resume, cancel at period end, or undo the cancellation; `now` is the billing clock. */
export const subscriptionAction = (db: Db, ownerId: number, action: SubscriptionAction, now: string): OutboxEvent[] =>
  actOn(db, live(db, ownerId), action, now)

/** The same action on one given subscription (a reseller acting on a customer's, src/ops/accounts/reseller.ts). */
export function actOn(db: Db, s: SubscriptionRow, action: SubscriptionAction, now: string): OutboxEvent[] {
  let t: life.Transition
  try {
    t = action === 'pause' ? life.pause(s, now)
      : action === 'resume' ? life.resume(s, now)
      : action === 'cancel' ? life.cancel(s, now)
      : life.resumeRenewal(s)
  } catch (err) { return refuse(err) }
  return applyTransition(db, s.id, t, now, `subscription:${s.id}:${action}:${now}`).events
}

/** Plans an account may choose: the platform's, or its reseller's own; never archived ones. */
function choosablePlan(db: Db, ownerId: number, key: string): PlanRow {
  const plan = planByKey(db, key)
  const resellerId = resellerOf(db, ownerId)
  if (!plan || plan.archived_at || (plan.reseller_id !== null && plan.reseller_id !== resellerId)) {
    throw invalidField('plan_key', `No plan "${key}" is available to this account.`)
  }
  return plan
}

/**
 * Change plan (upgrade at once, prorated; downgrade at period end) or, for an account whose
 * subscription ended, start a new one. Charges the wallet; 402 `insufficient_funds` if it cannot pay.
 */
export function changeSubscriptionPlan(db: Db, ownerId: number, planKey: string, now: string): OutboxEvent[] {
  const to = choosablePlan(db, ownerId, planKey)
  const s = liveSubscription(db, ownerId)
  const trialAvailable = !hadTrial(db, ownerId)
  try {
    if (!s) {
      const { state, charge } = life.start(to, now, trialAvailable)
      const events: OutboxEvent[] = []
      const row = insertSubscription(db, ownerId, state, charge, now, `subscription:start:${ownerId}:${now}`, events)
      return [...events, ...appendSubscriptionEvents(db, row, { patch: {}, events: [{ name: 'plan_changed', previous_plan_key: defaultPlan(db).key }] }, now)]
    }
    const from = planById(db, s.plan_id)!
    const t = life.changePlan(s, from, to, now, trialAvailable)
    return applyTransition(db, s.id, t, now, `subscription:${s.id}:plan:${to.key}:${now}`).events
  } catch (err) {
    if (err instanceof InsufficientFunds) throw insufficient(db, ownerId, err)
    return refuse(err)
  }
}
