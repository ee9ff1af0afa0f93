/**
 * The account's subscription (docs/billing.md "Subscriptions", api-v1 §6 `subscription.*`): see it,
 * change plan, cancel at period end (and undo), pause and resume. Account-level, outside the
 * resource list of §5, so reads need `read` (`*:read`) and changes `write` (`*:write`); `*` holds both.
 * "Now" is the billing clock (src/billing/clock.ts). Writes go through the committer: durable, then
 * the events are published.
 */
import * as v from 'valibot'
import { defineOp, type Access, type OpCtx } from '../op.ts'
import { ownerOf } from '../scope.ts'
import { changeSubscriptionPlan, subscriptionAction, type SubscriptionAction } from '../../billing/actions.ts'
import { billingNow } from '../../billing/clock.ts'
import { isoAt } from '../../domain/subscription.ts'
import { subscriptionView, SubscriptionSchema } from './billing-views.ts'

const tag = 'Billing'
const read: Access = { owner: '*:read' }
const write: Access = { owner: '*:write' }

export const getSubscription = defineOp({
  id: 'billing.subscription.get', tag, summary: 'The account\'s subscription', access: read, scope: [],
  description: 'The live subscription (or, after it ended, the last one: `live` false; the account then runs on the default plan). Prices are JSON numbers in major units.',
  output: SubscriptionSchema,
  run: (ctx) => subscriptionView(ctx.svc.db, ownerOf(ctx).ownerId),
})

async function act(ctx: OpCtx, run: (db: import('../../storage/db.ts').Db, ownerId: number, now: string) => import('../../storage/outbox.ts').OutboxEvent[]) {
  const ownerId = ownerOf(ctx).ownerId
  const now = isoAt(billingNow(ctx.svc.config).getTime())
  const events = await ctx.svc.committer.write((db) => run(db, ownerId, now))
  ctx.svc.events.publish(events)
  return subscriptionView(ctx.svc.db, ownerId)
}

/** An owner action on the live subscription (src/billing/actions.ts); answers the subscription after it. */
const actionOp = (a: SubscriptionAction, meta: { id: string; summary: string; description?: string }) => defineOp({
  ...meta, tag, access: write, scope: [], output: SubscriptionSchema,
  run: (ctx: OpCtx) => act(ctx, (db, ownerId, now) => subscriptionAction(db, ownerId, a, now)),
})

export const changePlan = defineOp({
  id: 'billing.subscription.change_plan', tag, summary: 'Change plan (upgrade now, downgrade at period end)', access: write, scope: [],
  description: 'A plan that costs at least as much applies at once and the price difference for the rest of the period is charged to the wallet (402 `insufficient_funds` if it cannot pay); a cheaper plan applies at the period end (`pending_plan`). The current plan again drops a pending downgrade. During a trial the plan switches at once, free. An account whose subscription ended starts a new one (a trial if the plan has one and the account never had one, else the first period is charged). Emits `subscription.plan_changed` when the plan changes.',
  input: v.object({ plan_key: v.pipe(v.string(), v.minLength(1), v.maxLength(100)) }), output: SubscriptionSchema,
  run: (ctx, { plan_key }) => act(ctx, (db, ownerId, now) => changeSubscriptionPlan(db, ownerId, plan_key, now)),
})

export const cancelSubscription = actionOp('cancel', {
  id: 'billing.subscription.cancel', summary: 'Cancel at the end of the period',
  description: 'A trialing or active subscription runs to its period end, then is `cancelled` (`subscription.expiring` before, `subscription.expired` then); a past-due or paused one ends now. 422 `invalid_transition` when there is nothing to cancel.',
})

export const resumeRenewal = actionOp('resume_renewal', { id: 'billing.subscription.resume_renewal', summary: 'Undo a cancellation before the period ends' })

export const pauseSubscription = actionOp('pause', {
  id: 'billing.subscription.pause', summary: 'Pause the subscription',
  description: 'Only an active subscription pauses. While paused nothing renews and the account runs on the default plan\'s features; `subscription.paused`.',
})

export const resumeSubscription = actionOp('resume', {
  id: 'billing.subscription.resume', summary: 'Resume a paused subscription',
  description: 'The period end moves by as long as the pause lasted (the paid time is kept); `subscription.resumed`.',
})

export const subscriptionOps = [getSubscription, changePlan, cancelSubscription, resumeRenewal, pauseSubscription, resumeSubscription]
