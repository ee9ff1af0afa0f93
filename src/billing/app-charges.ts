/**
 * What apps cost the installing account (api-v1 §8 "Billing models for apps", §4.10 usage;
 * docs/apps.md "Billing"). The terms are those the owner agreed to at consent (the installation's
 * `terms`), never the app's current ones. Periods are 30 days from the installation (api-v1 §8
 * "Default recurring billing period"): period k starts at installed_at + k × 30 days.
 *
 * - free: nothing, ever.
 * - recurring: the first period in the installing transaction (`chargeAtInstall`), later periods by
 *   the billing run (`appChargesTask`, one line in BILLING_TASKS). A period the wallet cannot pay is
 *   recorded `unpaid` and tried again by every later run until paid or the app is uninstalled.
 *   While the account's plan lacks `apps` (src/auth/account-gate.ts `appsRefusal`, asked in the
 *   run's transaction) nothing of its apps is charged: a period that comes due is recorded
 *   `skipped`, and unpaid ones wait. Should `apps` come back before a skipped period ends, the owner
 *   uses the app in it and it is charged then; a period that ended skipped is never charged.
 *   Unique (installation, period) rows and a wallet reference per period make a repeated or
 *   overlapping run (a restart, the CLI next to the server) charge each period once.
 * - usage: price × quantity per report (`recordUsage`), at most `cap` per period; an empty wallet
 *   refuses the report (402, nothing recorded).
 */
import type { Db } from '../storage/db.ts'
import { nowIso } from '../storage/db.ts'
import { debit } from '../storage/wallet.ts'
import { ApiError } from '../errors.ts'
import {
  activeRecurringInstallationIds, chargeFor, chargesOf, insertUsage, periodReference, setUsageEntry, upsertCharge, usageByRef,
  usageChargedInPeriod, usageReference, type UsageRow,
} from '../storage/app-billing.ts'
import { appById, installationById, type InstallationRow } from '../storage/apps.ts'
import { appsRefusal } from '../auth/account-gate.ts'
import { ensureAppEndpoint } from '../storage/app-deliveries.ts'
import type { BillingTask } from './run.ts'

export const APP_PERIOD_MS = 30 * 86_400_000


/** The start (ms) of the period containing `atMs`; before the installation, its first period. */
export function periodStartMs(installedAt: string, atMs: number): number {
  const start = Date.parse(installedAt)
  return start + Math.max(0, Math.floor((atMs - start) / APP_PERIOD_MS)) * APP_PERIOD_MS
}

/** One recurring period: charged, recorded unpaid, or skipped (the plan lacked `apps`). Already charged: nothing. */
export interface PeriodCharge { installation_id: number; owner_id: number; period_start: string; amount: number; result: 'charged' | 'unpaid' | 'skipped' }

/** A period that came due while the account lacked `apps`: recorded with its price, nothing charged. */
function skipPeriod(db: Db, inst: InstallationRow, terms: InstallationRow['terms'], startMs: number, atIso: string): PeriodCharge {
  const period_start = nowIso(startMs)
  upsertCharge(db, { installation_id: inst.id, period_start, amount: terms.price, wallet_entry_id: null, result: 'skipped', created_at: atIso })
  return { installation_id: inst.id, owner_id: inst.owner_id, period_start, amount: terms.price, result: 'skipped' }
}

function chargePeriod(db: Db, inst: InstallationRow, terms: InstallationRow['terms'], startMs: number, atIso: string): PeriodCharge | null {
  const period_start = nowIso(startMs)
  if (chargeFor(db, inst.id, period_start)?.result === 'charged') return null
  const paid = debit(db, inst.owner_id, terms.price, 'app_recurring', periodReference(inst.id, period_start), `app:${inst.app_id}`, terms.currency)
  const result = paid ? 'charged' : 'unpaid'
  upsertCharge(db, { installation_id: inst.id, period_start, amount: terms.price, wallet_entry_id: paid ? paid.entry.id : null, result, created_at: atIso })
  return { installation_id: inst.id, owner_id: inst.owner_id, period_start, amount: terms.price, result }
}

/**
 * The install-time work, in the transaction that installs (the consent op calls this): the first
 * period of a recurring app, and the app's delivery endpoint (src/storage/app-deliveries.ts) so the
 * account's events reach the app from now on. An empty wallet records the period unpaid; the install
 * itself stands (docs/apps.md "Billing"). A re-consent finds the period already charged: nothing.
 */
export function chargeAtInstall(db: Db, installation: InstallationRow, at: Date): PeriodCharge | null {
  const app = appById(db, installation.app_id)
  if (app) ensureAppEndpoint(db, app)
  const terms = installation.terms
  if (terms.pricing !== 'recurring' || terms.price <= 0) return null
  return chargePeriod(db, installation, terms, periodStartMs(installation.installed_at, at.getTime()), nowIso(at.getTime()))
}

/**
 * Every recurring period due by `at` that is not charged yet, oldest first (catch-up safe). While
 * the account lacks `apps`, a period not yet recorded is recorded `skipped` and nothing is charged.
 */
export function runAppCharges(db: Db, at: Date): PeriodCharge[] {
  const out: PeriodCharge[] = []
  const atMs = at.getTime()
  const atIso = nowIso(atMs)
  for (const id of activeRecurringInstallationIds(db)) {
    const inst = installationById(db, id)!
    const terms = inst.terms
    const admitted = appsRefusal(db, inst.owner_id) === null
    const recorded = new Map(chargesOf(db, inst.id).map((c) => [Date.parse(c.period_start), c.result]))
    for (let s = Date.parse(inst.installed_at); s <= atMs; s += APP_PERIOD_MS) {
      const result = recorded.get(s)
      if (result === 'charged') continue
      if (!admitted) {
        if (result === undefined) out.push(skipPeriod(db, inst, terms, s, atIso))
        continue
      }
      // Skipped and over: the account had no use of the app in it from its start to its end.
      if (result === 'skipped' && s + APP_PERIOD_MS <= atMs) continue
      const r = chargePeriod(db, inst, terms, s, atIso)
      if (r) out.push(r)
    }
  }
  return out
}

export const appChargesTask: BillingTask = { name: 'app_charges', run: runAppCharges }

/** What a usage report did: recorded now, or the earlier report with the same ref (nothing charged). */
export interface UsageResult { usage: UsageRow; duplicate: boolean; currency: string; capped: boolean }

/**
 * Record a usage report and charge price × quantity (rounded to minor units), limited by the cap of
 * the current period. A ref seen before for this installation returns that report and charges
 * nothing. The wallet cannot pay: 402 `insufficient_funds`, nothing recorded (the caller's
 * transaction rolls back).
 */
export function recordUsage(db: Db, inst: InstallationRow, quantity: number, ref: string | null, at: Date): UsageResult {
  const terms = inst.terms
  if (ref !== null) {
    const seen = usageByRef(db, inst.id, ref)
    if (seen) return { usage: seen, duplicate: true, currency: terms.currency, capped: false }
  }
  const period_start = nowIso(periodStartMs(inst.installed_at, at.getTime()))
  const price = terms.pricing === 'usage' ? Math.round(terms.price * quantity) : 0
  const room = terms.cap === null ? price : Math.max(0, terms.cap - usageChargedInPeriod(db, inst.id, period_start))
  const amount = Math.min(price, room)
  const usage = insertUsage(db, { installation_id: inst.id, quantity, ref, amount, period_start, created_at: nowIso(at.getTime()) })
  if (amount > 0) {
    const paid = debit(db, inst.owner_id, amount, 'app_usage', usageReference(inst.id, usage.id), `app:${inst.app_id}`, terms.currency)
    if (!paid) throw new ApiError('insufficient_funds', `The wallet cannot pay ${amount} minor units for this usage; nothing was recorded.`)
    setUsageEntry(db, usage.id, paid.entry.id)
    usage.wallet_entry_id = paid.entry.id
  }
  return { usage, duplicate: false, currency: terms.currency, capped: amount < price }
}
