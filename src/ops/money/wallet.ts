/**
 * `GET /wallet` (docs/billing.md "The wallet"): the account's balance and its ledger, newest first,
 * paginated (api-v1 §2.1). Amounts are JSON numbers in major units (credits positive, debits
 * negative), as the API shows money; needs `read` (`*:read`).
 */
import { defineOp } from '../op.ts'
import { ownerOf } from '../scope.ts'
import { PageQuery, pageOf } from '../schemas/common.ts'
import { walletView, WalletSchema } from './billing-views.ts'

export const getWallet = defineOp({
  id: 'billing.wallet.get', tag: 'Billing', summary: 'Wallet balance and entries', access: { owner: '*:read' }, scope: [],
  description: 'The balance is the sum of the entries and never below zero. Each entry has a `reason` (`top_up`, `subscription_renewal`, `subscription_start`, `plan_change_proration`, `app_recurring`, `app_usage`, …) and a `reference` naming what it pays for. 25 entries per page.',
  input: PageQuery, output: WalletSchema,
  run: (ctx, q) => walletView(ctx.svc.db, ownerOf(ctx).ownerId, pageOf(q)),
})

export const walletOps = [getWallet]
