/**
 * The subscription lifecycle (docs/billing.md "Subscriptions", api-v1 §6 `subscription.*`, §8 the
 * 30-day period), pure: what scheduled work is due for a subscription at a time, and what each
 * owner action changes. No I/O: src/storage/subscriptions.ts applies the patches and the charges,
 * src/billing/run.ts runs the due work.
 *
 *   trialing ─trial end, paid─▶ active ─period end, paid─▶ active (renewed)
 *       │                        │  └─period end, unpaid─▶ past_due ─retry paid─▶ active
 *       │                        │                            └─grace over─▶ expired
 *       └──────── cancel: at period end ────────────────────▶ cancelled
 *   active ─pause─▶ paused ─resume─▶ active (period end moved by the paused time)
 */

export type SubscriptionStatus = 'trialing' | 'active' | 'past_due' | 'paused' | 'cancelled' | 'expired'

/** The lifecycle columns of a `subscriptions` row. Times are ISO 8601. */
export interface SubState {
  status: SubscriptionStatus
  plan_id: number
  current_period_start: string
  current_period_end: string
  trial_end: string | null
  cancel_at_period_end: boolean
  pending_plan_id: number | null
  past_due_since: string | null
  retry_count: number
  next_retry_at: string | null
  paused_at: string | null
  ended_at: string | null
}

/** The parts of a plan the lifecycle needs. */
export interface PlanTerms { id: number; key: string; price: number; period_days: number; trial_days: number }

/** Timing of scheduled work, in days (config: BILLING_RETRY_DAYS, BILLING_GRACE_DAYS, …). */
export interface BillingPolicy {
  /** Days after an unpaid renewal at which it is tried again, one retry per entry. */
  retryDays: readonly number[]
  /** Days after an unpaid renewal at which the subscription expires. */
  graceDays: number
  /** `subscription.trial_ending` this many days before the trial ends. */
  trialReminderDays: number
  /** `subscription.expiring` this many days before a period that will not renew ends. */
  expiringDays: number
}

export const DEFAULT_POLICY: BillingPolicy = Object.freeze({ retryDays: [1, 3, 5], graceDays: 7, trialReminderDays: 3, expiringDays: 7 })

export const DAY_MS = 86_400_000
const ms = (iso: string): number => Date.parse(iso)
export const isoAt = (t: number): string => new Date(t).toISOString().replace('Z', '+00:00')
export const addDays = (iso: string, days: number): string => isoAt(ms(iso) + days * DAY_MS)

/** Statuses that still have a live subscription (at most one per account). */
export const LIVE_STATUSES: readonly SubscriptionStatus[] = ['trialing', 'active', 'past_due', 'paused']
/** Statuses whose plan is in force; a paused or ended subscription leaves the account on the default plan. */
export const ENTITLING_STATUSES: readonly SubscriptionStatus[] = ['trialing', 'active', 'past_due']
/** ENTITLING_STATUSES as an SQL list, `('trialing', 'active', 'past_due')`. */
export const ENTITLING_SQL = `('${ENTITLING_STATUSES.join("', '")}')`

/**
 * Scheduled work. `kind` is the `billing_runs.kind`; every kind belongs to the period boundary
 * `current_period_end` (the `period_key`), so each is done at most once per boundary.
 */
export type DueKind = 'reminder:trial_ending' | 'reminder:expiring' | 'renewal' | 'end' | `retry:${number}` | 'expiry'
export interface DueWork { kind: DueKind; period_key: string; due_at: string }

/** Facts the lifecycle needs that are not on the row. */
export interface DueContext {
  /** Kinds already done for the current boundary (billing_runs). */
  done: ReadonlySet<string>
  /** Can the wallet pay the next renewal now? (false makes the period "non-renewing": `expiring` reminder) */
  canPayRenewal: boolean
}

/**
 * The earliest work due by `at`, or null. Reminders whose boundary has passed are skipped (a late
 * "ends in 3 days" is noise); renewals, retries and expiry are never skipped, so a server that was
 * down catches up one boundary at a time (docs/billing.md "The billing run").
 */
export function nextDue(s: SubState, at: Date, policy: BillingPolicy, ctx: DueContext): DueWork | null {
  const now = at.getTime()
  const key = s.current_period_end
  const end = ms(key)
  const due = (kind: DueKind, t: number): DueWork | null => (t <= now && !ctx.done.has(kind) ? { kind, period_key: key, due_at: isoAt(t) } : null)
  switch (s.status) {
    case 'trialing':
    case 'active': {
      if (now >= end) return due(s.cancel_at_period_end ? 'end' : 'renewal', end)
      if (s.status === 'trialing' && !s.cancel_at_period_end) {
        const r = due('reminder:trial_ending', end - policy.trialReminderDays * DAY_MS)
        if (r) return r
      }
      if (s.cancel_at_period_end || (s.status === 'active' && !ctx.canPayRenewal)) return due('reminder:expiring', end - policy.expiringDays * DAY_MS)
      return null
    }
    case 'past_due': {
      const since = ms(s.past_due_since ?? key)
      const expiry = since + policy.graceDays * DAY_MS
      const n = s.retry_count + 1
      const retryAt = n <= policy.retryDays.length ? since + policy.retryDays[n - 1]! * DAY_MS : Infinity
      if (retryAt < expiry) return due(`retry:${n}`, retryAt)
      return due('expiry', expiry)
    }
    case 'paused':
    case 'cancelled':
    case 'expired':
      return null
    default: {
      const never: never = s.status
      throw new Error(`unknown subscription status ${String(never)}`)
    }
  }
}

/** A subscription event (api-v1 §6) to append: `subscription.<name>`. */
export type SubEventName = 'paused' | 'resumed' | 'renewed' | 'expired' | 'plan_changed' | 'past_due' | 'expiring' | 'trial_ending'
export interface SubEvent { name: SubEventName; previous_plan_key?: string }

/** A change to apply: new column values, a wallet charge (minor units) and events, in order. */
export interface Transition { patch: Partial<SubState>; charge?: { amount: number; reason: string }; events: SubEvent[] }

/** A renewal (or retry) was paid: the next period starts at the boundary; a pending downgrade takes effect. */
export function renewed(s: SubState, plan: PlanTerms, previousPlanKey: string | null): Transition {
  const start = s.current_period_end
  return {
    patch: {
      status: 'active', plan_id: plan.id, current_period_start: start, current_period_end: addDays(start, plan.period_days),
      pending_plan_id: null, past_due_since: null, retry_count: 0, next_retry_at: null,
    },
    events: [...(previousPlanKey ? [{ name: 'plan_changed' as const, previous_plan_key: previousPlanKey }] : []), { name: 'renewed' }],
  }
}

/** A renewal could not be paid: past due from the boundary, first retry on the schedule. */
export function renewalFailed(s: SubState, policy: BillingPolicy): Transition {
  const since = s.current_period_end
  return {
    patch: { status: 'past_due', past_due_since: since, retry_count: 0, next_retry_at: policy.retryDays.length ? addDays(since, policy.retryDays[0]!) : null },
    events: [{ name: 'past_due' }],
  }
}

/** Retry `n` could not be paid either: wait for the next one (or the expiry). */
export function retryFailed(s: SubState, n: number, policy: BillingPolicy): Transition {
  const since = s.past_due_since ?? s.current_period_end
  const next = policy.retryDays[n]
  return { patch: { retry_count: n, next_retry_at: next === undefined ? null : addDays(since, next) }, events: [] }
}

/** The grace period is over, unpaid. */
export const expired = (at: string): Transition => ({ patch: { status: 'expired', ended_at: at, next_retry_at: null }, events: [{ name: 'expired' }] })

/** A cancelled subscription reaches its period end. The event is `expired` with status `cancelled`. */
export const endedAtPeriodEnd = (s: SubState): Transition => ({ patch: { status: 'cancelled', ended_at: s.current_period_end }, events: [{ name: 'expired' }] })

/** Why an owner action is refused (422 invalid_transition). */
export class LifecycleError extends Error {
  override name = 'LifecycleError'
}

export function pause(s: SubState, now: string): Transition {
  if (s.status !== 'active') throw new LifecycleError(`Only an active subscription can be paused; this one is ${s.status}.`)
  return { patch: { status: 'paused', paused_at: now }, events: [{ name: 'paused' }] }
}

/** Resuming keeps the paid time: the period end moves by as long as the pause lasted. */
export function resume(s: SubState, now: string): Transition {
  if (s.status !== 'paused' || !s.paused_at) throw new LifecycleError(`Only a paused subscription can be resumed; this one is ${s.status}.`)
  const paused = Math.max(0, ms(now) - ms(s.paused_at))
  return { patch: { status: 'active', paused_at: null, current_period_end: isoAt(ms(s.current_period_end) + paused) }, events: [{ name: 'resumed' }] }
}

/**
 * Cancel: trialing and active subscriptions run to their period end (then `cancelled`); a past-due
 * or paused one has no paid time left to run, so it ends now.
 */
export function cancel(s: SubState, now: string): Transition {
  switch (s.status) {
    case 'trialing':
    case 'active':
      return { patch: { cancel_at_period_end: true, pending_plan_id: null }, events: [] }
    case 'past_due':
    case 'paused':
      return { patch: { status: 'cancelled', ended_at: now, next_retry_at: null }, events: [{ name: 'expired' }] }
    default:
      throw new LifecycleError(`The subscription is already ${s.status}.`)
  }
}

/** Undo a cancellation before the period ends. */
export function resumeRenewal(s: SubState): Transition {
  if (!(s.status === 'trialing' || s.status === 'active') || !s.cancel_at_period_end) throw new LifecycleError('The subscription is not set to end at its period end.')
  return { patch: { cancel_at_period_end: false }, events: [] }
}

/** The price of the part of the period left, rounded to the minor unit (half up). */
export function proration(s: SubState, from: PlanTerms, to: PlanTerms, now: string): number {
  const start = ms(s.current_period_start)
  const end = ms(s.current_period_end)
  const left = Math.min(Math.max(end - ms(now), 0), end - start)
  if (end <= start) return 0
  return Math.max(0, Math.round(((to.price - from.price) * left) / (end - start)))
}

/**
 * Change plan. Trialing: switch at once, nothing to charge. From a free plan: a new paid period starts
 * now (full price, or a trial if the plan has one and the account never had one). Upgrade (a plan
 * that costs at least as much): at once, the price difference for the rest of the period charged
 * now. Downgrade: at the period end (`pending_plan_id`), so the paid period keeps what was paid for.
 * The current plan again: a pending downgrade is dropped.
 */
export function changePlan(s: SubState, from: PlanTerms, to: PlanTerms, now: string, trialAvailable: boolean): Transition {
  if (!(s.status === 'trialing' || s.status === 'active')) throw new LifecycleError(`The plan of a ${s.status} subscription cannot change; ${s.status === 'past_due' ? 'top up the wallet so the renewal is paid' : 'resume it'} first.`)
  if (to.id === from.id) return { patch: { pending_plan_id: null }, events: [] }
  const changed: SubEvent = { name: 'plan_changed', previous_plan_key: from.key }
  if (s.status === 'trialing') return { patch: { plan_id: to.id, pending_plan_id: null }, events: [changed] }
  if (from.price === 0 && to.price > 0) {
    if (trialAvailable && to.trial_days > 0) {
      const end = addDays(now, to.trial_days)
      return { patch: { status: 'trialing', plan_id: to.id, current_period_start: now, current_period_end: end, trial_end: end, pending_plan_id: null, cancel_at_period_end: false }, events: [changed] }
    }
    return {
      patch: { plan_id: to.id, current_period_start: now, current_period_end: addDays(now, to.period_days), pending_plan_id: null, cancel_at_period_end: false },
      charge: { amount: to.price, reason: 'subscription_start' },
      events: [changed],
    }
  }
  if (to.price >= from.price) {
    const amount = proration(s, from, to, now)
    return { patch: { plan_id: to.id, pending_plan_id: null }, ...(amount > 0 ? { charge: { amount, reason: 'plan_change_proration' } } : {}), events: [changed] }
  }
  return { patch: { pending_plan_id: to.id }, events: [] }
}

/** A new subscription for an account without a live one (after a cancellation or expiry). */
export function start(plan: PlanTerms, now: string, trialAvailable: boolean): { state: SubState; charge?: { amount: number; reason: string } } {
  const trial = trialAvailable && plan.trial_days > 0 && plan.price > 0
  const end = addDays(now, trial ? plan.trial_days : plan.period_days)
  const state: SubState = {
    status: trial ? 'trialing' : 'active', plan_id: plan.id, current_period_start: now, current_period_end: end, trial_end: trial ? end : null,
    cancel_at_period_end: false, pending_plan_id: null, past_due_since: null, retry_count: 0, next_retry_at: null, paused_at: null, ended_at: null,
  }
  return { state, ...(!trial && plan.price > 0 ? { charge: { amount: plan.price, reason: 'subscription_start' } } : {}) }
}
