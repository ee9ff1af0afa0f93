/** Webhook endpoint API shapes (api-v1 §2.7, §4.2, docs/webhooks.md): request schemas, views, response schemas. */
import * as v from 'valibot'
import type { AttemptRow, DeliveryRow, EndpointRow } from '../../storage/webhooks.ts'
import { nowIso } from '../../storage/db.ts'
import { stateName } from '../../domain/webhook-circuit.ts'
import { named } from './named.ts'

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

/** An endpoint as the API shows it: with its health, so a dashboard can show why nothing arrives (docs/webhooks.md). */
export function endpointView(r: EndpointRow) {
  const open = r.circuit_open_until !== null
  return {
    id: r.id, url: r.url, events: JSON.parse(r.events) as string[], paused: r.paused_at !== null, paused_at: r.paused_at,
    state: stateName({ disabled: r.disabled_at !== null, paused: r.paused_at !== null, open }),
    consecutive_failures: r.consecutive_failures,
    failing_since: r.failing_since,
    circuit_open_until: open ? nowIso(r.circuit_open_until!) : null,
    disabled_at: r.disabled_at,
    disabled_reason: r.disabled_reason,
    created_at: r.created_at,
  }
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

export const EndpointSchema = obj({
  id: int, url: { type: 'string', format: 'uri' }, events: { type: 'array', items: str }, paused: { type: 'boolean' }, paused_at: nullable(dateTime),
  state: {
    type: 'string', enum: ['active', 'paused', 'circuit_open', 'disabled'],
    description: '`circuit_open`: failing; deliveries wait (pending) and one is tried as a probe after a cool-down. `disabled`: failed continuously for `WEBHOOK_DISABLE_AFTER_MS`; nothing is sent or queued until resumed. Resume re-enables both.',
  },
  consecutive_failures: { ...int, description: 'Failed attempts in a row since the last success.' },
  failing_since: { ...nullable(dateTime), description: 'The first failure after the last success.' },
  circuit_open_until: { ...nullable(dateTime), description: 'While the circuit is open: when the next probe may go.' },
  disabled_at: nullable(dateTime),
  disabled_reason: nullable(str),
  created_at: dateTime,
})
named('WebhookEndpoint', EndpointSchema)

export const EndpointWithSecretSchema = {
  ...EndpointSchema,
  required: [...EndpointSchema.required, 'secret'],
  properties: { ...EndpointSchema.properties, secret: { type: 'string', pattern: '^whsec_', description: 'Signing secret (Standard Webhooks form). Shown only in this response.' } },
}
named('WebhookEndpointWithSecret', EndpointWithSecretSchema)

export const AttemptSchema = obj({ attempt: int, http_status: nullable(int), error: nullable(str), response_excerpt: str, duration_ms: int, created_at: dateTime })
named('WebhookAttempt', AttemptSchema)

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
named('WebhookDelivery', DeliverySchema)
