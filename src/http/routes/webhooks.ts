/**
 * Webhook endpoints (api-v1 §2.7, §4.2, §5 rule 6, §6; docs/webhooks.md): register, list, delete,
 * and the dashboard actions as API routes — test ping, pause/resume, delivery log with attempts,
 * re-queue. Reads need `webhooks:read`, everything else `webhooks:write`. Another owner's endpoint
 * is a 404. Changes are messages to the endpoint's actor and answer with what it wrote, so a change
 * that loses a race with a delete is a 404, not a read of a row that is gone.
 */
import { route, Reply } from '../route.ts'
import { paginate, PaginatedSchema, PageQuery, pageOf } from '../../ops/schemas.ts'
import { notFound } from '../../errors.ts'
import { registerWebhookDocs } from '../openapi.ts'
import { webhookOpenApi } from '../../webhooks/docs.ts'
import type { OwnerPrincipal } from '../../auth/principals.ts'
import type { Services } from '../../services.ts'
import type { EndpointRow } from '../../storage/webhooks.ts'
import { DeliveryListQuery, DeliverySchema, EndpointCreate, EndpointSchema, EndpointWithSecretSchema, deliveryView, endpointView } from '../webhook-schemas.ts'

registerWebhookDocs(webhookOpenApi())

const tag = 'Webhooks'
const ENDPOINTS_PER_PAGE = 50
const DELIVERIES_PER_PAGE = 20

function ownedEndpoint(svc: Services, principal: OwnerPrincipal, id: string | undefined): EndpointRow {
  const e = svc.webhooks.store.ownedEndpoint(Number(id), principal.ownerId)
  if (!e) throw notFound('webhook endpoint')
  return e
}

function deliveryWithAttempts(svc: Services, endpointId: number, deliveryId: number) {
  const d = svc.webhooks.store.delivery(endpointId, deliveryId)
  if (!d) throw notFound('delivery')
  return deliveryView(d, svc.webhooks.store.attemptsFor(svc.db, [d.id]).get(d.id) ?? [])
}

export const webhookRoutes = [
  route({
    method: 'GET', path: '/webhook-endpoints', tag, summary: 'List your webhook endpoints (50 per page)', auth: 'owner', capability: 'webhooks:read',
    query: PageQuery, response: PaginatedSchema(EndpointSchema), description: 'Secrets are never listed.',
    handler: ({ svc, principal, query }) => {
      const page = pageOf(query)
      const { rows, total } = svc.webhooks.store.endpointsPage(principal.ownerId, page, ENDPOINTS_PER_PAGE)
      return paginate(rows.map(endpointView), page, ENDPOINTS_PER_PAGE, total)
    },
  }),
  route({
    method: 'POST', path: '/webhook-endpoints', tag, summary: 'Register a webhook endpoint (returns its signing secret once)', auth: 'owner',
    capability: 'webhooks:write', body: EndpointCreate, status: 201, response: EndpointWithSecretSchema,
    description: 'Body `{url, events[]}`. `url` must be a public `https` address: no credentials, and a host that is not and does not resolve to a loopback, private, link-local, CGNAT, multicast or otherwise internal address. '
      + '`events` holds event names from the catalog (docs/webhooks.md), `*`, or a family wildcard such as `order.*` or `subscription.*`. Anything else is 422 with `errors`. '
      + 'An account has at most `WEBHOOK_MAX_ENDPOINTS` (20) endpoints: one more is 422 `quota_exceeded`. '
      + 'The `secret` (`whsec_…`) is shown only in this response.',
    handler: async ({ svc, principal, body }) => {
      const { row, secret } = await svc.webhooks.create(principal.ownerId, body.url, body.events)
      return new Reply(201, { ...endpointView(row), secret })
    },
  }),
  route({
    method: 'GET', path: '/webhook-endpoints/{id}', tag, summary: 'A webhook endpoint (without its secret)', auth: 'owner', capability: 'webhooks:read',
    response: EndpointSchema,
    handler: ({ svc, principal, params }) => endpointView(ownedEndpoint(svc, principal, params.id)),
  }),
  route({
    method: 'DELETE', path: '/webhook-endpoints/{id}', tag, summary: 'Delete a webhook endpoint and its delivery log', auth: 'owner', capability: 'webhooks:write',
    status: 204, description: 'Pending deliveries are dropped; attempts in flight finish but are not retried.',
    handler: async ({ svc, principal, params }) => {
      await svc.webhooks.remove(principal.ownerId, ownedEndpoint(svc, principal, params.id).id)
      return new Reply(204, null)
    },
  }),
  route({
    method: 'POST', path: '/webhook-endpoints/{id}/ping', tag, summary: 'Send a test `ping` event to this endpoint', auth: 'owner', capability: 'webhooks:write',
    status: 201, response: DeliverySchema,
    description: 'Queues a `ping` delivery (data `{endpoint_id, message}`) whatever the endpoint\'s event filter, signed like every delivery. The answer is the queued delivery; follow it in the delivery log. A paused endpoint gets it on resume.',
    handler: async ({ svc, principal, params }) => {
      const e = ownedEndpoint(svc, principal, params.id)
      const d = await svc.webhooks.ping(principal.ownerId, e.id)
      return new Reply(201, deliveryView(d, []))
    },
  }),
  route({
    method: 'POST', path: '/webhook-endpoints/{id}/pause', tag, summary: 'Pause deliveries (the secret is kept)', auth: 'owner', capability: 'webhooks:write',
    response: EndpointSchema,
    description: 'Nothing is sent while paused; events keep being recorded as pending deliveries and go out, oldest first, on resume. Retry times that pass meanwhile are due at once on resume. Idempotent.',
    handler: async ({ svc, principal, params }) => {
      const e = ownedEndpoint(svc, principal, params.id)
      return endpointView(await svc.webhooks.setPaused(principal.ownerId, e.id, true))
    },
  }),
  route({
    method: 'POST', path: '/webhook-endpoints/{id}/resume', tag, summary: 'Resume deliveries', auth: 'owner', capability: 'webhooks:write',
    response: EndpointSchema,
    description: 'Sends what queued up while paused. Also re-enables an endpoint: its circuit closes (`circuit_open` → `active`) and a `disabled` endpoint gets events again; pending deliveries go out at once. Idempotent.',
    handler: async ({ svc, principal, params }) => {
      const e = ownedEndpoint(svc, principal, params.id)
      return endpointView(await svc.webhooks.setPaused(principal.ownerId, e.id, false))
    },
  }),
  route({
    method: 'GET', path: '/webhook-endpoints/{id}/deliveries', tag, summary: 'Delivery log with every attempt (newest first, 20 per page)', auth: 'owner',
    capability: 'webhooks:read', query: DeliveryListQuery, response: PaginatedSchema(DeliverySchema),
    description: 'Query `status` (`pending`, `succeeded`, `failed`), `event`, `page`. Each delivery carries its `webhook_id`, payload, and `attempts[]` with HTTP status (null on timeout or refusal), error, a response excerpt (1 KiB) and duration.',
    handler: ({ svc, principal, params, query }) => {
      const e = ownedEndpoint(svc, principal, params.id)
      const page = pageOf(query)
      const { rows, total } = svc.webhooks.store.deliveriesPage(svc.db, e.id, page, DELIVERIES_PER_PAGE, { status: query.status, event: query.event })
      const attempts = svc.webhooks.store.attemptsFor(svc.db, rows.map((r) => r.id))
      return paginate(rows.map((r) => deliveryView(r, attempts.get(r.id) ?? [])), page, DELIVERIES_PER_PAGE, total)
    },
  }),
  route({
    method: 'GET', path: '/webhook-endpoints/{id}/deliveries/{deliveryId}', tag, summary: 'One delivery with its attempts', auth: 'owner',
    capability: 'webhooks:read', response: DeliverySchema,
    handler: ({ svc, principal, params }) => deliveryWithAttempts(svc, ownedEndpoint(svc, principal, params.id).id, Number(params.deliveryId)),
  }),
  route({
    method: 'POST', path: '/webhook-endpoints/{id}/deliveries/{deliveryId}/requeue', tag, summary: 'Re-queue a logged delivery with a fresh webhook-id', auth: 'owner',
    capability: 'webhooks:write', status: 201, response: DeliverySchema,
    description: 'Creates a new delivery of the same event and data (body `created_at` is the event\'s time) with a new `webhook-id`, attempts counted from 1; `requeued_from` names the original, which is left as it was.',
    handler: async ({ svc, principal, params }) => {
      const e = ownedEndpoint(svc, principal, params.id)
      const deliveryId = Number(params.deliveryId)
      if (!svc.webhooks.store.delivery(e.id, deliveryId)) throw notFound('delivery')
      return new Reply(201, deliveryView(await svc.webhooks.requeue(principal.ownerId, e.id, deliveryId), []))
    },
  }),
]
