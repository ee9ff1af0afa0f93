/**
 * HTTP bindings of operations (src/ops): method + path + op, plus the small mapping from path
 * parameters to scope ids and input fields. The pipeline (server.ts) then runs, for every bound
 * route: match → authenticate → rate-limit → authorize → resolve scope (404) → validate (422) →
 * run → respond. Success is 200 (api-v1 §4), or 204 for operations that return nothing.
 */
import * as v from 'valibot'
import type { AuthFamily } from '../auth/principals.ts'
import type { Config } from '../config.ts'
import type { Op, ScopeIds, ScopeNeed } from '../ops/op.ts'
import { isIdParam, type Method, type Route } from './route.ts'

export interface Binding {
  method: Method
  /** Path under `{base_url}`, or under `{site_url}` when `site` is set. */
  path: string
  site?: boolean
  /** The credential family this address authenticates (api-v1 §5). */
  auth: AuthFamily
  /** Path parameter that names each scope resource, e.g. `{ store: 'id', order: 'orderId' }`. */
  ids?: Partial<Record<ScopeNeed, string>>
  /** Path parameters copied into the input under another name, e.g. `{ itemId: 'item_id' }`; id parameters become numbers. */
  params?: Record<string, string>
  /** Where the rest of the input comes from; GET and DELETE read the query, other methods the JSON body. */
  from?: 'body' | 'query'
  /** A tighter per-route limit per client address and store (api-v1 §8 sign-in limits). */
  rateLimit?: { perMinute: number }
  /** Extra request headers documented in OpenAPI (e.g. Idempotency-Key). */
  headers?: Array<{ name: string; description: string }>
  /** Summary override when one operation has several addresses that read differently. */
  summary?: string
  /**
   * Body formats accepted besides JSON, by media type: each turns the raw body into the JSON input (or throws an ApiError).
   * A decoder for `application/json` itself gets the raw bytes and the request headers (a signed provider webhook).
   */
  decoders?: Record<string, (body: Buffer, headers: Readonly<Record<string, string>>) => unknown>
  /** This address's body limit instead of `BODY_LIMIT_BYTES` (a photo upload's follows `PHOTO_MAX_BYTES`). */
  bodyLimit?: (config: Config) => number
}

/** What the pipeline needs of a bound route beyond the plain route fields. */
export interface BoundRoute {
  op: Op
  binding: Binding
}

/** The schema of the part of the input a transport sends in the body or query (for OpenAPI). */
function transportPart(op: Op, mapped: string[]): v.GenericSchema | undefined {
  const input = op.input as unknown as (v.ObjectSchema<v.ObjectEntries, undefined> & { type: string }) | undefined
  if (!input) return undefined
  if (input.type !== 'object' || mapped.length === 0) return input
  const entries = Object.fromEntries(Object.entries(input.entries).filter(([k]) => !mapped.includes(k)))
  return v.object(entries)
}

/** Where a binding's input comes from besides path parameters. */
export const inputSource = (b: Binding): 'body' | 'query' => b.from ?? (b.method === 'GET' || b.method === 'DELETE' ? 'query' : 'body')

/** Make a route-table entry that runs `op` (the pipeline recognises `route.op`). */
export function bind<I, O>(op: Op<I, O>, b: Binding): Route & BoundRoute {
  const from = inputSource(b)
  const part = transportPart(op, Object.values(b.params ?? {}))
  return {
    method: b.method,
    path: b.path,
    ...(b.site ? { site: true } : {}),
    tag: op.tag,
    summary: b.summary ?? op.summary,
    ...(op.description ? { description: op.description } : {}),
    auth: b.auth,
    ...(b.auth === 'owner' && op.access.owner && op.access.owner !== 'any' ? { capability: op.access.owner } : {}),
    ...(b.auth === 'staff' && op.access.staff && op.access.staff !== 'any' ? { permission: op.access.staff } : {}),
    ...(b.auth === 'storefront' && op.access.storefront ? { permission: op.access.storefront } : {}),
    ...(b.rateLimit ? { rateLimit: b.rateLimit } : {}),
    ...(part && from === 'query' ? { query: part } : {}),
    ...(part && from === 'body' ? { body: part } : {}),
    ...(op.output ? { response: op.output } : {}),
    status: op.empty ? 204 : op.created ? 201 : 200,
    ...(b.headers ? { headers: b.headers } : {}),
    handler: () => {
      throw new Error(`${op.id} is bound to ${b.method} ${b.path}: the pipeline runs it, not this handler`)
    },
    op: op as Op,
    binding: b,
  }
}

/** An operation's address below a store, as owners and staff both reach it: `/shifts/{shiftId}`. */
export interface StoreRoute {
  op: Op
  method: Method
  path: string
  /** Path parameters copied into the input, as in `Binding.params`. */
  params?: Record<string, string>
}

/**
 * Bind each operation at both of its doors (the staff app mirrors the owner API, docs/staff.md): for
 * the owner at `/restaurants/{id}` + `path` (the store the path names) and for staff at `/staff` +
 * `path` (the member's own store, from the token). An `{orderId}` in the path names the order scope
 * on both. The owner routes come first, in the order given, then the staff ones.
 */
export function ownerAndStaff(routes: readonly StoreRoute[]): Array<Route & BoundRoute> {
  const order = (path: string) => (path.includes('{orderId}') ? { order: 'orderId' } : null)
  const params = (r: StoreRoute) => (r.params ? { params: r.params } : {})
  return [
    ...routes.map((r) => bind(r.op, { method: r.method, path: `/restaurants/{id}${r.path}`, auth: 'owner', ids: { store: 'id', ...order(r.path) }, ...params(r) })),
    ...routes.map((r) => {
      const o = order(r.path)
      return bind(r.op, { method: r.method, path: `/staff${r.path}`, auth: 'staff', ...(o ? { ids: o } : {}), ...params(r) })
    }),
  ]
}

/** Scope ids from path parameters. */
export function scopeIdsOf(b: Binding, params: Record<string, string>): ScopeIds {
  const ids: ScopeIds = {}
  for (const [need, name] of Object.entries(b.ids ?? {}) as Array<[ScopeNeed, string]>) ids[need] = params[name]
  return ids
}

/** The operation's input: the body or query, with mapped path parameters laid over it. */
export function inputOf(b: Binding, params: Record<string, string>, transport: unknown): unknown {
  const mapped = Object.entries(b.params ?? {})
  if (mapped.length === 0) return transport
  const isObject = transport !== null && typeof transport === 'object' && !Array.isArray(transport)
  // A body that is not an object is left as it is, so validation rejects it (422) as it should.
  if (transport !== undefined && !isObject) return transport
  // Object.assign, not `{ ...transport }`: V8 is very slow to add properties to an object a spread made.
  const base: Record<string, unknown> = isObject ? Object.assign({}, transport as Record<string, unknown>) : {}
  for (const [param, field] of mapped) {
    const raw = params[param]
    base[field] = raw !== undefined && isIdParam(param) ? Number(raw) : raw
  }
  return base
}
