/**
 * The authenticators of every credential family (api-v1 §5), built once per server on its database
 * and shared by the HTTP, WebSocket and MCP front doors: the full server's (src/app.ts) and a cluster
 * replica's read-only view (src/cluster/read-view.ts), so both authenticate alike. Each is gated by
 * its account (src/auth/account-gate.ts): a suspended account's tokens of every family answer 403
 * account_suspended; an app's token, 403 feature_not_in_plan without `apps`.
 */
import type { Config } from '../config.ts'
import type { Db } from '../storage/db.ts'
import type { Services } from '../services.ts'
import { gated } from './account-gate.ts'
import { audienceAccepts } from './app-tokens.ts'
import { createOwnerAuth } from './owner.ts'
import { createStaffAuth } from './staff.ts'
import { createCustomerAuth } from './customer.ts'
import { createStorefrontAuth } from './storefront.ts'
import { createDriverAuth } from './driver.ts'
import { createShellAuth } from './shell.ts'
import { createSessionAuth } from './owner-sessions.ts'

/** `touchSession`: records a web session's last use, off the request path (a no-op where nothing may be written). */
export function authFamilies(db: Db, config: Pick<Config, 'siteUrl'>, touchSession: (id: number, at: string) => void): Services['auth'] {
  const owner = createOwnerAuth(db)
  const staffAuth = createStaffAuth(db)
  const customerAuth = createCustomerAuth(db)
  const storefrontAuth = createStorefrontAuth(db)
  const driverAuth = createDriverAuth(db)
  const shellAuth = createShellAuth(db)
  // The dashboard's web session; last_seen_at is bookkeeping, written off the request path.
  const sessionAuth = createSessionAuth(db, touchSession)
  return {
    none: () => null,
    // An app or agent token bound to a resource (RFC 8707) authenticates there only (src/auth/app-tokens.ts).
    owner: gated(db, (input) => {
      const p = input.bearer ? owner.resolve(input.bearer) : null
      return p && audienceAccepts(p.app?.resource, input.resource ?? `${config.siteUrl}/api/v1`) ? p : null
    }),
    driver: gated(db, (input) => (input.bearer ? driverAuth.resolve(input.bearer) : null)),
    staff: gated(db, (input) => (input.bearer ? staffAuth.resolve(input.bearer) : null)),
    customer: gated(db, (input) => (input.bearer ? customerAuth.resolve(input.bearer) : null)),
    storefront: gated(db, (input) => (input.headers['x-storefront-token'] ? storefrontAuth.resolve(input.headers['x-storefront-token']) : null)),
    // Only routes declaring `auth: 'session'` ask for it (site pages; never /api/v1: src/http/server.ts).
    session: gated(db, (input) => sessionAuth.resolve(input.headers.cookie)),
    // The owner's mobile shell (api-v1 §4.9): only the /app routes declare it (docs/app-shell.md).
    shell: gated(db, (input) => (input.bearer ? shellAuth.resolve(input.bearer) : null)),
  }
}
