/**
 * App billing operations (api-v1 §4.10, §7 rule 2, §8; docs/apps.md "Billing"): the app's usage
 * report, `POST {site_url}/api/app/usage`, and a developer's earnings per app. The rules (price ×
 * quantity, cap per period, duplicate refs, empty wallet) live in src/billing/app-charges.ts.
 */
import * as v from 'valibot'
import { defineOp } from '../op.ts'
import { ownerOf } from '../scope.ts'
import { ApiError } from '../../errors.ts'
import { fromCents } from '../../domain/money.ts'
import { recordUsage } from '../../billing/app-charges.ts'
import { billingNow } from '../../billing/clock.ts'
import { activeInstallation } from '../../storage/apps.ts'
import { appEarnings } from '../../storage/app-billing.ts'

const tag = 'Apps'

/** Form fields arrive as strings: `quantity` is a number > 0 (api-v1 §8), `ref` up to 120 characters. */
const UsageInput = v.object({
  quantity: v.pipe(
    v.union([v.string(), v.number()], 'quantity is required: a number greater than 0.'),
    v.transform((q) => (typeof q === 'string' && q.trim() !== '' ? Number(q) : typeof q === 'number' ? q : NaN)),
    v.check((q) => Number.isFinite(q) && q > 0, 'quantity must be a number greater than 0.'),
    v.check((q) => q <= 1e9, 'quantity must be at most 1000000000.'),
  ),
  ref: v.optional(v.pipe(v.string(), v.minLength(1, 'ref must not be empty.'), v.maxLength(120, 'ref must be at most 120 characters.'))),
})

const UsageSchema = {
  type: 'object', required: ['id', 'duplicate', 'message', 'quantity', 'ref', 'amount', 'currency', 'capped', 'period_start', 'created_at'],
  properties: {
    id: { type: 'integer' },
    duplicate: { type: 'boolean', description: 'true: this ref was recorded before; nothing was charged now (the earlier report is shown)' },
    message: { type: 'string', description: '"recorded" or "already recorded"' },
    quantity: { type: 'number' }, ref: { type: ['string', 'null'] },
    amount: { type: 'number', description: 'What this report charged to the wallet, major units (0 when capped or free)' },
    currency: { type: 'string' },
    capped: { type: 'boolean', description: 'The period cap limited the charge' },
    period_start: { type: 'string' }, created_at: { type: 'string' },
  },
}

export const reportUsage = defineOp({
  id: 'apps.usage.report', tag, access: { owner: 'any' }, scope: [],
  summary: 'Report usage of an installed app (app token only)',
  description: 'Form fields `quantity` (> 0) and `ref` (optional, ≤ 120). Charges price × quantity (rounded to minor units, at most the cap per 30-day period) to the owner\'s wallet as a ledger entry referencing the installation. A repeated `ref` answers the earlier report with `duplicate: true` and charges nothing. 403 `forbidden` for a token that is not an app\'s, or an app not installed for the account; 402 `insufficient_funds` when the wallet cannot pay (nothing recorded); 422 for a bad quantity or ref.',
  input: UsageInput, output: UsageSchema,
  run: async (ctx, input) => {
    const p = ownerOf(ctx)
    if (!p.app) throw new ApiError('forbidden', 'Usage is reported with an app\'s access token (docs/apps.md "Billing").')
    const app = p.app
    const at = billingNow(ctx.svc.config)
    const r = await ctx.svc.committer.write((db) => {
      const inst = activeInstallation(db, app.appId, p.ownerId)
      // api-v1 §7 rule 2: the app must be installed for the account the token acts for.
      if (!inst || inst.id !== app.installationId) throw new ApiError('forbidden', 'This app is not installed for the account.')
      return recordUsage(db, inst, input.quantity, input.ref ?? null, at)
    })
    const u = r.usage
    return {
      id: u.id, duplicate: r.duplicate, message: r.duplicate ? 'already recorded' : 'recorded', quantity: u.quantity, ref: u.ref,
      amount: fromCents(u.amount), currency: r.currency, capped: r.capped, period_start: u.period_start, created_at: u.created_at,
    }
  },
})

export const appEarningsOp = defineOp({
  id: 'developer.apps.earnings', tag, access: { owner: '*:read' }, scope: ['app'],
  summary: 'What one of your apps has earned',
  description: 'Totals in major units of the app\'s currency: recurring period charges paid, usage charged, periods recorded unpaid, and installations. Another developer\'s app is a 404.',
  output: {
    type: 'object', required: ['app_id', 'currency', 'total', 'recurring', 'usage', 'unpaid_periods', 'installations_active', 'installations_total'],
    properties: {
      app_id: { type: 'integer' }, currency: { type: 'string' }, total: { type: 'number' }, recurring: { type: 'number' }, usage: { type: 'number' },
      unpaid_periods: { type: 'integer' }, installations_active: { type: 'integer' }, installations_total: { type: 'integer' },
    },
  },
  run: (ctx) => {
    // Resolved by the policy before anything else: another developer's app is a 404.
    const app = ctx.scope.app!
    const e = appEarnings(ctx.svc.db, app.id)
    return {
      app_id: app.id, currency: (app.published_terms ?? app.terms).currency, total: fromCents(e.recurring + e.usage),
      recurring: fromCents(e.recurring), usage: fromCents(e.usage), unpaid_periods: e.unpaid_periods,
      installations_active: e.installations_active, installations_total: e.installations_total,
    }
  },
})

export const appBillingOps = [reportUsage, appEarningsOp]
