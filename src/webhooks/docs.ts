/** The OpenAPI 3.1 `webhooks` section, generated from the event catalog (api-v1 §6). */
import { EVENT_CATALOG } from '../domain/webhook-events.ts'

const header = (name: string, description: string, schema: Record<string, unknown> = { type: 'string' }) =>
  ({ name, in: 'header', required: true, description, schema })

const HEADERS = [
  header('webhook-id', 'Delivery id, the same as the body `id`; unchanged on retries, so deduplicate on it.', { type: 'string', pattern: '^msg_' }),
  header('webhook-timestamp', 'Unix seconds when this attempt was sent; reject it when older than about 5 minutes.', { type: 'string', pattern: '^\\d+$' }),
  header('webhook-signature', '`v1,` + base64 HMAC-SHA256 of `{webhook-id}.{webhook-timestamp}.{body}`, keyed with the base64-decoded part of the `whsec_` secret (Standard Webhooks).', { type: 'string', pattern: '^v1,' }),
  header('X-Webhook-Event', 'The event name (legacy).'),
  header('X-Webhook-Signature', 'Hex HMAC-SHA256 of the body alone, keyed with the secret string as shown (legacy).', { type: 'string', pattern: '^[0-9a-f]{64}$' }),
]

/** One Path Item per event: a POST with the delivery body `{id, event, created_at, data}`. */
export function webhookOpenApi(): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  for (const [name, spec] of Object.entries(EVENT_CATALOG)) {
    out[name] = {
      post: {
        operationId: `webhook_${name.replace(/\W+/g, '_')}`,
        tags: ['Webhooks'],
        summary: name,
        description: `Emitted when ${spec.when}.${spec.emitted ? '' : ' Reserved: this server has no such feature yet, so it does not emit it; the name and payload are fixed for when it does.'}`,
        parameters: HEADERS,
        requestBody: {
          required: true,
          content: {
            'application/json': {
              schema: {
                type: 'object',
                required: ['id', 'event', 'created_at', 'data'],
                properties: {
                  id: { type: 'string', pattern: '^msg_', description: 'unique per delivery, reused by its retries' },
                  event: { type: 'string', const: name },
                  created_at: { type: 'string', format: 'date-time', description: 'when the event happened' },
                  data: spec.data,
                },
              },
              example: { id: 'msg_2hQk3v9yLr0aXb1cDe2fGg', event: name, created_at: '2026-11-22T20:30:00.000+00:00', data: spec.example },
            },
          },
        },
        responses: {
          '2XX': { description: 'Any 2xx within 10 seconds acknowledges the delivery. Anything else, or no answer in time, is retried (about 1 min, 5 min, 15 min, 1 h; 5 attempts).' },
        },
      },
    }
  }
  return out
}
