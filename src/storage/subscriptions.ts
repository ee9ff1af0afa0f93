/**
 * Subscriptions (docs/billing.md "Subscriptions"): reading rows and applying the pure lifecycle's
 * transitions (src/domain/subscription.ts) with their wallet charge, their `subscription.*` outbox
 * events and the entitlement sync, all in the caller's transaction, so a change, its charge and its
 * events commit together or not at all.
 */
import { stmt, type Db } from './db.ts'
import { appendEvent, type OutboxEvent } from './outbox.ts'
import { debit } from './wallet.ts'
import { planById, syncEntitlements, type PlanRow } from './plans.ts'
import { addDays, type SubState, type SubscriptionStatus, type Transition } from '../domain/subscription.ts'

export interface SubscriptionRow extends SubState { id: number; owner_id: number; created_at: string; updated_at: string }
type RawRow = Omit<SubscriptionRow, 'cancel_at_period_end'> & { cancel_at_period_end: number }

const toRow = (r: RawRow): SubscriptionRow => ({ ...r, cancel_at_period_end: r.cancel_at_period_end === 1 })

export const subscriptionById = (db: Db, id: number): SubscriptionRow | undefined => {
  const r = stmt<[number], RawRow>(db, 'SELECT * FROM subscriptions WHERE id = ?').get(id)
  return r && toRow(r)
}

/** The account's subscription that is not over (at most one: index subscriptions_one_live). */
export const liveSubscription = (db: Db, ownerId: number): SubscriptionRow | undefined => {
  const r = stmt<[number], RawRow>(db, "SELECT * FROM subscriptions WHERE owner_id = ? AND status NOT IN ('cancelled', 'expired')").get(ownerId)
  return r && toRow(r)
}

/** The account's latest subscription, live or not (what GET /subscription shows after an end). */
export const latestSubscription = (db: Db, ownerId: number): SubscriptionRow | undefined => {
  const r = stmt<[number], RawRow>(db, 'SELECT * FROM subscriptions WHERE owner_id = ? ORDER BY id DESC LIMIT 1').get(ownerId)
  return r && toRow(r)
}

/** Has the account ever had a trial? (one trial per account) */
export const hadTrial = (db: Db, ownerId: number): boolean =>
  stmt<[number], 1>(db, 'SELECT 1 FROM subscriptions WHERE owner_id = ? AND trial_end IS NOT NULL LIMIT 1').pluck().get(ownerId) !== undefined

/** The reseller that manages the account, if any (its own plans are choosable too). */
export const resellerOf = (db: Db, ownerId: number): number | null =>
  stmt<[number], number | null>(db, 'SELECT reseller_id FROM owners WHERE id = ?').pluck().get(ownerId) ?? null

/** Ids of subscriptions that may have work due by `at` (the run re-checks each one in its own transaction). */
export function subscriptionsWithWork(db: Db, at: string, horizonDays: number): number[] {
  // A reminder can be due up to `horizonDays` before a period end; past-due rows are due on their own schedule.
  const until = addDays(at, horizonDays)
  return stmt<[string], number>(db, 
    `SELECT id FROM subscriptions
      WHERE (status IN ('trialing', 'active') AND current_period_end <= ?) OR status = 'past_due'
      ORDER BY current_period_end, id`).pluck().all(until)
}

/** Kinds of scheduled work already done for one boundary. */
export const doneKinds = (db: Db, subscriptionId: number, periodKey: string): Set<string> =>
  new Set(stmt<[number, string], string>(db, 'SELECT kind FROM billing_runs WHERE subscription_id = ? AND period_key = ?').pluck().all(subscriptionId, periodKey))

/**
 * Claim one piece of scheduled work: true if this transaction is the first to do it. The row commits
 * with the work, so a repeated or overlapping run (another process, the CLI) finds it and does nothing.
 */
export const claimRun = (db: Db, subscriptionId: number, kind: string, periodKey: string, doneAt: string): boolean =>
  stmt(db, 'INSERT OR IGNORE INTO billing_runs (subscription_id, kind, period_key, done_at) VALUES (?, ?, ?, ?)').run(subscriptionId, kind, periodKey, doneAt).changes === 1

const COLUMNS = ['status', 'plan_id', 'current_period_start', 'current_period_end', 'trial_end', 'cancel_at_period_end', 'pending_plan_id',
  'past_due_since', 'retry_count', 'next_retry_at', 'paused_at', 'ended_at'] as const satisfies ReadonlyArray<keyof SubState>

function patchRow(db: Db, id: number, patch: Partial<SubState>, at: string): void {
  const keys = COLUMNS.filter((k) => k in patch)
  if (keys.length === 0) return
  const values = keys.map((k) => (k === 'cancel_at_period_end' ? (patch[k] ? 1 : 0) : patch[k]))
  stmt(db, `UPDATE subscriptions SET ${keys.map((k) => `${k} = ?`).join(', ')}, updated_at = ? WHERE id = ?`).run(...values, at, id)
}

/** The `data` of a `subscription.*` event (api-v1 §6; schema in src/domain/webhook-events.ts). */
export function subscriptionEventData(s: SubscriptionRow, plan: PlanRow, occurredAt: string, previousPlanKey?: string): Record<string, unknown> {
  return {
    subscription_id: s.id, user_id: s.owner_id, plan_key: plan.key, status: s.status, current_period_end: s.current_period_end,
    ...(previousPlanKey ? { previous_plan_key: previousPlanKey } : {}), occurred_at: occurredAt,
  }
}

export class InsufficientFunds extends Error {
  constructor(readonly amount: number) { super(`the wallet cannot pay ${amount}`) }
}

/**
 * Apply a transition to subscription `id`: charge the wallet first (throws InsufficientFunds, nothing
 * written, when it cannot pay), then the row, the entitlements and the events. Call in a transaction.
 * `reference` makes the charge idempotent (src/storage/wallet.ts). The events to publish after the
 * commit are the entitlement changes' and then the subscription's, in outbox order.
 */
export function applyTransition(db: Db, id: number, t: Transition, at: string, reference: string): { row: SubscriptionRow; events: OutboxEvent[] } {
  const before = subscriptionById(db, id)
  if (!before) throw new Error(`subscription ${id} is gone`)
  if (t.charge) {
    const plan = planById(db, t.patch.plan_id ?? before.plan_id)
    if (debit(db, before.owner_id, t.charge.amount, t.charge.reason, reference, 'system', plan?.currency) === false) throw new InsufficientFunds(t.charge.amount)
  }
  patchRow(db, id, t.patch, at)
  const row = subscriptionById(db, id)!
  const events: OutboxEvent[] = []
  if (row.status !== before.status || row.plan_id !== before.plan_id) syncEntitlements(db, row.owner_id, at, events)
  return { row, events: [...events, ...appendSubscriptionEvents(db, row, t, at)] }
}

/** Append the transition's `subscription.*` events for `row` (its state after the change). */
export function appendSubscriptionEvents(db: Db, row: SubscriptionRow, t: Transition, at: string): OutboxEvent[] {
  if (t.events.length === 0) return []
  const plan = planById(db, row.plan_id)!
  return t.events.map((e) => appendEvent(db, { ownerId: row.owner_id, storeId: null, event: `subscription.${e.name}`, data: subscriptionEventData(row, plan, at, e.previous_plan_key) }))
}

/** Append events for a row that did not change (reminders). */
export const appendReminder = (db: Db, row: SubscriptionRow, name: 'expiring' | 'trial_ending', at: string): OutboxEvent[] =>
  appendSubscriptionEvents(db, row, { patch: {}, events: [{ name }] }, at)

/**
 * Insert a new live subscription (the account has none): its charge first, then the row and
 * entitlements; their `entitlement.changed` events go to `published`, to publish after the commit.
 */
export function insertSubscription(db: Db, ownerId: number, s: SubState, charge: { amount: number; reason: string } | undefined, at: string, reference: string, published?: OutboxEvent[]): SubscriptionRow {
  if (charge) {
    const plan = planById(db, s.plan_id)
    if (debit(db, ownerId, charge.amount, charge.reason, reference, 'system', plan?.currency) === false) throw new InsufficientFunds(charge.amount)
  }
  const id = Number(stmt(db, `INSERT INTO subscriptions (owner_id, plan_id, status, current_period_start, current_period_end, trial_end,
      cancel_at_period_end, pending_plan_id, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, 0, NULL, ?, ?)`)
    .run(ownerId, s.plan_id, s.status satisfies SubscriptionStatus, s.current_period_start, s.current_period_end, s.trial_end, at, at).lastInsertRowid)
  syncEntitlements(db, ownerId, at, published)
  return subscriptionById(db, id)!
}
