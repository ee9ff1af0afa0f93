/**
 * Plans and the entitlement rows they give (docs/billing.md "Plans and entitlements").
 *
 * - syncPlatformPlans(db): keep the `plans` rows of the platform catalog (src/domain/plans.ts) in
 *   step with the code at start-up; re-syncs the accounts of a plan whose features changed.
 * - syncEntitlements(db, ownerId, at?): the plan-sourced rows of one account follow its live
 *   subscription: the plan's features (source 'subscription', the subscription id) while it is
 *   trialing/active/past_due, else the default plan's (source 'plan', the default plan id).
 * - setAccountPlan(db, ownerId, planKey, at?): put an account on a plan at once (seeds, CLI, tests).
 * - grantEntitlement / revokeEntitlement: add-ons, apps and hand grants.
 *
 * Every grant and revocation appends one `entitlement.changed` outbox event with exactly the
 * spec's data (api-v1 §6): {action, feature_key, source_type, source_id, user_id, occurred_at}.
 * Call these inside a transaction (the committer's write fn or db.transaction): the rows and their
 * events commit together.
 */
import { nowIso, stmt, type Db } from './db.ts'
import { appendEvent, type OutboxEvent } from './outbox.ts'
import { ApiError } from '../errors.ts'
import { PLATFORM_PLANS, type FeatureKey } from '../domain/plans.ts'
import { addDays, ENTITLING_SQL, ENTITLING_STATUSES } from '../domain/subscription.ts'

export type EntitlementSource = 'subscription' | 'plan' | 'addon' | 'app' | 'manual'

export interface PlanRow {
  id: number; key: string; name: string; reseller_id: number | null; base_plan_id: number | null
  price: number; wholesale_price: number; currency: string; period_days: number; trial_days: number
  features: FeatureKey[]; quotas: Record<string, number>; is_default: boolean; archived_at: string | null; created_at: string
}
interface RawPlan extends Omit<PlanRow, 'features' | 'quotas' | 'is_default'> { features: string; quotas: string; is_default: number }

const toPlan = (r: RawPlan): PlanRow => ({ ...r, features: JSON.parse(r.features) as FeatureKey[], quotas: JSON.parse(r.quotas) as Record<string, number>, is_default: r.is_default === 1 })

export const planByKey = (db: Db, key: string): PlanRow | undefined => {
  const r = stmt<[string], RawPlan>(db, 'SELECT * FROM plans WHERE key = ?').get(key)
  return r && toPlan(r)
}
export const planById = (db: Db, id: number): PlanRow | undefined => {
  const r = stmt<[number], RawPlan>(db, 'SELECT * FROM plans WHERE id = ?').get(id)
  return r && toPlan(r)
}
export const defaultPlan = (db: Db): PlanRow => {
  const r = stmt<[], RawPlan>(db, 'SELECT * FROM plans WHERE is_default = 1').get()
  if (!r) throw new Error('no default plan: migration 009 and syncPlatformPlans create one')
  return toPlan(r)
}
/** The platform's plans (reseller_id NULL, not archived), cheapest first. */
export const platformPlans = (db: Db): PlanRow[] =>
  stmt<[], RawPlan>(db, 'SELECT * FROM plans WHERE reseller_id IS NULL AND archived_at IS NULL ORDER BY price, id').all().map(toPlan)

/**
 * Upsert PLATFORM_PLANS by key; idempotent. When a plan's features change (or on the first run after
 * migration 009, whose placeholder default plan has none), the accounts it applies to are re-synced.
 */
export function syncPlatformPlans(db: Db): { changed: string[] } {
  return db.transaction(() => {
    const now = nowIso()
    const changed: string[] = []
    let defaultChanged = false
    // The default flag moves first: the partial unique index allows one default row at a time.
    const def = PLATFORM_PLANS.find((p) => p.is_default)
    if (def) stmt(db, "UPDATE plans SET is_default = 0 WHERE is_default = 1 AND key <> ?").run(def.key)
    for (const p of PLATFORM_PLANS) {
      const before = stmt<[string], { id: number; features: string; quotas: string; is_default: number }>(db, 'SELECT id, features, quotas, is_default FROM plans WHERE key = ?').get(p.key)
      const features = JSON.stringify(p.features)
      const quotas = JSON.stringify(p.quotas)
      const isDefault = p.is_default ? 1 : 0
      stmt(db, `INSERT INTO plans (key, name, price, wholesale_price, currency, period_days, trial_days, features, quotas, is_default, created_at)
        VALUES (@key, @name, @price, @wholesale_price, @currency, @period_days, @trial_days, @features, @quotas, @is_default, @now)
        ON CONFLICT(key) DO UPDATE SET name = excluded.name, price = excluded.price, wholesale_price = excluded.wholesale_price,
          currency = excluded.currency, period_days = excluded.period_days, trial_days = excluded.trial_days,
          features = excluded.features, quotas = excluded.quotas, is_default = excluded.is_default, archived_at = NULL`)
        .run({ key: p.key, name: p.name, price: p.price, wholesale_price: p.wholesale_price, currency: p.currency, period_days: p.period_days, trial_days: p.trial_days, features, quotas, is_default: isDefault, now })
      if (!before || before.features !== features || before.is_default !== isDefault) {
        changed.push(p.key)
        if (p.is_default) defaultChanged = true
      }
    }
    if (changed.length === 0) return { changed }
    // Accounts whose entitlements may differ now: every account when the default plan changed
    // (it is the floor of paused and ended accounts), else those living on a changed plan.
    const owners = defaultChanged
      ? stmt<[], number>(db, 'SELECT id FROM owners').pluck().all()
      : stmt<string[], number>(db, `SELECT DISTINCT s.owner_id FROM subscriptions s JOIN plans p ON p.id = s.plan_id
          WHERE s.status IN ${ENTITLING_SQL} AND p.key IN (${changed.map(() => '?').join(', ')})`).pluck().all(...changed)
    for (const ownerId of owners) syncEntitlements(db, ownerId, now)
    return { changed }
  })()
}

interface LiveSub { id: number; plan_id: number; status: string }
/** The columns of the account's live subscription this module needs (the full row: src/storage/subscriptions.ts, which imports this module). */
const liveSub = (db: Db, ownerId: number): LiveSub | undefined =>
  stmt<[number], LiveSub>(db, "SELECT id, plan_id, status FROM subscriptions WHERE owner_id = ? AND status NOT IN ('cancelled', 'expired')").get(ownerId)

export interface EntitlementChange { action: 'granted' | 'revoked'; feature_key: string; source_type: EntitlementSource; source_id: number | null; user_id: number; occurred_at: string }

/** Append the change's event; `published` (when given) collects it for the caller to publish after the commit. */
function emit(db: Db, change: EntitlementChange, published?: OutboxEvent[]): EntitlementChange {
  // Exactly the spec's data (api-v1 §6 entitlement.changed), nothing more.
  const { action, feature_key, source_type, source_id, user_id, occurred_at } = change
  const event = appendEvent(db, { ownerId: user_id, storeId: null, event: 'entitlement.changed', data: { action, feature_key, source_type, source_id, user_id, occurred_at } })
  published?.push(event)
  return change
}

/**
 * Recompute the plan-sourced entitlements of one account from its live subscription; insert and
 * revoke the difference, one `entitlement.changed` per change (revocations first, so a consumer that
 * applies events in order ends on the granted state when only the source changed). The server's
 * callers pass `published` and publish it after the commit, so in-process reactions (open sockets
 * re-checked, src/ws/realtime.ts) hear of the change at once.
 */
export function syncEntitlements(db: Db, ownerId: number, at: string = nowIso(), published?: OutboxEvent[]): EntitlementChange[] {
  const sub = liveSub(db, ownerId)
  const entitling = sub && (ENTITLING_STATUSES as readonly string[]).includes(sub.status)
  const plan = entitling ? planById(db, sub.plan_id) : defaultPlan(db)
  if (!plan) throw new Error(`subscription ${sub?.id} names a missing plan`)
  const sourceType: EntitlementSource = entitling ? 'subscription' : 'plan'
  const sourceId = entitling ? sub.id : plan.id
  const want = new Set<string>(plan.features)
  const rows = stmt<[number], { id: number; feature_key: string; source_type: EntitlementSource; source_id: number | null }>(db, 
    "SELECT id, feature_key, source_type, source_id FROM entitlements WHERE owner_id = ? AND revoked_at IS NULL AND source_type IN ('subscription', 'plan') ORDER BY id").all(ownerId)
  const changes: EntitlementChange[] = []
  const kept = new Set<string>()
  const revoke = stmt(db, 'UPDATE entitlements SET revoked_at = ? WHERE id = ?')
  for (const r of rows) {
    if (r.source_type === sourceType && r.source_id === sourceId && want.has(r.feature_key) && !kept.has(r.feature_key)) { kept.add(r.feature_key); continue }
    revoke.run(at, r.id)
    changes.push(emit(db, { action: 'revoked', feature_key: r.feature_key, source_type: r.source_type, source_id: r.source_id, user_id: ownerId, occurred_at: at }, published))
  }
  const insert = stmt(db, 'INSERT INTO entitlements (owner_id, feature_key, source_type, source_id, granted_at) VALUES (?, ?, ?, ?, ?)')
  for (const f of plan.features) {
    if (kept.has(f)) continue
    insert.run(ownerId, f, sourceType, sourceId, at)
    changes.push(emit(db, { action: 'granted', feature_key: f, source_type: sourceType, source_id: sourceId, user_id: ownerId, occurred_at: at }, published))
  }
  return changes
}

/**
 * Put an account on `planKey` at once: the live subscription (if any, on another plan) is ended
 * ('cancelled', ended_at) and a new active one starts a fresh period. Idempotent when the account is
 * already on that plan with an entitling status. For seeds, the CLI and fixtures; the customer-facing
 * lifecycle (proration, downgrades at period end) is the subscriptions module's.
 */
export function setAccountPlan(db: Db, ownerId: number, planKey: string, at: string = nowIso()): { subscription_id: number; plan: PlanRow; changes: EntitlementChange[] } {
  return db.transaction(() => {
    const plan = planByKey(db, planKey)
    if (!plan || plan.archived_at) throw new ApiError('not_found', `No plan with key "${planKey}".`)
    const sub = liveSub(db, ownerId)
    if (sub && sub.plan_id === plan.id && (ENTITLING_STATUSES as readonly string[]).includes(sub.status)) {
      return { subscription_id: sub.id, plan, changes: syncEntitlements(db, ownerId, at) }
    }
    if (sub) stmt(db, "UPDATE subscriptions SET status = 'cancelled', ended_at = ?, updated_at = ? WHERE id = ?").run(at, at, sub.id)
    const id = Number(stmt(db, `INSERT INTO subscriptions (owner_id, plan_id, status, current_period_start, current_period_end, created_at, updated_at)
      VALUES (?, ?, 'active', ?, ?, ?, ?)`).run(ownerId, plan.id, at, addDays(at, plan.period_days), at, at).lastInsertRowid)
    return { subscription_id: id, plan, changes: syncEntitlements(db, ownerId, at) }
  })()
}

/** Grant `feature` from a source (add-on, app, manual); a no-op (null) if that exact grant is live. */
export function grantEntitlement(db: Db, ownerId: number, feature: FeatureKey, sourceType: EntitlementSource, sourceId: number | null = null, at: string = nowIso()): EntitlementChange | null {
  const live = stmt<[number, string, string, number | null], 1>(db, 
    'SELECT 1 FROM entitlements WHERE owner_id = ? AND feature_key = ? AND source_type = ? AND source_id IS ? AND revoked_at IS NULL').pluck().get(ownerId, feature, sourceType, sourceId)
  if (live) return null
  stmt(db, 'INSERT INTO entitlements (owner_id, feature_key, source_type, source_id, granted_at) VALUES (?, ?, ?, ?, ?)').run(ownerId, feature, sourceType, sourceId, at)
  return emit(db, { action: 'granted', feature_key: feature, source_type: sourceType, source_id: sourceId, user_id: ownerId, occurred_at: at })
}

/** Revoke the live grants of `feature` from that source; one event per revoked row ([] if none). */
export function revokeEntitlement(db: Db, ownerId: number, feature: FeatureKey, sourceType: EntitlementSource, sourceId: number | null = null, at: string = nowIso()): EntitlementChange[] {
  const ids = stmt<[number, string, string, number | null], number>(db, 
    'SELECT id FROM entitlements WHERE owner_id = ? AND feature_key = ? AND source_type = ? AND source_id IS ? AND revoked_at IS NULL').pluck().all(ownerId, feature, sourceType, sourceId)
  const revoke = stmt(db, 'UPDATE entitlements SET revoked_at = ? WHERE id = ?')
  return ids.map((id) => {
    revoke.run(at, id)
    return emit(db, { action: 'revoked', feature_key: feature, source_type: sourceType, source_id: sourceId, user_id: ownerId, occurred_at: at })
  })
}

export interface EntitlementView { feature_key: string; source_type: EntitlementSource; source_id: number | null; granted_at: string }
/** The features an account holds now, each with its source. */
export const liveEntitlements = (db: Db, ownerId: number): EntitlementView[] =>
  stmt<[number], EntitlementView>(db, 'SELECT feature_key, source_type, source_id, granted_at FROM entitlements WHERE owner_id = ? AND revoked_at IS NULL ORDER BY feature_key, id').all(ownerId)
