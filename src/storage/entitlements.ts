/**
 * "May this account do X?" — features held (the `entitlements` table) and plan quotas (the plan of
 * the account's live subscription). The guards throw the API's 403 codes; call them from operations
 * and, for quotas, inside the same transaction as the insert they guard, so two concurrent creates
 * cannot both pass a limit of one (SQLite runs one write transaction at a time).
 */
import { stmt, type Db } from './db.ts'
import { EpochCache } from './auth-epoch.ts'
import { ApiError } from '../errors.ts'
import { FEATURES, QUOTA_KINDS, quotaAllows, type FeatureKey, type QuotaKind, type Quotas } from '../domain/plans.ts'
import { ENTITLING_SQL } from '../domain/subscription.ts'

export interface AccountPlan { plan_id: number; key: string; name: string; quotas: Quotas; features: FeatureKey[]; subscription_id: number | null; status: string | null }

/**
 * The plan in force: the live subscription's plan while it is trialing, active or past_due; else
 * (paused, or no live subscription because it expired or was cancelled) the default plan — the same
 * rule as the entitlement rows (src/storage/plans.ts syncEntitlements).
 */
export function accountPlan(db: Db, ownerId: number): AccountPlan {
  const row = stmt<[number], { plan_id: number; key: string; name: string; quotas: string; features: string; subscription_id: number; status: string }>(db, 
    `SELECT p.id AS plan_id, p.key, p.name, p.quotas, p.features, s.id AS subscription_id, s.status
       FROM subscriptions s JOIN plans p ON p.id = s.plan_id
      WHERE s.owner_id = ? AND s.status IN ${ENTITLING_SQL}`).get(ownerId)
    ?? stmt<[], { plan_id: number; key: string; name: string; quotas: string; features: string; subscription_id: null; status: null }>(db, 
      'SELECT id AS plan_id, key, name, quotas, features, NULL AS subscription_id, NULL AS status FROM plans WHERE is_default = 1').get()
  if (!row) throw new Error('no default plan: migration 009 and the start-up plan sync create one')
  return { ...row, quotas: JSON.parse(row.quotas) as Quotas, features: JSON.parse(row.features) as FeatureKey[] }
}

/** Does the account hold `feature` now (from any source)? */
export const hasFeature = (db: Db, ownerId: number, feature: FeatureKey): boolean =>
  stmt<[number, string], 1>(db, 'SELECT 1 FROM entitlements WHERE owner_id = ? AND feature_key = ? AND revoked_at IS NULL LIMIT 1').pluck().get(ownerId, feature) !== undefined

const held = new WeakMap<Db, EpochCache<string, true>>()

/**
 * `hasFeature` for the checks of every operation that names a feature, cached per auth epoch:
 * migration 039 moves the counter on every change of `entitlements`, so a revocation or a plan
 * change counts from the very next check. Only holding is cached; a refusal is asked again.
 */
function holdsNow(db: Db, ownerId: number, feature: FeatureKey): boolean {
  let c = held.get(db)
  if (!c) held.set(db, (c = new EpochCache<string, true>(db)))
  return c.get(`${ownerId}:${feature}`, () => (hasFeature(db, ownerId, feature) ? true : undefined)) === true
}

/** The 403 `feature_not_in_plan` naming the feature, or null when the account holds it. */
export function featureRefusal(db: Db, ownerId: number, feature: FeatureKey): ApiError | null {
  if (holdsNow(db, ownerId, feature)) return null
  const plan = accountPlan(db, ownerId)
  return new ApiError('feature_not_in_plan', `This account's plan (${plan.name}) does not include ${feature} (${FEATURES[feature]}). Upgrade the plan to use it.`,
    undefined, undefined, { feature, plan: plan.key })
}

/** Throws featureRefusal's 403 unless the account holds the feature. */
export function requireFeature(db: Db, ownerId: number, feature: FeatureKey): void {
  const refused = featureRefusal(db, ownerId, feature)
  if (refused) throw refused
}

const COUNTS: Record<QuotaKind, string> = {
  stores: 'SELECT COUNT(*) FROM stores WHERE owner_id = ? AND deleted_at IS NULL',
  menu_items: 'SELECT COUNT(*) FROM menu_items i JOIN stores s ON s.id = i.store_id WHERE s.owner_id = ?',
  staff: 'SELECT COUNT(*) FROM staff m JOIN stores s ON s.id = m.store_id WHERE s.owner_id = ?',
  drivers: 'SELECT COUNT(*) FROM drivers WHERE owner_id = ?',
  // An app's delivery endpoint (app_id set, 015_apps.sql) is not one of the developer's endpoints.
  webhook_endpoints: 'SELECT COUNT(*) FROM webhook_endpoints WHERE owner_id = ? AND app_id IS NULL',
  // Short-lived tokens of dashboard sessions (session_id set, docs/dashboard.md) are not counted.
  api_tokens: `SELECT COUNT(*) FROM owner_tokens WHERE owner_id = ? AND revoked_at IS NULL AND session_id IS NULL
                 AND (expires_at IS NULL OR expires_at > strftime('%Y-%m-%dT%H:%M:%f+00:00', 'now'))`,
}

/** How many of `kind` the account has now. */
export const quotaUsage = (db: Db, ownerId: number, kind: QuotaKind): number =>
  stmt<[number], number>(db, COUNTS[kind]).pluck().get(ownerId) ?? 0

/**
 * 403 `plan_limit_reached` naming the limit, unless the account may add `adding` more of `kind`.
 * Call inside the transaction that inserts them.
 */
export function requireQuota(db: Db, ownerId: number, kind: QuotaKind, adding = 1): void {
  const plan = accountPlan(db, ownerId)
  const used = quotaUsage(db, ownerId, kind)
  if (quotaAllows(plan.quotas, kind, used, adding)) return
  const limit = plan.quotas[kind]
  throw new ApiError('plan_limit_reached', `The ${plan.name} plan allows ${limit} ${kind.replace('_', ' ')} (${QUOTA_KINDS[kind]}); this account has ${used}. Upgrade the plan or remove some first.`,
    undefined, undefined, { limit: kind, max: limit ?? null, used, plan: plan.key })
}
