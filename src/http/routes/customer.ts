/**
 * The customer app (api-v1 §4.5; docs/customers.md) and the store's side of its customers:
 * bindings of src/ops/customers/customers.ts. Customer routes take no customer id: identity comes only from
 * the token. Orders: customer-orders.ts; sign-in: customer-auth.ts.
 */
import { bind } from '../bind.ts'
import * as customers from '../../ops/customers/customers.ts'

const store = { store: 'id' } as const
const address = { addressId: 'address_id' }

export const customerRoutes = [
  bind(customers.getProfile, { method: 'GET', path: '/customer/me', auth: 'customer' }),
  bind(customers.updateProfile, { method: 'PUT', path: '/customer/me', auth: 'customer' }),
  bind(customers.listAddresses, { method: 'GET', path: '/customer/addresses', auth: 'customer' }),
  // The geocoder costs an outside request per new text: 30 a minute per customer (docs/customers.md).
  bind(customers.searchAddresses, { method: 'GET', path: '/customer/address-search', auth: 'customer', rateLimit: { perMinute: 30 } }),
  bind(customers.createAddress, { method: 'POST', path: '/customer/addresses', auth: 'customer' }),
  bind(customers.updateAddress, { method: 'PUT', path: '/customer/addresses/{addressId}', auth: 'customer', params: address }),
  bind(customers.deleteAddress, { method: 'DELETE', path: '/customer/addresses/{addressId}', auth: 'customer', params: address }),
  bind(customers.listGiftCards, { method: 'GET', path: '/customer/gift-cards', auth: 'customer' }),
  bind(customers.getStoreCredit, { method: 'GET', path: '/customer/store-credit', auth: 'customer' }),
  bind(customers.logout, { method: 'POST', path: '/customer/logout', auth: 'customer' }),
]

/** The owner's side: the customer list and creation (staff: /staff/customers), store credit and gift cards. */
export const customerBalanceRoutes = [
  bind(customers.listCustomers, { method: 'GET', path: '/restaurants/{id}/customers', auth: 'owner', ids: store }),
  bind(customers.createCustomer, { method: 'POST', path: '/restaurants/{id}/customers', auth: 'owner', ids: store }),
  bind(customers.getCustomer, { method: 'GET', path: '/restaurants/{id}/customers/{customerId}', auth: 'owner', ids: store, params: { customerId: 'customer_id' } }),
  bind(customers.adjustStoreCredit, { method: 'POST', path: '/restaurants/{id}/customers/{customerId}/store-credit', auth: 'owner', ids: store, params: { customerId: 'customer_id' } }),
  bind(customers.issueGiftCard, { method: 'POST', path: '/restaurants/{id}/gift-cards', auth: 'owner', ids: store }),
  bind(customers.redeemGiftCard, { method: 'POST', path: '/restaurants/{id}/gift-cards/{giftCardId}/redeem', auth: 'owner', ids: store, params: { giftCardId: 'gift_card_id' } }),
]
