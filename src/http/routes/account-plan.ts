/** The account's plan and entitlements, the plan catalog and store creation: bindings of src/ops/accounts/account-plan.ts. */
import { bind } from '../bind.ts'
import * as plan from '../../ops/accounts/account-plan.ts'

export const accountPlanRoutes = [
  bind(plan.getAccountPlan, { method: 'GET', path: '/account/plan', auth: 'owner' }),
  bind(plan.listEntitlements, { method: 'GET', path: '/account/entitlements', auth: 'owner' }),
  bind(plan.listPlans, { method: 'GET', path: '/plans', auth: 'none' }),
  bind(plan.createStoreOp, { method: 'POST', path: '/restaurants', auth: 'owner' }),
]
