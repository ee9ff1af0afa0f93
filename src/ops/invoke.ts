/**
 * Running an operation, whatever the front door (ARCHITECTURE "The shape" 1-2): authorize →
 * resolve the tenancy scope (404) → read and validate the input → run. HTTP routes
 * (src/http/op-pipeline.ts) and MCP tools (src/mcp) both call this, so the order of the checks,
 * and therefore what a caller can learn, is the same everywhere: the input is read only once the
 * scope resolved, so a write to someone else's store answers not_found whatever its body (api-v1 §1).
 */
import type { Principal } from '../auth/principals.ts'
import { authorize, resolveScope } from '../auth/policy.ts'
import type { ApiError } from '../errors.ts'
import type { Services } from '../services.ts'
import { Outcome, type Op, type Scope, type ScopeIds } from './op.ts'
import { validate } from './validate.ts'

export interface Invocation {
  svc: Services
  principal: Principal | null
  /** Raw ids of the scope resources (path parameters, tool arguments). */
  ids: ScopeIds
  /** The raw input; called only after the scope resolved (it may read a request body). */
  read: () => unknown
  /** Where the input came from, for the field errors (`validation_failed`). */
  where: 'query' | 'body' | 'arguments'
  requestId: string
  ip: string
  idempotencyKey?: string
  /**
   * What to throw instead of the 422 when the input does not validate (MCP: JSON-RPC -32602);
   * default: the ApiError itself.
   */
  invalid?: (err: ApiError) => unknown
}

export interface Invoked {
  value: unknown
  /** An idempotent replay (HTTP: `Idempotent-Replayed: true`). */
  replayed: boolean
}

export async function invoke(op: Op, call: Invocation): Promise<Invoked> {
  authorize(call.principal, op.access)
  const scope = resolveScope(call.svc, call.principal, op.scope, call.ids)
  const raw = await call.read()
  let input: unknown
  if (op.input) {
    try {
      input = validate(op.input, raw, call.where)
    } catch (err) {
      throw call.invalid ? call.invalid(err as ApiError) : err
    }
  }
  const ctx: Parameters<Op['run']>[0] = { svc: call.svc, principal: call.principal, scope, requestId: call.requestId, ip: call.ip }
  // Set, not spread in: a spread after an object literal's first member is a slow path in V8.
  if (call.idempotencyKey !== undefined) ctx.idempotencyKey = call.idempotencyKey
  const out = await op.run(ctx, input)
  return out instanceof Outcome ? { value: out.value, replayed: out.meta.replayed === true } : { value: out, replayed: false }
}

/**
 * Admit a caller through an admission operation (no input, nothing to run): the policy, the tenancy
 * scope and the plan feature decided as for any operation, synchronously, for doors that must
 * answer at once — a socket's upgrade and its re-checks when credentials change (src/ws). Answers
 * the resolved scope; throws the ApiError of the first refusal.
 */
export function admit(op: Op<undefined, null>, svc: Services, principal: Principal | null, ids: ScopeIds): Scope {
  authorize(principal, op.access)
  const scope = resolveScope(svc, principal, op.scope, ids)
  const out: unknown = op.run({ svc, principal, scope, requestId: '', ip: '' }, undefined)
  // A door that must answer at once cannot wait: an admission that returned a promise would decide
  // nothing (and its refusal would be lost), so it is a programming error, said at once.
  if (out instanceof Promise) {
    out.catch(() => {})
    throw new Error(`${op.id} is an admission operation: its run must decide synchronously`)
  }
  return scope
}
