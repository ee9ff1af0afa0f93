/**
 * The reseller area (api-v1 §4.8, docs/billing.md "Resellers"): a reseller account manages its own
 * customer accounts, sells them its own plans, tops up their wallets, and reads its invoices, stats
 * and volume tier.
 *
 * Access, in one place for every operation here: the owner token's capability is the spec's plain
 * `read` for reads and `write` for writes (`*:read` / `*:write`, api-v1 §5 rule 3; `*` has both),
 * and the policy's `reseller` scope admits only accounts with the reseller role (403 `forbidden`
 * otherwise). `account` and `subscription` scopes resolve only the reseller's own customers and
 * their subscriptions: anyone else's is a 404, before any body is read (src/auth/policy.ts).
 * Stats are counts and totals: no customer's orders or personal data leave through this area.
 */
import { randomBytes } from 'node:crypto'
import * as v from 'valibot'
import { defineOp, Outcome, type OpCtx } from '../op.ts'
import { Id, Money, PageQuery, PaginatedSchema, ShortText, pageOf, paginate } from '../schemas/common.ts'
import { ApiError, invalidField } from '../../errors.ts'
import { fromCents, toCents } from '../../domain/money.ts'
import { FEATURE_KEYS, isFeatureKey, type FeatureKey } from '../../domain/plans.ts'
import { churnRate, mrr, tierStatus, TIERS, type Tier } from '../../domain/reseller.ts'
import { actOn } from '../../billing/actions.ts'
import { nowIso, type Db } from '../../storage/db.ts'
import { planByKey } from '../../storage/plans.ts'
import { createStore, suspendAccount, unsuspendAccount } from '../../storage/accounts.ts'
import { credit } from '../../storage/wallet.ts'
import { subscriptionById } from '../../storage/subscriptions.ts'
import {
  activeCustomerCount, churnCounts, customerCounts, customerInvoicesPage, customerRow, customersPage, insertAccount, insertResellerPlan, orderTotals,
  recurringSubscriptions, resellerInvoicesPage, resellerPlan, resellerPlans, startCustomerPlan, subscriptionRow, subscriptionsPage,
  type CustomerInvoiceRow, type CustomerListRow, type ResellerInvoiceRow, type ResellerPlanRow, type ResellerRow, type SubscriptionListRow,
} from '../../storage/reseller.ts'
import { createOwnerToken } from '../../seed.ts'

const tag = 'Reseller'
const PER_PAGE = 25
const READ = { owner: '*:read' } as const
const WRITE = { owner: '*:write' } as const

/** The reseller the policy resolved (scope `reseller`); missing is a declaration bug, not a 403. */
function resellerOf(ctx: OpCtx): ResellerRow {
  if (!ctx.scope.reseller) throw new ApiError('internal_error', 'Operation ran without its reseller scope.')
  return ctx.scope.reseller
}
const accountIdOf = (ctx: OpCtx): number => {
  if (!ctx.scope.account) throw new ApiError('internal_error', 'Operation ran without its account scope.')
  return ctx.scope.account.id
}

type Page<R> = (db: Db, resellerId: number, page: number, perPage: number) => { rows: R[]; total: number }
/** One page (PER_PAGE rows, api-v1 §2.1) of the resolved reseller's rows, in their view. */
function listPage<R, V>(ctx: OpCtx, input: { page?: string }, read: Page<R>, view: (r: R) => V) {
  const page = pageOf(input)
  const { rows, total } = read(ctx.svc.db, resellerOf(ctx).id, page, PER_PAGE)
  return paginate(rows.map(view), page, PER_PAGE, total)
}

// --- views (money as JSON numbers in major units, api-v1 §2) ------------------------------------

const customerView = (r: CustomerListRow) => ({
  id: r.id, name: r.name, email: r.email,
  status: r.suspended_at ? 'suspended' : 'active', suspended_at: r.suspended_at,
  plan: r.plan_id === null ? null : { id: r.plan_id, key: r.plan_key, name: r.plan_name },
  subscription: r.subscription_id === null ? null : { id: r.subscription_id, status: r.subscription_status },
  wallet_balance: fromCents(r.wallet_balance), store_count: r.store_count, created_at: r.created_at,
})
const planView = (p: ResellerPlanRow) => ({
  id: p.id, key: p.key, name: p.name, base_plan: { id: p.base_plan_id, key: p.base_plan_key, wholesale_price: fromCents(p.base_wholesale_price) },
  price: fromCents(p.price), currency: p.currency, period_days: p.period_days, trial_days: p.trial_days,
  features: p.features, quotas: p.quotas, created_at: p.created_at,
})
const subscriptionView = (s: SubscriptionListRow) => ({
  id: s.id, customer_id: s.owner_id, plan: { id: s.plan_id, key: s.plan_key, name: s.plan_name }, price: fromCents(s.plan_price), currency: s.currency,
  status: s.status, current_period_start: s.current_period_start, current_period_end: s.current_period_end, trial_end: s.trial_end,
  cancel_at_period_end: s.cancel_at_period_end === 1, ended_at: s.ended_at, created_at: s.created_at,
})
const invoiceView = (i: ResellerInvoiceRow) => ({
  id: i.id, number: i.number, period_start: i.period_start, period_end: i.period_end, currency: i.currency,
  active_customers: i.active_customers, tier: i.tier, discount_percent: i.discount_percent,
  lines: i.lines.map((l) => ({ customer_id: l.customer_id, plan_id: l.plan_id, base_plan_key: l.base_plan_key, wholesale: fromCents(l.wholesale) })),
  subtotal: fromCents(i.subtotal), discount: fromCents(i.discount), total: fromCents(i.total), status: 'issued', issued_at: i.issued_at,
})
const customerInvoiceView = (i: CustomerInvoiceRow) => ({
  id: i.id, number: i.number, customer_id: i.customer_id, subscription_id: i.subscription_id, plan_id: i.plan_id,
  description: i.description, amount: fromCents(i.amount), currency: i.currency, status: 'issued', issued_at: i.issued_at,
})
const tierView = (t: Tier) => ({ key: t.key, name: t.name, min_customers: t.min, max_customers: t.max, discount_percent: t.discount_percent })

// --- output schemas (OpenAPI) --------------------------------------------------------------------

const str = { type: 'string' }
const int = { type: 'integer' }
const num = { type: 'number' }
const nullable = (s: Record<string, unknown>) => ({ anyOf: [s, { type: 'null' }] })
const obj = (properties: Record<string, unknown>) => ({ type: 'object', required: Object.keys(properties), properties })
const CustomerSchema = obj({
  id: int, name: str, email: str, status: { type: 'string', enum: ['active', 'suspended'] }, suspended_at: nullable(str),
  plan: nullable(obj({ id: int, key: str, name: str })), subscription: nullable(obj({ id: int, status: str })),
  wallet_balance: num, store_count: int, created_at: str,
})
const PlanSchema = obj({
  id: int, key: str, name: str, base_plan: obj({ id: int, key: str, wholesale_price: num }), price: num, currency: str,
  period_days: int, trial_days: int, features: { type: 'array', items: str }, quotas: { type: 'object', additionalProperties: int }, created_at: str,
})
const SubscriptionSchema = obj({
  id: int, customer_id: int, plan: obj({ id: int, key: str, name: str }), price: num, currency: str, status: str,
  current_period_start: str, current_period_end: str, trial_end: nullable(str), cancel_at_period_end: { type: 'boolean' }, ended_at: nullable(str), created_at: str,
})
const InvoiceSchema = obj({
  id: int, number: str, period_start: str, period_end: str, currency: str, active_customers: int, tier: str, discount_percent: int,
  lines: { type: 'array', items: obj({ customer_id: int, plan_id: int, base_plan_key: str, wholesale: num }) },
  subtotal: num, discount: num, total: num, status: { type: 'string', enum: ['issued'] }, issued_at: str,
})
const CustomerInvoiceSchema = obj({
  id: int, number: str, customer_id: int, subscription_id: nullable(int), plan_id: nullable(int), description: str, amount: num, currency: str,
  status: { type: 'string', enum: ['issued'] }, issued_at: str,
})
const TierSchema = obj({ key: str, name: str, min_customers: int, max_customers: nullable(int), discount_percent: int })

// --- customers -----------------------------------------------------------------------------------

export const listResellerCustomers = defineOp({
  id: 'reseller.customers.list', tag, summary: 'The accounts you manage (25 per page), with plan, status and wallet balance',
  access: READ, scope: ['reseller'], input: PageQuery, output: PaginatedSchema(CustomerSchema),
  run: (ctx, input) => listPage(ctx, input, customersPage, customerView),
})

const NewStoreInput = v.object({
  title: v.pipe(v.string(), v.trim(), v.minLength(1), v.maxLength(120)),
  slug: v.optional(v.pipe(v.string(), v.regex(/^[a-z0-9](?:[a-z0-9-]{0,58}[a-z0-9])?$/, 'lowercase letters, digits and dashes'))),
  store_type: v.optional(ShortText(40)),
  currency: v.optional(v.pipe(v.string(), v.regex(/^[A-Z]{3}$/, 'an ISO 4217 code'))),
  city: v.optional(ShortText(120)),
})
const NewCustomerInput = v.object({
  name: v.pipe(v.string(), v.trim(), v.minLength(1), v.maxLength(120)),
  email: v.pipe(v.string(), v.trim(), v.email(), v.maxLength(254)),
  plan_id: Id,
  store: v.optional(NewStoreInput),
})

export const createResellerCustomer = defineOp({
  id: 'reseller.customers.create', tag, summary: 'Create a customer account on one of your plans (its first token is shown once)',
  description: 'Creates an owner account managed by you, on `plan_id` (one of your plans; trialing when the plan has a trial), and optionally its first store (checked against the plan). The first period is provisioned by you; renewals are charged to the customer\'s wallet. The answer carries the new owner\'s `*` token once: it is stored hashed and cannot be shown again.',
  access: WRITE, scope: ['reseller'], input: NewCustomerInput,
  output: obj({ customer: CustomerSchema, token: { type: 'string', description: 'Owner token with `*`, shown once.' }, store: nullable(obj({ id: int, slug: str, title: str })) }),
  run: async (ctx, input) => {
    const reseller = resellerOf(ctx)
    return ctx.svc.committer.write((db) => {
      const plan = resellerPlan(db, reseller.id, input.plan_id)
      if (!plan || plan.archived_at) throw invalidField('plan_id', 'Choose one of your own plans (GET /reseller/plans).')
      const now = nowIso()
      const id = insertAccount(db, { name: input.name, email: input.email, resellerId: reseller.id }, now)
      startCustomerPlan(db, id, plan.key, now)
      const store = input.store ? createStore(db, id, { ...input.store, city: input.store.city ?? null }) : null
      const token = createOwnerToken(db, id, ['*'], null, 'reseller')
      return { customer: customerView(customerRow(db, reseller.id, id)!), token: token.token, store: store && { id: store.id, slug: store.slug, title: store.title } }
    })
  },
})

const SuspendInput = v.optional(v.object({ reason: v.optional(ShortText(500)) }))

export const suspendResellerCustomer = defineOp({
  id: 'reseller.customers.suspend', tag, summary: 'Suspend one of your customers (its tokens answer 403 account_suspended; data is kept)',
  access: WRITE, scope: ['reseller', 'account'], input: SuspendInput, output: CustomerSchema,
  run: async (ctx, input) => {
    const reseller = resellerOf(ctx)
    const id = accountIdOf(ctx)
    const view = await ctx.svc.committer.write((db) => {
      suspendAccount(db, id, input?.reason ?? `suspended by reseller ${reseller.id}`)
      return customerView(customerRow(db, reseller.id, id)!)
    })
    // Durable now: close the account's open sockets at once (every family: its staff, drivers, customers).
    ctx.svc.realtime.credentialsChanged()
    return view
  },
})

export const unsuspendResellerCustomer = defineOp({
  id: 'reseller.customers.unsuspend', tag, summary: 'Unsuspend one of your customers (everything works again at once)',
  access: WRITE, scope: ['reseller', 'account'], output: CustomerSchema,
  run: async (ctx) => {
    const reseller = resellerOf(ctx)
    const id = accountIdOf(ctx)
    return ctx.svc.committer.write((db) => {
      unsuspendAccount(db, id)
      return customerView(customerRow(db, reseller.id, id)!)
    })
  },
})

const TopUpInput = v.object({
  amount: v.pipe(Money, v.minValue(0.01)),
  reference: v.optional(v.pipe(v.string(), v.minLength(1), v.maxLength(120))),
})

export const topUpResellerCustomer = defineOp({
  id: 'reseller.customers.wallet.top_up', tag, summary: 'Top up a customer\'s wallet',
  description: 'Credits the customer\'s wallet ledger (reason `top_up`, created_by `reseller:<your id>`). A `reference` (or the `Idempotency-Key` header) makes it safe to repeat: the same reference credits once.',
  access: WRITE, scope: ['reseller', 'account'], input: TopUpInput,
  output: obj({ customer_id: int, balance: num, repeated: { type: 'boolean' }, entry: obj({ id: int, amount: num, reason: str, reference: nullable(str), created_by: str, created_at: str }) }),
  run: async (ctx, input) => {
    const reseller = resellerOf(ctx)
    const id = accountIdOf(ctx)
    const key = input.reference ?? ctx.idempotencyKey
    const reference = key === undefined ? null : `reseller-top-up:${key}`
    const w = await ctx.svc.committer.write((db) => credit(db, id, toCents(input.amount), 'top_up', reference, `reseller:${reseller.id}`))
    const value = {
      customer_id: id, balance: fromCents(w.balance), repeated: w.repeated,
      entry: { id: w.entry.id, amount: fromCents(w.entry.amount), reason: w.entry.reason, reference: w.entry.reference, created_by: w.entry.created_by, created_at: w.entry.created_at },
    }
    return w.repeated ? new Outcome(value, { replayed: true }) : value
  },
})

// --- plans ---------------------------------------------------------------------------------------

export const listResellerPlans = defineOp({
  id: 'reseller.plans.list', tag, summary: 'Your own plans', access: READ, scope: ['reseller'],
  output: obj({ data: { type: 'array', items: PlanSchema } }),
  run: (ctx) => ({ data: resellerPlans(ctx.svc.db, resellerOf(ctx).id).map(planView) }),
})

const NewPlanInput = v.object({
  name: v.pipe(v.string(), v.trim(), v.minLength(1), v.maxLength(80)),
  base_plan: v.pipe(v.string(), v.minLength(1), v.maxLength(60)),
  price: Money,
  features: v.optional(v.pipe(v.array(v.picklist(FEATURE_KEYS)), v.maxLength(FEATURE_KEYS.length))),
  trial_days: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(90))),
})

export const createResellerPlan = defineOp({
  id: 'reseller.plans.create', tag, summary: 'Create a plan of your own on a platform plan, at your retail price',
  description: 'Built on a platform plan (`base_plan`, its key): its quotas and period, its features or a subset of them (`features`; default all). The retail `price` per period may not be below the base plan\'s wholesale price (422, `details.wholesale_price`): that is what the platform bills you per active customer.',
  access: WRITE, scope: ['reseller'], input: NewPlanInput, output: PlanSchema,
  run: async (ctx, input) => {
    const reseller = resellerOf(ctx)
    return ctx.svc.committer.write((db) => {
      const base = planByKey(db, input.base_plan)
      if (!base || base.reseller_id !== null || base.archived_at) throw invalidField('base_plan', 'Name a platform plan by its key (free, growth, pro).')
      const price = toCents(input.price)
      if (price < base.wholesale_price) {
        const message = `The price may not be below the ${base.name} plan's wholesale price, ${fromCents(base.wholesale_price)} ${base.currency} per period.`
        throw new ApiError('validation_failed', message, { price: [message] }, undefined, { wholesale_price: fromCents(base.wholesale_price), base_plan: base.key })
      }
      const features = (input.features ?? base.features).filter((f, i, all) => all.indexOf(f) === i)
      const extra = features.filter((f) => !base.features.includes(f))
      if (extra.length) throw invalidField('features', `The ${base.name} plan does not include ${extra.join(', ')}; a plan may offer its base plan's features or a subset.`)
      const slug = input.name.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, '').slice(0, 30) || 'plan'
      return planView(insertResellerPlan(db, reseller.id, {
        key: `r${reseller.id}-${slug}-${randomBytes(3).toString('hex')}`, name: input.name, basePlanId: base.id, price, currency: base.currency,
        periodDays: base.period_days, trialDays: input.trial_days ?? 0, features: features.filter(isFeatureKey) as FeatureKey[], quotas: base.quotas,
      }))
    })
  },
})

// --- subscriptions -------------------------------------------------------------------------------

const SubscriptionsQuery = v.object({
  page: PageQuery.entries.page,
  status: v.optional(v.picklist(['trialing', 'active', 'past_due', 'paused', 'cancelled', 'expired'])),
})

export const listResellerSubscriptions = defineOp({
  id: 'reseller.subscriptions.list', tag, summary: 'Your customers\' subscriptions, newest first (25 per page; filter `status`)',
  access: READ, scope: ['reseller'], input: SubscriptionsQuery, output: PaginatedSchema(SubscriptionSchema),
  run: (ctx, input) => listPage(ctx, input, (db, r, page, perPage) => subscriptionsPage(db, r, page, perPage, input.status), subscriptionView),
})

export const cancelResellerSubscription = defineOp({
  id: 'reseller.subscriptions.cancel', tag, summary: 'Cancel a customer\'s subscription at the end of its period',
  description: 'Trialing and active subscriptions run to their period end and are not renewed (`cancel_at_period_end`); a past-due or paused one has no paid time left and ends now. Already ended: 422 `invalid_transition`.',
  access: WRITE, scope: ['reseller', 'subscription'], output: SubscriptionSchema,
  run: async (ctx) => {
    const reseller = resellerOf(ctx)
    const id = ctx.scope.subscription!.id
    const { events, view } = await ctx.svc.committer.write((db) => {
      const events = actOn(db, subscriptionById(db, id)!, 'cancel', nowIso())
      return { events, view: subscriptionView(subscriptionRow(db, reseller.id, id)!) }
    })
    // Durable now: hand the events (subscription.expired, entitlement.changed) to the router, as the
    // account's own cancel does (src/ops/money/subscription.ts).
    ctx.svc.events.publish(events)
    return view
  },
})

// --- invoices ------------------------------------------------------------------------------------

export const listResellerInvoices = defineOp({
  id: 'reseller.invoices.list', tag, summary: 'What the platform billed you, newest first (25 per page)',
  description: 'One invoice per 30-day period: the wholesale price per active customer less your volume tier discount (docs/billing.md "Resellers"). Numbered without gaps, immutable once issued.',
  access: READ, scope: ['reseller'], input: PageQuery, output: PaginatedSchema(InvoiceSchema),
  run: (ctx, input) => listPage(ctx, input, resellerInvoicesPage, invoiceView),
})

export const listResellerCustomerInvoices = defineOp({
  id: 'reseller.customer_invoices.list', tag, summary: 'What you billed your customers, newest first (25 per page)',
  description: 'One invoice per renewal of a customer\'s subscription on one of your plans, numbered without gaps in your own series.',
  access: READ, scope: ['reseller'], input: PageQuery, output: PaginatedSchema(CustomerInvoiceSchema),
  run: (ctx, input) => listPage(ctx, input, customerInvoicesPage, customerInvoiceView),
})

// --- stats and tier ------------------------------------------------------------------------------

const StatsQuery = v.object({
  days: v.optional(v.pipe(v.string(), v.regex(/^[1-9]\d{0,2}$/, 'days must be 1-999'), v.transform(Number), v.maxValue(365, 'days must be at most 365'))),
})

export const resellerStats = defineOp({
  id: 'reseller.stats.get', tag, summary: 'Active customers, MRR, churn and orders across your customers over a window',
  description: 'Query `days` (1-365, default 30). Counts and totals only: never a customer\'s orders or their personal data.',
  access: READ, scope: ['reseller'], input: StatsQuery,
  output: obj({
    at: str, window_days: int, customers: obj({ total: int, active: int, suspended: int }), mrr: num, currency: str,
    churn: obj({ active_at_start: int, lost: int, rate: num }),
    orders: obj({ count: int, total: num, by_currency: { type: 'array', items: obj({ currency: str, count: int, total: num }) } }),
  }),
  run: (ctx, input) => {
    const db = ctx.svc.db
    const r = resellerOf(ctx).id
    const days = input.days ?? 30
    const now = Date.now()
    const at = nowIso(now)
    const from = nowIso(now - days * 86_400_000)
    const counts = customerCounts(db, r)
    const churn = churnCounts(db, r, from, at)
    const orders = orderTotals(db, r, from)
    return {
      at, window_days: days,
      customers: { total: counts.total, active: activeCustomerCount(db, r, at), suspended: counts.suspended },
      mrr: fromCents(mrr(recurringSubscriptions(db, r))), currency: 'USD',
      churn: { active_at_start: churn.active_at_start, lost: churn.lost, rate: churnRate(churn.active_at_start, churn.lost) },
      orders: { count: orders.count, total: fromCents(orders.total), by_currency: orders.by_currency.map((o) => ({ ...o, total: fromCents(o.total) })) },
    }
  },
})

export const resellerTier = defineOp({
  id: 'reseller.tier.get', tag, summary: 'Your volume tier: active customers, the discount, and the distance to the next tier',
  access: READ, scope: ['reseller'],
  output: obj({ active_customers: int, tier: TierSchema, next: nullable(obj({ tier: TierSchema, customers_needed: int })), tiers: { type: 'array', items: TierSchema } }),
  run: (ctx) => {
    const status = tierStatus(activeCustomerCount(ctx.svc.db, resellerOf(ctx).id, nowIso()))
    return {
      active_customers: status.active_customers, tier: tierView(status.tier),
      next: status.next && { tier: tierView(status.next.tier), customers_needed: status.next.customers_needed },
      tiers: TIERS.map(tierView),
    }
  },
})

export const resellerOps = [
  listResellerCustomers, createResellerCustomer, suspendResellerCustomer, unsuspendResellerCustomer, topUpResellerCustomer,
  listResellerPlans, createResellerPlan, listResellerSubscriptions, cancelResellerSubscription,
  listResellerInvoices, listResellerCustomerInvoices, resellerStats, resellerTier,
]
