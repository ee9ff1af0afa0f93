/**
 * The route table entry: the single source for routing, validation, auth, discovery and OpenAPI.
 * A route file exports an array of these; `src/http/routes/index.ts` collects them.
 */
import type * as v from 'valibot'
import type { AuthFamily, PrincipalMap } from '../auth/principals.ts'
import type { Capability } from '../domain/capabilities.ts'
import type { StaffPermission } from '../domain/permissions.ts'
import type { StorefrontScope } from '../auth/storefront.ts'
import type { Services } from '../services.ts'
import type { Op } from '../ops/op.ts'
import type { Binding } from './bind.ts'

export type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE'
export type AnySchema = v.GenericSchema<any, any>
export type JsonSchema = Record<string, unknown>

export interface Ctx<A extends AuthFamily, Q, B> {
  principal: PrincipalMap[A]
  /** Path parameters; names ending in `id`/`Id` are already checked to be positive integers. */
  params: Record<string, string>
  query: Q
  body: B
  headers: Readonly<Record<string, string>>
  requestId: string
  ip: string
  svc: Services
}

/** A reply with a non-default status or extra headers. */
export class Reply {
  constructor(readonly status: number, readonly body: unknown, readonly headers: Record<string, string> = {}, readonly contentType?: string) {}
}

export interface Route<A extends AuthFamily = AuthFamily, Q = any, B = any> {
  method: Method
  /** Path under `{base_url}` (e.g. `/restaurants/{id}`), or under `{site_url}` when `site` is set. */
  path: string
  site?: boolean
  tag: string
  summary: string
  description?: string
  auth: A
  /** Owner routes: the capability the token must hold (api-v1 §5). */
  capability?: Capability
  /** Staff routes: the staff permission; storefront routes: the token scope (api-v1 §4.3, §4.7). Missing → 403. */
  permission?: StaffPermission | StorefrontScope
  /**
   * A tighter per-route limit on top of the per-token one (api-v1 §8 login 10/min, OTP 6/min),
   * counted per client address and store (`{id}` path parameter). `false`: not rate limited at all,
   * for the health probes (`/healthz`, `/readyz`, docs/running.md): a load balancer polling from one
   * address must never be told 429, and a probe costs about what a 429 would. The answer carries the
   * address's budget without spending it, as a CORS preflight does. Only for `auth: 'none'`.
   */
  rateLimit?: { perMinute: number } | false
  query?: v.GenericSchema<unknown, Q>
  body?: v.GenericSchema<unknown, B>
  /**
   * `false`: left out of the OpenAPI document (still routed and in the discovery index). For the
   * site's start page: `/` under `{site_url}` would take the path key `/` of the discovery index
   * under `{base_url}`, and it is a page for people, not an operation.
   */
  openapi?: false
  /** Response body schema, for OpenAPI. */
  response?: AnySchema | JsonSchema
  /** Success status; 200 unless stated. 303: the address answers a redirect (see `redirect`), never a body. */
  status?: 200 | 201 | 204 | 303
  /**
   * When the address answers 303 See Other with `Location` besides its success (a guest sent to
   * sign in), or what its redirect is with `status: 303`; for OpenAPI. Form posts and signed-out
   * session pages are documented with their 303 without saying so here.
   */
  redirect?: string
  /** Extra request headers documented in OpenAPI (e.g. Idempotency-Key). */
  headers?: Array<{ name: string; description: string }>
  /** Answer with this content type instead of JSON (the handler returns a string or Buffer). */
  produces?: string
  /**
   * Pages (`produces` HTML): the error statuses the handler answers itself, as a page in `produces`
   * (a page's own 404), each with what it means. What the HTTP door refuses before the handler runs
   * (rate limit, body, a malformed id, CSRF of a session) is still the §7 envelope; OpenAPI lists
   * both media types where both can answer one status (src/http/docs/responses.ts).
   */
  pageErrors?: Record<number, string>
  /**
   * Pages that take HTML form posts (the store website, docs/website.md): the body is read as
   * `application/x-www-form-urlencoded` and handed to the handler as URLSearchParams (415 otherwise).
   */
  form?: true
  handler: (ctx: Ctx<A, Q, B>) => unknown | Promise<unknown>
  /** Set by `bind` (src/http/bind.ts): the operation this address runs, and how it maps the request. */
  op?: Op
  binding?: Binding
}

/** Path parameters named `id` or `…Id` are numeric ids: anything but a positive integer is not found (api-v1 §7). */
export const isIdParam = (name: string): boolean => /(^id|Id)$/.test(name)

/** The `{name}` parameters of a route path, in order. */
export const pathParams = (path: string): string[] => [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]!)

/** Identity helper that keeps the generic types of a route literal. */
export function route<A extends AuthFamily, Q = undefined, B = undefined>(r: Route<A, Q, B>): Route<A, Q, B> {
  return r
}
