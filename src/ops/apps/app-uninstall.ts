/**
 * The account's installed apps and uninstalling one (api-v1 §5 "On uninstall the platform revokes
 * the app's tokens and emits `app.uninstalled`"; docs/apps.md "Uninstall and webhooks"). Account-wide
 * (`*:read` / `*:write`): an app token can neither list nor remove installations.
 */
import * as v from 'valibot'
import { defineOp } from '../op.ts'
import { ownerOf } from '../scope.ts'
import { Id } from '../schemas/common.ts'
import { notFound } from '../../errors.ts'
import { fromCents } from '../../domain/money.ts'
import { nowIso } from '../../storage/db.ts'
import { activeInstallations, appById, installationById, markUninstalled, type InstallationRow } from '../../storage/apps.ts'
import { revokeInstallationTokens } from '../../auth/app-tokens.ts'
import { syncAppEndpointRow } from '../../storage/app-deliveries.ts'
import type { Pending } from '../../storage/webhooks.ts'

const tag = 'Apps'

const InstallationSchema = {
  type: 'object', required: ['id', 'app_id', 'app_name', 'scopes', 'pricing', 'price', 'currency', 'status', 'installed_at', 'uninstalled_at', 'embed_url', 'kind', 'client_uri'],
  properties: {
    id: { type: 'integer' }, app_id: { type: 'integer' }, app_name: { type: 'string' },
    scopes: { type: 'array', items: { type: 'string' } },
    pricing: { type: 'string', enum: ['free', 'recurring', 'usage'] }, price: { type: 'number' }, currency: { type: 'string' },
    status: { type: 'string', enum: ['active', 'uninstalled'] }, installed_at: { type: 'string' }, uninstalled_at: { type: ['string', 'null'] },
    embed_url: { type: ['string', 'null'], description: 'When set, the dashboard opens the app at `{site_url}/apps/{app_id}/embed`' },
    kind: { type: 'string', enum: ['app', 'agent'], description: '`agent`: an AI agent that registered itself and got the owner\'s consent (docs/mcp.md "Authorization")' },
    client_uri: { type: ['string', 'null'], description: 'Agents: the client id metadata document it is known by, or the home page it registered' },
  },
}

function view(db: Parameters<typeof appById>[0], i: InstallationRow) {
  const app = appById(db, i.app_id)
  return {
    id: i.id, app_id: i.app_id, app_name: app?.name ?? '', scopes: i.scopes, pricing: i.terms.pricing, price: fromCents(i.terms.price),
    currency: i.terms.currency, status: i.status, installed_at: i.installed_at, uninstalled_at: i.uninstalled_at, embed_url: app?.embed_url ?? null,
    kind: app?.kind ?? 'app', client_uri: app?.kind === 'agent' ? (app.metadata_url ?? (app.description || null)) : null,
  }
}

export const listInstallations = defineOp({
  id: 'apps.installations.list', tag, access: { owner: '*:read' }, scope: [],
  summary: 'The account\'s installed apps',
  output: { type: 'array', items: InstallationSchema },
  run: (ctx) => activeInstallations(ctx.svc.db, ownerOf(ctx).ownerId).map((i) => view(ctx.svc.db, i)),
})

export const uninstallApp = defineOp({
  id: 'apps.installations.uninstall', tag, access: { owner: '*:write' }, scope: [],
  summary: 'Uninstall an app',
  description: 'In one transaction: the installation ends, every access, refresh and session token of it is revoked (refused at once), recurring charges stop, and `app.uninstalled` is queued for the app\'s webhook URL (an app delivery: `type` in place of `event`, signed with the app\'s `whsec_` secret). Another account\'s installation, or one already removed, is a 404.',
  input: v.object({ id: Id }), output: InstallationSchema,
  run: async (ctx, { id }) => {
    const ownerId = ownerOf(ctx).ownerId
    const at = nowIso()
    const webhooks = ctx.svc.webhooks
    const { row, delivery } = await ctx.svc.committer.write((db) => {
      const inst = installationById(db, id)
      if (!inst || inst.owner_id !== ownerId || !markUninstalled(db, inst.id, at)) throw notFound('installation')
      revokeInstallationTokens(db, inst.id, at)
      // api-v1 §6: `app.uninstalled` goes to that app's endpoint only (not through the outbox, whose
      // fan-out reaches accounts' endpoints), durable with the uninstall itself.
      const app = appById(db, inst.app_id)
      const endpoint = app ? syncAppEndpointRow(db, app) : { id: null, changed: false }
      const endpointId = endpoint.id
      let delivery: { endpointId: number; pending: Pending; changed: boolean } | null = null
      if (endpointId !== null) {
        const data = JSON.stringify({ app_id: inst.app_id, installation_id: inst.id, user_id: ownerId, uninstalled_at: at })
        delivery = { endpointId, changed: endpoint.changed, pending: webhooks.store.insertDelivery(endpointId, 'app.uninstalled', at, data, { app: true }) }
      }
      return { row: installationById(db, inst.id)!, delivery }
    })
    // Durable: hand it to the endpoint's actor (retries, SSRF-guarded client). Were this lost, the
    // actor finds the pending row when it next loads (start-up resumes every pending delivery).
    // A changed URL or secret: retire the actor holding the old ones first (it reloads on this message).
    if (delivery?.changed) webhooks.registry.evict(delivery.endpointId)
    if (delivery) webhooks.registry.tell(delivery.endpointId, { type: 'enqueue', deliveries: [delivery.pending] })
    return view(ctx.svc.db, row)
  },
})

export const appUninstallOps = [listInstallations, uninstallApp]
