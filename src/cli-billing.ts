/**
 * Billing CLI commands (docs/billing.md "The wallet", "The billing run"):
 *
 *   dispatch wallet top-up --owner ID --amount 25.00 [--reference REF] [--json]
 *     → {"owner_id", "entry_id", "amount": "25.00", "balance": "75.00", "currency": "USD", "repeated": false}
 *   dispatch billing run [--at ISO-TIME] [--json]
 *     → {"at", "actions": [{subscription_id, owner_id, kind, period_key, result, plan_key, charged, events}], "tasks": {…}}
 *
 * Both write the shared database directly, each step its own transaction; the outbox rows they add
 * (subscription.* events) are delivered by the server running on the same database.
 */
import type { Db } from './storage/db.ts'
import type { Config } from './config.ts'
import { credit } from './storage/wallet.ts'
import { ownerById } from './storage/owners.ts'
import { runBilling } from './billing/run.ts'
import { billingNow, isIsoTime } from './billing/clock.ts'
import { policyOf } from './billing/policy.ts'
import { centsToDecimalString } from './domain/money.ts'
import { CliError } from './cli.ts'

export const BILLING_USAGE = `  dispatch wallet top-up --owner ID --amount 25.00 [--reference REF] [--json]
  dispatch billing run [--at ISO-TIME] [--json]`

export interface BillingArgs { owner?: string; amount?: string; reference?: string; at?: string }
type Emit = (obj: Record<string, unknown>, text: string) => string

/** "25", "25.5", "25.00" → 2500 minor units, without floating point; null if not such a string. */
export function parseAmount(raw: string): number | null {
  const m = /^(\d{1,9})(?:\.(\d{1,2}))?$/.exec(raw.trim())
  if (!m) return null
  return Number(m[1]) * 100 + Number((m[2] ?? '').padEnd(2, '0'))
}

/** Runs `cmd sub` if it is a billing command; null when it is not one of these. */
export function billingCommand(db: Db, config: Config, cmd: string | undefined, sub: string | undefined, a: BillingArgs, emit: Emit): { code: number; out: string } | null {
  if (cmd === 'wallet' && sub === 'top-up') {
    const ownerId = Number(a.owner)
    if (!Number.isInteger(ownerId) || ownerId < 1) throw new CliError('--owner must be an owner id')
    if (!ownerById(db, ownerId)) throw new CliError(`no owner with id ${ownerId}`)
    const amount = a.amount === undefined ? null : parseAmount(a.amount)
    if (amount === null || amount <= 0) throw new CliError('--amount must be a positive decimal with at most two decimals, e.g. 25.00')
    // A repeated --reference is a no-op (the same entry comes back, `repeated: true`): safe to retry.
    const r = db.transaction(() => credit(db, ownerId, amount, 'top_up', a.reference ?? null, 'cli')).immediate()
    const out = { owner_id: ownerId, entry_id: r.entry.id, amount: centsToDecimalString(r.entry.amount), balance: centsToDecimalString(r.balance), currency: r.entry.currency, repeated: r.repeated }
    return { code: 0, out: emit(out, `owner ${ownerId}: +${out.amount} ${out.currency}, balance ${out.balance}${r.repeated ? ' (already recorded)' : ''}`) }
  }
  if (cmd === 'billing' && sub === 'run') {
    if (a.at !== undefined && !isIsoTime(a.at)) throw new CliError(`--at must be an ISO 8601 time with a zone, e.g. 2027-01-01T00:00:00Z; got "${a.at}"`)
    const at = a.at !== undefined ? new Date(Date.parse(a.at)) : billingNow(config)
    const report = runBilling(db, at, policyOf(config))
    const lines = report.actions.map((x) => `subscription ${x.subscription_id} (owner ${x.owner_id}): ${x.kind} → ${x.result}${x.charged ? ` charged ${centsToDecimalString(x.charged)}` : ''}`)
    const taskLines = Object.entries(report.tasks).map(([name, done]) => `${name}: ${done.length}`)
    return { code: 0, out: emit({ ...report }, [`billing run as of ${report.at}: ${report.actions.length} action(s)`, ...lines, ...taskLines].join('\n')) }
  }
  return null
}
