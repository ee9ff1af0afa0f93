/**
 * Webhook endpoints and their dashboard actions (api-v1 §2.7, §4.2, §5 rule 6, §6;
 * docs/webhooks.md): register, list, read, delete, test ping, pause/resume, the delivery log with
 * attempts, re-queue. Reads need `webhooks:read`, everything else `webhooks:write`; another
 * owner's endpoint is a 404 (the policy's `endpoint` scope). Changes are messages to the endpoint's
 * actor and answer with what it wrote, so a change that loses a race with a delete is a 404.
 */
import * as v from 'valibot'
import { defineOp, type Access } from '../op.ts'
import { ownerOf } from '../scope.ts'
import { Id, PageQuery, PaginatedSchema, pageOf, paginate } from '../schemas/common.ts'
import { DeliveryListQuery, DeliverySchema, EndpointCreate, EndpointSchema, EndpointWithSecretSchema, deliveryView, endpointView } from '../schemas/webhooks.ts'
import { ApiError, notFound } from '../../errors.ts'
import type { OpCtx } from '../op.ts'
import type { EndpointRow } from '../../storage/webhooks.ts'

const tag = 'Webhooks'
const read: Access = { owner: 'webhooks:read' }
const write: Access = { owner: 'webhooks:write' }
const ENDPOINTS_PER_PAGE = 50
const DELIVERIES_PER_PAGE = 20

function endpointOf(ctx: OpCtx): EndpointRow {
  if (!ctx.scope.endpoint) throw new ApiError('internal_error', 'Operation ran without its endpoint scope.')
  return ctx.scope.endpoint
}

export const listEndpoints = defineOp({
  id: 'webhooks.endpoints.list', tag, summary: 'List your webhook endpoints (50 per page)', access: read, scope: [],
  description: 'Secrets are never listed.', input: PageQuery, output: PaginatedSchema(EndpointSchema),
  run: (ctx, query) => {
    const page = pageOf(query)
    const { rows, total } = ctx.svc.webhooks.store.endpointsPage(ownerOf(ctx).ownerId, page, ENDPOINTS_PER_PAGE)
    return paginate(rows.map(endpointView), page, ENDPOINTS_PER_PAGE, total)
  },
})

export const createEndpoint = defineOp({
  id: 'webhooks.endpoints.create', feature: 'webhooks', tag, summary: 'Register a webhook endpoint (returns its signing secret once)', access: write, scope: [], created: true,
  description: 'Body `{url, events[]}`. `url` must be a public `https` address: no credentials, and a host that is not and does not resolve to a loopback, private, link-local, CGNAT, multicast or otherwise internal address. '
    + '`events` holds event names from the catalog (docs/webhooks.md), `*`, or a family wildcard such as `order.*` or `subscription.*`. Anything else is 422 with `errors`. '
    + 'An account has at most `WEBHOOK_MAX_ENDPOINTS` (20) endpoints: one more is 422 `quota_exceeded`. '
    + 'The `secret` (`whsec_…`) is shown only in this response, which is the one create answered 201 (api-v1 §4).',
  input: EndpointCreate, output: EndpointWithSecretSchema,
  run: async (ctx, body) => {
    const { row, secret } = await ctx.svc.webhooks.create(ownerOf(ctx).ownerId, body.url, body.events)
    return { ...endpointView(row), secret }
  },
})

export const getEndpoint = defineOp({
  id: 'webhooks.endpoints.get', tag, summary: 'A webhook endpoint (without its secret)', access: read, scope: ['endpoint'], output: EndpointSchema,
  run: (ctx) => endpointView(endpointOf(ctx)),
})

export const deleteEndpoint = defineOp({
  id: 'webhooks.endpoints.delete', tag, summary: 'Delete a webhook endpoint and its delivery log', access: write, scope: ['endpoint'], empty: true,
  description: 'Pending deliveries are dropped; attempts in flight finish but are not retried.',
  run: async (ctx) => {
    await ctx.svc.webhooks.remove(ownerOf(ctx).ownerId, endpointOf(ctx).id)
  },
})

export const pingEndpoint = defineOp({
  id: 'webhooks.endpoints.ping', tag, summary: 'Send a test `ping` event to this endpoint', access: write, scope: ['endpoint'], output: DeliverySchema,
  description: 'Queues a `ping` delivery (data `{endpoint_id, message}`) whatever the endpoint\'s event filter, signed like every delivery. The answer is the queued delivery; follow it in the delivery log. A paused endpoint gets it on resume.',
  run: async (ctx) => deliveryView(await ctx.svc.webhooks.ping(ownerOf(ctx).ownerId, endpointOf(ctx).id), []),
})

export const pauseEndpoint = defineOp({
  id: 'webhooks.endpoints.pause', tag, summary: 'Pause deliveries (the secret is kept)', access: write, scope: ['endpoint'], output: EndpointSchema,
  description: 'Nothing is sent while paused; events keep being recorded as pending deliveries and go out, oldest first, on resume. Retry times that pass meanwhile are due at once on resume. Idempotent.',
  run: async (ctx) => endpointView(await ctx.svc.webhooks.setPaused(ownerOf(ctx).ownerId, endpointOf(ctx).id, true)),
})

export const resumeEndpoint = defineOp({
  id: 'webhooks.endpoints.resume', tag, summary: 'Resume deliveries', access: write, scope: ['endpoint'], output: EndpointSchema,
  description: 'Sends what queued up while paused. Also re-enables an endpoint: its circuit closes (`circuit_open` → `active`) and a `disabled` endpoint gets events again; pending deliveries go out at once. Idempotent.',
  run: async (ctx) => endpointView(await ctx.svc.webhooks.setPaused(ownerOf(ctx).ownerId, endpointOf(ctx).id, false)),
})

export const listDeliveries = defineOp({
  id: 'webhooks.deliveries.list', tag, summary: 'Delivery log with every attempt (newest first, 20 per page)', access: read, scope: ['endpoint'],
  description: 'Query `status` (`pending`, `succeeded`, `failed`), `event`, `page`. Each delivery carries its `webhook_id`, payload, and `attempts[]` with HTTP status (null on timeout or refusal), error, a response excerpt (1 KiB) and duration.',
  input: DeliveryListQuery, output: PaginatedSchema(DeliverySchema),
  run: (ctx, query) => {
    const { svc } = ctx
    const page = pageOf(query)
    const { rows, total } = svc.webhooks.store.deliveriesPage(svc.db, endpointOf(ctx).id, page, DELIVERIES_PER_PAGE, { status: query.status, event: query.event })
    const attempts = svc.webhooks.store.attemptsFor(svc.db, rows.map((r) => r.id))
    return paginate(rows.map((r) => deliveryView(r, attempts.get(r.id) ?? [])), page, DELIVERIES_PER_PAGE, total)
  },
})

const deliveryId = v.object({ delivery_id: Id })

export const getDelivery = defineOp({
  id: 'webhooks.deliveries.get', tag, summary: 'One delivery with its attempts', access: read, scope: ['endpoint'], input: deliveryId, output: DeliverySchema,
  run: (ctx, { delivery_id }) => {
    const { svc } = ctx
    const d = svc.webhooks.store.delivery(endpointOf(ctx).id, delivery_id)
    if (!d) throw notFound('delivery')
    return deliveryView(d, svc.webhooks.store.attemptsFor(svc.db, [d.id]).get(d.id) ?? [])
  },
})

export const requeueDelivery = defineOp({
  id: 'webhooks.deliveries.requeue', tag, summary: 'Re-queue a logged delivery with a fresh webhook-id', access: write, scope: ['endpoint'], input: deliveryId, output: DeliverySchema,
  description: 'Creates a new delivery of the same event and data (body `created_at` is the event\'s time) with a new `webhook-id`, attempts counted from 1; `requeued_from` names the original, which is left as it was.',
  run: async (ctx, { delivery_id }) => {
    const endpoint = endpointOf(ctx)
    if (!ctx.svc.webhooks.store.delivery(endpoint.id, delivery_id)) throw notFound('delivery')
    return deliveryView(await ctx.svc.webhooks.requeue(ownerOf(ctx).ownerId, endpoint.id, delivery_id), [])
  },
})

export const webhookOps = [
  listEndpoints, createEndpoint, getEndpoint, deleteEndpoint, pingEndpoint, pauseEndpoint, resumeEndpoint, listDeliveries, getDelivery, requeueDelivery,
]
