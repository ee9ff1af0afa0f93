/** Webhook endpoints and the dashboard actions (api-v1 §4.2, §6): bindings of src/ops/apps/webhooks.ts. */
import { bind } from '../bind.ts'
import { registerWebhookDocs } from '../openapi.ts'
import { webhookOpenApi } from '../../webhooks/docs.ts'
import * as wh from '../../ops/apps/webhooks.ts'

registerWebhookDocs(webhookOpenApi())

const endpoint = { endpoint: 'id' } as const
const delivery = { deliveryId: 'delivery_id' }

export const webhookRoutes = [
  bind(wh.listEndpoints, { method: 'GET', path: '/webhook-endpoints', auth: 'owner' }),
  bind(wh.createEndpoint, { method: 'POST', path: '/webhook-endpoints', auth: 'owner' }),
  bind(wh.getEndpoint, { method: 'GET', path: '/webhook-endpoints/{id}', auth: 'owner', ids: endpoint }),
  bind(wh.deleteEndpoint, { method: 'DELETE', path: '/webhook-endpoints/{id}', auth: 'owner', ids: endpoint }),
  // The dashboard actions take no body: whatever is sent is drained, not parsed.
  bind(wh.pingEndpoint, { method: 'POST', path: '/webhook-endpoints/{id}/ping', auth: 'owner', ids: endpoint, from: 'query' }),
  bind(wh.pauseEndpoint, { method: 'POST', path: '/webhook-endpoints/{id}/pause', auth: 'owner', ids: endpoint, from: 'query' }),
  bind(wh.resumeEndpoint, { method: 'POST', path: '/webhook-endpoints/{id}/resume', auth: 'owner', ids: endpoint, from: 'query' }),
  bind(wh.listDeliveries, { method: 'GET', path: '/webhook-endpoints/{id}/deliveries', auth: 'owner', ids: endpoint }),
  bind(wh.getDelivery, { method: 'GET', path: '/webhook-endpoints/{id}/deliveries/{deliveryId}', auth: 'owner', ids: endpoint, params: delivery }),
  bind(wh.requeueDelivery, { method: 'POST', path: '/webhook-endpoints/{id}/deliveries/{deliveryId}/requeue', auth: 'owner', ids: endpoint, params: delivery, from: 'query' }),
]
