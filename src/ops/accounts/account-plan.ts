/**
 * The account's plan, entitlements and the platform catalog (docs/billing.md "Plans and
 * entitlements"), and store creation under the plan (`POST /restaurants`).
 *
 * - `GET /account/plan`: the plan in force, the subscription status, every catalog feature with
 *   whether the account holds it and from which sources, every quota with its limit and usage.
 * - `GET /account/entitlements`: the features held now, one row per grant, each with its source.
 * - `GET /plans`: the platform's plans (public: the price list is not a secret).
 * - `POST /restaurants`: a new store, within the `stores` quota; a second store needs `multi_store`.
 */
import * as v from 'valibot'
import { defineOp } from '../op.ts'
import { ownerOf } from '../scope.ts'
import { arr, bool, dateTime, int, nullable, obj, StoreSummarySchema, str } from '../schemas/named.ts'
import { FEATURES, FEATURE_KEYS, QUOTA_KINDS, QUOTA_KIND_KEYS } from '../../domain/plans.ts'
import { STORE_TYPES } from '../../domain/verticals.ts'
import { accountPlan, quotaUsage } from '../../storage/entitlements.ts'
import { liveEntitlements, planById, platformPlans, type PlanRow } from '../../storage/plans.ts'
import { liveSubscription } from '../../storage/subscriptions.ts'
import { accountStatus, createStore } from '../../storage/accounts.ts'
import { storeSummary } from '../../storage/stores.ts'

const tag = 'Account'

const featureKey = { type: 'string', enum: [...FEATURE_KEYS] }
const sourceType = { type: 'string', enum: ['subscription', 'plan', 'addon', 'app', 'manual'] }

const PlanSchema = obj({
  key: str, name: str, price: int, currency: str, period_days: int, trial_days: int, is_default: bool,
  features: arr(featureKey),
  quotas: { type: 'object', description: 'Limit per quota kind; a kind that is absent is unlimited.', additionalProperties: int },
})
const EntitlementSchema = obj({ feature_key: featureKey, source_type: sourceType, source_id: nullable(int), granted_at: dateTime })

const AccountPlanSchema = obj({
  plan: PlanSchema,
  status: { ...nullable({ type: 'string', enum: ['trialing', 'active', 'past_due', 'paused'] }), description: 'Status of the live subscription; null when there is none (the default plan applies).' },
  subscription_id: nullable(int),
  suspended: bool,
  features: arr(obj({ key: featureKey, description: str, included: bool, sources: arr(obj({ source_type: sourceType, source_id: nullable(int), granted_at: dateTime })) })),
  quotas: arr(obj({ kind: { type: 'string', enum: [...QUOTA_KIND_KEYS] }, description: str, limit: nullable(int), used: int })),
})

const planView = (p: PlanRow) => ({
  key: p.key, name: p.name, price: p.price, currency: p.currency, period_days: p.period_days, trial_days: p.trial_days,
  is_default: p.is_default, features: p.features, quotas: p.quotas,
})

export const getAccountPlan = defineOp({
  id: 'account.plan.get', tag, summary: 'The account\'s plan, features (with their sources) and quotas (with usage)', access: { owner: 'any' }, scope: [],
  description: 'The plan in force is the live subscription\'s while it is trialing, active or past_due; a paused account, or one whose subscription ended, is on the default plan. See docs/billing.md.',
  output: AccountPlanSchema,
  run: (ctx) => {
    const { ownerId } = ownerOf(ctx)
    const db = ctx.svc.db
    const current = accountPlan(db, ownerId)
    const held = liveEntitlements(db, ownerId)
    const status = liveSubscription(db, ownerId)?.status
    return {
      plan: planView(planById(db, current.plan_id)!),
      status: status ?? null,
      subscription_id: current.subscription_id,
      suspended: accountStatus(db, ownerId)?.suspended_at != null,
      features: FEATURE_KEYS.map((key) => {
        const sources = held.filter((e) => e.feature_key === key).map(({ source_type, source_id, granted_at }) => ({ source_type, source_id, granted_at }))
        return { key, description: FEATURES[key], included: sources.length > 0, sources }
      }),
      quotas: QUOTA_KIND_KEYS.map((kind) => ({ kind, description: QUOTA_KINDS[kind], limit: current.quotas[kind] ?? null, used: quotaUsage(db, ownerId, kind) })),
    }
  },
})

export const listEntitlements = defineOp({
  id: 'account.entitlements.list', tag, summary: 'The features the account holds now, one row per grant with its source', access: { owner: 'any' }, scope: [],
  output: obj({ data: arr(EntitlementSchema) }),
  run: (ctx) => ({ data: liveEntitlements(ctx.svc.db, ownerOf(ctx).ownerId) }),
})

export const listPlans = defineOp({
  id: 'plans.list', tag, summary: 'The platform\'s plans: prices, features and quotas', access: { public: true, owner: 'any' }, scope: [],
  output: obj({ data: arr(PlanSchema) }),
  run: (ctx) => ({ data: platformPlans(ctx.svc.db).map(planView) }),
})

const StoreCreate = v.object({
  title: v.pipe(v.string(), v.trim(), v.minLength(1), v.maxLength(120)),
  slug: v.optional(v.pipe(v.string(), v.regex(/^[a-z0-9](?:[a-z0-9-]{1,58}[a-z0-9])$/, 'Use 3 to 60 lowercase letters, digits and hyphens.'))),
  store_type: v.optional(v.picklist(STORE_TYPES), 'restaurant'),
  currency: v.optional(v.pipe(v.string(), v.regex(/^[A-Z]{3}$/, 'Use an ISO 4217 code such as USD.')), 'USD'),
  city: v.optional(v.nullable(v.pipe(v.string(), v.trim(), v.maxLength(120)))),
})

export const createStoreOp = defineOp({
  id: 'stores.create', tag: 'Restaurants', summary: 'Create a store', access: { owner: 'restaurants:write' }, scope: [],
  description: 'Counts against the plan\'s `stores` quota (403 `plan_limit_reached`); any store beyond the first needs the `multi_store` feature (403 `feature_not_in_plan`). A slug that is taken is 409 `conflict`; without one, a free slug is derived from the title.',
  input: StoreCreate, output: { ...StoreSummarySchema, required: [...StoreSummarySchema.required, 'currency', 'city'], properties: { ...StoreSummarySchema.properties, currency: str, city: nullable(str) } },
  run: async (ctx, input) => {
    const { ownerId } = ownerOf(ctx)
    const row = await ctx.svc.committer.write((db) => createStore(db, ownerId, { title: input.title, slug: input.slug, store_type: input.store_type, currency: input.currency, city: input.city ?? null }))
    const store = ctx.svc.stores.byId(row.id)!
    return { ...storeSummary(store, ctx.svc.config.siteUrl), currency: store.currency, city: store.city }
  },
})

export const accountPlanOps = [getAccountPlan, listEntitlements, listPlans, createStoreOp]
