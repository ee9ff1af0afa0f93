/**
 * App charges in SQLite (015_apps.sql `app_usage`, `app_charges`; docs/apps.md "Billing"): usage
 * reports and recurring period charges of installations, and what a developer earned from them.
 * Every charge is a wallet entry whose reference names the installation (`app_installation:ID:…`),
 * so the wallet's own reference check makes a repeated charge a no-op. Writers run inside a
 * transaction (the committer's, or the billing run's).
 */
import { stmt, type Db } from './db.ts'

export interface UsageRow {
  id: number
  installation_id: number
  quantity: number
  ref: string | null
  amount: number
  wallet_entry_id: number | null
  period_start: string
  created_at: string
}

export interface ChargeRow {
  id: number
  installation_id: number
  period_start: string
  amount: number
  wallet_entry_id: number | null
  /** `skipped`: the period came due while the account's plan lacked `apps` (nothing charged). */
  result: 'charged' | 'unpaid' | 'skipped'
  created_at: string
}

/** The wallet reference of a recurring period's charge and of a usage report. */
export const periodReference = (installationId: number, periodStart: string): string => `app_installation:${installationId}:period:${periodStart}`
export const usageReference = (installationId: number, usageId: number): string => `app_installation:${installationId}:usage:${usageId}`

export const usageByRef = (db: Db, installationId: number, ref: string): UsageRow | undefined =>
  stmt<[number, string], UsageRow>(db, 'SELECT * FROM app_usage WHERE installation_id = ? AND ref = ?').get(installationId, ref)

/** Minor units charged for usage in one period (the cap's denominator). */
export const usageChargedInPeriod = (db: Db, installationId: number, periodStart: string): number =>
  stmt<[number, string], number>(db, 'SELECT COALESCE(SUM(amount), 0) FROM app_usage WHERE installation_id = ? AND period_start = ?').pluck().get(installationId, periodStart) ?? 0

export function insertUsage(db: Db, u: Omit<UsageRow, 'id' | 'wallet_entry_id'>): UsageRow {
  const r = stmt(db, 'INSERT INTO app_usage (installation_id, quantity, ref, amount, wallet_entry_id, period_start, created_at) VALUES (?, ?, ?, ?, NULL, ?, ?)')
    .run(u.installation_id, u.quantity, u.ref, u.amount, u.period_start, u.created_at)
  return { ...u, id: Number(r.lastInsertRowid), wallet_entry_id: null }
}

export function setUsageEntry(db: Db, usageId: number, walletEntryId: number): void {
  stmt(db, 'UPDATE app_usage SET wallet_entry_id = ? WHERE id = ?').run(walletEntryId, usageId)
}

export const chargeFor = (db: Db, installationId: number, periodStart: string): ChargeRow | undefined =>
  stmt<[number, string], ChargeRow>(db, 'SELECT * FROM app_charges WHERE installation_id = ? AND period_start = ?').get(installationId, periodStart)

/**
 * Record a period's charge (or its skip), or settle an `unpaid` or `skipped` one as `charged` or
 * `unpaid` (a later run charged it). A charged period never changes, and nothing becomes `skipped`
 * after the fact.
 */
export function upsertCharge(db: Db, c: Omit<ChargeRow, 'id'>): void {
  stmt(db, `INSERT INTO app_charges (installation_id, period_start, amount, wallet_entry_id, result, created_at) VALUES (?, ?, ?, ?, ?, ?)
    ON CONFLICT (installation_id, period_start) DO UPDATE SET wallet_entry_id = excluded.wallet_entry_id, result = excluded.result
    WHERE app_charges.result IN ('unpaid', 'skipped') AND excluded.result <> 'skipped'`)
    .run(c.installation_id, c.period_start, c.amount, c.wallet_entry_id, c.result, c.created_at)
}

/** Active installations whose agreed terms are recurring with a price (the billing run's work list). */
export const activeRecurringInstallationIds = (db: Db): number[] =>
  stmt<[], number>(db, `SELECT id FROM app_installations
    WHERE status = 'active' AND json_extract(terms, '$.pricing') = 'recurring' AND json_extract(terms, '$.price') > 0 ORDER BY id`).pluck().all()

export const chargesOf = (db: Db, installationId: number): ChargeRow[] =>
  stmt<[number], ChargeRow>(db, 'SELECT * FROM app_charges WHERE installation_id = ? ORDER BY period_start').all(installationId)

/** A developer's earnings from one app: what installations paid, by kind (minor units). */
export interface Earnings { recurring: number; usage: number; unpaid_periods: number; installations_active: number; installations_total: number }

export function appEarnings(db: Db, appId: number): Earnings {
  const one = (sql: string) => stmt<[number], number>(db, sql).pluck().get(appId) ?? 0
  return {
    recurring: one(`SELECT COALESCE(SUM(c.amount), 0) FROM app_charges c JOIN app_installations i ON i.id = c.installation_id WHERE i.app_id = ? AND c.result = 'charged'`),
    usage: one('SELECT COALESCE(SUM(u.amount), 0) FROM app_usage u JOIN app_installations i ON i.id = u.installation_id WHERE i.app_id = ? AND u.wallet_entry_id IS NOT NULL'),
    unpaid_periods: one(`SELECT COUNT(*) FROM app_charges c JOIN app_installations i ON i.id = c.installation_id WHERE i.app_id = ? AND c.result = 'unpaid'`),
    installations_active: one("SELECT COUNT(*) FROM app_installations WHERE app_id = ? AND status = 'active'"),
    installations_total: one('SELECT COUNT(*) FROM app_installations WHERE app_id = ?'),
  }
}
