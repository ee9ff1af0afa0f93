/**
 * The reseller invoicing task of the billing run (src/billing/run.ts BILLING_TASKS; docs/billing.md
 * "Resellers"): as of `at`, the platform's invoice to every reseller for every complete 30-day
 * period it has none for (catch-up after downtime issues each missed period once), then a customer
 * invoice for every renewal charge of a customer on a reseller's plan. Idempotent: the unique keys of
 * migration 011 ((reseller_id, period_start) and wallet_entry_id) make a repeated run issue nothing.
 *
 * Each invoice is its own savepoint: one that fails (and rolls back, its number with it) does not stop
 * the others, and is retried by the next run.
 */
import type { Db } from '../storage/db.ts'
import { nowIso } from '../storage/db.ts'
import { issueCustomerInvoices, issueResellerInvoice, resellersDue } from '../storage/reseller.ts'
import type { BillingTask } from './run.ts'

export interface ResellerInvoicingResult {
  kind: 'reseller_invoice' | 'customer_invoice' | 'failed'
  reseller_id: number
  number?: string
  period_start?: string
  customer_id?: number
  total?: number
  error?: string
}

export function runResellerInvoicing(db: Db, at: Date): ResellerInvoicingResult[] {
  const out: ResellerInvoicingResult[] = []
  const atIso = nowIso(at.getTime())
  for (const { resellerId, periods } of resellersDue(db, at.getTime())) {
    for (const period of periods) {
      try {
        const inv = issueResellerInvoice(db, resellerId, period, atIso)
        if (inv) out.push({ kind: 'reseller_invoice', reseller_id: resellerId, number: inv.number, period_start: inv.period_start, total: inv.total })
      } catch (err) {
        // Later periods wait for this one: numbers follow the periods in order.
        out.push({ kind: 'failed', reseller_id: resellerId, period_start: nowIso(period.start), error: err instanceof Error ? err.message : String(err) })
        break
      }
    }
  }
  for (const inv of issueCustomerInvoices(db, atIso)) {
    out.push({ kind: 'customer_invoice', reseller_id: inv.reseller_id, customer_id: inv.customer_id, number: inv.number, total: inv.amount })
  }
  return out
}

export const resellerInvoicingTask: BillingTask = { name: 'reseller_invoicing', run: runResellerInvoicing }
