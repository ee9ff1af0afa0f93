/** Who is calling: one principal type per authentication family (api-v1 §5). */
import type { OwnerPrincipal } from './owner.ts'

export type { OwnerPrincipal }

/** Maps each auth family a route can declare to the principal its handler receives. */
export interface PrincipalMap {
  none: null
  owner: OwnerPrincipal
}
export type AuthFamily = keyof PrincipalMap
export type Principal = Exclude<PrincipalMap[AuthFamily], null>

/** What an authenticator sees of the request: copied synchronously from uWS. */
export interface AuthInput {
  headers: Readonly<Record<string, string>>
  query: Readonly<Record<string, string>>
  /** Bearer token from `Authorization` (or `api_token` for owner routes), if any. */
  bearer: string | null
}

/** Resolves a principal or null (→ 401). Lookups hit SQLite so revocations apply at once. */
export type Authenticator<A extends AuthFamily> = (input: AuthInput) => PrincipalMap[A] | null

/** A stable key for per-principal rate limiting. */
export function principalKey(p: Principal): string {
  switch (p.kind) {
    case 'owner': return `owner-token:${p.tokenId}`
  }
}
