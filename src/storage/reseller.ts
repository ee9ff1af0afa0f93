/**
 * The reseller repository (docs/billing.md "Resellers", api-v1 §4.8): the accounts a reseller
 * manages, its own plans, its customers' subscriptions, the invoices in both directions, and the
 * aggregates of its stats. The rules (tiers, invoice math, MRR, churn) are pure, in
 * src/domain/reseller.ts; every query here is limited to one reseller's customers.
 *
 * A customer is "active" in an instant when a subscription of it on one of its reseller's plans
 * covers that instant, trial excluded: from COALESCE(trial_end, created_at) until ended_at (open
 * while the subscription is live). Paused and past-due subscriptions still count: the account keeps
 * its place and the platform keeps serving it. Writers run inside a transaction.
 */
import { nowIso, stmt, type Db } from './db.ts'
import { ApiError } from '../errors.ts'
import { completePeriods, invoiceNumber, invoiceTotals, type InvoiceLine, type Period } from '../domain/reseller.ts'
import type { FeatureKey } from '../domain/plans.ts'
import { addDays } from '../domain/subscription.ts'
import { setAccountPlan } from './plans.ts'

/** A reseller account, as the policy resolves it for the `reseller` scope. */
export interface ResellerRow { id: number; name: string; email: string; reseller_since: string | null }
/** An account a reseller manages. */
export interface ManagedAccountRow { id: number; name: string; email: string; reseller_id: number; suspended_at: string | null; suspended_reason: string | null; created_at: string }
/** A subscription of one of a reseller's customers. */
export interface ManagedSubscriptionRow {
  id: number; owner_id: number; plan_id: number; status: string; current_period_start: string; current_period_end: string
  trial_end: string | null; cancel_at_period_end: number; ended_at: string | null; created_at: string
}

const SUB_COLUMNS = 's.id, s.owner_id, s.plan_id, s.status, s.current_period_start, s.current_period_end, s.trial_end, s.cancel_at_period_end, s.ended_at, s.created_at'

/** Lookups the policy uses to resolve the reseller scopes (src/auth/policy.ts). */
export function createResellerQueries(db: Db) {
  const reseller = stmt<[number], ResellerRow>(db, "SELECT id, name, email, reseller_since FROM owners WHERE id = ? AND role = 'reseller'")
  const account = stmt<[number, number], ManagedAccountRow>(db, 
    'SELECT id, name, email, reseller_id, suspended_at, suspended_reason, created_at FROM owners WHERE id = ? AND reseller_id = ?')
  const subscription = stmt<[number, number], ManagedSubscriptionRow>(db, 
    `SELECT ${SUB_COLUMNS} FROM subscriptions s JOIN owners o ON o.id = s.owner_id WHERE s.id = ? AND o.reseller_id = ?`)
  return {
    /** The account if it has the reseller role. */
    reseller: (ownerId: number): ResellerRow | undefined => reseller.get(ownerId),
    /** Account `id` if reseller `resellerId` manages it. */
    account: (id: number, resellerId: number): ManagedAccountRow | undefined => account.get(id, resellerId),
    /** Subscription `id` if it belongs to an account reseller `resellerId` manages. */
    subscription: (id: number, resellerId: number): ManagedSubscriptionRow | undefined => subscription.get(id, resellerId),
  }
}
export type ResellerQueries = ReturnType<typeof createResellerQueries>

// ---------------------------------------------------------------------------------------------
// The reseller role

/** Give an account the reseller role; its invoice periods start now (kept if it was one already). */
export function grantReseller(db: Db, ownerId: number, at: string = nowIso()): ResellerRow {
  const r = stmt(db, "UPDATE owners SET role = 'reseller', reseller_since = COALESCE(reseller_since, ?) WHERE id = ?").run(at, ownerId)
  if (r.changes === 0) throw new ApiError('not_found', `No account with id ${ownerId}.`)
  return createResellerQueries(db).reseller(ownerId)!
}

/** A new account (owner row; the start-up trigger puts it on the default plan). */
export function insertAccount(db: Db, fields: { name: string; email: string; resellerId?: number | null }, at: string = nowIso()): number {
  return Number(stmt(db, 'INSERT INTO owners (name, email, reseller_id, created_at) VALUES (?, ?, ?, ?)')
    .run(fields.name, fields.email, fields.resellerId ?? null, at).lastInsertRowid)
}

// ---------------------------------------------------------------------------------------------
// Customers

export interface CustomerListRow {
  id: number; name: string; email: string; created_at: string; suspended_at: string | null
  plan_id: number | null; plan_key: string | null; plan_name: string | null; subscription_id: number | null; subscription_status: string | null
  wallet_balance: number; store_count: number
}

/** A managed account with its live plan, subscription, wallet balance and store count (list and detail). */
const CUSTOMER_SELECT = `
    SELECT o.id, o.name, o.email, o.created_at, o.suspended_at,
           p.id AS plan_id, p.key AS plan_key, p.name AS plan_name, s.id AS subscription_id, s.status AS subscription_status,
           (SELECT COALESCE(SUM(amount), 0) FROM wallet_entries w WHERE w.owner_id = o.id) AS wallet_balance,
           (SELECT COUNT(*) FROM stores st WHERE st.owner_id = o.id) AS store_count
      FROM owners o
      LEFT JOIN subscriptions s ON s.owner_id = o.id AND s.status NOT IN ('cancelled', 'expired')
      LEFT JOIN plans p ON p.id = s.plan_id`

/** One page of the accounts a reseller manages, oldest first, with plan, status and wallet balance. */
export function customersPage(db: Db, resellerId: number, page: number, perPage: number): { rows: CustomerListRow[]; total: number } {
  const total = stmt<[number], number>(db, 'SELECT COUNT(*) FROM owners WHERE reseller_id = ?').pluck().get(resellerId) ?? 0
  const rows = stmt<[number, number, number], CustomerListRow>(db, `${CUSTOMER_SELECT}
     WHERE o.reseller_id = ?
     ORDER BY o.id LIMIT ? OFFSET ?`).all(resellerId, perPage, (page - 1) * perPage)
  return { rows, total }
}

/** How many accounts a reseller manages, and how many of them are suspended. */
export const customerCounts = (db: Db, resellerId: number): { total: number; suspended: number } =>
  stmt<[number], { total: number; suspended: number }>(db, 
    'SELECT COUNT(*) AS total, COUNT(suspended_at) AS suspended FROM owners WHERE reseller_id = ?').get(resellerId)!

/**
 * Put a new customer account on one of its reseller's plans: the plan at once (src/storage/plans.ts
 * setAccountPlan ends the default-plan subscription every account starts with), trialing until
 * `trial_days` from now when the plan has a trial. The first period is provisioned by the reseller;
 * the billing run charges the renewals to the customer's wallet.
 */
export function startCustomerPlan(db: Db, ownerId: number, planKey: string, at: string = nowIso()): number {
  const { subscription_id: id, plan } = setAccountPlan(db, ownerId, planKey, at)
  if (plan.trial_days > 0) {
    const end = addDays(at, plan.trial_days)
    stmt(db, "UPDATE subscriptions SET status = 'trialing', trial_end = ?, current_period_end = ?, updated_at = ? WHERE id = ?").run(end, end, at, id)
  }
  return id
}

/** One customer in the same shape as the list. */
export function customerRow(db: Db, resellerId: number, customerId: number): CustomerListRow | undefined {
  return stmt<[number, number], CustomerListRow>(db, `${CUSTOMER_SELECT}
     WHERE o.reseller_id = ? AND o.id = ?`).get(resellerId, customerId)
}

// ---------------------------------------------------------------------------------------------
// Plans

export interface ResellerPlanRow {
  id: number; key: string; name: string; reseller_id: number; base_plan_id: number; base_plan_key: string; base_wholesale_price: number
  price: number; currency: string; period_days: number; trial_days: number; features: FeatureKey[]; quotas: Record<string, number>
  archived_at: string | null; created_at: string
}
type RawResellerPlan = Omit<ResellerPlanRow, 'features' | 'quotas'> & { features: string; quotas: string }
const toResellerPlan = (r: RawResellerPlan): ResellerPlanRow => ({ ...r, features: JSON.parse(r.features) as FeatureKey[], quotas: JSON.parse(r.quotas) as Record<string, number> })
const RESELLER_PLAN_SQL = `SELECT p.id, p.key, p.name, p.reseller_id, p.base_plan_id, b.key AS base_plan_key, b.wholesale_price AS base_wholesale_price,
    p.price, p.currency, p.period_days, p.trial_days, p.features, p.quotas, p.archived_at, p.created_at
  FROM plans p JOIN plans b ON b.id = p.base_plan_id`

/** A reseller's own plans, oldest first. */
export const resellerPlans = (db: Db, resellerId: number): ResellerPlanRow[] =>
  stmt<[number], RawResellerPlan>(db, `${RESELLER_PLAN_SQL} WHERE p.reseller_id = ? ORDER BY p.id`).all(resellerId).map(toResellerPlan)

/** One of reseller `resellerId`'s plans, or undefined (another reseller's plan reads as none). */
export function resellerPlan(db: Db, resellerId: number, planId: number): ResellerPlanRow | undefined {
  const r = stmt<[number, number], RawResellerPlan>(db, `${RESELLER_PLAN_SQL} WHERE p.id = ? AND p.reseller_id = ?`).get(planId, resellerId)
  return r && toResellerPlan(r)
}

export interface NewResellerPlan { key: string; name: string; basePlanId: number; price: number; currency: string; periodDays: number; trialDays: number; features: FeatureKey[]; quotas: Record<string, number> }

/** Insert a reseller plan (the op checked the price floor and the feature subset). */
export function insertResellerPlan(db: Db, resellerId: number, p: NewResellerPlan, at: string = nowIso()): ResellerPlanRow {
  const id = Number(stmt(db, `INSERT INTO plans (key, name, reseller_id, base_plan_id, price, wholesale_price, currency, period_days, trial_days, features, quotas, created_at)
    VALUES (?, ?, ?, ?, ?, 0, ?, ?, ?, ?, ?, ?)`)
    .run(p.key, p.name, resellerId, p.basePlanId, p.price, p.currency, p.periodDays, p.trialDays, JSON.stringify(p.features), JSON.stringify(p.quotas), at).lastInsertRowid)
  return resellerPlan(db, resellerId, id)!
}

// ---------------------------------------------------------------------------------------------
// Subscriptions

export interface SubscriptionListRow extends ManagedSubscriptionRow { plan_key: string; plan_name: string; plan_price: number; currency: string }

/** One page of the subscriptions of a reseller's customers, newest first; `status` filters. */
export function subscriptionsPage(db: Db, resellerId: number, page: number, perPage: number, status?: string): { rows: SubscriptionListRow[]; total: number } {
  const filter = status ? 'AND s.status = ?' : ''
  const args: unknown[] = status ? [resellerId, status] : [resellerId]
  const total = stmt<unknown[], number>(db, `SELECT COUNT(*) FROM subscriptions s JOIN owners o ON o.id = s.owner_id WHERE o.reseller_id = ? ${filter}`).pluck().get(...args) ?? 0
  const rows = stmt<unknown[], SubscriptionListRow>(db, `
    SELECT ${SUB_COLUMNS}, p.key AS plan_key, p.name AS plan_name, p.price AS plan_price, p.currency
      FROM subscriptions s JOIN owners o ON o.id = s.owner_id JOIN plans p ON p.id = s.plan_id
     WHERE o.reseller_id = ? ${filter}
     ORDER BY s.id DESC LIMIT ? OFFSET ?`).all(...args, perPage, (page - 1) * perPage)
  return { rows, total }
}

export function subscriptionRow(db: Db, resellerId: number, id: number): SubscriptionListRow | undefined {
  return stmt<[number, number], SubscriptionListRow>(db, `
    SELECT ${SUB_COLUMNS}, p.key AS plan_key, p.name AS plan_name, p.price AS plan_price, p.currency
      FROM subscriptions s JOIN owners o ON o.id = s.owner_id JOIN plans p ON p.id = s.plan_id
     WHERE s.id = ? AND o.reseller_id = ?`).get(id, resellerId)
}

// ---------------------------------------------------------------------------------------------
// Activity: who is active when (invoices, tier, stats)

const ACTIVE_AT = `COALESCE(s.trial_end, s.created_at) <= @at AND (s.ended_at IS NULL OR s.ended_at > @at)`

/** How many of a reseller's customers are active at `at` (ISO), on its own plans. */
export const activeCustomerCount = (db: Db, resellerId: number, at: string): number =>
  stmt<[{ r: number; at: string }], number>(db, `
    SELECT COUNT(DISTINCT s.owner_id) FROM subscriptions s JOIN owners o ON o.id = s.owner_id JOIN plans p ON p.id = s.plan_id
     WHERE o.reseller_id = @r AND p.reseller_id = @r AND ${ACTIVE_AT}`).pluck().get({ r: resellerId, at }) ?? 0

/** The ids of the customers active at `at`. */
const activeCustomerIds = (db: Db, resellerId: number, at: string): number[] =>
  stmt<[{ r: number; at: string }], number>(db, `
    SELECT DISTINCT s.owner_id FROM subscriptions s JOIN owners o ON o.id = s.owner_id JOIN plans p ON p.id = s.plan_id
     WHERE o.reseller_id = @r AND p.reseller_id = @r AND ${ACTIVE_AT}`).pluck().all({ r: resellerId, at })

/** The live subscriptions (trialing excluded) on the reseller's plans, with retail price and period, for MRR. */
export const recurringSubscriptions = (db: Db, resellerId: number): Array<{ price: number; period_days: number }> =>
  stmt<[{ r: number }], { price: number; period_days: number }>(db, `
    SELECT p.price, p.period_days FROM subscriptions s JOIN owners o ON o.id = s.owner_id JOIN plans p ON p.id = s.plan_id
     WHERE o.reseller_id = @r AND p.reseller_id = @r AND s.status IN ('active', 'past_due')`).all({ r: resellerId })

/** Customers active at `from` and no longer active at `to`. */
export function churnCounts(db: Db, resellerId: number, from: string, to: string): { active_at_start: number; lost: number; active_at_end: number } {
  const start = activeCustomerIds(db, resellerId, from)
  const end = new Set(activeCustomerIds(db, resellerId, to))
  return { active_at_start: start.length, lost: start.filter((id) => !end.has(id)).length, active_at_end: end.size }
}

/** Orders across all the reseller's customers' stores since `from`: counts and totals only, no personal data. */
export function orderTotals(db: Db, resellerId: number, from: string): { count: number; total: number; by_currency: Array<{ currency: string; count: number; total: number }> } {
  const rows = stmt<[number, string], { currency: string; count: number; total: number }>(db, `
    SELECT st.currency, COUNT(*) AS count, COALESCE(SUM(ord.total), 0) AS total
      FROM orders ord JOIN stores st ON st.id = ord.store_id JOIN owners o ON o.id = st.owner_id
     WHERE o.reseller_id = ? AND ord.created_at >= ? AND ord.status <> 'cancelled'
     GROUP BY st.currency ORDER BY st.currency`).all(resellerId, from)
  return { count: rows.reduce((n, r) => n + r.count, 0), total: rows.reduce((n, r) => n + r.total, 0), by_currency: rows }
}

// ---------------------------------------------------------------------------------------------
// Invoices

/**
 * The next number of a series, counted in the same transaction as the invoice that takes it
 * (migration 011): if that transaction rolls back, so does the counter, and no number is skipped.
 */
export function nextInvoiceSeq(db: Db, series: string): number {
  if (!db.inTransaction) throw new Error('nextInvoiceSeq must run inside the transaction that inserts the invoice')
  return stmt<[string], number>(db, `INSERT INTO invoice_counters (series, last_number) VALUES (?, 1)
    ON CONFLICT(series) DO UPDATE SET last_number = last_number + 1 RETURNING last_number`).pluck().get(series)!
}

export interface ResellerInvoiceRow {
  id: number; reseller_id: number; seq: number; number: string; period_start: string; period_end: string; currency: string
  active_customers: number; tier: string; discount_percent: number; lines: InvoiceLine[]; subtotal: number; discount: number; total: number; issued_at: string
}
type RawInvoice = Omit<ResellerInvoiceRow, 'lines'> & { lines: string }

/** The platform's invoice lines for one reseller and period: one per customer active during it. */
export function invoiceLines(db: Db, resellerId: number, period: { start: string; end: string }): InvoiceLine[] {
  // Overlap of [COALESCE(trial_end, created_at), ended_at) with [start, end); a customer with several
  // overlapping subscriptions (a plan change) is one line, on the latest of them.
  const rows = stmt<[{ r: number; start: string; end: string }], InvoiceLine & { created_at: string }>(db, `
    SELECT s.owner_id AS customer_id, s.plan_id, b.key AS base_plan_key, b.wholesale_price AS wholesale, s.created_at
      FROM subscriptions s JOIN owners o ON o.id = s.owner_id JOIN plans p ON p.id = s.plan_id JOIN plans b ON b.id = p.base_plan_id
     WHERE o.reseller_id = @r AND p.reseller_id = @r
       AND COALESCE(s.trial_end, s.created_at) < @end AND (s.ended_at IS NULL OR s.ended_at > @start)
     ORDER BY s.owner_id, s.created_at, s.id`).all({ r: resellerId, ...period })
  const byCustomer = new Map<number, InvoiceLine>()
  for (const { created_at: _, ...line } of rows) byCustomer.set(line.customer_id, line)
  return [...byCustomer.values()]
}

/**
 * Issue the platform's invoice to `resellerId` for `period`, unless it exists (the unique key on
 * (reseller_id, period_start) makes the billing run idempotent). Its own transaction; returns the
 * invoice, or null when it had been issued already.
 */
export function issueResellerInvoice(db: Db, resellerId: number, period: Period, at: string = nowIso()): ResellerInvoiceRow | null {
  return db.transaction((): ResellerInvoiceRow | null => {
    const bounds = { start: nowIso(period.start), end: nowIso(period.end) }
    const seen = stmt<[number, string], 1>(db, 'SELECT 1 FROM reseller_invoices WHERE reseller_id = ? AND period_start = ?').pluck().get(resellerId, bounds.start)
    if (seen) return null
    const lines = invoiceLines(db, resellerId, bounds)
    const totals = invoiceTotals(lines)
    const seq = nextInvoiceSeq(db, 'platform')
    const number = invoiceNumber('P', seq)
    const id = Number(stmt(db, `INSERT INTO reseller_invoices (reseller_id, seq, number, period_start, period_end, currency, active_customers, tier, discount_percent, lines, subtotal, discount, total, issued_at)
      VALUES (?, ?, ?, ?, ?, 'USD', ?, ?, ?, ?, ?, ?, ?, ?)`)
      .run(resellerId, seq, number, bounds.start, bounds.end, totals.active_customers, totals.tier, totals.discount_percent, JSON.stringify(lines), totals.subtotal, totals.discount, totals.total, at).lastInsertRowid)
    return { id, reseller_id: resellerId, seq, number, period_start: bounds.start, period_end: bounds.end, currency: 'USD', lines, ...totals, issued_at: at }
  }).immediate()
}

/** Resellers and the complete periods they have no invoice for yet, as of `at` (epoch ms). */
export function resellersDue(db: Db, at: number): Array<{ resellerId: number; periods: Period[] }> {
  const resellers = stmt<[], { id: number; reseller_since: string | null; created_at: string }>(db, 
    "SELECT id, reseller_since, created_at FROM owners WHERE role = 'reseller' ORDER BY id").all()
  const issued = stmt<[number], string>(db, 'SELECT period_start FROM reseller_invoices WHERE reseller_id = ?').pluck()
  return resellers.map((r) => {
    const done = new Set(issued.all(r.id))
    const periods = completePeriods(Date.parse(r.reseller_since ?? r.created_at), at).filter((p) => !done.has(nowIso(p.start)))
    return { resellerId: r.id, periods }
  }).filter((r) => r.periods.length > 0)
}

export const resellerInvoicesPage = (db: Db, resellerId: number, page: number, perPage: number): { rows: ResellerInvoiceRow[]; total: number } => ({
  total: stmt<[number], number>(db, 'SELECT COUNT(*) FROM reseller_invoices WHERE reseller_id = ?').pluck().get(resellerId) ?? 0,
  rows: stmt<[number, number, number], RawInvoice>(db, 'SELECT * FROM reseller_invoices WHERE reseller_id = ? ORDER BY seq DESC LIMIT ? OFFSET ?')
    .all(resellerId, perPage, (page - 1) * perPage).map((r) => ({ ...r, lines: JSON.parse(r.lines) as InvoiceLine[] })),
})

export interface CustomerInvoiceRow {
  id: number; reseller_id: number; customer_id: number; subscription_id: number | null; plan_id: number | null; wallet_entry_id: number
  seq: number; number: string; description: string; amount: number; currency: string; issued_at: string
}

/** Wallet reasons that are a subscription renewal charge (src/billing: the renewal and its retries). */
export const RENEWAL_REASONS = ['subscription_renewal'] as const

/**
 * Issue a customer invoice for every renewal charge (a wallet debit of a renewal reason) of an
 * account on one of its reseller's plans that has none yet; one transaction per invoice, numbered
 * in the reseller's own series. The subscription is read from the entry's reference
 * (`subscription:<id>:<period>`).
 */
export function issueCustomerInvoices(db: Db, at: string = nowIso()): CustomerInvoiceRow[] {
  const pending = stmt<[], { id: number; owner_id: number; amount: number; currency: string; reference: string | null; reseller_id: number; created_at: string }>(db, `
    SELECT w.id, w.owner_id, w.amount, w.currency, w.reference, o.reseller_id, w.created_at
      FROM wallet_entries w JOIN owners o ON o.id = w.owner_id
     WHERE o.reseller_id IS NOT NULL AND w.amount < 0 AND w.reason IN (${RENEWAL_REASONS.map((r) => `'${r}'`).join(', ')})
       AND NOT EXISTS (SELECT 1 FROM customer_invoices ci WHERE ci.wallet_entry_id = w.id)
     ORDER BY w.id`).all()
  const out: CustomerInvoiceRow[] = []
  for (const e of pending) {
    const subId = /^subscription:(\d+)/.exec(e.reference ?? '')?.[1]
    const plan = subId === undefined ? undefined : stmt<[number], { id: number; name: string; reseller_id: number | null }>(db, 
      'SELECT p.id, p.name, p.reseller_id FROM subscriptions s JOIN plans p ON p.id = s.plan_id WHERE s.id = ?').get(Number(subId))
    // A customer on a platform plan is billed by the platform itself, not by its reseller.
    if (!plan || plan.reseller_id !== e.reseller_id) continue
    const row = db.transaction((): CustomerInvoiceRow | null => {
      if (stmt<[number], 1>(db, 'SELECT 1 FROM customer_invoices WHERE wallet_entry_id = ?').pluck().get(e.id)) return null
      const seq = nextInvoiceSeq(db, `reseller:${e.reseller_id}`)
      const number = invoiceNumber(`R${e.reseller_id}`, seq)
      const description = `${plan.name}: subscription renewal`
      const id = Number(stmt(db, `INSERT INTO customer_invoices (reseller_id, customer_id, subscription_id, plan_id, wallet_entry_id, seq, number, description, amount, currency, issued_at)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`).run(e.reseller_id, e.owner_id, Number(subId), plan.id, e.id, seq, number, description, -e.amount, e.currency, at).lastInsertRowid)
      return { id, reseller_id: e.reseller_id, customer_id: e.owner_id, subscription_id: Number(subId), plan_id: plan.id, wallet_entry_id: e.id, seq, number, description, amount: -e.amount, currency: e.currency, issued_at: at }
    }).immediate()
    if (row) out.push(row)
  }
  return out
}

export const customerInvoicesPage = (db: Db, resellerId: number, page: number, perPage: number): { rows: CustomerInvoiceRow[]; total: number } => ({
  total: stmt<[number], number>(db, 'SELECT COUNT(*) FROM customer_invoices WHERE reseller_id = ?').pluck().get(resellerId) ?? 0,
  rows: stmt<[number, number, number], CustomerInvoiceRow>(db, 'SELECT * FROM customer_invoices WHERE reseller_id = ? ORDER BY seq DESC LIMIT ? OFFSET ?')
    .all(resellerId, perPage, (page - 1) * perPage),
})
