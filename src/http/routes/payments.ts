/**
 * Payments over HTTP (issue 17 item 1; docs/operations.md "Payments"): bindings of
 * src/ops/money/payments.ts. The owner and staff addresses run the same operations; the provider webhook
 * reads the raw body and headers (its signature covers the exact bytes).
 */
import { bind } from '../bind.ts'
import * as payments from '../../ops/money/payments.ts'

const order = { store: 'id', order: 'orderId' } as const
const staffOrder = { order: 'orderId' } as const
/** Headers a provider signs with are handed to it whole, but never credentials. */
const webhookHeaders = (h: Readonly<Record<string, string>>) => Object.fromEntries(Object.entries(h).filter(([k]) => k !== 'authorization' && k !== 'cookie'))

export const paymentRoutes = [
  bind(payments.createPayment, { method: 'POST', path: '/restaurants/{id}/orders/{orderId}/payments', auth: 'owner', ids: order }),
  bind(payments.listPayments, { method: 'GET', path: '/restaurants/{id}/orders/{orderId}/payments', auth: 'owner', ids: order }),
  bind(payments.cancelPayment, { method: 'POST', path: '/restaurants/{id}/orders/{orderId}/payments/{paymentId}/cancel', auth: 'owner', ids: order, params: { paymentId: 'payment_id' } }),
  bind(payments.getBill, { method: 'GET', path: '/restaurants/{id}/orders/{orderId}/bill', auth: 'owner', ids: order }),
  bind(payments.createPayment, { method: 'POST', path: '/staff/orders/{orderId}/payments', auth: 'staff', ids: staffOrder }),
  bind(payments.cancelPayment, { method: 'POST', path: '/staff/orders/{orderId}/payments/{paymentId}/cancel', auth: 'staff', ids: staffOrder, params: { paymentId: 'payment_id' } }),
  bind(payments.listPayments, { method: 'GET', path: '/staff/orders/{orderId}/payments', auth: 'staff', ids: staffOrder }),
  bind(payments.getBill, { method: 'GET', path: '/staff/orders/{orderId}/bill', auth: 'staff', ids: staffOrder }),
  bind(payments.customerPay, { method: 'POST', path: '/customer/orders/{orderId}/pay', auth: 'customer', ids: staffOrder }),
  bind(payments.providerWebhook, {
    method: 'POST', path: '/payments/webhooks/{provider}', auth: 'none', params: { provider: 'provider' },
    decoders: { 'application/json': (body, headers) => ({ raw: body.toString('utf8'), headers: webhookHeaders(headers) }) },
  }),
  bind(payments.devComplete, { method: 'POST', path: '/payments/dev/complete', auth: 'none' }),
]
