/**
 * Owner delivery routes (api-v1 §4.2): bindings of the delivery operations (src/ops/delivery/deliveries.ts),
 * and the proof-of-delivery photo. The photo is a plain route, not a binding: it answers image
 * bytes with their content type, which a bound operation (JSON in, JSON out) does not express; its
 * handler authorizes and resolves the store and order through the same policy, then reads through
 * `proofPhoto` — no SQL and no tenancy rule of its own here.
 */
import { bind } from '../bind.ts'
import { route, Reply } from '../route.ts'
import * as deliveries from '../../ops/delivery/deliveries.ts'
import { explainDispatch, listWaitingDispatch } from '../../ops/delivery/dispatch.ts'
import { authorize, resolveScope } from '../../auth/policy.ts'

const store = { store: 'id' } as const
const order = { store: 'id', order: 'orderId' } as const

export const deliveryRoutes = [
  bind(deliveries.listDeliveries, { method: 'GET', path: '/restaurants/{id}/deliveries', auth: 'owner', ids: store }),
  bind(deliveries.assignDriver, { method: 'POST', path: '/restaurants/{id}/orders/{orderId}/assign', auth: 'owner', ids: order }),
  bind(deliveries.setDeliveryStatus, { method: 'PUT', path: '/restaurants/{id}/orders/{orderId}/delivery-status', auth: 'owner', ids: order }),
  bind(deliveries.createOffers, { method: 'POST', path: '/restaurants/{id}/orders/{orderId}/offers', auth: 'owner', ids: order }),
  bind(explainDispatch, { method: 'GET', path: '/restaurants/{id}/orders/{orderId}/dispatch', auth: 'owner', ids: order }),
  bind(listWaitingDispatch, { method: 'GET', path: '/restaurants/{id}/dispatch/waiting', auth: 'owner', ids: store }),
  route({
    method: 'GET', path: '/restaurants/{id}/orders/{orderId}/pod-photo', tag: 'Deliveries', summary: 'The proof-of-delivery photo', auth: 'owner',
    capability: 'orders:read', produces: 'image/*', response: { type: 'string', format: 'binary' },
    handler: async ({ svc, principal, params }) => {
      authorize(principal, { owner: 'orders:read' })
      const scope = resolveScope(svc, principal, ['store', 'order'], { store: params.id, order: params.orderId })
      const photo = await deliveries.proofPhoto(svc, scope.order!)
      return new Reply(200, photo.bytes, { 'Cache-Control': 'private, max-age=300', 'X-Content-Type-Options': 'nosniff' }, photo.type)
    },
  }),
]
