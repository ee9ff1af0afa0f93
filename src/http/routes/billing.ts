/** The account's subscription and wallet (docs/billing.md): bindings of src/ops/money/subscription.ts and src/ops/money/wallet.ts. */
import { bind } from '../bind.ts'
import * as sub from '../../ops/money/subscription.ts'
import { getWallet } from '../../ops/money/wallet.ts'

export const billingRoutes = [
  bind(sub.getSubscription, { method: 'GET', path: '/subscription', auth: 'owner' }),
  bind(sub.changePlan, { method: 'POST', path: '/subscription/plan', auth: 'owner' }),
  bind(sub.cancelSubscription, { method: 'POST', path: '/subscription/cancel', auth: 'owner' }),
  bind(sub.resumeRenewal, { method: 'POST', path: '/subscription/resume-renewal', auth: 'owner' }),
  bind(sub.pauseSubscription, { method: 'POST', path: '/subscription/pause', auth: 'owner' }),
  bind(sub.resumeSubscription, { method: 'POST', path: '/subscription/resume', auth: 'owner' }),
  bind(getWallet, { method: 'GET', path: '/wallet', auth: 'owner' }),
]
