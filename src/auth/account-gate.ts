/**
 * What an account lets its credentials do at all, decided in one place for every front door. Every
 * token family leads to an account (each principal carries `ownerId`: the owner, or the owner of
 * the store or driver the token belongs to), and every front door authenticates through `svc.auth`
 * (HTTP routes, MCP servers, WebSocket upgrades, the re-check of open sockets in src/ws/sessions.ts),
 * whose authenticators are each wrapped by `gated`. A valid token is refused with 403:
 *
 * - `account_suspended`, any family, while the account is suspended (docs/billing.md "Suspension");
 * - `feature_not_in_plan`, a third-party app's access token while the account's plan lacks `apps`
 *   (docs/billing.md "Plans and entitlements", issue 31 item 3): every call an app makes is a use
 *   of the feature, so the token is refused whatever it calls, like a suspended account's.
 *
 * Both are read from SQLite on every authentication (suspension through a cache per auth epoch,
 * src/auth/suspension-cache.ts; entitlements directly), so a change committed by the CLI in
 * another process applies to the next request, and to open sockets at their next re-check.
 *
 * `appsRefusal` is the one answer to "may this account's apps act now?"; what else an installed app
 * gets asks it too, so "the account lacks `apps`" means the same everywhere (docs/apps.md "When the
 * plan lacks apps"): the token address and the consent page (src/ops/apps/oauth.ts), the fan-out of
 * events to the app's webhook URL (src/storage/webhooks.ts), the recurring charges
 * (src/billing/app-charges.ts) and the embed page with its session tokens (src/ops/apps/app-session.ts).
 */
import type { ApiError } from '../errors.ts'
import type { Db } from '../storage/db.ts'
import { featureRefusal } from '../storage/entitlements.ts'
import { accountSuspended } from './suspension.ts'
import { isSuspendedNow } from './suspension-cache.ts'
import type { Authenticator, AuthFamily, Principal } from './principals.ts'

/**
 * Null while the account's plan includes `apps`; else the 403 `feature_not_in_plan` (details
 * `{feature: "apps", plan}`). Nothing is revoked while it refuses: the account's installations,
 * grants and tokens all work again once the feature is back.
 */
export const appsRefusal = (db: Db, ownerId: number): ApiError | null => featureRefusal(db, ownerId, 'apps')

/** Throws the 403 of the first rule above that refuses `principal`. */
export function assertAdmitted(db: Db, principal: Principal): void {
  if (isSuspendedNow(db, principal.ownerId)) throw accountSuspended()
  const refused = principal.kind === 'owner' && principal.app ? appsRefusal(db, principal.ownerId) : null
  if (refused) throw refused
}

/** The same authenticator, refusing (403, not 401: the token is valid) the principals its account does not admit. */
export function gated<A extends AuthFamily>(db: Db, auth: Authenticator<A>): Authenticator<A> {
  return (input) => {
    const p = auth(input)
    if (p) assertAdmitted(db, p as Principal)
    return p
  }
}
