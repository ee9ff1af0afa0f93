/**
 * The part of the HTTP pipeline that runs a bound operation, after the request was matched,
 * authenticated and rate-limited (server.ts): authorize → resolve scope (404) → read and validate
 * the input (422) → run → the reply, through the transport-neutral src/ops/invoke.ts. Resolution
 * comes before the body is even read, so a write to someone else's store answers 404 whatever its
 * body (api-v1 §1).
 */
import type { Principal } from '../auth/principals.ts'
import { invoke } from '../ops/invoke.ts'
import type { Services } from '../services.ts'
import { inputOf, inputSource, scopeIdsOf, type BoundRoute } from './bind.ts'
import type { Route } from './route.ts'

export interface BoundRequest {
  svc: Services
  principal: Principal | null
  params: Record<string, string>
  /** The query string without credentials. */
  query: Record<string, string>
  /** Reads and parses the JSON body (413, 415, 400 on failure); called only when the input comes from the body. */
  readJson: () => Promise<unknown>
  headers: Readonly<Record<string, string>>
  requestId: string
  ip: string
}

export interface BoundReply {
  status: 200 | 201 | 204
  body: unknown
  headers: Record<string, string>
}

export async function runBound(route: Route & BoundRoute, req: BoundRequest): Promise<BoundReply> {
  const { op, binding } = route
  const from = inputSource(binding)
  const idempotencyKey = req.headers['idempotency-key']
  const call: Parameters<typeof invoke>[1] = {
    svc: req.svc, principal: req.principal, ids: scopeIdsOf(binding, req.params), where: from,
    read: async () => inputOf(binding, req.params, from === 'query' ? req.query : await req.readJson()),
    requestId: req.requestId, ip: req.ip,
  }
  // Set, not spread in (`...(key ? { idempotencyKey } : {})`): a spread after the first member is a slow path in V8.
  if (idempotencyKey !== undefined) call.idempotencyKey = idempotencyKey
  const { value, replayed } = await invoke(op, call)
  const headers: Record<string, string> = replayed ? { 'Idempotent-Replayed': 'true' } : {}
  return op.empty ? { status: 204, body: null, headers } : { status: op.created ? 201 : 200, body: value ?? null, headers }
}
