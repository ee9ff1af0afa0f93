/**
 * Keeping an app's delivery endpoint in step with the app (docs/apps.md "Uninstall and webhooks"):
 * after a developer changes the app's webhook URL or events, the endpoint row takes them, and the
 * endpoint's actor (which holds url and secret in memory) is retired so the next delivery reloads it.
 * The developer routes call this after saving the app.
 */
import type { Services } from '../../services.ts'
import { appById } from '../../storage/apps.ts'
import { appEndpointId, syncAppEndpointRow } from '../../storage/app-deliveries.ts'

export async function syncAppEndpoint(svc: Services, appId: number): Promise<void> {
  const r = await svc.committer.write((db) => {
    const app = appById(db, appId)
    if (!app) return { id: null, changed: false }
    // Only an app someone installed has an endpoint row; the first install creates it (chargeAtInstall).
    return appEndpointId(db, appId) !== undefined ? syncAppEndpointRow(db, app) : { id: null, changed: false }
  })
  const id = r.id ?? appEndpointId(svc.db, appId)
  if (r.changed && id !== undefined) svc.webhooks.registry.evict(id)
}
