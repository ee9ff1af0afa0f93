/**
 * The pure subscription lifecycle (src/domain/subscription.ts): what is due when, and what each owner
 * action changes — renewals, retries on the schedule, expiry after the grace period, reminders,
 * cancel at period end, pause/resume, prorated upgrades and downgrades at period end.
 */
import t from 'tap'
import * as life from '../../src/domain/subscription.ts'
import type { SubState, PlanTerms } from '../../src/domain/subscription.ts'

const P = life.DEFAULT_POLICY
const T0 = '2027-01-01T00:00:00.000+00:00'
const END = life.addDays(T0, 30)
const day = (n: number) => new Date(Date.parse(END) + n * life.DAY_MS)
const growth: PlanTerms = { id: 2, key: 'growth', price: 3000, period_days: 30, trial_days: 14 }
const pro: PlanTerms = { id: 3, key: 'pro', price: 9000, period_days: 30, trial_days: 14 }
const free: PlanTerms = { id: 1, key: 'free', price: 0, period_days: 30, trial_days: 0 }

const sub = (over: Partial<SubState> = {}): SubState => ({
  status: 'active', plan_id: growth.id, current_period_start: T0, current_period_end: END, trial_end: null, cancel_at_period_end: false,
  pending_plan_id: null, past_due_since: null, retry_count: 0, next_retry_at: null, paused_at: null, ended_at: null, ...over,
})
const ctx = (done: string[] = [], canPayRenewal = true) => ({ done: new Set(done), canPayRenewal })

t.test('renewal is due at the period end, not before', async (t) => {
  t.equal(life.nextDue(sub(), day(-1), P, ctx()), null)
  t.match(life.nextDue(sub(), day(0), P, ctx()), { kind: 'renewal', period_key: END })
  t.match(life.nextDue(sub(), day(40), P, ctx()), { kind: 'renewal', period_key: END }, 'late: still the boundary that was missed')
  t.equal(life.nextDue(sub(), day(0), P, ctx(['renewal'])), null, 'done once for this boundary')
})

t.test('a paid renewal starts the next period at the boundary and applies a pending downgrade', async (t) => {
  const r = life.renewed(sub({ pending_plan_id: free.id }), free, 'growth')
  t.match(r.patch, { status: 'active', plan_id: free.id, current_period_start: END, current_period_end: life.addDays(END, 30), pending_plan_id: null })
  t.same(r.events, [{ name: 'plan_changed', previous_plan_key: 'growth' }, { name: 'renewed' }])
})

t.test('an unpaid renewal: past_due, retries at +1d +3d +5d, expired after 7 days', async (t) => {
  const f = life.renewalFailed(sub(), P)
  t.match(f.patch, { status: 'past_due', past_due_since: END, retry_count: 0, next_retry_at: life.addDays(END, 1) })
  t.same(f.events, [{ name: 'past_due' }])
  const pd = sub({ ...f.patch })
  t.equal(life.nextDue(pd, day(0.5), P, ctx()), null)
  t.match(life.nextDue(pd, day(1), P, ctx()), { kind: 'retry:1' })
  const after1 = sub({ ...pd, ...life.retryFailed(pd, 1, P).patch })
  t.match(after1, { retry_count: 1, next_retry_at: life.addDays(END, 3) })
  t.equal(life.nextDue(after1, day(2), P, ctx()), null)
  t.match(life.nextDue(after1, day(3), P, ctx()), { kind: 'retry:2' })
  const after3 = sub({ ...pd, retry_count: 3 })
  t.equal(life.nextDue(after3, day(6), P, ctx()), null)
  t.match(life.nextDue(after3, day(7), P, ctx()), { kind: 'expiry', due_at: life.addDays(END, 7) })
  t.match(life.expired('x').patch, { status: 'expired' })
})

t.test('catch-up in a past-due period: the earliest due work comes first', async (t) => {
  const pd = sub({ status: 'past_due', past_due_since: END })
  t.match(life.nextDue(pd, day(30), P, ctx()), { kind: 'retry:1' })
  t.match(life.nextDue(sub({ ...pd, retry_count: 1 }), day(30), P, ctx()), { kind: 'retry:2' })
  t.match(life.nextDue(sub({ ...pd, retry_count: 3 }), day(30), P, ctx()), { kind: 'expiry' })
  t.match(life.nextDue(pd, day(30), { ...P, retryDays: [10] }, ctx()), { kind: 'expiry' }, 'a retry after the grace period never happens')
})

t.test('trial_ending 3 days before the trial ends (configurable), once, never late', async (t) => {
  const tr = sub({ status: 'trialing', trial_end: END })
  t.equal(life.nextDue(tr, day(-3.5), P, ctx()), null)
  t.match(life.nextDue(tr, day(-3), P, ctx()), { kind: 'reminder:trial_ending' })
  t.equal(life.nextDue(tr, day(-1), P, ctx(['reminder:trial_ending'])), null)
  t.match(life.nextDue(tr, day(-5), { ...P, trialReminderDays: 5 }, ctx()), { kind: 'reminder:trial_ending' })
  t.match(life.nextDue(tr, day(1), P, ctx()), { kind: 'renewal' }, 'past the end: the renewal, the stale reminder is skipped')
})

t.test('expiring N days before the end of a cancelled or non-renewing period', async (t) => {
  const c = sub({ cancel_at_period_end: true })
  t.equal(life.nextDue(c, day(-8), P, ctx()), null)
  t.match(life.nextDue(c, day(-7), P, ctx()), { kind: 'reminder:expiring' })
  t.equal(life.nextDue(c, day(-6), P, ctx(['reminder:expiring'])), null)
  t.match(life.nextDue(c, day(0), P, ctx(['reminder:expiring'])), { kind: 'end' }, 'then it ends at the period end')
  t.equal(life.nextDue(sub(), day(-7), P, ctx([], true)), null, 'a period that will renew: no reminder')
  t.match(life.nextDue(sub(), day(-7), P, ctx([], false)), { kind: 'reminder:expiring' }, 'the wallet cannot pay the renewal: non-renewing')
  t.match(life.endedAtPeriodEnd(c), { patch: { status: 'cancelled', ended_at: END }, events: [{ name: 'expired' }] })
})

t.test('cancel, resume-renewal', async (t) => {
  t.match(life.cancel(sub(), T0), { patch: { cancel_at_period_end: true }, events: [] })
  t.match(life.cancel(sub({ status: 'past_due' }), T0), { patch: { status: 'cancelled', ended_at: T0 } })
  t.throws(() => life.cancel(sub({ status: 'expired' }), T0), life.LifecycleError)
  t.match(life.resumeRenewal(sub({ cancel_at_period_end: true })), { patch: { cancel_at_period_end: false } })
  t.throws(() => life.resumeRenewal(sub()), life.LifecycleError)
})

t.test('pause stops the clock; resume moves the period end by the pause', async (t) => {
  const p = life.pause(sub(), life.addDays(T0, 10))
  t.match(p, { patch: { status: 'paused' }, events: [{ name: 'paused' }] })
  const paused = sub({ ...p.patch })
  t.equal(life.nextDue(paused, day(100), P, ctx()), null, 'nothing renews while paused')
  const r = life.resume(paused, life.addDays(T0, 15))
  t.match(r, { patch: { status: 'active', paused_at: null, current_period_end: life.addDays(END, 5) }, events: [{ name: 'resumed' }] })
  t.throws(() => life.pause(paused, T0), life.LifecycleError)
  t.throws(() => life.resume(sub(), T0), life.LifecycleError)
})

t.test('plan change: prorated upgrade now, downgrade at period end, trial switch free', async (t) => {
  const half = life.addDays(T0, 15)
  const up = life.changePlan(sub(), growth, pro, half, false)
  t.match(up, { patch: { plan_id: pro.id }, charge: { amount: 3000, reason: 'plan_change_proration' }, events: [{ name: 'plan_changed', previous_plan_key: 'growth' }] })
  t.equal(life.proration(sub(), growth, pro, T0), 6000, 'a whole period left: the whole difference')
  t.equal(life.proration(sub(), growth, pro, END), 0, 'nothing left: nothing to pay')
  const down = life.changePlan(sub({ plan_id: pro.id }), pro, growth, half, false)
  t.same(down, { patch: { pending_plan_id: growth.id }, events: [] })
  t.same(life.changePlan(sub({ pending_plan_id: free.id }), growth, growth, half, false), { patch: { pending_plan_id: null }, events: [] }, 'the same plan drops a pending downgrade')
  t.match(life.changePlan(sub({ status: 'trialing' }), growth, pro, half, false), { patch: { plan_id: pro.id }, events: [{ name: 'plan_changed' }] })
  t.notOk(life.changePlan(sub({ status: 'trialing' }), growth, pro, half, false).charge, 'no charge in a trial')
  t.throws(() => life.changePlan(sub({ status: 'past_due' }), growth, pro, half, false), life.LifecycleError)
})

t.test('from a free plan: a trial if available, else a new period charged in full', async (t) => {
  const f = sub({ plan_id: free.id })
  t.match(life.changePlan(f, free, growth, T0, true), { patch: { status: 'trialing', trial_end: life.addDays(T0, 14) } })
  const paid = life.changePlan(f, free, growth, T0, false)
  t.match(paid, { patch: { current_period_start: T0, current_period_end: END }, charge: { amount: 3000, reason: 'subscription_start' } })
  t.match(life.start(growth, T0, false), { state: { status: 'active' }, charge: { amount: 3000 } })
  t.match(life.start(growth, T0, true), { state: { status: 'trialing' } })
  t.notOk(life.start(free, T0, false).charge)
})
