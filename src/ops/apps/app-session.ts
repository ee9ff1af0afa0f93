/**
 * App session tokens and the embed page's data (api-v1 §4.10, §5 "App session tokens expire after
 * 60 seconds", §8; docs/apps.md "Embedding"). For the signed-in owner's web session (the `session`
 * family) and an app actively installed for that account: a 60 s HS256 JWT signed with the app's
 * client secret (src/auth/app-session-jwt.ts), its `jti` kept in app_session_tokens so an uninstall
 * revokes it with the rest. While the account's plan lacks `apps` the page and its tokens are
 * refused (403 `feature_not_in_plan`, src/auth/account-gate.ts), the installation kept.
 */
import type { Services } from '../../services.ts'
import type { SessionPrincipal } from '../../auth/principals.ts'
import { notFound } from '../../errors.ts'
import { nowIso } from '../../storage/db.ts'
import { activeInstallation, appById, type AppRow, type InstallationRow } from '../../storage/apps.ts'
import { insertSessionTokenRow } from '../../storage/app-sessions.ts'
import { newJti, sessionClaims, signSessionToken, SESSION_TOKEN_TTL_S } from '../../auth/app-session-jwt.ts'
import { appsRefusal } from '../../auth/account-gate.ts'

/**
 * The app and the account's active installation of it; anything else (not installed, unknown) is a
 * 404, and an installed app while the account's plan lacks `apps` is its 403.
 */
export function installedApp(svc: Services, ownerId: number, appId: number): { app: AppRow; installation: InstallationRow } {
  const installation = activeInstallation(svc.db, appId, ownerId)
  const app = installation ? appById(svc.db, appId) : null
  if (!installation || !app) throw notFound('installed app')
  const refused = appsRefusal(svc.db, ownerId)
  if (refused) throw refused
  return { app, installation }
}

/**
 * Where the owner is (the `dest` claim): the account's dashboard, or one of its stores'
 * (`?store=ID`; another account's store is a 404).
 */
function destination(svc: Services, ownerId: number, storeId: string | undefined): string {
  const dashboard = `${svc.config.siteUrl}/dashboard`
  if (storeId === undefined || storeId === '') return dashboard
  const store = /^[1-9]\d{0,15}$/.test(storeId) ? svc.stores.ownedBy(Number(storeId), ownerId) : undefined
  if (!store) throw notFound('restaurant')
  return `${dashboard}?store=${store.id}`
}

export interface SessionTokenReply { token: string; expires_in: number }

/** A fresh session token of `appId` for the session `p`, durable (its jti recorded) before it is returned. */
export async function issueAppSessionToken(svc: Services, p: SessionPrincipal, appId: number, storeId?: string): Promise<SessionTokenReply> {
  const { app, installation } = installedApp(svc, p.ownerId, appId)
  const dest = destination(svc, p.ownerId, storeId)
  const nowMs = Date.now()
  const jti = newJti()
  const claims = sessionClaims({ siteUrl: svc.config.siteUrl, dest, clientId: app.client_id, ownerId: p.ownerId, sessionId: p.sessionId, jti, nowMs })
  await svc.committer.write((db) => insertSessionTokenRow(db, { jti, installationId: installation.id, ownerSessionId: p.sessionId, issuedAt: nowIso(claims.iat * 1000), expiresAt: nowIso(claims.exp * 1000) }))
  return { token: signSessionToken(claims, app.client_secret), expires_in: SESSION_TOKEN_TTL_S }
}
