/**
 * The part of the HTTP pipeline that runs a bound operation, after the request was matched,
 * authenticated and rate-limited (server.ts): authorize → resolve scope (404) → read and validate
 * the input (422) → run → the reply. Resolution comes before the body is even read, so a write to
 * someone else's store answers 404 whatever its body (api-v1 §1).
 */
import type { Principal } from '../auth/principals.ts'
import { authorize, resolveScope } from '../auth/policy.ts'
import { Outcome } from '../ops/op.ts'
import type { Services } from '../services.ts'
import { inputOf, inputSource, scopeIdsOf, type BoundRoute } from './bind.ts'
import type { Route } from './route.ts'
import { validate } from '../ops/validate.ts'

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
  authorize(req.principal, op.access)
  const scope = resolveScope(req.svc, req.principal, op.scope, scopeIdsOf(binding, req.params))
  const from = inputSource(binding)
  const transport = from === 'query' ? req.query : await req.readJson()
  const input = op.input ? validate(op.input, inputOf(binding, req.params, transport), from) : undefined
  const idempotencyKey = req.headers['idempotency-key']
  const out = await op.run(
    { svc: req.svc, principal: req.principal, scope, requestId: req.requestId, ip: req.ip, ...(idempotencyKey !== undefined ? { idempotencyKey } : {}) },
    input,
  )
  const value = out instanceof Outcome ? out.value : out
  const headers: Record<string, string> = out instanceof Outcome && out.meta.replayed ? { 'Idempotent-Replayed': 'true' } : {}
  return op.empty ? { status: 204, body: null, headers } : { status: op.created ? 201 : 200, body: value ?? null, headers }
}
