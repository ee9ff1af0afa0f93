/** What the billing operations answer (and their JSON Schemas for OpenAPI): subscription and wallet views. */
import type { Db } from '../../storage/db.ts'
import { latestSubscription } from '../../storage/subscriptions.ts'
import { planById, type PlanRow } from '../../storage/plans.ts'
import { walletBalance, walletEntries, WALLET_PAGE_SIZE } from '../../storage/wallet.ts'
import { fromCents } from '../../domain/money.ts'
import { LIVE_STATUSES } from '../../domain/subscription.ts'
import { paginate, PaginatedSchema } from '../schemas/common.ts'
import { ApiError } from '../../errors.ts'
import { named } from '../schemas/named.ts'

const str = { type: 'string' }
const int = { type: 'integer' }
const num = { type: 'number' }
const time = { type: 'string', format: 'date-time' }
const orNull = (s: Record<string, unknown>) => ({ anyOf: [s, { type: 'null' }] })

const PlanBrief = { type: 'object', required: ['key', 'name', 'price', 'currency', 'period_days'], properties: { key: str, name: str, price: num, currency: str, period_days: int } }

export const SubscriptionSchema = {
  type: 'object',
  required: ['id', 'live', 'status', 'plan', 'current_period_start', 'current_period_end', 'trial_end', 'cancel_at_period_end', 'pending_plan', 'past_due_since', 'next_retry_at', 'paused_at', 'ended_at', 'wallet_balance'],
  properties: {
    id: int,
    live: { type: 'boolean', description: 'false once cancelled or expired: the account then runs on the default plan' },
    status: { type: 'string', enum: ['trialing', 'active', 'past_due', 'paused', 'cancelled', 'expired'] },
    plan: PlanBrief,
    current_period_start: time, current_period_end: time, trial_end: orNull(time),
    cancel_at_period_end: { type: 'boolean' },
    pending_plan: { ...orNull(PlanBrief), description: 'a downgrade that applies at the period end' },
    past_due_since: orNull(time), next_retry_at: orNull(time), paused_at: orNull(time), ended_at: orNull(time),
    wallet_balance: { ...num, description: 'major units' },
  },
}
named('Subscription', SubscriptionSchema)

const planBrief = (p: PlanRow) => ({ key: p.key, name: p.name, price: fromCents(p.price), currency: p.currency, period_days: p.period_days })

export function subscriptionView(db: Db, ownerId: number) {
  const s = latestSubscription(db, ownerId)
  if (!s) throw new ApiError('not_found', 'The account has no subscription.')
  const pending = s.pending_plan_id !== null ? planById(db, s.pending_plan_id) : undefined
  return {
    id: s.id, live: LIVE_STATUSES.includes(s.status), status: s.status, plan: planBrief(planById(db, s.plan_id)!),
    current_period_start: s.current_period_start, current_period_end: s.current_period_end, trial_end: s.trial_end,
    cancel_at_period_end: s.cancel_at_period_end, pending_plan: pending ? planBrief(pending) : null,
    past_due_since: s.past_due_since, next_retry_at: s.next_retry_at, paused_at: s.paused_at, ended_at: s.ended_at,
    wallet_balance: fromCents(walletBalance(db, ownerId)),
  }
}

const EntrySchema = {
  type: 'object', required: ['id', 'amount', 'currency', 'reason', 'reference', 'created_by', 'created_at'],
  properties: { id: int, amount: { ...num, description: 'major units; credits > 0, debits < 0' }, currency: str, reason: str, reference: orNull(str), created_by: str, created_at: time },
}
export const WalletSchema = {
  ...PaginatedSchema(EntrySchema),
  required: ['balance', 'currency', 'data', 'current_page', 'last_page', 'per_page', 'total'],
  properties: { balance: { ...num, description: 'major units, never below zero' }, currency: str, ...PaginatedSchema(EntrySchema).properties },
}
named('Wallet', WalletSchema)

export function walletView(db: Db, ownerId: number, page: number) {
  const { entries, total } = walletEntries(db, ownerId, page)
  const data = entries.map((e) => ({ id: e.id, amount: fromCents(e.amount), currency: e.currency, reason: e.reason, reference: e.reference, created_by: e.created_by, created_at: e.created_at }))
  return { balance: fromCents(walletBalance(db, ownerId)), currency: 'USD', ...paginate(data, page, WALLET_PAGE_SIZE, total) }
}
