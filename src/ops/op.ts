/**
 * An operation, declared once (ARCHITECTURE "The shape" 1): who may call it, which tenancy scope it
 * resolves, one valibot input, the output schema and `run`. `run` knows no transport: no status
 * codes, headers or sockets. HTTP routes (src/http/bind.ts) and, next, MCP tools and WebSocket
 * frames are bindings to operations, so validation, authorization and tenancy exist once.
 */
import type * as v from 'valibot'
import type { Principal } from '../auth/principals.ts'
import type { Capability } from '../domain/capabilities.ts'
import type { StaffPermission } from '../domain/permissions.ts'
import type { StorefrontScope } from '../auth/storefront.ts'
import type { Services } from '../services.ts'
import type { StoreRow } from '../storage/stores.ts'
import type { OrderRow } from '../storage/orders.ts'
import type { EndpointRow } from '../storage/webhooks.ts'
import type { DriverRow } from '../storage/drivers.ts'
import type { AppRow } from '../storage/apps.ts'
import type { ManagedAccountRow, ManagedSubscriptionRow, ResellerRow } from '../storage/reseller.ts'
import type { FeatureKey } from '../domain/plans.ts'
import type { AppScope } from '../domain/app-scopes.ts'
import { requireFeature } from '../storage/entitlements.ts'

export type AnySchema = v.GenericSchema<any, any>
export type JsonSchema = Record<string, unknown>

/**
 * Who may call an operation, per principal family (api-v1 §5). A family that is absent may not
 * call it at all; a new family (app tokens, …) is one more key here, not a branch in a pipeline.
 */
export interface Access {
  /** Owner tokens: the capability the token must hold (api-v1 §5 rules 1-4), or `any` for every owner token (`GET /me`). */
  owner?: Capability | 'any'
  /** Owner tokens of third-party apps (`dsa_…`, docs/apps.md): the granted scope they need besides the capability (`mcp:use`). */
  appScope?: AppScope
  /** Staff tokens: the permission the member must hold, or `any` for every member (§4.7). */
  staff?: StaffPermission | 'any'
  /** Storefront tokens: the scope the token must carry (§4.3). */
  storefront?: StorefrontScope
  /** Customer tokens: always limited to the token's own customer and store (§4.5). */
  customer?: true
  /** Driver tokens: always limited to the token's own driver (§4.6). */
  driver?: true
  /** Shell tokens of the owner's mobile app (api-v1 §4.9): limited to the token's own account and device. */
  shell?: true
  /** The owner's web session (the dashboard's site pages, bound as forms): limited to the session's own account. */
  session?: true
  /** A visitor of the store's own website (src/auth/visitor.ts): no token, limited to that store. */
  visitor?: true
  /** No credential at all (public menu, tracking, sign-in). */
  public?: true
}

/**
 * Tenancy resources the policy resolves before the input is validated (ARCHITECTURE "The shape" 2):
 * a store or order the principal does not own is a 404, whatever the body says.
 */
export type ScopeNeed = 'store' | 'order' | 'driver' | 'endpoint' | 'app' | ResellerScopeNeed
/**
 * The reseller area (api-v1 §4.8, docs/billing.md "Resellers"): `reseller` admits only owner tokens
 * of an account with the reseller role (403 `forbidden` otherwise); `account` and `subscription`
 * resolve one of that reseller's customers or their subscriptions (anyone else's: 404).
 */
export type ResellerScopeNeed = 'reseller' | 'account' | 'subscription'

/** What the policy resolved, handed to `run`. */
export interface Scope {
  store?: StoreRow
  order?: OrderRow
  driver?: DriverRow
  endpoint?: EndpointRow
  /** A third-party app of the calling developer (docs/apps.md "Registering an app"). */
  app?: AppRow
  reseller?: ResellerRow
  account?: ManagedAccountRow
  subscription?: ManagedSubscriptionRow
}

/** The raw ids a binding found (path parameters, tool arguments), before resolution. */
export type ScopeIds = Partial<Record<ScopeNeed, string | number | undefined>>

/** Everything `run` receives besides its input. */
export interface OpCtx<P extends Principal | null = Principal | null> {
  svc: Services
  principal: P
  scope: Scope
  /** For logs and correlation; never part of a business rule. */
  requestId: string
  /** The client address, for per-address limits of sign-in operations. */
  ip: string
  /** An idempotency key sent by the transport (HTTP `Idempotency-Key`), if any. */
  idempotencyKey?: string
}

/** A result plus facts the transport may surface (HTTP: `Idempotent-Replayed: true`). */
export class Outcome<T> {
  constructor(readonly value: T, readonly meta: { replayed?: boolean } = {}) {}
}

export interface Op<I = any, O = any> {
  /** Stable id, `family.resource.verb` (e.g. `menu.items.create`). */
  id: string
  summary: string
  description?: string
  /** Grouping for discovery and OpenAPI. */
  tag: string
  access: Access
  /** Resolved by the policy, in this order, before the input is validated. */
  scope: readonly ScopeNeed[]
  /** The one input schema; absent when the operation takes no input. */
  input?: v.GenericSchema<unknown, I>
  /** Output schema for documentation (OpenAPI, MCP tool descriptions). */
  output?: AnySchema | JsonSchema
  /** True when the operation returns nothing (HTTP answers 204). */
  empty?: boolean
  /**
   * True when the operation creates a resource the spec answers 201 for (api-v1 §4: webhook endpoint
   * creation only); every other create answers 200.
   */
  created?: boolean
  /**
   * The plan feature the operation needs (docs/billing.md "Plans and entitlements"): without it the
   * call answers 403 `feature_not_in_plan`. Checked by `defineOp`'s wrapper of `run`, so every front
   * door that runs the operation (HTTP, MCP, WebSocket frames) enforces it.
   */
  feature?: FeatureKey
  run(ctx: OpCtx, input: I): O | Outcome<O> | Promise<O | Outcome<O>>
}

/**
 * Identity helper that keeps the generic types of an operation literal; an operation that names a
 * `feature` gets a `run` that first checks the calling account holds it.
 */
export function defineOp<I = undefined, O = unknown>(op: Op<I, O>): Op<I, O> {
  const { feature, run } = op
  if (!feature) return op
  return { ...op, run: (ctx, input) => { needFeature(ctx, feature); return run(ctx, input) } }
}

/**
 * 403 `feature_not_in_plan` unless the account behind the call holds `feature`. Every principal
 * names its account (`ownerId`: a staff, storefront, customer or driver token maps to the owner of
 * its store or driver); a public call uses the owner of the store it resolved.
 */
export function needFeature(ctx: OpCtx, feature: FeatureKey): void {
  const ownerId = ctx.principal?.ownerId ?? ctx.scope.store?.owner_id
  if (ownerId === undefined) return
  requireFeature(ctx.svc.db, ownerId, feature)
}
