/** The reseller area (api-v1 §4.8, basic and fuller deployment): bindings of src/ops/accounts/reseller.ts. */
import { bind } from '../bind.ts'
import {
  cancelResellerSubscription, createResellerCustomer, createResellerPlan, listResellerCustomerInvoices, listResellerCustomers,
  listResellerInvoices, listResellerPlans, listResellerSubscriptions, resellerStats, resellerTier, suspendResellerCustomer,
  topUpResellerCustomer, unsuspendResellerCustomer,
} from '../../ops/accounts/reseller.ts'

export const resellerRoutes = [
  bind(listResellerCustomers, { method: 'GET', path: '/reseller/customers', auth: 'owner' }),
  bind(createResellerCustomer, { method: 'POST', path: '/reseller/customers', auth: 'owner' }),
  bind(suspendResellerCustomer, { method: 'POST', path: '/reseller/customers/{id}/suspend', auth: 'owner', ids: { account: 'id' } }),
  bind(unsuspendResellerCustomer, { method: 'POST', path: '/reseller/customers/{id}/unsuspend', auth: 'owner', ids: { account: 'id' } }),
  bind(topUpResellerCustomer, {
    method: 'POST', path: '/reseller/customers/{id}/wallet/top-up', auth: 'owner', ids: { account: 'id' },
    headers: [{ name: 'Idempotency-Key', description: 'Credits once per key (the same as `reference`).' }],
  }),
  bind(listResellerPlans, { method: 'GET', path: '/reseller/plans', auth: 'owner' }),
  bind(createResellerPlan, { method: 'POST', path: '/reseller/plans', auth: 'owner' }),
  bind(listResellerSubscriptions, { method: 'GET', path: '/reseller/subscriptions', auth: 'owner' }),
  bind(cancelResellerSubscription, { method: 'POST', path: '/reseller/subscriptions/{id}/cancel', auth: 'owner', ids: { subscription: 'id' } }),
  bind(listResellerInvoices, { method: 'GET', path: '/reseller/invoices', auth: 'owner' }),
  bind(listResellerCustomerInvoices, { method: 'GET', path: '/reseller/customer-invoices', auth: 'owner' }),
  bind(resellerStats, { method: 'GET', path: '/reseller/stats', auth: 'owner' }),
  bind(resellerTier, { method: 'GET', path: '/reseller/tier', auth: 'owner' }),
]
