/**
 * Suspension at the front doors (docs/billing.md "Suspension", issue 13 item 4). Every token family
 * leads to an account (each principal carries `ownerId`: the owner, or the owner of the store or
 * driver the token belongs to), so one wrapper around each authenticator answers 403
 * `account_suspended` for all of them, on every front door that authenticates through
 * `svc.auth` (HTTP routes, WebSocket upgrades, socket re-validation, MCP servers). The answer is
 * cached per auth epoch (suspension-cache.ts), which any change to `owners` moves, from any
 * connection: suspending and unsuspending apply at once.
 */
import type { Db } from '../storage/db.ts'
import { ApiError } from '../errors.ts'
import { isSuspendedNow } from './suspension-cache.ts'
import type { Authenticator, AuthFamily, Principal } from './principals.ts'

/** What a public page or public route of a suspended account's store answers (403, same code). */
export const storeUnavailable = (): ApiError => new ApiError('account_suspended', 'This store is unavailable.')

export const accountSuspended = (): ApiError =>
  new ApiError('account_suspended', 'This account is suspended; its tokens are refused until it is unsuspended. Its data is kept.')

/** Throws 403 `account_suspended` when the principal's account is suspended. */
export function assertNotSuspended(db: Db, principal: Principal): void {
  if (isSuspendedNow(db, principal.ownerId)) throw accountSuspended()
}

/** The same authenticator, refusing (403, not 401: the token is valid) principals of a suspended account. */
export function refusingSuspended<A extends AuthFamily>(db: Db, auth: Authenticator<A>): Authenticator<A> {
  return (input) => {
    const p = auth(input)
    if (p) assertNotSuspended(db, p as Principal)
    return p
  }
}
