/**
 * Account CLI commands (docs/billing.md "Plans and entitlements", "Suspension"):
 *
 *   dispatch plan set --owner ID --plan KEY [--json]
 *   dispatch entitlement grant|revoke --owner ID --feature KEY [--json]   (source_type 'manual')
 *   dispatch account suspend|unsuspend --owner ID [--reason TEXT] [--json]
 *
 * Each is one transaction on the shared database; a server running on it sees the change at its
 * next request, and its open sockets re-validate within about half a second (src/ws/sessions.ts).
 */
import type { Db } from './storage/db.ts'
import { nowIso } from './storage/db.ts'
import { FEATURE_KEYS, isFeatureKey } from './domain/plans.ts'
import { grantEntitlement, planByKey, revokeEntitlement, setAccountPlan } from './storage/plans.ts'
import { suspendAccount, unsuspendAccount, accountStatus } from './storage/accounts.ts'
import { CliError } from './cli.ts'

export const ACCOUNTS_USAGE = `  dispatch plan set --owner ID --plan KEY [--json]
  dispatch entitlement grant|revoke --owner ID --feature KEY [--json]
  dispatch account suspend|unsuspend --owner ID [--reason TEXT] [--json]`

export interface AccountArgs { owner?: string; plan?: string; feature?: string; reason?: string }
type Emit = (obj: Record<string, unknown>, text: string) => string

/** The `--owner` id of an existing account (CliError otherwise); the reseller commands use it too. */
export function ownerArg(db: Db, raw: string | undefined): number {
  const id = Number(raw)
  if (!Number.isInteger(id) || id < 1) throw new CliError('--owner must be an owner id')
  if (!accountStatus(db, id)) throw new CliError(`no owner with id ${id}`)
  return id
}

/** Runs `cmd sub` if it is an account command; null when it is not one of these. */
export function accountsCommand(db: Db, cmd: string | undefined, sub: string | undefined, a: AccountArgs, emit: Emit): { code: number; out: string } | null {
  if (cmd === 'plan' && sub === 'set') {
    const ownerId = ownerArg(db, a.owner)
    if (!a.plan) throw new CliError('--plan is required')
    if (!planByKey(db, a.plan)) throw new CliError(`no plan with key "${a.plan}"`)
    const r = db.transaction(() => setAccountPlan(db, ownerId, a.plan!)).immediate()
    return { code: 0, out: emit({ owner_id: ownerId, plan: r.plan.key, subscription_id: r.subscription_id, changes: r.changes }, `owner ${ownerId} is on the ${r.plan.name} plan`) }
  }
  if (cmd === 'entitlement' && (sub === 'grant' || sub === 'revoke')) {
    const ownerId = ownerArg(db, a.owner)
    if (!a.feature || !isFeatureKey(a.feature)) throw new CliError(`--feature must be one of: ${FEATURE_KEYS.join(', ')}`)
    const feature = a.feature
    const at = nowIso()
    const changes = db.transaction(() => (sub === 'grant'
      ? [grantEntitlement(db, ownerId, feature, 'manual', null, at)].filter((c) => c !== null)
      : revokeEntitlement(db, ownerId, feature, 'manual', null, at))).immediate()
    return { code: 0, out: emit({ owner_id: ownerId, feature_key: feature, action: sub === 'grant' ? 'granted' : 'revoked', changed: changes.length > 0, changes },
      changes.length ? `${feature} ${sub === 'grant' ? 'granted to' : 'revoked from'} owner ${ownerId}` : 'nothing to change') }
  }
  if (cmd === 'account' && (sub === 'suspend' || sub === 'unsuspend')) {
    const ownerId = ownerArg(db, a.owner)
    const changed = db.transaction(() => (sub === 'suspend' ? suspendAccount(db, ownerId, a.reason ?? null) : unsuspendAccount(db, ownerId))).immediate()
    const s = accountStatus(db, ownerId)!
    return { code: 0, out: emit({ owner_id: ownerId, suspended: s.suspended_at !== null, suspended_at: s.suspended_at, reason: s.suspended_reason, changed },
      `owner ${ownerId} is ${s.suspended_at ? 'suspended' : 'active'}`) }
  }
  return null
}
