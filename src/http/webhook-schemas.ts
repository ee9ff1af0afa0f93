/** Webhook endpoint API shapes (api-v1 §2.7, §4.2, docs/webhooks.md): request schemas, views, response schemas. */
import * as v from 'valibot'
import type { AttemptRow, DeliveryRow, EndpointRow } from '../storage/webhooks.ts'
import { nowIso } from '../storage/db.ts'

export const EndpointCreate = v.object({
  url: v.pipe(v.string(), v.trim(), v.minLength(1, 'The url is required.'), v.maxLength(2048)),
  events: v.pipe(
    v.array(v.pipe(v.string(), v.trim(), v.minLength(1), v.maxLength(100))),
    v.minLength(1, 'Subscribe to at least one event, or "*".'),
    v.maxLength(50),
  ),
})

export const DeliveryListQuery = v.object({
  page: v.optional(v.pipe(v.string(), v.regex(/^[1-9]\d{0,6}$/, 'page must be a positive integer'))),
  status: v.optional(v.picklist(['pending', 'succeeded', 'failed'])),
  event: v.optional(v.pipe(v.string(), v.maxLength(100))),
})

export function endpointView(r: EndpointRow) {
  return { id: r.id, url: r.url, events: JSON.parse(r.events) as string[], paused: r.paused_at !== null, paused_at: r.paused_at, created_at: r.created_at }
}

export function deliveryView(r: DeliveryRow, attempts: AttemptRow[]) {
  return {
    id: r.id,
    webhook_id: r.msg_id,
    event: r.event,
    status: r.status,
    attempt_count: r.attempts,
    next_attempt_at: r.next_attempt_at === null ? null : nowIso(r.next_attempt_at),
    requeued_from: r.requeued_from,
    created_at: r.created_at,
    updated_at: r.updated_at,
    payload: JSON.parse(r.body) as unknown,
    attempts: attempts.map((a) => ({
      attempt: a.attempt, http_status: a.http_status, error: a.error, response_excerpt: a.response_excerpt, duration_ms: a.duration_ms, created_at: a.created_at,
    })),
  }
}

const str = { type: 'string' }
const int = { type: 'integer' }
const dateTime = { type: 'string', format: 'date-time' }
const nullable = (s: Record<string, unknown>) => ({ anyOf: [s, { type: 'null' }] })
const obj = (properties: Record<string, unknown>) => ({ type: 'object', required: Object.keys(properties), properties })

export const EndpointSchema = obj({ id: int, url: { type: 'string', format: 'uri' }, events: { type: 'array', items: str }, paused: { type: 'boolean' }, paused_at: nullable(dateTime), created_at: dateTime })

export const EndpointWithSecretSchema = {
  ...EndpointSchema,
  required: [...EndpointSchema.required, 'secret'],
  properties: { ...EndpointSchema.properties, secret: { type: 'string', pattern: '^whsec_', description: 'Signing secret (Standard Webhooks form). Shown only in this response.' } },
}

export const AttemptSchema = obj({ attempt: int, http_status: nullable(int), error: nullable(str), response_excerpt: str, duration_ms: int, created_at: dateTime })

export const DeliverySchema = obj({
  id: int,
  webhook_id: { type: 'string', pattern: '^msg_' },
  event: str,
  status: { type: 'string', enum: ['pending', 'succeeded', 'failed'] },
  attempt_count: int,
  next_attempt_at: nullable(dateTime),
  requeued_from: nullable(int),
  created_at: dateTime,
  updated_at: dateTime,
  payload: obj({ id: str, event: str, created_at: dateTime, data: { type: 'object' } }),
  attempts: { type: 'array', items: AttemptSchema },
})
