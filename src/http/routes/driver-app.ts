/**
 * The driver app API (api-v1 §4.6): bindings of the driver-app operations (src/ops/delivery/driver-app.ts).
 * Every response is limited to the token's driver; `{orderId}` resolves only to the driver's own
 * orders (policy scope `order` for a driver), except `claim`, which takes any delivery the driver may
 * serve. Account routes (login, push, shift, earnings) are in driver-account.ts.
 */
import { bind } from '../bind.ts'
import * as app from '../../ops/delivery/driver-app.ts'

const mine = { order: 'orderId' } as const

export const driverAppRoutes = [
  bind(app.getMe, { method: 'GET', path: '/driver/me', auth: 'driver' }),
  bind(app.listMyDeliveries, { method: 'GET', path: '/driver/deliveries', auth: 'driver' }),
  bind(app.getMyDelivery, { method: 'GET', path: '/driver/deliveries/{orderId}', auth: 'driver', ids: mine }),
  bind(app.setMyDeliveryStatus, { method: 'PUT', path: '/driver/deliveries/{orderId}/status', auth: 'driver', ids: mine }),
  bind(app.reportLocation, { method: 'PUT', path: '/driver/location', auth: 'driver' }),
  bind(app.listAvailable, { method: 'GET', path: '/driver/available', auth: 'driver' }),
  bind(app.claimDelivery, { method: 'POST', path: '/driver/deliveries/{orderId}/claim', auth: 'driver', params: { orderId: 'order_id' } }),
  bind(app.listMyOffers, { method: 'GET', path: '/driver/offers', auth: 'driver' }),
  bind(app.acceptOffer, { method: 'POST', path: '/driver/offers/{offerId}/accept', auth: 'driver', params: { offerId: 'offer_id' } }),
  bind(app.rejectOffer, { method: 'POST', path: '/driver/offers/{offerId}/reject', auth: 'driver', params: { offerId: 'offer_id' } }),
  bind(app.completeWithCode, { method: 'POST', path: '/driver/deliveries/{orderId}/pod-otp', auth: 'driver', ids: mine }),
  bind(app.attachPhoto, { method: 'POST', path: '/driver/deliveries/{orderId}/pod-photo', auth: 'driver', ids: mine }),
]
