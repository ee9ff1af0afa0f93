/** Who is calling: one principal type per authentication family (api-v1 §5). */
import type { OwnerPrincipal } from './owner.ts'
import type { DriverPrincipal } from './driver.ts'
import type { StaffPrincipal } from './staff.ts'
import type { CustomerPrincipal } from './customer.ts'
import type { StorefrontPrincipal } from './storefront.ts'
import type { SessionPrincipal } from './owner-sessions.ts'
import type { ShellPrincipal } from './shell.ts'
import type { VisitorPrincipal } from './visitor.ts'

export type { OwnerPrincipal }
export type { DriverPrincipal }
export type { StaffPrincipal, CustomerPrincipal, StorefrontPrincipal }
export type { SessionPrincipal }
export type { ShellPrincipal }
export type { VisitorPrincipal }

/** Maps each auth family a route can declare to the principal its handler receives. */
export interface PrincipalMap {
  none: null
  owner: OwnerPrincipal
  driver: DriverPrincipal
  staff: StaffPrincipal
  customer: CustomerPrincipal
  /** `X-Storefront-Token` header (api-v1 §4.3). */
  storefront: StorefrontPrincipal
  /**
   * The owner's web session (`dsid` cookie, src/auth/owner-sessions.ts): site routes of the dashboard
   * only, never `/api/v1`; signed-out page GETs redirect to `/login`, other methods need the CSRF token.
   */
  session: SessionPrincipal
  /** The owner's mobile shell app (api-v1 §4.9, src/auth/shell.ts): the `/app/…` routes only. */
  shell: ShellPrincipal
}
export type AuthFamily = keyof PrincipalMap
/** Every principal: one per auth family, and the store website's visitor, whom no request header authenticates (src/auth/visitor.ts). */
export type Principal = Exclude<PrincipalMap[AuthFamily], null> | VisitorPrincipal

/** What an authenticator sees of the request: copied synchronously from uWS. */
export interface AuthInput {
  headers: Readonly<Record<string, string>>
  query: Readonly<Record<string, string>>
  /** Bearer token from `Authorization` (or `api_token` for owner routes), if any. */
  bearer: string | null
  /**
   * The RFC 8707 resource identifier of the address called (`{site_url}/mcp` for the admin MCP
   * server); absent: the API (`{base_url}`, sockets included). App tokens bound to another resource are refused (issue 36).
   */
  resource?: string
}

/** Resolves a principal or null (→ 401). Lookups hit SQLite so revocations apply at once. */
export type Authenticator<A extends AuthFamily> = (input: AuthInput) => PrincipalMap[A] | null

/** A stable key for per-principal rate limiting. */
export function principalKey(p: Principal): string {
  switch (p.kind) {
    // App tokens live in their own table: their ids must not share an owner token's budget.
    case 'owner': return p.app ? `app-token:${p.app.tokenId}` : `owner-token:${p.tokenId}`
    // Per driver, not per token: a driver's devices share one budget.
    case 'driver': return `driver:${p.driverId}`
    // Staff and customer tokens are per device; the storefront token is the store's one token (api-v1 §8: per token).
    case 'staff': return `staff-token:${p.tokenId}`
    case 'customer': return `customer-token:${p.tokenId}`
    case 'storefront': return `storefront-token:${p.tokenId}`
    case 'session': return `owner-session:${p.sessionId}`
    case 'shell': return `shell-token:${p.tokenId}`
    case 'visitor': return `visitor:${p.storeId}`
  }
}
