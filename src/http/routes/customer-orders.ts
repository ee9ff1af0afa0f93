/** The customer app's orders (api-v1 §4.5): bindings of src/ops/orders/customer-orders.ts. */
import { bind } from '../bind.ts'
import * as customerOrders from '../../ops/orders/customer-orders.ts'

export const customerOrderRoutes = [
  bind(customerOrders.listCustomerOrders, { method: 'GET', path: '/customer/orders', auth: 'customer' }),
  bind(customerOrders.createCustomerOrder, {
    method: 'POST', path: '/customer/orders', auth: 'customer',
    headers: [{ name: 'Idempotency-Key', description: 'Makes the request safe to retry.' }],
  }),
]
